"""Pages for games: the list, a new game form, and each game's page (board, your view, legal
command lines that fill the post form, the ranking once over)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request, Response
from sqlalchemy.orm import Session

from app.errors import ServiceError
from app.forum import service as forum
from app.forum.render import render_body
from app.games import all_games
from app.gm import service as gm
from app.models import Game, User
from app.web import deps
from app.web.deps import PageUser, SessionDep, SettingsDep
from app.web.pages import CSRF_MESSAGE, redirect, render

router = APIRouter(include_in_schema=False)

RECENT_POSTS = 15


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
        "impl": gm.game_impl(game.kind),
    }


@router.get("/games")
def games_list(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: PageUser,
    status: Annotated[str | None, Query(max_length=32)] = None,
    kind: Annotated[str | None, Query(max_length=64)] = None,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    games, current = gm.list_games(
        session,
        status=status or None,
        kind=kind or None,
        player=None,
        q=None,
        page=page,
        per_page=settings.threads_per_page,
    )
    session.commit()
    return render(
        request,
        "games/list.html",
        user,
        games=games,
        page=current,
        kinds=all_games(),
        status=status or "",
        kind=kind or "",
    )


@router.get("/games/new")
def new_game_form(request: Request, user: PageUser, kind: str = "") -> Response:
    return render(
        request,
        "games/new.html",
        user,
        kinds=all_games(),
        form={"kind": kind, "title": ""},
        error=None,
    )


@router.post("/games")
def create_game(
    request: Request,
    session: SessionDep,
    user: PageUser,
    kind: Annotated[str, Form()] = "",
    title: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    form = {"kind": kind, "title": title}
    if user is None:
        status, error = 401, "ゲームを作るにはログインしてください。"
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        try:
            game = gm.create_game(session, user, kind, title, {}, deps.secret_key(request))
            session.commit()
            return redirect(f"/games/{game.id}")
        except ServiceError as exc:
            session.rollback()
            status, error = exc.status, exc.message
    return render(
        request, "games/new.html", user, status, kinds=all_games(), form=form, error=error
    )


@router.get("/games/{game_id}")
def game_page(request: Request, game_id: int, session: SessionDep, user: PageUser) -> Response:
    game = gm.get_game(session, game_id)
    thread = game.thread
    posts = forum.list_posts(
        session, thread, max(0, thread.post_count - RECENT_POSTS), RECENT_POSTS
    )

    def anchor_href(number: int) -> str:
        return f"/threads/{thread.id}?page={(number - 1) // 100 + 1}#{number}"

    recent = [(post, render_body(post.body, anchor_href)) for post in posts]
    context = game_panel(session, game, user)
    session.commit()
    return render(
        request,
        "games/game.html",
        user,
        thread=thread,
        recent=recent,
        form={"body": ""},
        error=None,
        **context,
    )
