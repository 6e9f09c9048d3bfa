"""掲示板進行カードゲーム, issue 40: the rules an independent reading of the seed found the bot
playing differently. One test per clause of docs/rules/cardbattle.md, named after it."""

from __future__ import annotations

import pytest

from app.games.base import Rng, RuleError, State
from app.games.cardbattle import game
from app.games.cardbattle.cards import CardSpec
from tests.support.cardbattle import ability, magic, normal

NAMES = ["A", "B"]


def do(state: State, seat: int, line: str, seq: int = 1) -> State:
    command = game.parse(line)
    sealed = game.needs_seal(state, command) is True
    state, _ = game.apply(state, seat, command, Rng("do", seq), sealed=sealed)
    return state


# --------------------------------------------------------------------------- 除外


# B's 1: destroyed, it hits all of A's cards for 100; A's 1: destroyed, it removes B's card with
# the highest attack (B's 3). A's area damage picked B's 3 among its targets before that.
REMOVAL_CHAIN = {
    card.name: card
    for card in (
        normal("反撃手", 100, 10, 100, ability("damage_all", 100, "destroyed")),
        normal("壁", 100, 10, 900),
        normal("狙われ", 100, 50, 100, ability("cost", 300, "destroyed")),
        normal("追放者", 100, 10, 100, ability("remove", 0, "destroyed")),
        normal("盾A", 100, 10, 900),
        normal("盾B", 100, 10, 900),
        magic("大火", 10, ability("damage_all", 100)),
        magic("蘇生", 10, ability("revive", 500)),
    )
}


def removed_partway() -> State:
    state = game.setup(NAMES, {"pool": REMOVAL_CHAIN}, Rng("t", 0))
    state = do(state, 0, "DECK 追放者 盾A 盾B MAGIC 大火", 1)
    state = do(state, 1, "DECK 反撃手 壁 狙われ MAGIC 蘇生", 2)
    return do(state, 0, "MAGIC 大火", 3)


def test_a_card_removed_partway_through_an_area_damage_takes_no_more_of_it() -> None:
    """R 除外 = {陣営,場}に存在していない状態 (耐久力の値は関係しない): a card removed while an area
    damage runs is off the field: the rest of that damage does not reach it, it stays removed
    (not destroyed) and its destroyed ability does not fire."""
    state = removed_partway()
    b = state["players"][1]
    assert state["players"][0]["field"][0]["state"] == "destroyed"  # the chain happened
    target = b["field"][2]
    assert target["state"] == "removed"
    assert target["left"] == 100 and not target["ability_used"]
    assert b["cost_change"] == 0  # its 破壊時 コスト +300 never fired
    assert b["field"][1]["left"] == 800  # the rest of the area damage still landed


def test_no_revive_brings_a_removed_card_back() -> None:
    """R 除外 (耐久力の値は関係しない): 復活 brings back a destroyed card, never a removed one, even
    when the removed card is written as the target."""
    state = removed_partway()
    field = do(state, 1, "MAGIC 蘇生", 4)["players"][1]["field"]
    assert field[2]["state"] == "removed"
    assert field[0]["state"] == "active"  # the destroyed one came back
    with pytest.raises(RuleError, match="除外"):
        do(state, 1, "MAGIC 蘇生 3", 4)


# --------------------------------------------------------------------------- カード作成


def registry_card(line: str) -> CardSpec:
    from app.games.cardbattle import registry

    command = registry.parse(line)
    assert isinstance(command, registry.NewCard | registry.PromoteCard)
    return command.card


STARTER_COPIES = [
    ("CARD NEW 歩兵二 COST 150 ATK 40 DUR 280", "歩兵"),
    ("CARD NEW 弓兵二 COST 180 ATK 45 DUR 230 ABILITY 登場時 ダメージ 60", "弓兵"),
    ("CARD NEW 火球二 MAGIC COST 100 ABILITY ダメージ 100", "火の玉"),
    ("CARD PROMOTE 新兵 COST 150 ATK 40 DUR 280 TEXT 歩兵と同じ", "歩兵"),
]


@pytest.mark.parametrize(("line", "starter"), STARTER_COPIES)
def test_creating_a_card_with_a_starter_cards_stats_and_abilities_is_refused(
    line: str, starter: str
) -> None:
    """R 「初期配布されるカードと異なるステータスの組み合わせを持つカードを作成する行為」: a new
    card (and a promotion, a カード作成行為 too) whose kind, cost, attack, durability and abilities
    equal a starter card's is refused, whatever its name and text; the refusal names the card."""
    from app.games.cardbattle.content import starter_copy

    said = starter_copy(registry_card(line))
    assert said is not None and f"「{starter}」" in said


@pytest.mark.parametrize(
    "line",
    [
        "CARD NEW 歩兵改 COST 150 ATK 41 DUR 280",
        "CARD NEW 弓兵改 COST 180 ATK 45 DUR 230 ABILITY 登場時 ダメージ 61",
        "CARD NEW 弓兵弐 COST 180 ATK 45 DUR 230",
        "CARD NEW 火球改 MAGIC COST 100 ABILITY ダメージ 100, 回復 10",
    ],
)
def test_a_card_differing_from_every_starter_card_in_one_stat_or_ability_may_be_made(
    line: str,
) -> None:
    """R 「異なるステータスの組み合わせ」: one number or one ability apart is a different card."""
    from app.games.cardbattle.content import starter_copy

    assert starter_copy(registry_card(line)) is None
