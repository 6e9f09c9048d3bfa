"""掲示板進行カードゲーム, decks from collections (docs/rules/cardbattle.md, Cards; R 通常カード
「f:規定枚数 ← 9」, マジックカード 「3枚以下」): the library given each player's collection (the
app puts it in the options at START) draws decks from it only; without one, the whole pool."""

from __future__ import annotations

import pytest

from app.games.base import Rng, RuleError, State
from app.games.cardbattle import game
from app.games.cardbattle import rules as battle
from tests.support.cardbattle import ability, magic, normal

NAMES = ["A", "B"]
POOL = {
    card.name: card
    for card in (
        normal("壁1", 300, 10, 900),
        normal("壁2", 300, 10, 900),
        normal("壁3", 300, 10, 900),
        normal("高価", 400, 10, 900),
        normal("安価", 100, 10, 900),
        magic("火の玉", 100, ability("damage", 300)),
        magic("癒し", 50, ability("heal", 100)),
    )
}
HELD = {"A": ["壁1", "壁2", "安価", "癒し"], "B": ["壁1", "壁2", "壁3", "高価", "火の玉"]}


def seated(collections: dict[str, list[str]] | None = None) -> State:
    options: dict[str, object] = {"pool": POOL}
    if collections is not None:
        options["collections"] = collections
    return game.setup(NAMES, options, Rng("t", 0))


def refused(state: State, seat: int, line: str) -> str:
    with pytest.raises(RuleError) as caught:
        game.apply(state, seat, game.parse(line), Rng("do", 1), sealed=True)
    return caught.value.message


def accepted(state: State, seat: int, line: str) -> State:
    new_state, _events = game.apply(state, seat, game.parse(line), Rng("do", 1), sealed=True)
    return new_state


def test_規定枚数_a_deck_is_drawn_from_its_players_collection_only() -> None:
    state = seated(HELD)
    message = refused(state, 0, "DECK 壁1 壁2 壁3")
    assert "壁3 はあなたのコレクションにありません" in message
    assert "火の玉 はあなたのコレクションにありません" in refused(
        state, 0, "DECK 壁1 壁2 安価 MAGIC 火の玉"
    )
    accepted(state, 0, "DECK 壁1 壁2 安価 MAGIC 癒し")
    accepted(state, 1, "DECK 壁1 壁3 高価 MAGIC 火の玉")


def test_規定枚数_a_deck_holds_a_card_once_with_or_without_collections() -> None:
    """D: a collection holds a card once, so the same normal card twice is refused, naming
    it — the library alone too."""
    for state in (seated(HELD), seated()):
        assert "壁1 が2枚あります" in refused(state, 0, "DECK 壁1 壁1 壁2")


def test_without_a_collection_the_whole_pool_is_the_players() -> None:
    """The library alone, or a seat with no account (a bot's): any card of the pool."""
    state = seated({"A": HELD["A"]})
    assert battle.held(state, 1) is None
    accepted(state, 1, "DECK 壁3 高価 安価 MAGIC 火の玉")
    accepted(seated(), 0, "DECK 壁3 高価 安価 MAGIC 火の玉")


def test_suggested_and_deadline_decks_come_from_the_collection() -> None:
    """D: the sealed form's suggestions and the deadline's default deck are the seat's own."""
    state = seated(HELD)
    for seat, name in enumerate(NAMES):
        decks = battle.suggested_decks(state, seat)
        assert decks and all(set(d.cards) <= set(HELD[name]) for d in decks)
        (line,) = battle.default_commands(state, seat)
        accepted(state, seat, line)
    dearest = battle.suggested_decks(state, 1)[0].cards
    assert "高価" in dearest and sum(POOL[name].cost for name in dearest) == 1000
    legal = game.sealed_legal(state, 0)
    assert legal and all("壁3" not in line and "高価" not in line for line in legal)


def test_a_state_from_before_collections_plays_with_the_whole_pool() -> None:
    state = seated(HELD)
    del state["collections"]
    accepted(state, 0, "DECK 壁3 高価 安価")
