"""What pages share: rendering, redirects, CSRF message, the thread and game contexts."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Form, Query, Request, Response
from fastapi.responses import RedirectResponse
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import moderation
from app.forum import service as forum
from app.forum.render import render_body
from app.gm import service as gm
from app.i18n import N_
from app.models import Game, Move, Post, Thread, User
from app.web import deps

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
    own_view = None
    if game.state is not None and (seat is not None or gm.is_gm(game, user)):
        own_view = gm.private_view(game, user)
    return {
        "game": game,
        "view": gm.public_view(game),
        "own_view": own_view,
        "seat": seat,
        "is_gm": gm.is_gm(game, user),
        "legal": gm.legal_lines(game, user),
        "sealed_legal": gm.sealed_lines(game, user),
        "examples": gm.example_lines(game, user),
        "impl": gm.game_impl(game.kind),
    }


def post_accounts(session: Session, posts: list[Post], user: User | None) -> dict[int, str]:
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
    session: Session, thread: Thread, user: User | None, page: int, per_page: int
) -> dict[str, Any]:
    """Posts of one page (あぼーん applied, undone moves marked) and the game panel."""
    current = forum.page_of(thread.post_count, per_page, page)
    posts = forum.list_posts(session, thread, (current.number - 1) * per_page, per_page)

    def anchor_href(number: int) -> str:
        target_page = (number - 1) // per_page + 1
        return f"#{number}" if target_page == current.number else f"?page={target_page}#{number}"

    rendered = [
        (post, render_body(moderation.shown_body(post, user), anchor_href)) for post in posts
    ]
    game = gm.game_for_thread(session, thread.id)
    undone: set[int] = set()
    if game is not None:
        undone = {
            post_id
            for post_id in session.scalars(
                select(Move.post_id).where(Move.game_id == game.id, Move.undone.is_(True))
            )
            if post_id is not None
        }
    return {
        "thread": thread,
        "posts": rendered,
        "page": current,
        "post_accounts": post_accounts(session, posts, user),
        "undone_posts": undone,
        "can_moderate": moderation.can_moderate(session, thread.id, user),
        "panel": game_panel(session, game, user) if game is not None else None,
        "board_game_id": game.id if game is not None else None,
    }
