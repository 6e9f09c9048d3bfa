"""Server-rendered pages. Each route parses the request, calls one service, renders."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.responses import RedirectResponse

from app import accounts
from app.errors import ServiceError
from app.forum import service as forum
from app.forum.render import render_body
from app.gm import service as gm
from app.models import Thread, User
from app.web import deps
from app.web.deps import PageUser, SessionDep, SettingsDep

router = APIRouter(include_in_schema=False)

PageNumber = Annotated[int, Query(ge=1, le=1_000_000)]
FormText = Annotated[str, Form()]
CSRF_MESSAGE = (
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
    """Only same-site paths: a login link must not bounce anyone to another site."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


@router.get("/favicon.ico")
def favicon() -> RedirectResponse:
    return RedirectResponse("/static/favicon.svg", status_code=301)


@router.get("/")
def index(request: Request, session: SessionDep, user: PageUser) -> Response:
    boards = forum.list_boards(session)
    session.commit()
    return render(request, "forum/index.html", user, boards=boards)


@router.get("/boards/{slug}")
def board_page(
    request: Request,
    slug: str,
    session: SessionDep,
    settings: SettingsDep,
    user: PageUser,
    page: PageNumber = 1,
) -> Response:
    board = forum.get_board(session, slug)
    threads, current = forum.list_threads(session, board, page, settings.threads_per_page)
    session.commit()
    return render(
        request,
        "forum/board.html",
        user,
        board=board,
        threads=threads,
        page=current,
        form={"title": "", "body": ""},
        error=None,
    )


@router.post("/boards/{slug}/threads")
def new_thread(
    request: Request,
    slug: str,
    session: SessionDep,
    settings: SettingsDep,
    user: PageUser,
    title: FormText = "",
    body: FormText = "",
    csrf_token: FormText = "",
) -> Response:
    board = forum.get_board(session, slug)
    form = {"title": title, "body": body}
    status, error = 200, None
    if user is None:
        status, error = 401, "スレッドを立てるにはログインしてください。"
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        try:
            thread, _post = forum.create_thread(
                session, board, user, title, body, deps.secret_key(request)
            )
            session.commit()
            return redirect(f"/threads/{thread.id}")
        except ServiceError as exc:
            session.rollback()
            status, error = exc.status, exc.message
    threads, current = forum.list_threads(session, board, 1, settings.threads_per_page)
    session.commit()
    return render(
        request,
        "forum/board.html",
        user,
        status,
        board=board,
        threads=threads,
        page=current,
        form=form,
        error=error,
    )


def _thread_context(
    session: SessionDep, thread: Thread, page: int, per_page: int
) -> dict[str, Any]:
    current = forum.page_of(thread.post_count, per_page, page)
    posts = forum.list_posts(session, thread, (current.number - 1) * per_page, per_page)

    def anchor_href(number: int) -> str:
        target_page = (number - 1) // per_page + 1
        return f"#{number}" if target_page == current.number else f"?page={target_page}#{number}"

    rendered = [(post, render_body(post.body, anchor_href)) for post in posts]
    return {"thread": thread, "posts": rendered, "page": current}


def _with_game(
    session: SessionDep, thread: Thread, user: User | None, context: dict[str, Any]
) -> dict[str, Any]:
    from app.web.game_pages import game_panel

    game = gm.game_for_thread(session, thread.id)
    context["panel"] = game_panel(session, game, user) if game is not None else None
    return context


@router.get("/threads/{thread_id}")
def thread_page(
    request: Request,
    thread_id: int,
    session: SessionDep,
    settings: SettingsDep,
    user: PageUser,
    page: PageNumber = 1,
) -> Response:
    thread = forum.get_thread(session, thread_id)
    context = _with_game(
        session, thread, user, _thread_context(session, thread, page, settings.posts_per_page)
    )
    session.commit()
    return render(request, "forum/thread.html", user, form={"body": ""}, error=None, **context)


@router.post("/threads/{thread_id}/posts")
def new_post(
    request: Request,
    thread_id: int,
    session: SessionDep,
    settings: SettingsDep,
    user: PageUser,
    body: FormText = "",
    csrf_token: FormText = "",
    return_to: FormText = "",
) -> Response:
    thread = forum.get_thread(session, thread_id)
    status, error = 200, None
    if user is None:
        status, error = 401, "書き込むにはログインしてください。"
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        try:
            post, _replies = gm.submit_post(
                session, thread.id, user, body, deps.secret_key(request)
            )
            session.commit()
            last_page = (post.number - 1) // settings.posts_per_page + 1
            if return_to.startswith("/games/"):
                return redirect(f"{safe_next(return_to)}#thread-latest")
            return redirect(f"/threads/{thread.id}?page={last_page}#{post.number}")
        except ServiceError as exc:
            session.rollback()
            status, error = exc.status, exc.message
    thread = forum.get_thread(session, thread_id)
    context = _with_game(
        session, thread, user, _thread_context(session, thread, 1_000_000, settings.posts_per_page)
    )
    session.commit()
    return render(
        request, "forum/thread.html", user, status, form={"body": body}, error=error, **context
    )


# --- accounts ---------------------------------------------------------------------------


def _set_session_cookie(response: Response, token: str, secure: bool) -> None:
    response.set_cookie(
        deps.SESSION_COOKIE,
        token,
        max_age=int(accounts.SESSION_LIFETIME.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/",
    )


@router.get("/register")
def register_form(request: Request, user: PageUser, next: str = "/") -> Response:
    return render(
        request, "auth/register.html", user, form={"name": ""}, error=None, next=safe_next(next)
    )


@router.post("/register")
def register(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: PageUser,
    name: FormText = "",
    password: FormText = "",
    csrf_token: FormText = "",
    next: FormText = "/",
) -> Response:
    if not deps.csrf_ok(request, csrf_token):
        return render(
            request,
            "auth/register.html",
            user,
            403,
            form={"name": name},
            error=CSRF_MESSAGE,
            next=safe_next(next),
        )
    try:
        new_user = accounts.register(session, name, password)
        token = accounts.issue_token(session, new_user, "session")
        session.commit()
    except ServiceError as exc:
        session.rollback()
        return render(
            request,
            "auth/register.html",
            user,
            exc.status,
            form={"name": name},
            error=exc.message,
            next=safe_next(next),
        )
    response = redirect(safe_next(next))
    _set_session_cookie(response, token, settings.secure_cookies)
    return response


@router.get("/login")
def login_form(request: Request, user: PageUser, next: str = "/") -> Response:
    return render(
        request, "auth/login.html", user, form={"name": ""}, error=None, next=safe_next(next)
    )


@router.post("/login")
def login(
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    user: PageUser,
    name: FormText = "",
    password: FormText = "",
    csrf_token: FormText = "",
    next: FormText = "/",
) -> Response:
    if not deps.csrf_ok(request, csrf_token):
        return render(
            request,
            "auth/login.html",
            user,
            403,
            form={"name": name},
            error=CSRF_MESSAGE,
            next=safe_next(next),
        )
    try:
        found = accounts.authenticate(session, name, password)
        token = accounts.issue_token(session, found, "session")
        session.commit()
    except ServiceError as exc:
        session.rollback()
        return render(
            request,
            "auth/login.html",
            user,
            exc.status,
            form={"name": name},
            error=exc.message,
            next=safe_next(next),
        )
    response = redirect(safe_next(next))
    _set_session_cookie(response, token, settings.secure_cookies)
    return response


@router.post("/logout")
def logout(
    request: Request, session: SessionDep, user: PageUser, csrf_token: FormText = ""
) -> Response:
    if not deps.csrf_ok(request, csrf_token):
        return render(request, "error.html", user, 403, status=403, message=CSRF_MESSAGE)
    token = request.cookies.get(deps.SESSION_COOKIE, "")
    if token:
        accounts.revoke_token(session, token)
        session.commit()
    response = redirect("/")
    response.delete_cookie(deps.SESSION_COOKIE, path="/")
    return response
