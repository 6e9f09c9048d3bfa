"""A player's page (``/users/{name}``) and the ranking of a game kind (``/ratings/{kind}``),
each with its JSON twin under /api (docs/ratings.md, docs/api.md); and marking one game's
notices read on /notifications (docs/notifications.md)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Path, Request, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.schemas import ERROR_RESPONSES
from app.archive import players
from app.db.models import User
from app.gm import ratings
from app.gm import service as gm
from app.i18n import N_
from app.notify import feeds
from app.web import deps
from app.web.card_pages import STATUS_LABELS
from app.web.common import CSRF_MESSAGE, redirect, render
from app.web.deps import DatabaseDep, PageUser, ReadSession, WriteSession

router = APIRouter(include_in_schema=False)
api_router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)
UserName = Annotated[str, Path(max_length=200)]
FormText = Annotated[str, Form(max_length=200)]
NO_SUCH_GROUP = N_("既読にするゲームの指定が正しくありません。")
KindName = Annotated[str, Path(max_length=64)]


def _ranking(session: Session, kind: str) -> tuple[str, list[tuple[ratings.Standing, str]]]:
    impl = gm.game_impl(kind)
    rows = ratings.standings(session, impl.kind)
    ids = [row.user_id for row in rows]
    names = {
        user_id: name
        for user_id, name in session.execute(select(User.id, User.name).where(User.id.in_(ids)))
    }
    return impl.kind, [(row, names.get(row.user_id, "")) for row in rows]


@router.get("/users/{name:path}")
def user_page(
    request: Request, name: UserName, session: ReadSession, database: DatabaseDep, user: PageUser
) -> Response:
    ratings.bring_up_to_date(database)
    found = players.record(session, name)
    return render(request, "users/user.html", user, record=found, card_statuses=STATUS_LABELS)


@router.get("/ratings/{kind}")
def ratings_page(
    request: Request, kind: KindName, session: ReadSession, database: DatabaseDep, user: PageUser
) -> Response:
    gm.game_impl(kind)  # an unknown kind is refused before any rating is written
    ratings.bring_up_to_date(database)
    key, rows = _ranking(session, kind)
    return render(
        request,
        "users/ratings.html",
        user,
        kind=key,
        rows=rows,
        provisional_games=ratings.PROVISIONAL_GAMES,
        provisional_sigma=ratings.PROVISIONAL_SIGMA,
    )


@api_router.get("/users/{name:path}")
def user_json(name: UserName, session: ReadSession, database: DatabaseDep) -> dict[str, Any]:
    """A player's record: games played and won per kind, ratings, current tables, finished
    games with place, score and replay, cards registered, trips shown."""
    ratings.bring_up_to_date(database)
    found = players.record(session, name)
    return players.to_json(found)


@api_router.get("/ratings/{kind}")
def ratings_json(kind: KindName, session: ReadSession, database: DatabaseDep) -> dict[str, Any]:
    """The kind's ranking: settled players first, then provisional ones, by mu − 3·sigma."""
    gm.game_impl(kind)  # an unknown kind is refused before any rating is written
    ratings.bring_up_to_date(database)
    key, rows = _ranking(session, kind)
    return {
        "kind": key,
        "ranking": [{"name": name, **row.to_json()} for row, name in rows],
    }


@router.post("/notifications/read")
def mark_read(
    request: Request,
    session: WriteSession,
    user: PageUser,
    game: FormText = "",
    csrf_token: FormText = "",
) -> Response:
    """One game's notices marked read (``game`` its id, or ``none``: notices of no game),
    back to that game's group on /notifications."""
    if user is None:
        return redirect("/login?next=/notifications")
    if not deps.csrf_ok(request, csrf_token):
        return render(request, "error.html", user, 403, status=403, message=CSRF_MESSAGE)
    if game == "none":
        game_id = None
    elif game.isdecimal() and game.isascii() and len(game) < 10:
        game_id = int(game)
    else:
        return render(request, "error.html", user, 422, status=422, message=NO_SUCH_GROUP)
    feeds.mark_read(session, user, game_id)
    return redirect(f"/notifications#notices-{game_id if game_id is not None else 'none'}")
