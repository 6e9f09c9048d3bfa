"""Legal commands found by trying them: each candidate run by the game's own `execute` on a
copy of the state.

Where "what the rules accept" is easier to say than to list, a game enumerates generous
candidates (every idol, every space, every card of the hand) and keeps those its `execute`
accepts, each tried on its own `copy_state` with a throwaway `Rng` ("legal", 0): what a trial
rolls is never seen nor recorded, so listing the legal lines draws nothing from a move's
`Rng` and a replay is unchanged. The lines offered then agree with the rules by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from app.games.base import Rng, RuleError, State

__all__ = ["accepted"]

C = TypeVar("C")


def accepted(
    state: State,
    seat: int,
    candidates: Iterable[C],
    execute: Callable[[State, int, C, Rng], object],
    copy_state: Callable[[State], State],
) -> list[C]:
    """The `candidates` that ``execute(copy_state(state), seat, candidate, rng)`` runs
    without a RuleError, in their order; `state` itself is never touched."""
    kept: list[C] = []
    for command in candidates:
        try:
            execute(copy_state(state), seat, command, Rng("legal", 0))
        except RuleError:
            continue
        kept.append(command)
    return kept
