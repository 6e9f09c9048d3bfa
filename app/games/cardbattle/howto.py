"""掲示板進行カードゲーム's 遊び方 page as data (app/games/kit/howto.py): its verbs, the
starter card pool (content/cards.toml, read when the page is drawn; the registry's later cards
are on /cards) and a worked first turn."""

from __future__ import annotations

from app.games.base import N_
from app.games.cardbattle.cards import ability_text
from app.games.cardbattle.content import starter_pool
from app.games.kit.howto import CommandHelp, Entry, Howto, Post, Section


def content() -> list[Section]:
    cards = starter_pool()
    normal = tuple(
        Entry(
            card.name,
            f"コスト{card.cost} 攻撃{card.attack} 耐久{card.durability}"
            + "".join(f" / {ability_text(ability)}" for ability in card.abilities)
            + (f" — {card.text}" if card.text else ""),
        )
        for card in cards
        if card.kind == "normal"
    )
    magic = tuple(
        Entry(
            card.name,
            f"コスト{card.cost}"
            + "".join(f" / {ability_text(ability)}" for ability in card.abilities)
            + (f" — {card.text}" if card.text else ""),
        )
        for card in cards
        if card.kind == "magic"
    )
    return [
        Section(
            N_("通常カード（初期カード）"),
            normal,
            N_("デッキに3枚入れます。能力がいくつかあるカードは、ダイスでどれか1つが選ばれます。"),
        ),
        Section(
            N_("マジックカード（初期カード）"),
            magic,
            N_("デッキに3枚まで。宣言したときに1回だけ働き、そのコストが総コストに加わります。"),
        ),
    ]


HOWTO = Howto(
    summary=N_(
        "1対1のカードバトル。通常カード3枚とマジックカードでデッキを組み、10手番ずつ"
        "自動で攻撃し合います。総コスト1000を超えると負け。2人。"
    ),
    players=("あかり", "ベン"),
    commands=(
        CommandHelp(
            "DECK",
            N_(
                "準備: 通常カード3枚と、MAGIC のあとにマジックカードを3枚まで選び、"
                "封印して送ります。"
            ),
            ("DECK アメショー MAKI 僧侶", "デッキ 舞踏子 ホープ 歩兵 MAGIC 火の玉"),
            "sealed",
        ),
        CommandHelp(
            "ATTACK",
            N_(
                "自分の手番に攻撃します。ATTACK だけなら自動で、1>2 のように書くと自分の1番の"
                "カードが相手の2番を攻撃します。"
            ),
            ("ATTACK", "ATTACK 1>2 2>1", "攻撃 1>1 2>1 3>1"),
        ),
        CommandHelp(
            "MAGIC",
            N_("結果のあとの宣言受付で、マジックカードを宣言します（対象の番号を書けます）。"),
            ("MAGIC 火の玉", "魔法 火の玉 2"),
        ),
        CommandHelp(
            "PASS",
            N_("宣言受付で、何もしないことを伝えます。2人ともパスすると次へ進みます。"),
            ("PASS", "パス"),
        ),
    ),
    first_turn=(
        Post(
            0,
            ("DECK アメショー MAKI 僧侶",),
            N_("デッキを封印して送ります。相手に見えるのは送ったことだけです。"),
            sealed=True,
        ),
        Post(
            1,
            ("DECK アメショー ホープ 犬妖精の戦士",),
            N_(
                "2人がそろうとデッキが公開され、ダイスで各カードの能力が決まり、"
                "登場時の能力が働きます。続いて最初の宣言受付です。"
            ),
            sealed=True,
        ),
        Post(0, ("PASS",), N_("マジックカードを使わないのでパスします。")),
        Post(
            1,
            ("PASS",),
            N_("2人ともパスしたので第1手番が始まります。"),
        ),
        Post(
            0,
            ("ATTACK",),
            N_(
                "先手が攻撃します。カードが順に相手の耐久力のいちばん低いカードを"
                "攻撃し、結果が出たら次の宣言受付です。"
            ),
        ),
    ),
    content=content,
)
