"""Server-rendered pages. Each route parses the request, calls one service, renders."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request, Response
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session

from app import i18n
from app.accounts import ratelimit
from app.accounts import users as accounts
from app.config import Settings
from app.db.engine import Database
from app.db.models import Thread, User
from app.errors import ServiceError
from app.forum import moderation
from app.forum import service as forum
from app.games import all_games
from app.gm import lobby
from app.gm import service as gm
from app.i18n import N_
from app.web import deps
from app.web.common import (
    CSRF_MESSAGE,
    FormText,
    PageNumber,
    redirect,
    render,
    render_thread,
    safe_next,
    thread_context,
)
from app.web.deps import DatabaseDep, PageUser, ReadSession, SettingsDep, WriteSession
from app.web.howto_pages import howto_kinds

router = APIRouter(include_in_schema=False)
NO_REPLY = N_("（命令の行がないので、ボットは答えません）")


@router.get("/favicon.ico")
def favicon() -> RedirectResponse:
    return RedirectResponse("/static/favicon.svg", status_code=301)


@router.get("/lang/{code}")
def switch_language(code: str, settings: SettingsDep, next: str = "/") -> Response:
    """The language switch (a plain link, so it works without JavaScript): remember the choice
    in a cookie and go back to the page, never to another site."""
    if not i18n.is_language(code):
        raise HTTPException(status_code=404)
    response = redirect(safe_next(next))
    i18n.set_language_cookie(response, code, settings.secure_cookies)
    return response


@router.get("/")
def index(request: Request, session: ReadSession, user: PageUser) -> Response:
    boards = forum.list_boards(session)
    tables = lobby.recruiting(session, user)
    return render(
        request, "forum/index.html", user, boards=boards, tables=tables, howto_kinds=howto_kinds()
    )


@router.get("/boards/{slug}")
def board_page(
    request: Request,
    slug: str,
    session: ReadSession,
    settings: SettingsDep,
    user: PageUser,
    page: PageNumber = 1,
) -> Response:
    board = forum.get_board(session, slug)
    threads, current = forum.list_threads(session, board, page, settings.threads_per_page)
    unread = forum.unread_counts(session, user, threads)
    pinned = lobby.pinned(session, board)
    return render(
        request,
        "forum/board.html",
        user,
        board=board,
        threads=threads,
        pinned=pinned,
        howtos=all_games() if board.slug == lobby.LOBBY_SLUG else [],
        unread=unread,
        page=current,
        form={"title": "", "body": "", "name": ""},
        error=None,
    )


@router.post("/boards/{slug}/threads")
def new_thread(
    request: Request,
    slug: str,
    session: WriteSession,
    settings: SettingsDep,
    user: PageUser,
    title: FormText = "",
    body: FormText = "",
    name: FormText = "",
    csrf_token: FormText = "",
) -> Response:
    board = forum.get_board(session, slug)
    form = {"title": title, "body": body, "name": name}
    status, error = 200, None
    if user is None:
        status, error = 401, N_("スレッドを立てるにはログインしてください。")
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        try:
            ratelimit.check_post(session, request, user)
            thread, _post = forum.create_thread(
                session, board, user, title, body, deps.secret_key(request), name=name
            )
            return redirect(f"/threads/{thread.id}")
        except ServiceError as exc:
            session.end_writes()
            status, error = exc.status, exc.message
    threads, current = forum.list_threads(session, board, 1, settings.threads_per_page)
    unread = forum.unread_counts(session, user, threads)
    return render(
        request,
        "forum/board.html",
        user,
        status,
        board=board,
        threads=threads,
        unread=unread,
        page=current,
        form=form,
        error=error,
    )


@router.get("/threads/{thread_id}")
def thread_page(
    request: Request,
    thread_id: int,
    session: ReadSession,
    database: DatabaseDep,
    settings: SettingsDep,
    user: PageUser,
    page: PageNumber = 1,
) -> Response:
    if user is not None:
        _remember_place(database, user, thread_id, page, settings.posts_per_page)
    context, posts = thread_context(
        request, session, thread_id, user, page, settings.posts_per_page
    )
    form = {"body": "", "name": ""}
    return render_thread(request, user, context, posts, conditional=True, form=form, error=None)


def _remember_place(
    database: Database, user: User, thread_id: int, page: int, per_page: int
) -> None:
    """A signed-in reader has seen the page's last post (``forum.mark_read``). The page only
    reads (on SQLite it holds no write lock while it renders); the place is written before
    the page's own reads begin, by a unit of work of its own (``sessionmaker.begin()``,
    committed at the block's end), and only when it moves: looked at in a read first, so a
    page read again takes no write lock."""
    with database.read_session() as reading:
        thread = reading.get(Thread, thread_id)
        if thread is None:
            return  # the page answers 404
        current = forum.page_of(thread.post_count, per_page, page)
        upto = min(thread.post_count, current.number * per_page)
        if upto <= (current.number - 1) * per_page or forum.has_read(reading, user, thread, upto):
            return
    with database.sessionmaker.begin() as writing:
        forum.mark_read(writing, user, thread, upto)


@router.post("/threads/{thread_id}/posts")
async def new_post(
    request: Request,
    thread_id: int,
    session: ReadSession,
    settings: SettingsDep,
    user: PageUser,
    body: FormText = "",
    name: FormText = "",
    csrf_token: FormText = "",
    return_to: FormText = "",
) -> Response:
    """The post form: the post, its game's answer and the commit in one worker thread
    (``deps.unit_of_work_in_one_thread``), then a redirect to the post."""

    def work() -> Response:
        thread = forum.get_thread(session, thread_id)
        status, error = 200, None
        if user is None:
            status, error = 401, N_("書き込むにはログインしてください。")
        elif not deps.csrf_ok(request, csrf_token):
            status, error = 403, CSRF_MESSAGE
        else:
            try:
                secret = deps.secret_key(request)
                post, _replies = ratelimit.counted_post(
                    session,
                    request,
                    user,
                    lambda: gm.submit_post(session, thread.id, user, body, secret, name=name),
                )
                last_page = (post.number - 1) // settings.posts_per_page + 1
                if return_to.startswith("/games/"):
                    return redirect(f"{safe_next(return_to)}#thread-latest")
                return redirect(f"/threads/{thread.id}?page={last_page}#{post.number}")
            except ServiceError as exc:
                session.end_writes()
                status, error = exc.status, exc.message
        form = {"body": body, "name": name}
        return _thread_again(request, session, settings, user, thread_id, form, status, error)

    return await deps.unit_of_work_in_one_thread(request, session, work)


@router.post("/threads/{thread_id}/preview")
def preview_post(
    request: Request,
    thread_id: int,
    session: WriteSession,
    settings: SettingsDep,
    user: PageUser,
    body: FormText = "",
    name: FormText = "",
    csrf_token: FormText = "",
) -> Response:
    """プレビュー: the bot's answer as it would be, with the text kept; nothing is stored."""
    thread = forum.get_thread(session, thread_id)
    status, error, preview = 200, None, None
    if user is None:
        status, error = 401, N_("プレビューするにはログインしてください。")
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        try:
            ratelimit.check_post(session, request, user)
            secret = deps.secret_key(request)
            _post, replies = gm.preview(session, thread.id, user, body, secret, name)
            preview = [reply.body for reply in replies] or [i18n.gettext(NO_REPLY)]
        except ServiceError as exc:
            status, error = exc.status, exc.message
        finally:
            session.end_writes()
    form = {"body": body, "name": name}
    return _thread_again(
        request, session, settings, user, thread_id, form, status, error, preview=preview
    )


def _thread_again(
    request: Request,
    session: Session,
    settings: Settings,
    user: User | None,
    thread_id: int,
    form: dict[str, str],
    status: int,
    error: str | None,
    preview: list[str] | None = None,
) -> Response:
    """The thread's last page again, with the message or preview and what was typed: the body,
    and the 名前欄 as it was sent (a key included: it goes back to the poster alone, who
    typed it, in this one answer, and is never stored)."""
    context, posts = thread_context(
        request, session, thread_id, user, 1_000_000, settings.posts_per_page
    )
    return render_thread(
        request,
        user,
        context,
        posts,
        status,
        conditional=False,
        form=form,
        error=error,
        preview=preview,
    )


@router.post("/threads/{thread_id}/posts/{number}/hide")
def hide_post(
    request: Request,
    thread_id: int,
    number: Annotated[int, Path(ge=1, le=2**31 - 1)],
    session: WriteSession,
    settings: SettingsDep,
    user: PageUser,
    csrf_token: FormText = "",
    action: FormText = "hide",
) -> Response:
    if user is None:  # as every other form: log in first, then whether you may
        message = N_("書き込みを隠すにはログインしてください。")
        return render(request, "error.html", user, 401, status=401, message=message)
    if not deps.csrf_ok(request, csrf_token):
        return render(request, "error.html", user, 403, status=403, message=CSRF_MESSAGE)
    moderation.set_hidden(session, thread_id, number, user, action != "unhide")
    page = (number - 1) // settings.posts_per_page + 1
    return redirect(f"/threads/{thread_id}?page={page}#{number}")


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
    session: WriteSession,
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
        ratelimit.check_register(session, request)
        new_user = accounts.register(session, name, password)
        token = accounts.issue_token(session, new_user, "session")
    except ServiceError as exc:
        session.end_writes()
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
    session: WriteSession,
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
        ratelimit.check_login(session, request, name)
        found = accounts.authenticate(session, name, password)
        token = accounts.issue_token(session, found, "session")
    except ServiceError as exc:
        session.end_writes()
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
    request: Request, session: WriteSession, user: PageUser, csrf_token: FormText = ""
) -> Response:
    if not deps.csrf_ok(request, csrf_token):
        return render(request, "error.html", user, 403, status=403, message=CSRF_MESSAGE)
    token = request.cookies.get(deps.SESSION_COOKIE, "")
    if token:
        accounts.revoke_token(session, token)
    response = redirect("/")
    response.delete_cookie(deps.SESSION_COOKIE, path="/")
    return response
