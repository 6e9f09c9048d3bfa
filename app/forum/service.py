"""Boards, threads and posts. Services validate, lock what they number, and never commit:
the caller (a route or the game master) owns the transaction."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Integer, Table, bindparam, func, insert, inspect, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.db.engine import attach_written
from app.db.models import Board, Post, Thread, ThreadRead, User, utcnow
from app.errors import Invalid, NotFound
from app.forum import names
from app.live import hub as live

MAX_BODY_CHARS = 10_000
MAX_TITLE_CHARS = 100
BBS_TZ = ZoneInfo("Asia/Tokyo")

# Seeded boards. Game boards are added by the game registry as games arrive.
DEFAULT_BOARDS: tuple[tuple[str, str, str], ...] = (
    ("lobby", "ロビー", "はじめての方へ、募集、お知らせ。"),
    ("chat", "雑談", "ゲームの話も、そうでない話も。"),
)


@dataclass(frozen=True)
class Page:
    number: int
    count: int

    @property
    def has_prev(self) -> bool:
        return self.number > 1

    @property
    def has_next(self) -> bool:
        return self.number < self.count


def clean_body(body: str) -> str:
    """Line endings unified and trailing blank space dropped; the text itself is kept as typed."""
    text = body.replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if not text.strip():
        raise Invalid("本文が空です。", field="body")
    if len(text) > MAX_BODY_CHARS:
        raise Invalid(
            f"本文が長すぎます（{len(text)}文字）。{MAX_BODY_CHARS}文字以内にしてください。",
            field="body",
        )
    if "\x00" in text:
        raise Invalid("本文に使えない文字（NUL）が含まれています。", field="body")
    return text


def clean_title(title: str) -> str:
    text = " ".join(title.split())
    if not text:
        raise Invalid("タイトルが空です。", field="title")
    if len(text) > MAX_TITLE_CHARS:
        raise Invalid(
            f"タイトルが長すぎます（{len(text)}文字）。{MAX_TITLE_CHARS}文字以内にしてください。",
            field="title",
        )
    if "\x00" in text:
        raise Invalid("タイトルに使えない文字（NUL）が含まれています。", field="title")
    return text


def shown_author(session: Session, user: User, field: str | None = None) -> str:
    """The name a post by ``user`` shows, from what its 名前欄 held (app/forum/names.py):
    the account's name when it is empty, else the typed name (never another account's or a
    reserved one), either with ``◆trip`` when a key came after ``#``. The key itself is
    dropped here; only the returned name is stored. Raises ``Invalid`` (field ``name``)."""
    if not field:
        return names.shown(user.name, None)
    asked = names.read_field(field)
    if not asked.name or asked.name == user.name:
        return names.shown(user.name, asked.trip)
    if names.is_reserved(asked.name):
        raise Invalid(f"「{asked.name}」は予約された名前です。名前欄には使えません。", field="name")
    key = names.name_key(asked.name)
    owner = session.scalar(select(User.id).where(User.name == key))
    if owner is not None and owner != user.id:
        raise Invalid(
            f"「{asked.name}」は別のアカウントの名前です。名前欄には使えません。", field="name"
        )
    return names.shown(asked.name, asked.trip)


def daily_id(secret: str, user_key: str, when: datetime) -> str:
    """The per-day ID tag of 2ch-style boards: stable for one poster for one (Tokyo) day."""
    return _daily_id(secret, user_key, when.astimezone(BBS_TZ).date().isoformat())


@functools.lru_cache(maxsize=4096)
def _daily_id(secret: str, user_key: str, day: str) -> str:
    """Kept per poster and day: every post computes its tag (the bot's reply too), and the
    HMAC costs about as much as writing the row."""
    mac = hmac.new(secret.encode(), f"{user_key}|{day}".encode(), hashlib.sha256).digest()
    return base64.b64encode(mac, altchars=b"+/").decode()[:8]


def ensure_boards(session: Session, extra: Sequence[tuple[str, str, str, str | None]] = ()) -> None:
    """Create the seeded boards that are missing (idempotent; runs at start-up)."""
    existing = set(session.scalars(select(Board.slug)))
    rows = [(slug, title, desc, None) for slug, title, desc in DEFAULT_BOARDS] + list(extra)
    for order, (slug, title, desc, kind) in enumerate(rows):
        if slug not in existing:
            session.add(
                Board(slug=slug, title=title, description=desc, sort_order=order, game_kind=kind)
            )
    session.flush()


def list_boards(session: Session) -> list[Board]:
    return list(session.scalars(select(Board).order_by(Board.sort_order, Board.id)))


def get_board(session: Session, slug: str) -> Board:
    board = session.scalar(select(Board).where(Board.slug == slug))
    if board is None:
        raise NotFound(f"板「{slug}」はありません。")
    return board


def page_of(total: int, per_page: int, page: int) -> Page:
    count = max(1, math.ceil(total / per_page))
    return Page(number=min(max(page, 1), count), count=count)


def list_threads(
    session: Session, board: Board, page: int, per_page: int
) -> tuple[list[Thread], Page]:
    """Threads of a board, most recently posted first."""
    where = Thread.board_id == board.id
    total = session.scalar(select(func.count()).select_from(Thread).where(where)) or 0
    current = page_of(total, per_page, page)
    threads = session.scalars(
        select(Thread)
        .where(where)
        .order_by(Thread.last_post_at.desc(), Thread.id.desc())
        .offset((current.number - 1) * per_page)
        .limit(per_page)
    )
    return list(threads), current


def get_thread(session: Session, thread_id: int) -> Thread:
    thread = session.get(Thread, thread_id) if 0 < thread_id < 2**31 else None
    if thread is None:
        raise NotFound(f"スレッド {thread_id} はありません。")
    return thread


def list_posts(session: Session, thread: Thread, after: int, limit: int) -> list[Post]:
    return list(
        session.scalars(
            select(Post)
            .where(Post.thread_id == thread.id, Post.number > after)
            .order_by(Post.number)
            .limit(limit)
        )
    )


def reserve_numbers(session: Session, thread_id: int, count: int, now: datetime) -> int:
    """Take the thread's next ``count`` レス番 and return the first.

    One ``UPDATE … RETURNING``: it locks the thread row until commit (SQLite: the write lock
    of BEGIN IMMEDIATE is held already), so the numbers are ours alone. A post that will be
    answered by the bot takes two at once — its own and the reply's — so no other post falls
    between them. A thread already loaded in the session is kept current.
    """
    top = session.execute(_TAKE_NUMBERS, {"thread_id": thread_id, "count": count, "now": now})
    taken = top.scalar()
    if taken is None:
        raise NotFound(f"スレッド {thread_id} はありません。")
    # The UPDATE is a Core one, without the ORM's synchronisation of the session (which cost
    # as much as the statement): the one object it would synchronise, if loaded, is set here.
    # Found by iterating the session and inspecting each object's identity (both public,
    # and neither loads an expired attribute).
    key = (thread_id,)
    loaded = next(
        (o for o in session if isinstance(o, Thread) and inspect(o).identity == key), None
    )
    if loaded is not None:
        set_committed_value(loaded, "post_count", taken)
        set_committed_value(loaded, "last_post_at", now)
    return int(taken) - count + 1


_THREADS: Table = Thread.__table__  # type: ignore[assignment]
# Built once (bound parameters): building it anew on every post cost a third of running it.
_TAKE_NUMBERS = (
    update(_THREADS)
    .where(_THREADS.c.id == bindparam("thread_id"))
    .values(
        post_count=_THREADS.c.post_count + bindparam("count", type_=Integer),
        last_post_at=bindparam("now", type_=_THREADS.c.last_post_at.type),
    )
    .returning(_THREADS.c.post_count)
)


def add_post(
    session: Session,
    thread_id: int,
    *,
    author: User | None,
    author_name: str,
    body: str,
    kind: str,
    secret: str,
    now: datetime | None = None,
    number: int | None = None,
    reply_to: int | None = None,
    reply_ok: bool | None = None,
    reply_error: dict[str, Any] | None = None,
    board_at: int | None = None,
    take: int = 1,
) -> Post:
    """Append a post. ``author`` is None for the bot. ``number`` is one the caller took with
    ``reserve_numbers``; without it the thread's next ``take`` numbers are taken here, the
    post gets the first and the caller the others (a command post's reply: ``post.number +
    1``)."""
    body = clean_body(body)  # refused before a number is taken
    now = now or utcnow()
    if number is None:
        number = reserve_numbers(session, thread_id, take, now)
    values = post_row(
        thread_id,
        author=author,
        author_name=author_name,
        body=body,
        kind=kind,
        secret=secret,
        now=now,
        number=number,
        reply_to=reply_to,
        reply_ok=reply_ok,
        reply_error=reply_error,
        board_at=board_at,
    )
    return write_post(session, values)


def post_row(
    thread_id: int,
    *,
    author: User | None,
    author_name: str,
    body: str,
    kind: str,
    secret: str,
    now: datetime,
    number: int | None,
    reply_to: int | None = None,
    reply_ok: bool | None = None,
    reply_error: dict[str, Any] | None = None,
    board_at: int | None = None,
) -> dict[str, Any]:
    """A new post's row, every column but the id (``number`` None: taken when written);
    ``body`` as ``clean_body`` returned it."""
    user_key = f"u{author.id}" if author is not None else "bot"
    return {
        "thread_id": thread_id,
        "number": number,
        "author_id": author.id if author is not None else None,
        "author_name": author_name,
        "daily_id": daily_id(secret, user_key, now),
        "body": body,
        "kind": kind,
        "created_at": now,
        "reply_to": reply_to,
        "reply_ok": reply_ok,
        "reply_error": reply_error,
        "board_at": board_at,
        "mail": None,  # the メール欄: bbs.cgi sets it on the post written
        "hidden_at": None,
        "hidden_by": None,
    }


def write_post(session: Session, values: dict[str, Any]) -> Post:
    """The row ``post_row`` made, its number taken already, written at once (one Core
    ``INSERT … RETURNING id``) and returned as the session's persistent ``Post``; its
    thread's streams are woken when the session commits.

    Not a unit-of-work flush of a new object: a flush of one new post cost three times the
    INSERT (docs/performance.md), and a command post writes two, its own and the bot's
    reply. The object is made from the row as written and attached as if loaded
    (``attach_written``), so the request reads and changes it like any post it loaded."""
    post = Post(id=session.execute(_INSERT_POST, values).scalar_one(), **values)
    attach_written(session, post)
    live.touched(session, values["thread_id"])
    return post


_POSTS: Table = Post.__table__  # type: ignore[assignment]
_INSERT_POST = insert(_POSTS).returning(_POSTS.c.id)


def create_thread(
    session: Session,
    board: Board,
    author: User,
    title: str,
    body: str,
    secret: str,
    *,
    name: str | None = None,
) -> tuple[Thread, Post]:
    """A thread and its first post; ``name`` is the 名前欄 (see ``shown_author``)."""
    title = clean_title(title)
    clean_body(body)  # validate before anything is written
    shown = shown_author(session, author, name)
    locked_board = session.scalar(select(Board).where(Board.id == board.id).with_for_update())
    assert locked_board is not None
    now = utcnow()
    thread = Thread(
        board_id=board.id, title=title, author_id=author.id, created_at=now, last_post_at=now
    )
    session.add(thread)
    locked_board.thread_count += 1
    session.flush()
    post = add_post(
        session,
        thread.id,
        author=author,
        author_name=shown,
        body=body,
        kind="talk",
        secret=secret,
    )
    return thread, post


def create_site_thread(
    session: Session,
    board: Board,
    title: str,
    body: str,
    secret: str,
    *,
    author_name: str,
    now: datetime | None = None,
) -> Thread:
    """A thread the site itself writes (no account behind it: the card registry's, the
    ロビー's guide), its first post by ``author_name`` (the bot's name)."""
    now = now or utcnow()
    thread = Thread(
        board_id=board.id, title=title, author_id=None, created_at=now, last_post_at=now
    )
    session.add(thread)
    board.thread_count += 1
    session.flush()
    add_post(
        session,
        thread.id,
        author=None,
        author_name=author_name,
        body=body,
        kind="gm",
        secret=secret,
        now=now,
    )
    return thread


def format_bbs_time(when: datetime) -> str:
    """``2026/11/22(日) 10:28:09.12`` in Tokyo time, as BBS readers expect."""
    local = when.astimezone(BBS_TZ)
    weekday = "月火水木金土日"[local.weekday()]
    return local.strftime(f"%Y/%m/%d({weekday}) %H:%M:%S.") + f"{local.microsecond // 10000:02d}"


def mark_read(session: Session, user: User, thread: Thread, upto: int) -> None:
    """Remember that ``user`` has seen ``thread`` up to post ``upto`` (never goes back)."""
    row = session.scalar(
        select(ThreadRead).where(ThreadRead.user_id == user.id, ThreadRead.thread_id == thread.id)
    )
    if row is None:
        try:
            with session.begin_nested():
                session.add(ThreadRead(user_id=user.id, thread_id=thread.id, last_read=upto))
        except IntegrityError:  # the same user's other tab got there first
            return
    elif upto > row.last_read:
        row.last_read = upto
        row.updated_at = utcnow()
    session.flush()


def has_read(session: Session, user: User, thread: Thread, upto: int) -> bool:
    """``user`` has seen ``thread`` up to post ``upto`` already (``mark_read`` would not move)."""
    last = session.scalar(
        select(ThreadRead.last_read).where(
            ThreadRead.user_id == user.id, ThreadRead.thread_id == thread.id
        )
    )
    return last is not None and last >= upto


def unread_counts(session: Session, user: User | None, threads: Sequence[Thread]) -> dict[int, int]:
    """Posts after the user's last read, per thread they have read; -1 for never opened."""
    if user is None or not threads:
        return {}
    rows = session.execute(
        select(ThreadRead.thread_id, ThreadRead.last_read).where(
            ThreadRead.user_id == user.id, ThreadRead.thread_id.in_([t.id for t in threads])
        )
    )
    read = {thread_id: last for thread_id, last in rows}
    return {t.id: t.post_count - read[t.id] if t.id in read else -1 for t in threads}
