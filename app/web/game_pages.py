"""Pages for games: the list, a new game form, and each game's page (board, your view, legal
command lines that fill the post form, the ranking once over)."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Query, Request, Response
from sqlalchemy.orm import Session

from app.accounts import ratelimit
from app.db.models import Game, User
from app.errors import Invalid, ServiceError
from app.forum import moderation
from app.forum import service as forum
from app.forum.render import render_body
from app.games import all_games, find_game
from app.gm import lobby, secrecy
from app.gm import options as game_options
from app.gm import service as gm
from app.i18n import N_, gettext
from app.web import deps
from app.web.common import CSRF_MESSAGE, game_panel, redirect, render
from app.web.deps import PageUser, SessionDep, SettingsDep
from app.web.howto_pages import HOWTOS

router = APIRouter(include_in_schema=False)

RECENT_POSTS = 15


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
    # The lobby first (docs/forum.md): on the list's first page, unfiltered or asking for
    # recruiting games.
    shown = page == 1 and (status or "recruiting") == "recruiting" and not kind
    tables = lobby.recruiting(session, user) if shown else None
    session.commit()
    return render(
        request,
        "games/list.html",
        user,
        games=games,
        tables=tables,
        page=current,
        kinds=all_games(),
        status=status or "",
        kind=kind or "",
    )


async def posted_form(request: Request) -> dict[str, str]:
    """The form's text fields by name (the first of a repeated one): the new game's options
    are named by kind, so they are read here rather than one parameter each."""
    form = await request.form()  # parsed once; the Form() parameters read the same
    found: dict[str, str] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):
            found.setdefault(name, value)
    return found


def new_game_page(
    request: Request,
    user: User | None,
    form: dict[str, str],
    status: int = 200,
    error: str | None = None,
    problems: dict[str, str] | None = None,
) -> Response:
    """The /games/new form: each kind's own options in a fieldset of its own (only the chosen
    kind's are read), then the options every game has (docs/gm.md, "New games")."""
    kinds = all_games()
    return render(
        request,
        "games/new.html",
        user,
        status,
        kinds=kinds,
        kind_options={impl.kind: game_options.form_fields(impl) for impl in kinds},
        summaries={kind: howto.summary for kind, howto in HOWTOS.items()},
        platform_options=game_options.PLATFORM_FIELDS,
        form=form,
        posted=request.method == "POST",
        error=error,
        problems=problems or {},
    )


@router.get("/games/new")
def new_game_form(request: Request, user: PageUser, kind: str = "") -> Response:
    return new_game_page(request, user, {"kind": kind, "title": ""})


@router.post("/games")
def create_game(
    request: Request,
    session: SessionDep,
    user: PageUser,
    posted: Annotated[dict[str, str], Depends(posted_form)],
    kind: Annotated[str, Form()] = "",
    title: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    form = {**posted, "kind": kind, "title": title}
    form.pop("csrf_token", None)
    problems: dict[str, str] = {}
    if user is None:
        status, error = 401, N_("ゲームを作るにはログインしてください。")
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        impl = find_game(kind)
        options = game_options.from_form(impl, posted) if impl is not None else {}
        bots = _bots_of(posted.get("bots", ""))
        rated = posted.get("rated_with_bots", "") not in ("", "off", "false", "0", "no")
        try:
            ratelimit.check_post(session, request, user)
            if bots is None:
                raise Invalid(BOTS_NOT_A_NUMBER, field="bots")
            game = gm.create_game(
                session,
                user,
                kind,
                title,
                options,
                deps.secret_key(request),
                bots=bots,
                rated_with_bots=rated,
            )
            session.commit()
            return redirect(f"/games/{game.id}")
        except game_options.OptionsInvalid as exc:
            session.rollback()
            status = exc.status
            said = {p.name: option_message(p) for p in exc.problems}
            problems = {game_options.input_name(kind, p): said[p.name] for p in exc.problems}
            error = gettext(game_options.SUMMARY) % {"reason": " ".join(said.values())}
        except ServiceError as exc:
            session.rollback()
            status, error = exc.status, exc.message
    return new_game_page(request, user, form, status, error, problems)


BOTS_NOT_A_NUMBER = N_("ボットの数は0以上の整数で書いてください。")


def _bots_of(raw: str) -> int | None:
    """The form's ボットの数 (empty: none); None when it is not a whole number."""
    text = unicodedata.normalize("NFKC", raw).strip()
    if not text:
        return 0
    if not text.isdecimal():
        return None
    return int(text) if len(text) <= 3 else 1000  # more than any kind seats: refused as such


def option_message(problem: game_options.Problem) -> str:
    """A bad option's message in the reader's language (its label and values looked up)."""
    values = {
        key: gettext(value) if key == "label" else value for key, value in problem.values.items()
    }
    said: str = gettext(problem.msgid) % values if values else gettext(problem.msgid)
    return said


def _game_page(
    request: Request,
    session: Session,
    game: Game,
    user: User | None,
    status: int = 200,
    **extra: Any,
) -> Response:
    thread = game.thread
    posts = forum.list_posts(
        session, thread, max(0, thread.post_count - RECENT_POSTS), RECENT_POSTS
    )

    def anchor_href(number: int) -> str:
        return f"/threads/{thread.id}?page={(number - 1) // 100 + 1}#{number}"

    recent = [(post, render_body(moderation.shown_body(post, user), anchor_href)) for post in posts]
    context = game_panel(session, game, user)
    sealed = gm.sealed_for(session, game, user)
    can_seal = game.status == "active" and (context["seat"] is not None or context["is_gm"])
    session.commit()
    values: dict[str, Any] = {
        "form": {"body": ""},
        "error": None,
        "preview": None,
        "sealed_error": None,
        "sealed_body": "",
        **extra,
    }
    return render(
        request,
        "games/game.html",
        user,
        status,
        thread=thread,
        recent=recent,
        sealed=sealed,
        can_seal=can_seal,
        panel=context,
        board_game_id=game.id,
        **context,
        **values,
    )


@router.get("/games/{game_id}")
def game_page(request: Request, game_id: int, session: SessionDep, user: PageUser) -> Response:
    return _game_page(request, session, gm.get_game(session, game_id), user)


@router.post("/games/{game_id}/sealed")
def sealed_command(
    request: Request,
    game_id: int,
    session: SessionDep,
    user: PageUser,
    body: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    game = gm.get_game(session, game_id)
    if user is None:
        status, error = 401, N_("封印コマンドを送るにはログインしてください。")
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        try:
            ratelimit.check_post(session, request, user)
            row, _public = gm.submit_sealed(session, game.id, user, body, deps.secret_key(request))
            session.commit()
            if row.ok:
                return redirect(f"/games/{game.id}#sealed")
            status, error = 422, row.reply
        except ServiceError as exc:
            session.rollback()
            status, error = exc.status, exc.message
    game = gm.get_game(session, game_id)
    return _game_page(request, session, game, user, status, sealed_error=error, sealed_body=body)


@router.get("/games/{game_id}/log")
def game_log(request: Request, game_id: int, session: SessionDep, user: PageUser) -> Response:
    game = gm.get_game(session, game_id)
    entries = moderation.log_for(session, game)
    moves = gm.moves_of(session, game)
    reader = secrecy.reader(game, user)
    session.commit()
    return render(
        request, "games/log.html", user, game=game, entries=entries, moves=moves, reader=reader
    )
