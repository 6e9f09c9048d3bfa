"""The command lines a user may give now: in the thread, sealed, and as patterns — for the
pages, the API's /legal, and the lines a refusal offers."""

from __future__ import annotations

from collections.abc import Callable

from app.db.models import Game, User
from app.games.base import Actor, State
from app.games.base import Game as GameImpl


def is_gm(game: Game, user: User | None) -> bool:
    return user is not None and game.gm_id == user.id


def reads_as_gm(game: Game, user: User | None) -> bool:
    """Whether ``user`` reads a running game as its GM — every hand, every sealed line. Only
    a GM who does not play: a GM who holds a seat (not KICKed) reads as that seat until the
    game is over, as every player does (otherwise a person who makes a table with bots, and
    so is its GM, would read the bots' hands while playing against them)."""
    if not is_gm(game, user):
        return False
    assert user is not None
    return not any(p.user_id == user.id and not p.kicked for p in game.players)


def _actor_of(game: Game, user: User | None) -> tuple[Actor | None, int | None, bool]:
    """(who the user acts as: their seat or "gm" or None, their seat, whether they are GM);
    a kicked seat acts as nobody."""
    if user is None:
        return None, None, False
    seat = next((p.seat for p in game.players if p.user_id == user.id), None)
    gm_user = is_gm(game, user)
    if seat is not None:
        return (None if game.players[seat].kicked else seat), seat, gm_user
    return ("gm" if gm_user else None), None, gm_user


# The GM's own lines while a game runs: the table's tools, not moves of the game.
GM_TOOLS = ("PAUSE", "RESUME", "UNDO", "ABORT")


def moves_and_tools(lines: list[str]) -> tuple[list[str], list[str]]:
    """``lines`` parted into the game's moves and the GM's tools (``GM_TOOLS``), each in its
    order: a page shows the tools apart, so that ABORT is not one tap from a move."""
    moves = [line for line in lines if line not in GM_TOOLS]
    return moves, [line for line in lines if line in GM_TOOLS]


def legal_for(game: Game, impl: GameImpl, user: User | None, *, public: bool = False) -> list[str]:
    """Command lines this user may post in the thread now. ``public``: for a refusal the
    whole thread reads, so without the lines that name the user's hidden things (a hand)."""
    if public:
        return _legal_for(game, impl, user, impl.refusal_lines)
    return legal_split_for(game, impl, user)[0]


def legal_split_for(game: Game, impl: GameImpl, user: User | None) -> tuple[list[str], list[str]]:
    """What ``/legal`` answers: the lines this user may post in the thread now and those
    they may (or must) send sealed, from one listing of the game's legal commands."""
    actor = _playing_actor(game, user)
    thread: list[str] = []
    sealed: list[str] = []
    if actor is not None and game.state is not None:
        thread, sealed = impl.legal_split(game.state, actor)
    return _legal_for(game, impl, user, lambda _state, _actor: thread), sealed


def _legal_for(
    game: Game, impl: GameImpl, user: User | None, shown: Callable[[State, Actor], list[str]]
) -> list[str]:
    if user is None:
        return []
    actor, seat, gm_user = _actor_of(game, user)
    lines: list[str] = []
    if game.status == "recruiting":
        if seat is None and len(game.players) < impl.max_players:
            lines.append("JOIN")
        if seat is not None:
            lines.append("LEAVE")
        if gm_user and len(game.players) >= impl.min_players:
            lines.append("START")
    elif game.status == "active" and game.state is not None:
        if not game.paused and actor is not None:
            lines.extend(shown(game.state, actor))
        if gm_user:
            lines.extend(["RESUME"] if game.paused else ["PAUSE"])
            lines.extend(["UNDO", "ABORT"])
    return lines


def _playing_actor(game: Game, user: User | None) -> Actor | None:
    if game.status != "active" or game.state is None or game.paused:
        return None
    return _actor_of(game, user)[0]


def examples_for(game: Game, impl: GameImpl, user: User | None) -> list[tuple[str, bool]]:
    """Free-text lines to show as patterns (a secret rule's form), with whether sealed."""
    actor = _playing_actor(game, user)
    return [] if actor is None or game.state is None else impl.examples(game.state, actor)
