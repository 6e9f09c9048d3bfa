"""The contract every registered game keeps with the game master (app/games/base.py): ``apply``
never mutates the state it is given. The pipeline relies on it: its working copy shares the
game's stored state instead of copying it (app/gm/pipeline.working_copy), so a game that wrote
into its input would change the stored state even when the post is refused."""

from __future__ import annotations

import copy
import random

import pytest

from app.games import GAMES
from app.games.base import CommandSyntaxError, Rng, RuleError


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_apply_never_mutates_its_input_over_whole_games(kind: str) -> None:
    impl = GAMES[kind]
    names = [f"P{n}" for n in range(max(impl.min_players, 3))][: impl.max_players]
    chooser = random.Random(f"contract-{kind}")
    applied = 0
    for game_number in range(3):
        state = impl.setup(names, {}, Rng(f"contract-{kind}-{game_number}", 0))
        for seq in range(1, 200):
            if impl.is_over(state):
                break
            seats = impl.waiting_for(state) or list(range(len(names)))
            seat = chooser.choice(seats)
            lines = [
                *impl.legal(state, seat),
                *impl.sealed_legal(state, seat),
                *(line for line, _sealed in impl.examples(state, seat)),
            ]
            if not lines:
                break
            snapshot = copy.deepcopy(state)
            moved = None
            for line in chooser.sample(lines, min(len(lines), 4)):
                try:
                    command = impl.parse(line)
                    sealed = impl.needs_seal(state, command) is True
                    new_state, _events = impl.apply(
                        state, seat, command, Rng(f"contract-{kind}", seq), sealed=sealed
                    )
                except (CommandSyntaxError, RuleError):
                    assert state == snapshot, f"a refused {line!r} changed its input"
                    continue
                assert state == snapshot, f"{line!r} changed the state it was given"
                moved = new_state
                applied += 1
            if moved is None:
                break
            state = moved
    assert applied >= 20, f"only {applied} moves applied: the contract was hardly exercised"
