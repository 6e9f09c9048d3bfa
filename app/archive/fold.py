"""Replaying a game from nothing but its seed, options, players and move lines.

The game master's state is ``fold(apply, setup(seed), moves)``; this module does that fold
without the database, so an export file can be replayed (``bbsgm verify``) as well as a stored
game. Sealed moves are applied with ``sealed=True``, as the game master applied them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.games.base import Actor, Rng, State
from app.games.base import Game as GameImpl


@dataclass(frozen=True)
class MoveLine:
    """One applied move: its sequence number (its randomness), who made it, the line."""

    seq: int
    seat: int | None  # 0-based; None: the GM
    command: str
    sealed: bool = False


@dataclass
class Step:
    """The state after one move, and the public text of what the move did (dice, draws…)."""

    move: MoveLine
    state: State
    public: list[str] = field(default_factory=list)


def initial_state(
    impl: GameImpl, seed: str, options: Mapping[str, Any], players: list[str]
) -> State:
    return impl.setup(list(players), dict(options), Rng(seed, 0))


def public_texts(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """What the bot posts of a move's events: every text not marked private."""
    return [str(e["text"]) for e in events if e.get("text") and not e.get("private")]


def steps(
    impl: GameImpl,
    seed: str,
    options: Mapping[str, Any],
    players: list[str],
    moves: Iterable[MoveLine],
) -> Iterator[Step]:
    """The state after each move in turn. Raises what the game raises (RuleError,
    CommandSyntaxError) when a move no longer applies."""
    state = initial_state(impl, seed, options, players)
    for move in moves:
        actor: Actor = "gm" if move.seat is None else move.seat
        command = impl.parse(move.command)
        state, events = impl.apply(state, actor, command, Rng(seed, move.seq), sealed=move.sealed)
        yield Step(move, state, public_texts(events))


def fold(
    impl: GameImpl,
    seed: str,
    options: Mapping[str, Any],
    players: list[str],
    moves: Iterable[MoveLine],
) -> State:
    state: State | None = None
    for step in steps(impl, seed, options, players, moves):
        state = step.state
    return state if state is not None else initial_state(impl, seed, options, players)
