"""What pages share: rendering, redirects, CSRF message, the thread and game contexts."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import Form, Query, Request, Response
from fastapi.responses import RedirectResponse
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Game, Post, User
from app.forum import moderation
from app.forum import service as forum
from app.games.howtos import verb_legends
from app.gm import service as gm
from app.gm import turns
from app.gm.legal import moves_and_tools
from app.i18n import N_
from app.web import deps, http_cache, thread_cache

PageNumber = Annotated[int, Query(ge=1, le=1_000_000)]
FormText = Annotated[str, Form()]
CSRF_MESSAGE = N_(
    "フォームの有効期限が切れたか、別のページから送信されました。もう一度送信してください。"
)


def render(
    request: Request, name: str, user: User | None, status_code: int = 200, **context: Any
) -> Response:
    templates = request.app.state.templates
    response: Response = templates.TemplateResponse(
        request, name, deps.template_context(request, user, **context), status_code=status_code
    )
    return response


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def safe_next(target: str) -> str:
    """Only same-site paths: a login link must not bounce anyone to another site (browsers
    drop tabs and line breaks from URLs: ``/<tab>/evil.example`` would become ``//…``)."""
    if (
        target.startswith("/")
        and not target.startswith("//")
        and "\\" not in target
        and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in target)
    ):
        return target
    return "/"


def game_panel(session: Session, game: Game, user: User | None) -> dict[str, Any]:
    """What the thread page and the game page both show about a game."""
    seat = gm.seat_of(game, user)
    lines, sealed_legal = gm.legal_split(game, user)
    legal, gm_tools = moves_and_tools(lines)
    own_view = None
    if game.state is not None and (seat is not None or gm.reads_as_gm(game, user)):
        own_view = gm.private_view(game, user)
    return {
        "game": game,
        "view": gm.public_view(game),
        "own_view": own_view,
        "seat": seat,
        "is_gm": gm.is_gm(game, user),
        "legal": legal,  # the game's moves; the GM's PAUSE … ABORT apart, in gm_tools
        "gm_tools": gm_tools,
        "sealed_legal": sealed_legal,
        "examples": gm.example_lines(game, user),
        "impl": gm.game_impl(game.kind),
        "legends": verb_legends(game.kind),  # each verb's one-line help, above its buttons
        "waiting": turns.waiting_words(game),  # the status line: 手番待ち / 未提出
    }


def post_accounts(session: Session, posts: Sequence[Post], user: User | None) -> dict[int, str]:
    """For a site admin: the account behind each post of the page (its 名前欄 may have shown
    another name, docs/forum.md), by account id. Nobody else is told."""
    if user is None or not user.is_admin:
        return {}
    ids = {post.author_id for post in posts if post.author_id is not None}
    if not ids:
        return {}
    rows = session.execute(select(User.id, User.name).where(User.id.in_(ids)))
    return {user_id: name for user_id, name in rows}


def thread_context(
    request: Request,
    session: Session,
    thread_id: int,
    user: User | None,
    page: int,
    per_page: int,
) -> tuple[dict[str, Any], thread_cache.PostsBlock]:
    """One page of a thread: the template's context (the thread as ``thread``; the posts stand
    in as ``POSTS_MARKER``) and the posts themselves, あぼーん applied and undone moves marked,
    from the cache where the viewer may share them (app/web/thread_cache.py)."""
    thread, game, version = thread_cache.page_head(session, thread_id)
    current = forum.page_of(thread.post_count, per_page, page)
    can_moderate = moderation.may_moderate(game, user)
    posts_context = thread_cache.PostsContext(
        thread=thread,
        page=current,
        per_page=per_page,
        board_game_id=game.id if game is not None else None,
        viewer=thread_cache.viewer_class(user, can_moderate),
        user=user,
        can_moderate=can_moderate,
        csrf_token=deps.csrf_token(request),
    )
    block = thread_cache.posts_block(
        session,
        request.app.state.templates.env,
        version,
        posts_context,
        lambda posts: post_accounts(session, posts, user),
    )
    context = {
        "thread": thread,
        "posts_html": POSTS_MARKER,
        "page": current,
        "can_moderate": can_moderate,
        "panel": game_panel(session, game, user) if game is not None else None,
        "board_game_id": posts_context.board_game_id,
    }
    return context, block


# Where the posts go in forum/thread.html; no text of a page can hold it (escaped: no ``<``).
POSTS_MARKER = Markup(f"<!--bbsgm-posts-{secrets.token_hex(16)}-->")


def render_thread(
    request: Request,
    user: User | None,
    context: dict[str, Any],
    block: thread_cache.PostsBlock,
    status_code: int = 200,
    *,
    conditional: bool,
    **extra: Any,
) -> Response:
    """forum/thread.html around the posts' bytes. ``conditional``: with an ETag (a digest of
    the page's own bytes and the posts' digest) and a 304 when the browser has the page."""
    template = request.app.state.templates.get_template("forum/thread.html")
    text = template.render(deps.template_context(request, user, **context, **extra))
    before, marker, after = text.partition(str(POSTS_MARKER))
    assert marker, "forum/thread.html lost its posts_html"
    head, tail = before.encode(), after.encode()
    body = b"".join((head, block.body, tail))
    if not conditional:
        return Response(body, status_code=status_code, media_type="text/html")
    tag = http_cache.etag(head, block.digest, block.variant, tail)
    return http_cache.conditional(
        request,
        body,
        tag,
        media_type="text/html",
        cache_control=http_cache.PRIVATE,
        status_code=status_code,
    )
