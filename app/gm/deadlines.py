"""Turn deadlines: when one passes, the bot plays each missing player's default moves and
says who was late. Runs inside ``bbsgm serve`` and as ``bbsgm tick``; several processes may
tick at once and each deadline is still applied once (SKIP LOCKED on PostgreSQL; SQLite
writers are serialised by BEGIN IMMEDIATE and the deadline is read again under the lock)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.engine import Database, is_postgres
from app.db.models import Game, utcnow
from app.forum import service as forum
from app.games import find_game
from app.games.base import RuleError
from app.gm import bots, reply, store
from app.gm.reply import BOT_NAME
from app.gm.submission import Refusal
from app.gm.working import Submission, Submitter, autoplay_kicked, play_defaults, working_copy
from app.notify import notices as notify

log = logging.getLogger("bbsgm.deadlines")
MAX_GAMES_PER_TICK = 100


def _next_due(session: Session, now: datetime) -> Game | None:
    query = (
        select(Game)
        .where(
            Game.status == "active",
            Game.paused.is_(False),
            Game.deadline_at.is_not(None),
            Game.deadline_at <= now,
        )
        .order_by(Game.deadline_at, Game.id)
        .limit(1)
    )
    if is_postgres(session):
        query = query.with_for_update(of=Game, skip_locked=True)
    return session.scalar(query.execution_options(populate_existing=True))


def expire(session: Session, game: Game, secret: str, now: datetime) -> str:
    """Play the defaults of everyone the game waits for; returns the notice posted."""
    impl = find_game(game.kind)
    assert impl is not None and game.state is not None
    session.refresh(game, ["players"])
    sub = Submission(game, impl, Submitter(None, BOT_NAME), [], now)
    work = working_copy(game)
    assert work.state is not None
    late = list(impl.waiting_for(work.state))
    names = [work.seats[seat].name for seat in late]
    try:
        for seat in late:
            if work.status != "active":
                break
            play_defaults(sub, work, seat, reason="期限切れ")
        autoplay_kicked(sub, work)
    except (RuleError, Refusal) as exc:
        log.warning("game %s: default moves refused: %s", game.id, exc)
        game.deadline_at = now + timedelta(hours=game.deadline_hours or 24)
        text = (
            f"⏰ 期限が過ぎましたが、既定の手を指せませんでした（{exc}）。GM が確認してください。"
        )
        forum.add_post(
            session,
            game.thread_id,
            author=None,
            author_name=BOT_NAME,
            body=text,
            kind="gm",
            secret=secret,
            now=now,
        )
        return text
    work.deadline_reset = True
    work.board_changed = reply.board_moved(impl, game.state, work.state)
    header = (
        f"⏰ 期限切れ: {'、'.join(names)} さんが期限までに動かなかったため、ボットが既定の手で"
        "進めました。"
        if names
        else "⏰ 期限が過ぎました。"
    )
    notice = forum.add_post(
        session,
        game.thread_id,
        author=None,
        author_name=BOT_NAME,
        body=header,
        kind="gm",
        secret=secret,
        now=now,
    )
    store.save(session, sub, work, post=notice, sealed_id=None)
    notify.timed_out(session, game, names, now)
    notice.body = f"{header}\n{reply.success_text(session, sub, work)}".rstrip()
    notice.board_at = reply.board_at(session, sub, work)
    bots.play_bots(session, game, impl, secret, now)  # a seated bot handed the turn plays it
    session.flush()
    return notice.body


def tick(db: Database, secret: str, now: datetime | None = None) -> list[int]:
    """Apply every deadline that has passed; returns the ids of the games moved on."""
    now = now or utcnow()
    with db.session() as session:
        notify.warn_deadlines(session, now)
        session.commit()
    done: list[int] = []
    for _ in range(MAX_GAMES_PER_TICK):
        with db.session() as session:
            game = _next_due(session, now)
            if game is None:
                break
            expire(session, game, secret, now)
            session.commit()
            done.append(game.id)
    return done
