"""Legal commands found by trying (app/games/kit/legal.py): a candidate is legal exactly when
the game's own `execute` accepts it on a copy, the state is never touched, and trying draws
nothing from a move's Rng: each trial rolls the same throwaway die."""

from __future__ import annotations

import copy
from typing import Any

from app.games.base import Rng, RuleError, State
from app.games.kit.legal import accepted


def _execute(state: State, seat: int, command: int, rng: Rng) -> list[dict[str, Any]]:
    """A toy rule: seat may take a number of counters no larger than the pile; rolls a die."""
    rng.randint(1, 6)
    if command > state["pile"]:
        raise RuleError("too many")
    state["pile"] -= command
    state["taken"][seat] += command
    return []


def _copy(state: State) -> State:
    copied: State = copy.deepcopy(state)
    return copied


def test_the_candidates_the_rules_accept_are_kept_in_their_order() -> None:
    state: State = {"pile": 2, "taken": [0, 0]}
    assert accepted(state, 1, [3, 0, 2, 1, 5], _execute, _copy) == [0, 2, 1]


def test_each_candidate_is_tried_on_its_own_copy_and_the_state_is_never_touched() -> None:
    state: State = {"pile": 2, "taken": [0, 0]}
    # Were the trials run on one shared copy, taking 2 would leave nothing for the next 2.
    assert accepted(state, 0, [2, 2], _execute, _copy) == [2, 2]
    assert state == {"pile": 2, "taken": [0, 0]}


def _lucky(state: State, seat: int, command: int, rng: Rng) -> list[dict[str, Any]]:
    """A toy rule decided by a die: the command must not exceed the roll."""
    if command > rng.randint(1, 6):
        raise RuleError("unlucky")
    return []


def test_a_trial_a_die_decides_is_decided_the_same_way_every_time() -> None:
    found = accepted({}, 0, range(1, 7), _lucky, _copy)
    assert found == accepted({}, 0, range(1, 7), _lucky, _copy)
    # Every candidate rolls the same throwaway die (Rng("legal", 0)): the kept ones are
    # exactly those up to its roll.
    assert found == list(range(1, Rng("legal", 0).randint(1, 6) + 1))
