"""A thread read like a static file: its rendered posts, its dat file and its feeds are kept
between requests, and each answer carries an ETag (app/web/http_cache.py) so a browser that
has it gets a 304.

What a thread's posts look like changes only when a post is added, hidden or shown again
(あぼーん), or a move is undone (the 取り消し済み mark); a post's text, name, date and ID never
change once committed. So a **thread version** — three numbers, read by one cheap statement
per request — names every state of the posts:

* the thread's ``post_count`` (レス番 are taken under the thread row's lock, so the count
  moves with every committed post and never goes back);
* the count and the greatest id of the thread's moderation log: ``moderation.set_hidden``, the
  only writer of ``posts.hidden_at``, logs every hide and unhide in the same transaction, and the
  log is never trimmed — a count, unlike a greatest id, moves even when two moderators' commits
  land out of id order;
* the count of the thread's game's undone moves (UNDO only ever sets ``undone``).

Cached and keyed by that version (plus everything else that changes the bytes: page, posts per
page, language, and the viewer's *class*):

* the **posts block** of a thread page, and below it each post's own **fragment** (so a new
  post renders one post, not the page's thousand), keyed by the post's id, whether it is
  hidden, whether its moves were undone;
* the dat file, the thread feed and the board feed.

Viewer classes. The posts look the same to every reader who may not moderate the thread,
logged in or not (``reader``). A thread's moderator (the game's GM) also gets the あぼーん buttons,
whose forms carry their CSRF token: their block is cached with a placeholder that is replaced
by the viewer's own token on the way out (``moderator``). A site admin reads hidden posts'
original text, who hid them, and the account behind each name: their posts are rendered for
each request and never cached. Everything else on the page (the header with the viewer's
name, the game panel with their own lines, the post form and its token, the pager, the title)
is put together per request around the block — the panel from its own cache, keyed by all of
its inputs, the viewer's lines included (app/web/panel_cache.py); the page's ETag is a digest
of those bytes and the block's digest, so it changes exactly when the bytes do.

Processes. The caches are per process, but every lookup is by a version just read from the
database in the request's own transaction: another worker's new post or あぼーん has moved the
version, so the old entry is never found. Posts are read after the version (PostgreSQL's READ
COMMITTED sees each statement's latest commits), so an entry is never older than its key; and
a fragment is keyed by the hidden state of the very row it was rendered from.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment
from markupsafe import Markup
from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session, defer

from app import i18n
from app.db.models import Board, Game, ModerationEntry, Move, Post, Thread, User
from app.errors import NotFound
from app.forum import moderation
from app.forum.render import render_body
from app.forum.service import Page
from app.web.http_cache import ByteCache, digest

# Per process, bounded by the bytes kept (least recently used go first). A 1,000-post page is
# about 0.5 MB in one language: 32 MiB of blocks hold some sixty such pages, and of fragments
# (one post, about 600 bytes) some fifty thousand posts.
BLOCKS = ByteCache(32 * 1024 * 1024)
FRAGMENTS = ByteCache(32 * 1024 * 1024)
FILES = ByteCache(16 * 1024 * 1024)  # dat files and feeds

READER = "reader"
MODERATOR = "moderator"
# Stands for the viewer's CSRF token in a moderator's cached block; random per process, so no
# poster can write it (and posts are escaped: it could never form a tag anyway).
_TOKEN_PLACEHOLDER = f"csrf-{secrets.token_hex(16)}"
# Splits the posts of one render into their fragments.
_SEPARATOR = Markup(f"<!--bbsgm-post-{secrets.token_hex(16)}-->")


@dataclass(frozen=True)
class ThreadVersion:
    post_count: int
    moderation: tuple[int, int]  # (count, greatest id) of the thread's moderation log
    undone: int  # undone moves of the thread's game


_MODERATION = ModerationEntry.__table__
_MOVES = Move.__table__


def _version_columns(thread_id: Any, game_id: Any) -> tuple[Any, Any, Any]:
    """The moderation log's count and greatest id for the thread, and its game's undone
    moves, as three scalar subqueries."""
    return (
        select(func.count())
        .select_from(_MODERATION)
        .where(_MODERATION.c.thread_id == thread_id)
        .scalar_subquery(),
        select(func.coalesce(func.max(_MODERATION.c.id), 0))
        .where(_MODERATION.c.thread_id == thread_id)
        .scalar_subquery(),
        select(func.count())
        .select_from(_MOVES)
        .where(_MOVES.c.game_id == game_id, _MOVES.c.undone.is_(True))
        .scalar_subquery(),
    )


def thread_version(session: Session, thread: Thread, game: Game | None) -> ThreadVersion:
    """The version of ``thread``'s posts; ``thread`` was loaded in this transaction."""
    game_id = game.id if game is not None else 0  # no game has id 0: no undone moves
    count, greatest, undone = session.execute(select(*_version_columns(thread.id, game_id))).one()
    return ThreadVersion(thread.post_count, (int(count), int(greatest)), int(undone))


def page_head(session: Session, thread_id: int) -> tuple[Thread, Game | None, ThreadVersion]:
    """What a thread page reads before its posts, read afresh (another transaction may have
    changed them since this session last did): the thread with its board, its game (if any)
    with its GM and seats — the game's options, a card game's ~10 KB pool, left unread — and
    the thread's version (``thread_version``)."""
    thread = None
    if 0 < thread_id < 2**31:
        thread = session.get(Thread, thread_id, populate_existing=True)
    if thread is None:
        raise NotFound(f"スレッド {thread_id} はありません。")
    game = session.scalar(
        select(Game)
        .where(Game.thread_id == thread.id)
        .options(defer(Game.options))
        .execution_options(populate_existing=True)
    )
    return thread, game, thread_version(session, thread, game)


def viewer_class(user: User | None, can_moderate: bool) -> str | None:
    """Which cached posts this viewer may be shown; None: none (a site admin)."""
    if user is not None and user.is_admin:
        return None
    return MODERATOR if can_moderate else READER


# --- the posts of a thread page --------------------------------------------------------------

_POSTS = Post.__table__
_PAGE_ROWS = (
    select(_POSTS.c.id, _POSTS.c.number, _POSTS.c.hidden_at.is_not(None))
    .where(
        _POSTS.c.thread_id == bindparam("thread_id"),
        _POSTS.c.number > bindparam("first"),
        _POSTS.c.number <= bindparam("last"),
    )
    .order_by(_POSTS.c.number)
)


@dataclass(frozen=True)
class PostsContext:
    """What the posts of one page are rendered with."""

    thread: Thread
    page: Page
    per_page: int
    board_game_id: int | None
    viewer: str | None  # viewer_class(); None: not cached
    user: User | None
    can_moderate: bool
    csrf_token: str

    def anchor_href(self, number: int) -> str:
        target = (number - 1) // self.per_page + 1
        return f"#{number}" if target == self.page.number else f"?page={target}#{number}"


@dataclass(frozen=True)
class PostsBlock:
    body: bytes  # UTF-8, the viewer's own CSRF token in place
    digest: bytes  # of the body as cached (with the placeholder, for a moderator)
    variant: bytes  # what replaced the placeholder (the moderator's token), for the ETag
    last_number: int | None  # of the page's last post; None when the page has none


def posts_block(
    session: Session,
    env: Environment,
    version: ThreadVersion,
    context: PostsContext,
    accounts: Callable[[Sequence[Post]], dict[int, str]],
) -> PostsBlock:
    """The page's posts as HTML bytes: from the cache for a reader or moderator, rendered for
    an admin. ``accounts`` gives an admin the account names behind the posts."""
    per_page, page = context.per_page, context.page
    first = (page.number - 1) * per_page
    last = min(version.post_count, first + per_page)
    last_number = last if last > first else None
    if context.viewer is None:
        posts = _load_posts(session, context.thread.id, first, last)
        undone = _undone_post_ids(session, context.board_game_id, version)
        html = _render(env, posts, undone, context, accounts(posts))
        body = "".join(html).encode()
        return PostsBlock(body, digest(body), b"", last_number)
    key = (
        "block",
        context.thread.id,
        page.number,
        per_page,
        last - first,
        version.moderation,
        version.undone,
        context.viewer,
        i18n.current_language(),
        context.board_game_id,
    )
    found = BLOCKS.get(key)
    if found is None:
        rows = session.execute(
            _PAGE_ROWS, {"thread_id": context.thread.id, "first": first, "last": last}
        ).all()
        undone = _undone_post_ids(session, context.board_game_id, version)
        pieces = _fragments(session, env, rows, undone, context)
        found = BLOCKS.put(key, b"".join(pieces))
    body, block_digest = found
    variant = b""
    if context.viewer == MODERATOR:
        variant = context.csrf_token.encode()
        body = body.replace(_TOKEN_PLACEHOLDER.encode(), variant)
    return PostsBlock(body, block_digest, variant, last_number)


def _fragment_key(context: PostsContext, post_id: int, hidden: bool, undone: bool) -> Hashable:
    return (
        "post",
        context.thread.id,
        post_id,
        hidden,
        undone,
        context.viewer,
        i18n.current_language(),
        context.per_page,
        context.page.number,
        context.board_game_id,
    )


def _fragments(
    session: Session,
    env: Environment,
    rows: Sequence[tuple[Any, ...]],
    undone: set[int],
    context: PostsContext,
) -> list[bytes]:
    """Each post's fragment, from the cache or rendered (those missing, in one render)."""
    pieces: dict[int, bytes] = {}
    missing: list[int] = []
    for post_id, _number, hidden in rows:
        found = FRAGMENTS.get(_fragment_key(context, post_id, bool(hidden), post_id in undone))
        if found is None:
            missing.append(post_id)
        else:
            pieces[post_id] = found[0]
    if missing:
        posts = _posts_by_id(session, missing)
        for post, html in zip(posts, _render(env, posts, undone, context, {}), strict=True):
            # Keyed by the hidden state of the row rendered, not of the row listed above: on
            # PostgreSQL a moderator's commit may fall between the two statements.
            key = _fragment_key(context, post.id, post.hidden_at is not None, post.id in undone)
            pieces[post.id] = FRAGMENTS.put(key, html.encode())[0]
    return [pieces[post_id] for post_id, _number, _hidden in rows]


def _render(
    env: Environment,
    posts: Sequence[Post],
    undone: set[int],
    context: PostsContext,
    post_accounts: dict[int, str],
) -> list[str]:
    """One HTML fragment per post (includes/post.html), rendered together."""
    if not posts:
        return []
    viewer = None if context.viewer is not None else context.user
    cached = context.viewer is not None
    template = env.get_template("forum/thread_posts.html")
    text = template.render(
        posts=[
            (post, render_body(moderation.shown_body(post, viewer), context.anchor_href))
            for post in posts
        ],
        separator=_SEPARATOR,
        thread=context.thread,
        undone_posts=undone,
        can_moderate=context.can_moderate,
        user=viewer,
        post_accounts=post_accounts,
        csrf_token=_TOKEN_PLACEHOLDER if cached else context.csrf_token,
        board_game_id=context.board_game_id,
    )
    pieces = text.split(str(_SEPARATOR))
    return pieces[1:]


def _load_posts(session: Session, thread_id: int, first: int, last: int) -> list[Post]:
    return list(
        session.scalars(
            select(Post)
            .where(Post.thread_id == thread_id, Post.number > first, Post.number <= last)
            .order_by(Post.number)
        )
    )


def _posts_by_id(session: Session, ids: list[int]) -> list[Post]:
    posts: list[Post] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        posts.extend(session.scalars(select(Post).where(Post.id.in_(chunk))))
    return sorted(posts, key=lambda post: post.number)


def _undone_post_ids(session: Session, game_id: int | None, version: ThreadVersion) -> set[int]:
    if game_id is None or not version.undone:
        return set()
    return {
        post_id
        for post_id in session.scalars(
            select(Move.post_id).where(Move.game_id == game_id, Move.undone.is_(True))
        )
        if post_id is not None
    }


# --- dat files and feeds ------------------------------------------------------------------


def cached_file(key: Hashable, make: Callable[[], bytes]) -> tuple[bytes, bytes]:
    """``(body, digest)`` of a dat file or feed, made by ``make`` on a miss. The key must hold
    everything the bytes depend on (a thread version, a title, the site's base URL ...)."""
    found = FILES.get(key)
    return found if found is not None else FILES.put(key, make())


def board_feed_key(session: Session, board: Board, entries: int) -> tuple[Any, ...]:
    """Everything a board's feed (app/notify/feeds.py) is made of: its latest posts (id, hidden or
    not, thread and thread title) and the moderation counts of their threads, read before the
    feed is made (so a feed made later is never older than its key, and a count, which only
    grows, keeps an unhidden-then-hidden-again post from finding the feed that showed it)."""
    rows = session.execute(
        select(Post.id, Post.hidden_at.is_not(None), Thread.id, Thread.title)
        .join(Thread, Post.thread_id == Thread.id)
        .where(Thread.board_id == board.id)
        .order_by(Post.created_at.desc(), Post.id.desc())
        .limit(entries)
    ).all()
    threads = sorted({row[2] for row in rows})
    counts = session.execute(
        select(ModerationEntry.thread_id, func.count(), func.max(ModerationEntry.id))
        .where(ModerationEntry.thread_id.in_(threads))
        .group_by(ModerationEntry.thread_id)
        .order_by(ModerationEntry.thread_id)
    ).all()
    return (
        "board-feed",
        board.id,
        board.title,
        tuple(tuple(row) for row in rows),
        tuple(tuple(row) for row in counts),
    )
