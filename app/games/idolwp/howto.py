"""IM@S x Workerplacement's 遊び方 page as data (app/games/kit/howto.py): its verbs, its house
content (idols, appeal cards, events, round boards and their spaces; read from content/ when
the page is drawn) and a worked first turn."""

from __future__ import annotations

from app.games.base import N_
from app.games.idolwp.content import Event, Space, load
from app.games.kit.howto import CommandHelp, Entry, Howto, Post, Section

# What a space of each type does, as the spaces print it (game terms, like the card texts).
_SPACE_WORDS = {
    "start": "スタート",
    "goal": "ゴール",
    "training": "特訓",
    "event": "イベント",
}


def space_text(space: Space) -> str:
    """``L1 レッスン Vo2``, ``T1 特訓 2枚で1レベル``, ``D1 ある日の日常 思い出1``."""
    if space.type == "lesson":
        chips = " ".join(f"{ability}{count}" for ability, count in space.chips.items() if count)
        return f"{space.id} レッスン {chips}"
    if space.type == "training":
        return f"{space.id} 特訓 {space.rate}枚で1レベル"
    if space.type == "daily":
        return f"{space.id} ある日の日常 思い出{space.amount}"
    if space.type == "sales":
        return f"{space.id} 営業 アピールカード{space.amount}枚"
    return f"{space.id} {_SPACE_WORDS[space.type]}"


def event_text(event: Event) -> str:
    """``Lv1 (2, 1, 1) → 1EVP / … 順位報酬 10・5・2・0・0``."""
    parts = []
    for level in event.levels:
        if level.fixed:
            target = " ".join(f"{ability}{count}" for ability, count in level.fixed.items())
        else:
            target = "(" + ", ".join(str(count) for count in level.any) + ")"
        gains = [f"{level.evp}EVP"]
        if level.memory:
            gains.append(f"思い出{level.memory}")
        if level.cards:
            gains.append(f"アピールカード{level.cards}")
        parts.append(f"Lv{level.level} {target} → " + " ".join(gains))
    rewards = "・".join(str(points) for points in event.rewards)
    return " / ".join(parts) + f" / 順位報酬 {rewards}"


def content() -> list[Section]:
    loaded = load()
    return [
        Section(
            N_("アイドル"),
            tuple(
                Entry(
                    idol.name,
                    f"{idol.full_name} Vo{idol.Vo} Da{idol.Da} Vi{idol.Vi}"
                    + (f" 思い出{idol.memory}" if idol.memory else "")
                    + f" — {idol.text}",
                )
                for idol in loaded.idols.values()
            ),
            N_("1人につき2人を指名します。能力は2人の合計から始まります。"),
        ),
        Section(
            N_("アピールカード"),
            tuple(Entry(card.name, card.text) for card in loaded.cards.values()),
            N_("営業のマスなどで引きます。持てるのは3枚までです。"),
        ),
        Section(
            N_("イベント"),
            tuple(Entry(event.name, event_text(event)) for event in loaded.events.values()),
            N_(
                "最初は Rookies、そのあとは山から。目標はレベルごとの能力の値で、(4, 2, 2) の"
                "ような目標は Vo・Da・Vi に自由に割り当てられます。"
            ),
        ),
        Section(
            N_("ラウンドボードとマス"),
            tuple(
                Entry(
                    f"{board.id} {board.name}",
                    " / ".join(space_text(space) for space in board.spaces),
                )
                for board in loaded.boards.values()
            ),
            N_(
                "1ラウンドに1枚。矢印の先へならいくつ先のマスへも進めます。"
                "マスは L3 のように書きます。"
            ),
        ),
    ]


HOWTO = Howto(
    summary=N_(
        "アイドル2人をプロデュースするワーカープレイスメント。レッスンで能力を上げ、"
        "イベントを成功させて得点を集めます。2〜5人、9ラウンド。"
    ),
    players=("あかり", "ベン"),
    commands=(
        CommandHelp(
            "PICK",
            N_("準備: アイドルを1人指名します（1→N→1 の順で2人ずつ）。"),
            ("PICK 春香", "指名 千早"),
        ),
        CommandHelp(
            "MOVE",
            N_(
                "手番: アイドルを矢印の先のマスへ進め、そのマスの効果を受けます。"
                "同じ行に MONEY（マニーでイベントに参加）、EVENT、TRAIN を続けて書けます。"
            ),
            ("MOVE 春香 L1", "移動 千早 E1", "MOVE 春香 L3 MONEY EVENT LV2 BOOST Vo1 Da2 DOUBLE"),
        ),
        CommandHelp(
            "EVENT",
            N_(
                "イベントのマスで、レベルを選んで挑戦します。BOOST でチップを足し、DOUBLE で"
                "思い出を使って EVP を2倍にできます。EVENT SKIP で見送ります。"
            ),
            ("EVENT LV1", "イベント LV2 BOOST Vo1 Da1", "EVENT LV3 DOUBLE", "EVENT SKIP"),
        ),
        CommandHelp(
            "TRAIN",
            N_("特訓のマスで、チップを払って能力を上げます。"),
            ("TRAIN Vo2", "特訓 Da2 Vi2"),
        ),
        CommandHelp(
            "CONVERT",
            N_("手番中に、思い出1つを好きなチップ3つに、マニー1つをチップ2つに替えます。"),
            ("CONVERT MEMORY Vo Vo Da", "変換 マニー Da Vi"),
        ),
        CommandHelp(
            "CARD",
            N_("アピールカードを使います。"),
            ("CARD 差し入れ Vo Da", "カード 差し入れ Vi Vi"),
        ),
        CommandHelp(
            "DISCARD",
            N_("持ちすぎたアピールカードを捨てます。"),
            ("DISCARD 差し入れ", "捨てる 差し入れ"),
        ),
        CommandHelp(
            "SKIP",
            N_("マスが勧めること（イベント、特訓）をしないで手番を終えます。"),
            ("SKIP", "見送り"),
        ),
    ),
    first_turn=(
        Post(0, ("PICK 春香",), N_("スタートプレイヤーから順にアイドルを指名します。")),
        Post(1, ("PICK 千早", "PICK 美希"), N_("2人目は折り返しなので続けて2人指名します。")),
        Post(
            0,
            ("PICK 雪歩",),
            N_("最後の指名で全員がそろい、第1ラウンドが始まります。"),
        ),
        Post(
            0,
            ("MOVE 春香 L1",),
            N_("春香をレッスンのマス L1 に進め、印刷されたチップを得ます。"),
        ),
        Post(
            1,
            ("MOVE 千早 E1 EVENT LV1",),
            N_(
                "千早をイベントのマス E1 に進め、同じ行で Lv1 に挑戦します。"
                "能力が目標に届いたので成功し、EVP を得ます。"
            ),
        ),
    ),
    content=content,
)
