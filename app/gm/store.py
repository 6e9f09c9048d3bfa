"""A game's rows, through the session: the game locked and read afresh for a submission, and
what the submission did written back — moves, seats, adjustments, the moderation log, the game
row and the notifications — in the submission's transaction (the caller's unit of work
commits it)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.orm import Session, defer, lazyload
from sqlalchemy.orm.attributes import set_committed_value

from app.db.models import Adjustment, Game, GamePlayer, ModerationEntry, Move, Post
from app.gm import ratings
from app.gm.results import final_result
from app.gm.working import Submission, Working
from app.notify import notices as notify

# A game's options are read only by START and UNDO (``impl.setup``) and never change: left
# unread until then (a card game's are its ~10 KB card pool). Its thread and GM, which the
# model joins to every SELECT of a game, are not needed to play it: not joined to a locking
# SELECT either (PostgreSQL locks no row on the nullable side of an outer join).
_FOR_A_SUBMISSION = (defer(Game.options), lazyload(Game.thread), lazyload(Game.gm))
# Built once (with bound parameters): building the statement anew on every post cost as much
# as running it.
_LOCK = (
    select(Game)
    .options(*_FOR_A_SUBMISSION, lazyload(Game.players))
    .with_for_update(of=Game)
    .execution_options(populate_existing=True)
)
_LOCK_BY_THREAD = _LOCK.where(Game.thread_id == bindparam("thread_id"))
_LOCK_BY_ID = _LOCK.where(Game.id == bindparam("game_id"))
_SEATS = (
    select(GamePlayer)
    .where(GamePlayer.game_id == bindparam("game_id"))
    .order_by(GamePlayer.seat)
    .execution_options(populate_existing=True)
)
# The moves are written by a Core INSERT of their rows (one executemany), not as ORM objects:
# nothing reads them back in the submission's transaction but by a query.
_MOVES: Table = Move.__table__  # type: ignore[assignment]
_INSERT_MOVES = insert(_MOVES)


def lock_game(
    session: Session, game_id: int | None = None, *, thread_id: int | None = None
) -> Game | None:
    """The game row (by id, or by the thread it hosts), locked until commit and read afresh,
    with its seats (SQLite: the write lock of BEGIN IMMEDIATE is held already).

    The seats come from a second statement (``read_seats``), run once the
    lock is held, never joined into the locking one: on PostgreSQL a ``SELECT … FOR UPDATE``
    that waited for the lock re-reads the locked row only, and rows joined to it keep the
    snapshot taken before the wait — seats taken by the post that held the lock would be
    missing (tests/test_load_concurrency.py). ``populate_existing`` makes both fresh reads,
    also of a game and seats this session read in an earlier transaction (a lazy load would
    keep those seats as they were).
    """
    if thread_id is not None:
        game = session.scalars(_LOCK_BY_THREAD, {"thread_id": thread_id}).one_or_none()
    else:
        game = session.scalars(_LOCK_BY_ID, {"game_id": game_id}).one_or_none()
    if game is not None:
        read_seats(session, game)
    return game


def read_seats(session: Session, game: Game) -> None:
    """The game's seats read afresh in seat order (``populate_existing``: seats this session
    read before are refreshed) and given to the game as its loaded collection
    (``set_committed_value``: no change to flush). A plain SELECT of the rows costs half of
    what the relationship's ``selectin`` loader does around the same SELECT."""
    seats = list(session.scalars(_SEATS, {"game_id": game.id}))
    set_committed_value(game, "players", seats)


def save(
    session: Session,
    sub: Submission,
    work: Working,
    *,
    post: Post | None,
    sealed_id: int | None,
) -> None:
    """Write what ``work`` did: moves, adjustments, log, seats and the game row, and the
    notifications. ``post``: the post whose commands these were, written already (None for
    a sealed command, ``sealed_id`` then); the moves name it."""
    game, impl = sub.game, sub.impl
    post_number = post.number if post is not None else None
    waiting_before = notify.waiting_seats(impl, game, game.state)
    label_before = impl.turn_label(game.state) if game.state is not None else ""
    turn_before = game.turn_key
    was_over = game.status in ("finished", "aborted")
    seated_before = {p.user_id: p.name for p in game.players if p.user_id is not None}
    if work.undone_moves:
        for undone in session.scalars(select(Move).where(Move.id.in_(work.undone_moves))):
            undone.undone = True
        session.flush()  # written now: what reads the applied moves after save counts them
    handed_over = _write_seats(session, game, work)
    for adjusted, delta, reason in work.adjustments:
        session.add(
            Adjustment(
                game_id=game.id,
                seat=adjusted,
                delta=delta,
                reason=reason,
                post_number=post_number,
                created_at=sub.now,
            )
        )
    for action, detail in work.log:
        session.add(
            ModerationEntry(
                game_id=game.id,
                thread_id=game.thread_id,
                actor_name=sub.by.name,
                action=action,
                detail=detail,
                post_number=post_number,
                created_at=sub.now,
            )
        )
    _write_game(session, sub, work)
    notify.after_save(
        session,
        game,
        impl,
        waiting_before=waiting_before,
        handed_over=handed_over,
        turn_moved=work.started or game.turn_key != turn_before,
        finished_now=game.status == "finished" and not was_over,
        now=sub.now,
        label_before=None if work.started else label_before,
        seated_before=seated_before,
    )
    # One flush for what went through the session: new seats, adjustments and the log (the
    # notices' INSERT may have flushed them); the game row and the seats' waiting_since are
    # Core statements already (``_write_game``, ``notify.after_save``).
    session.flush()
    if work.moves:
        session.execute(_INSERT_MOVES, _move_rows(sub, work, post, sealed_id))
    if game.status == "finished":
        # The result exists only once the game is over (the GM's ADJUSTs, written above, are
        # read); then its players' ratings (again, if an ADJUST changed it).
        game.result = final_result(session, game, impl)
        session.flush()
        ratings.record_finished(session, game)


def _write_seats(session: Session, game: Game, work: Working) -> set[int]:
    """The seats as ``work`` left them, when they changed; returns the seats whose player
    changed (REPLACE, or a kicked seat given back): told "your turn" if the game waits for
    them, whoever it waited for before."""
    current = [
        (p.user_id, p.name, p.kicked, p.absences_used, p.bot)
        for p in sorted(game.players, key=lambda p: p.seat)
    ]
    wanted = [(s.user_id, s.name, s.kicked, s.absences_used, s.bot) for s in work.seats]
    if current == wanted:
        return set()
    handed_over = {
        seat
        for seat, after in enumerate(wanted)
        if seat >= len(current) or current[seat][0::2] != after[0::2]
    }
    game.players.clear()
    session.flush()  # the old seats gone before new ones take their numbers (unique)
    for index, seat in enumerate(work.seats):
        game.players.append(
            GamePlayer(
                game_id=game.id,
                seat=index,
                user_id=seat.user_id,
                name=seat.name,
                kicked=seat.kicked,
                absences_used=seat.absences_used,
                bot=seat.bot,
            )
        )
    return handed_over


def _move_rows(
    sub: Submission, work: Working, post: Post | None, sealed_id: int | None
) -> list[dict[str, Any]]:
    """One ``moves`` row per command applied, in order."""
    return [
        {
            "game_id": sub.game.id,
            "seq": move.seq,
            "post_id": post.id if post is not None else None,
            "post_number": post.number if post is not None else None,
            "sealed_id": sealed_id,
            "actor_seat": move.seat,
            "actor_name": move.actor_name,
            "command": move.line,
            "parsed": move.parsed,
            "undone": False,
            "by_bot": move.by_bot,
            "sealed": move.sealed,
            "created_at": sub.now,
        }
        for move in work.moves
    ]


def _write_game(session: Session, sub: Submission, work: Working) -> None:
    """The game row as ``work`` left it, its version bumped: one Core UPDATE of the columns
    that change, which the loaded game then holds as its committed values
    (``set_committed_value``), leaving nothing of it for the session's flush. A flush of the
    one changed game cost ten times the UPDATE (docs/performance.md)."""
    game, impl, now = sub.game, sub.impl, sub.now
    if work.status != "active" or work.deadline_hours is None:
        deadline_at = None
    elif work.deadline_reset or work.deadline_at is None:
        deadline_at = now + timedelta(hours=work.deadline_hours)
    else:
        deadline_at = work.deadline_at
    over = work.status in ("finished", "aborted")
    wanted: dict[str, Any] = {
        "deadline_warned": game.deadline_warned and deadline_at == game.deadline_at,
        "status": work.status,
        "paused": work.paused,
        "deadline_hours": work.deadline_hours,
        "deadline_at": deadline_at,
        "turn_key": impl.turn_key(work.state) if work.state is not None else None,
        "finished_at": (game.finished_at or now) if over else None,
    }
    if work.status != "finished":
        wanted["result"] = None  # the result exists only once the game is over (``save``)
    if work.started:
        wanted["players_at_start"] = [s.name for s in work.seats]
        wanted["started_at"] = now
        wanted["wording"] = impl.wording  # the bot's replies are written in it from here on
    changed = {key: value for key, value in wanted.items() if getattr(game, key) != value}
    changed.update(state=work.state, version=game.version + 1, last_seq=work.next_seq - 1)
    session.execute(_UPDATE_GAME, {"game_id_": game.id, **changed})
    for key, value in changed.items():
        set_committed_value(game, key, value)


_GAMES: Table = Game.__table__  # type: ignore[assignment]
# Built once: the columns it sets are the keys of each execution's parameters (the compiled
# form is cached per set of keys).
_UPDATE_GAME = update(_GAMES).where(_GAMES.c.id == bindparam("game_id_"))
