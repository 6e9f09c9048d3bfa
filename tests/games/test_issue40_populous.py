"""ポピュラス 草案21, issue 40: the rules an independent reading of the seed found the bot playing
differently. One test per clause of docs/rules/populous.md, named after it."""

from __future__ import annotations

import pytest

from app.games.base import Rng, RuleError, State
from app.games.populous import game
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
