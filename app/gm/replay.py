"""Rebuilding a game's state from its log: setup(seed) folded with every applied move."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Game, Move
from app.games import find_game
from app.games.base import Game as GameImpl
from app.games.base import Rng, State


def initial_state(impl: GameImpl, game: Game, players: list[str]) -> State:
    return impl.setup(players, dict(game.options), Rng(game.seed, 0))


def fold(
    impl: GameImpl,
    game: Game,
    players: list[str],
    moves: Iterable[tuple[int, int | None, str, bool]],
) -> State:
    """``moves``: (seq, actor seat or None for the GM, canonical line, sealed), in order."""
    # One copy, then every move edits it in place (``apply_owned``): nothing else holds it.
    state = impl.copy_state(initial_state(impl, game, players))
    for seq, seat, line, sealed in moves:
        actor: Any = "gm" if seat is None else seat
        command = impl.parse(line)
        impl.apply_owned(state, actor, command, Rng(game.seed, seq), sealed=sealed)
    return state


def log_of(moves: Iterable[Move]) -> list[tuple[int, int | None, str, bool]]:
    return [(m.seq, m.actor_seat, m.command, m.sealed) for m in moves]


def applied_moves(session: Session, game: Game) -> list[Move]:
    return list(
        session.scalars(
            select(Move).where(Move.game_id == game.id, Move.undone.is_(False)).order_by(Move.seq)
        )
    )


def replay(session: Session, game: Game, upto: int | None = None) -> State | None:
    """The state after the first ``upto`` applied moves (all when None); None before START."""
    impl = find_game(game.kind)
    if impl is None or game.started_at is None:
        return None
    moves = applied_moves(session, game)
    if upto is not None:
        moves = moves[:upto]
    players = game.players_at_start or [p.name for p in sorted(game.players, key=lambda p: p.seat)]
    return fold(impl, game, players, log_of(moves))


def check_games(session: Session) -> list[str]:
    """Every started game replayed from its log must equal its stored state."""
    problems = []
    for game in session.scalars(select(Game).where(Game.started_at.is_not(None)).order_by(Game.id)):
        if find_game(game.kind) is None:
            problems.append(f"game {game.id}: unknown kind {game.kind!r}")
            continue
        try:
            rebuilt = replay(session, game)
        except Exception as exc:  # a log that no longer replays is exactly what check reports
            problems.append(f"game {game.id}: replay failed: {exc}")
            continue
        if rebuilt != game.state:
            problems.append(f"game {game.id}: stored state differs from the replayed log")
        last = session.scalar(select(func.max(Move.seq)).where(Move.game_id == game.id)) or 0
        if last != game.last_seq:
            problems.append(
                f"game {game.id}: last_seq {game.last_seq} but the log ends at move {last}"
            )
    return problems
