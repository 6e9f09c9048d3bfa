"""ポピュラス 草案21, issue 40: the rules an independent reading of the seed found the bot playing
differently. One test per clause of docs/rules/populous.md, named after it."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.base import Rng, RuleError, State
from app.games.populous import game, rules
from tests.games.test_populous_rules import go, placed, ready, situation

LATE_LINES = ("WAR", "MEDIATE", "TOWN 13a", "REVEAL 開拓")


def prosperity_played(round_: int) -> State:
    """The last seat of `round_` has played 繁栄 and may still discard: the `after` step."""
    last = (ready(3)["start"] - 1) % 3
    state = situation(last, round_=round_, hand=["繁栄"] * 4, gens=[["祝福"]])
    state = go(placed(state, last), last, "PLAY 繁栄")
    assert state["step"] == "after" and state["turn"] == last
    return state


@pytest.mark.parametrize("round_", [11, 12])
@pytest.mark.parametrize("line", LATE_LINES)
def test_a_step_with_no_choice_is_refused_in_the_last_turn_of_round_12_too(
    round_: int, line: str
) -> None:
    """R 12ラウンド: the game's last turn ends inside the closing of its optional step; a WAR,
    MEDIATE, TOWN or REVEAL with nothing to choose there is refused with the reason, as in any
    other round, and the game stays as it was (not over, the same step)."""
    state = prosperity_played(round_)
    seat = state["turn"]
    with pytest.raises(RuleError) as caught:
        game.apply(state, seat, game.parse(line), Rng("late", 1))
    message = caught.value.message
    assert "END" in message and ("戦争" in message or "決算" in message)
    assert state["phase"] == "play" and state["step"] == "after"


# --------------------------------------------------------------------------- 決算


def after_a_generation_change(pieces: dict[str, list[list[Any]]]) -> State:
    """A (seat 0) has changed generation with cards left in hand: the discards are open."""
    state = situation(0, hand=["労働"] * 4, gens=[["祝福"]], pieces=pieces, round_=2)
    state = go(placed(state), 0, "NEWGEN 労働")
    assert state["step"] == "after" and state["players"][0]["hand"]
    return state


def accepted(state: State, line: str) -> State:
    after, _ = game.apply(state, 0, game.parse(line), Rng("settle", 1))
    return after


def test_settlement_town_on_any_square_allowed_is_offered_after_a_generation_change() -> None:
    """R 〇決算 「タウンは好きなエリア(【創世エリア】以外でも可)に建設」: with several squares
    allowed, each `TOWN <sq>` is offered (not only END's default), and each is accepted."""
    state = after_a_generation_change({"13a": [[0, "w"], [1, "t"]], "13c": [[0, "w"]]})
    offered = [line for line in game.legal(state, 0) if line.startswith("TOWN")]
    assert sorted(offered) == ["TOWN 13c", "TOWN 24c"]
    for line in offered:
        square = line.split()[1]
        assert [0, "t"] in accepted(state, line)["pieces"][square]


def test_settlement_skill_of_the_players_choice_is_offered_after_a_generation_change() -> None:
    """R 〇決算 「伏せてあるスキルカードの中から好きな1枚を選んで」: when the town builds itself
    (one square), each face-down skill's `REVEAL` is offered, and each is accepted."""
    state = after_a_generation_change({})
    assert rules.town_options(state, 0) == ["24c"]
    hidden = state["players"][0]["skills"]
    offered = [line for line in game.legal(state, 0) if line.startswith("REVEAL")]
    assert sorted(offered) == sorted(f"REVEAL {name}" for name in hidden)
    for line in offered:
        name = line.split()[1]
        assert accepted(state, line)["players"][0]["revealed"] == [name]


def test_end_still_settles_by_the_defaults() -> None:
    """D (Defaults): END takes every decision left by the default rule — the first square and
    the first face-down skill — so a deadline's END and recorded games play as before; a
    player who wants to choose writes the offered TOWN / REVEAL."""
    state = after_a_generation_change({"13c": [[0, "w"]]})
    first_skill = state["players"][0]["skills"][0]
    after = accepted(state, "END")
    assert [0, "t"] in after["pieces"][rules.town_options(state, 0)[0]]
    assert after["players"][0]["revealed"] == [first_skill]
