"""Board moderation: あぼーん (hiding a post), site admins, the moderation log."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Game, ModerationEntry, Post, User, utcnow
from app.errors import Forbidden, Invalid, NotFound
from app.forum import service as forum
from app.live import hub as live

HIDDEN_BODY = "あぼーん"


def can_moderate(session: Session, thread_id: int, user: User | None) -> bool:
    """Site admins everywhere; a game's GM in the game's thread."""
    if user is None or user.is_admin:
        return user is not None
    return may_moderate(session.scalar(select(Game).where(Game.thread_id == thread_id)), user)


def may_moderate(game: Game | None, user: User | None) -> bool:
    """``can_moderate`` in a thread whose game (None: it has none) the caller has read."""
    if user is None:
        return False
    return user.is_admin or (game is not None and game.gm_id == user.id)


def set_hidden(
    session: Session,
    thread_id: int,
    number: int,
    user: User | None,
    hidden: bool,
    now: datetime | None = None,
) -> Post:
    thread = forum.get_thread(session, thread_id)
    if not can_moderate(session, thread.id, user):
        raise Forbidden("書き込みを隠せるのはサイト管理者と、このゲームの GM だけです。")
    assert user is not None
    post = session.scalar(select(Post).where(Post.thread_id == thread.id, Post.number == number))
    if post is None:
        raise NotFound(f"{number}番の書き込みはありません。")
    if hidden == (post.hidden_at is not None):
        raise Invalid("その書き込みはもう隠されています。" if hidden else "隠されていません。")
    now = now or utcnow()
    # Wakes the thread's streams once this commits, as a post does: their shared reads from
    # before (app/live/hub.py) are dropped, so no stream is served the text as it was.
    live.touched(session, thread.id)
    post.hidden_at = now if hidden else None
    post.hidden_by = user.name if hidden else None
    game = session.scalar(select(Game).where(Game.thread_id == thread.id))
    session.add(
        ModerationEntry(
            game_id=game.id if game is not None else None,
            thread_id=thread.id,
            actor_name=user.name,
            action="HIDE" if hidden else "UNHIDE",
            detail=f">>{number}",
            post_number=number,
            created_at=now,
        )
    )
    session.flush()
    return post


def shown_body(post: Post, viewer: User | None) -> str:
    """What a reader sees: the body, or あぼーん (admins still read the original)."""
    if post.hidden_at is None or (viewer is not None and viewer.is_admin):
        return post.body
    return HIDDEN_BODY


def set_admin(session: Session, name: str, admin: bool) -> User:
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise NotFound(f"利用者「{name}」はいません。")
    user.is_admin = admin
    session.flush()
    return user


def log_for(session: Session, game: Game) -> list[ModerationEntry]:
    return list(
        session.scalars(
            select(ModerationEntry)
            .where(ModerationEntry.game_id == game.id)
            .order_by(ModerationEntry.id)
        )
    )
