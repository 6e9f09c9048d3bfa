"""新新エリューシス's 遊び方 page as data (app/games/kit/howto.py). The game has no house
content (two plain decks); the page teaches the rule language instead, whose examples are
RULE lines the grammar reads."""

from __future__ import annotations

from app.games.base import N_
from app.games.kit.howto import CommandHelp, Howto, Post, Section

# Rules in the rule language, each a RULE line the page shows (and the tests parse).
RULE_EXAMPLES = (
    "RULE card.color != prev.color",
    "RULE card.rank > prev.rank or card.suit == prev.suit",
    "RULE card.suit in (H, D) or card.face",
    "RULE if prev.parity == odd then card.rank > 7 else card.rank <= 7",
    "RULE abs(card.rank - prev.rank) <= 3",
)


def content() -> list[Section]:
    return []


HOWTO = Howto(
    summary=N_(
        "親が決めた秘密のルールを、カードを出して当てるゲーム。"
        "ルールを見抜いて手札を早くなくした子が得点します。4〜6人、1人1回ずつ親をします。"
    ),
    players=("あかり", "ベン", "チカ", "ダイ"),
    commands=(
        CommandHelp(
            "PLAY",
            N_(
                "子の手番: 手札から1〜4枚を出し、○（全部ルールに合う）か ●（全部合わない）を"
                "宣言します。成功・失敗とも書けます。"
            ),
            ("PLAY ○ ♠8", "出す 成功 S7 H8", "PLAY ● ♥4"),
        ),
        CommandHelp(
            "JUDGE",
            N_(
                "親（と預言者）が出されたカードを判定します: ○ 合う、● 合わない、○● 混ざっている。"
                "言葉のルールのとき、または預言者がいるときに使います。"
            ),
            ("JUDGE ○", "判定 ●", "JUDGE ○●"),
        ),
        CommandHelp(
            "PROPHET",
            N_("手番の終わりに、ルールがわかったと思った子が預言者になります。"),
            ("PROPHET", "預言者"),
        ),
        CommandHelp(
            "HINT",
            N_("親が、10枚目・20枚目・30枚目が出たあとにヒントを書けます。"),
            ("HINT 色に注目",),
        ),
        CommandHelp(
            "RULE",
            N_(
                "親がラウンドの初めにルールを封印して送ります。式で書けばボットが判定し、"
                "TEXT のあとに言葉で書けば親が JUDGE で判定します。"
            ),
            (*RULE_EXAMPLES[:1], "RULE TEXT 前のカードと色が違う", *RULE_EXAMPLES[1:]),
            "sealed",
        ),
        CommandHelp(
            "ENDROUND",
            N_("全員が合意したら、GM がラウンドを終えます。"),
            ("ENDROUND", "ラウンド終了"),
            "gm",
        ),
        CommandHelp(
            "PARENT",
            N_("GM が親を指名します。"),
            ("PARENT ベン", "親指名 チカ"),
            "gm",
        ),
    ),
    first_turn=(
        Post(
            0,
            ("RULE card.color != prev.color",),
            N_(
                "親が「前のカードと色が違う」というルールを封印して送ります。"
                "スレッドに出るのはルールの指紋（SHA-256）だけで、中身はラウンドの終わりに"
                "公開されます。ボットが子に12枚ずつ配り、最初のカードを表にします。"
            ),
            sealed=True,
        ),
        Post(
            1,
            ("PLAY ○ ♠8",),
            N_("赤の♥Qのあとに黒の♠8を「合う」と宣言して出します。当たりなので列に並びます。"),
        ),
        Post(
            2,
            ("PLAY ● ♠7",),
            N_(
                "黒のあとに黒の♠7を「合わない」と宣言します。宣言どおりなので罰はなく、"
                "カードは列の下に外れとして置かれます。"
            ),
        ),
    ),
    content=content,
)
