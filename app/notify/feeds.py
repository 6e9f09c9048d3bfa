"""Atom feeds (feedgen): per board, per thread, and a private per-user feed of notifications
whose secret token sits in the URL and can be revoked."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime

from feedgen.feed import FeedGenerator
from sqlalchemy import CursorResult, case, delete, false, func, or_, select, update
from sqlalchemy.orm import Session

from app.db.models import Board, FeedToken, Game, Notification, Post, Thread, User, utcnow
from app.errors import NotFound
from app.forum import service as forum
from app.forum.moderation import shown_body

ENTRIES = 50
PICTURE_LABEL = "盤面の図"
# What XML 1.0 cannot carry (most control characters, lone surrogates, U+FFFE/FFFF); a post may
# hold them, and lxml refuses the whole feed over one (a 500 for every reader of the board).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    """Text as an Atom feed can carry it: each character XML cannot hold becomes U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_feed_token(session: Session, user: User, now: datetime | None = None) -> str:
    """A fresh secret for the user's private feed; any earlier one stops working."""
    revoke_feed_tokens(session, user, now)
    token = secrets.token_urlsafe(24)
    session.add(FeedToken(user_id=user.id, token_hash=_digest(token), created_at=now or utcnow()))
    session.flush()
    return token


def revoke_feed_tokens(session: Session, user: User, now: datetime | None = None) -> None:
    """The user's feed URLs stop working: their rows are deleted (a user holds at most one,
    however often a new one is asked for)."""
    session.execute(delete(FeedToken).where(FeedToken.user_id == user.id))


def has_feed(session: Session, user: User) -> bool:
    return (
        session.scalar(
            select(FeedToken.id).where(FeedToken.user_id == user.id, FeedToken.revoked_at.is_(None))
        )
        is not None
    )


def user_for_feed(session: Session, token: str) -> User:
    row = (
        session.scalar(
            select(FeedToken).where(
                FeedToken.token_hash == _digest(token), FeedToken.revoked_at.is_(None)
            )
        )
        if 0 < len(token) <= 100
        else None
    )
    if row is None:
        raise NotFound("このフィードはありません（取り消されたか、URL が違います）。")
    user = session.get(User, row.user_id)
    assert user is not None
    return user


def notifications_for(session: Session, user: User, limit: int = ENTRIES) -> list[Notification]:
    return list(
        session.scalars(
            select(Notification)
            .where(Notification.user_id == user.id)
            .order_by(Notification.created_at.desc(), Notification.id.desc())
            .limit(limit)
        )
    )


@dataclass
class NoticeGroup:
    """The notices of one game on /notifications, newest first, and how many are unread
    (``game`` None: notices of no game)."""

    game_id: int | None
    title: str
    notices: list[Notification] = field(default_factory=list)
    unread: int = 0


def notification_groups(
    session: Session, user: User, groups: int = 100, per_group: int = 5
) -> list[NoticeGroup]:
    """The user's notices grouped by game: the ``groups`` games with the newest notices, the
    game with the newest first, each with its newest ``per_group`` notices and the count of
    all its unread ones (not only those shown). A game with many notices never pushes the
    others off the page. Two queries: the groups with their counts and titles, then their
    newest notices (numbered per game by a window function)."""
    mine = Notification.user_id == user.id
    unread_count = func.sum(case((Notification.read_at.is_(None), 1), else_=0))
    found = session.execute(
        select(Notification.game_id, func.max(Notification.id), unread_count)
        .where(mine)
        .group_by(Notification.game_id)
        .order_by(func.max(Notification.id).desc())
        .limit(groups)
    ).all()
    if not found:
        return []
    shown: dict[int | None, NoticeGroup] = {
        game_id: NoticeGroup(game_id, "", unread=int(unread or 0)) for game_id, _, unread in found
    }
    games = [game_id for game_id in shown if game_id is not None]
    place = or_(
        Notification.game_id.in_(games) if games else false(),
        Notification.game_id.is_(None) if None in shown else false(),
    )
    rank = (
        func.row_number()
        .over(partition_by=Notification.game_id, order_by=Notification.id.desc())
        .label("rank")
    )
    newest = select(Notification.id, rank).where(mine, place).subquery()
    rows = session.execute(
        select(Notification, Game.title)
        .join(newest, newest.c.id == Notification.id)
        .outerjoin(Game, Game.id == Notification.game_id)
        .where(newest.c.rank <= per_group)
        .order_by(Notification.id.desc())
    ).all()
    for note, title in rows:
        group = shown[note.game_id]
        group.title = title or ""
        group.notices.append(note)
    return list(shown.values())


def mark_read(
    session: Session, user: User, game_id: int | None, now: datetime | None = None
) -> int:
    """The user's unread notices of one game (None: of no game) marked read; returns how
    many. Nobody else's notices are touched."""
    query = update(Notification).where(
        Notification.user_id == user.id, Notification.read_at.is_(None)
    )
    query = query.where(
        Notification.game_id.is_(None) if game_id is None else Notification.game_id == game_id
    )
    result = session.execute(query.values(read_at=now or utcnow()))
    assert isinstance(result, CursorResult)
    return result.rowcount


def _feed(feed_id: str, title: str, link: str, updated: datetime) -> FeedGenerator:
    fg = FeedGenerator()
    fg.id(feed_id)
    fg.title(_xml(title))
    fg.link(href=link, rel="alternate")
    fg.language("ja")
    fg.updated(updated)
    return fg


def user_feed(session: Session, user: User, base_url: str) -> bytes:
    items = notifications_for(session, user)
    updated = items[0].created_at if items else utcnow()
    fg = _feed(
        f"{base_url}/feeds/user/{user.id}",
        f"{user.name} さんへのお知らせ - bbsgm",
        f"{base_url}/notifications",
        updated,
    )
    for item in reversed(items):
        entry = fg.add_entry()
        entry.id(f"{base_url}/notifications/{item.id}")
        entry.title(_xml(item.text))
        entry.link(href=f"{base_url}{item.url}")
        entry.updated(item.created_at)
        entry.published(item.created_at)
        entry.category(term=item.kind)
        text = item.text
        if item.game_id is not None:
            text += f"\n\n{PICTURE_LABEL}: {base_url}/api/games/{item.game_id}/board.svg"
        entry.content(_xml(text), type="text")
    result: bytes = fg.atom_str(pretty=True)
    return result


def _games_of(session: Session, posts: list[tuple[Post, Thread]]) -> dict[int, int]:
    """thread id -> game id, for the threads of the bot's replies that show a board."""
    threads = {thread.id for post, thread in posts if post.board_at is not None}
    if not threads:
        return {}
    rows = session.execute(select(Game.thread_id, Game.id).where(Game.thread_id.in_(threads)))
    return {thread_id: game_id for thread_id, game_id in rows}


def _post_entries(
    session: Session, fg: FeedGenerator, posts: list[tuple[Post, Thread]], base_url: str
) -> None:
    games = _games_of(session, posts)
    for post, thread in reversed(posts):
        entry = fg.add_entry()
        url = f"{base_url}/threads/{thread.id}#{post.number}"
        entry.id(url)
        entry.title(_xml(f"{thread.title} >>{post.number} {post.author_name}"))
        entry.link(href=url)
        body = shown_body(post, None)
        game_id = games.get(thread.id)
        if post.board_at is not None and game_id is not None and post.hidden_at is None:
            # A reply showing the board links its picture, so a feed reader sees it too. In
            # the text: feedgen 1.0 writes an entry's extra <link> without its rel and type
            # (entry.py reuses the name of the dict for the element), and readers then take
            # the picture for the entry's own link.
            body += (
                f"\n\n{PICTURE_LABEL}: {base_url}/api/games/{game_id}/board.svg?at={post.board_at}"
            )
        entry.author(name=_xml(post.author_name))
        entry.updated(post.created_at)
        entry.published(post.created_at)
        entry.content(_xml(body), type="text")


def thread_feed(session: Session, thread_id: int, base_url: str) -> bytes:
    thread = forum.get_thread(session, thread_id)
    posts = forum.list_posts(session, thread, max(0, thread.post_count - ENTRIES), ENTRIES)
    fg = _feed(
        f"{base_url}/threads/{thread.id}",
        thread.title,
        f"{base_url}/threads/{thread.id}",
        thread.last_post_at,
    )
    _post_entries(session, fg, [(p, thread) for p in posts], base_url)
    result: bytes = fg.atom_str(pretty=True)
    return result


def board_feed(session: Session, slug: str, base_url: str) -> bytes:
    board: Board = forum.get_board(session, slug)
    rows = session.execute(
        select(Post, Thread)
        .join(Thread, Post.thread_id == Thread.id)
        .where(Thread.board_id == board.id)
        .order_by(Post.created_at.desc(), Post.id.desc())
        .limit(ENTRIES)
    ).all()
    posts = [(post, thread) for post, thread in rows]
    updated = posts[0][0].created_at if posts else utcnow()
    fg = _feed(
        f"{base_url}/boards/{board.slug}",
        f"{board.title} - bbsgm",
        f"{base_url}/boards/{board.slug}",
        updated,
    )
    _post_entries(session, fg, posts, base_url)
    result: bytes = fg.atom_str(pretty=True)
    return result
