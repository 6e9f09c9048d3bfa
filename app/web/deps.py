"""Request-scoped pieces shared by pages and API routes: the DB session, the viewer, CSRF."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, TypeVar

import anyio
from fastapi import Depends, Request
from itsdangerous import BadSignature, Signer
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.accounts import users as accounts
from app.config import Settings
from app.db.engine import Database, RequestSession
from app.db.models import User
from app.errors import Unauthorized
from app.gm import turns
from app.web.headers import CSRF_COOKIE

SESSION_COOKIE = "bbsgm_session"
T = TypeVar("T")


def write_lane(request: Request) -> anyio.CapacityLimiter | None:
    """The database's write lane (``Database.write_lane``): on SQLite one post at a time in
    this process (the work of ``signed_in_work`` and ``unit_of_work_in_one_thread``, all of
    it in one worker thread), the others waiting for their turn in the event loop rather
    than as worker threads parked on the write lock (lock hand-overs and GIL switches between
    them cost CPU: docs/performance.md); None on PostgreSQL. Not taken by ``unit_of_work``:
    a ``WriteSession`` route may spend long before its first write (a login's or bbs.cgi's
    argon2 check, 0.2 s), which holds no lock until that write, and so no turn."""
    database: Database = request.app.state.database
    return database.write_lane


# Trivial dependencies are coroutines: FastAPI runs a plain function in the thread pool, and
# each hop there costs more than these do.
async def get_database(request: Request) -> Database:
    db: Database = request.app.state.database
    return db


async def get_settings_dep(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_session(
    db: Annotated[Database, Depends(get_database)],
) -> AsyncIterator[RequestSession]:
    """The request's one session (the viewer's dependencies and the route share it). Its
    transactions read until the route's unit of work says it writes (``unit_of_work``).
    Opening one touches no database, so it happens in the event loop; closing one whose
    transaction is still open (a read) rolls back, which does, so that happens in the
    thread pool. (A plain generator would cost two thread-pool hops.)"""
    session = db.request_sessionmaker()
    try:
        yield session
    finally:
        if session.in_transaction():
            await run_in_threadpool(session.close)
        else:
            session.close()


async def unit_of_work(
    session: Annotated[RequestSession, Depends(get_session, scope="function")],
) -> AsyncIterator[RequestSession]:
    """A route that writes: its session's transactions write (on SQLite ``BEGIN IMMEDIATE``,
    in line for the write lock) and **commit when the route returns** — before the response
    is sent (``scope="function"``), so that a client never sees an answer whose work is not
    stored. If the route raises, the work is rolled back and the error answered. Routes
    never commit: a route that catches a refusal to answer it on its form rolls that
    attempt back itself (``session.end_writes()``: rolled back, and what it reads to render
    the form again reads without the write lock). Services that must commit part of the
    work before the rest say why where they do (the rate limits' counts:
    app/accounts/ratelimit.py)."""
    if session.in_transaction():
        await run_in_threadpool(session.begin_writes)
    else:
        session.begin_writes()
    try:
        yield session
    except BaseException:
        await run_in_threadpool(session.rollback)
        raise
    if session.in_transaction():
        await run_in_threadpool(session.commit)


async def unit_of_work_in_one_thread(
    request: Request, session: RequestSession, work: Callable[[], T]
) -> T:
    """``unit_of_work`` for a route that does its whole work in ``work``: the writes begin,
    ``work`` runs and the transaction commits (or, if it raises, rolls back) in **one**
    worker thread. With ``WriteSession`` a sync route runs in one thread and the commit in
    another, after the event loop has got round to it: on SQLite the write lock is held
    across that wait, and every other post waits with it (the browser's post form, the
    busiest writing page). ``work`` may give up its writes (``session.end_writes()``) to
    render a refusal; what it has read then commits as a read. It runs in the write lane
    (``write_lane``)."""

    def run() -> T:
        session.begin_writes()
        try:
            result = work()
        except BaseException:
            session.rollback()
            raise
        if session.in_transaction():
            session.commit()
        return result

    return await anyio.to_thread.run_sync(run, limiter=write_lane(request))


# A route that only reads takes ``ReadSession``; one that writes, ``WriteSession`` (its unit
# of work). Neither commits in the route.
# Both end when the route returns (``scope="function"``), before the response is sent: a page's
# connection goes back to the pool once it is rendered, not once a slow client has read it.
ReadSession = Annotated[RequestSession, Depends(get_session, scope="function")]
WriteSession = Annotated[RequestSession, Depends(unit_of_work, scope="function")]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
DatabaseDep = Annotated[Database, Depends(get_database)]


def secret_key(request: Request) -> str:
    key: str = request.app.state.secret_key
    return key


def csrf_signer(request: Request) -> Signer:
    return Signer(secret_key(request), salt="bbsgm.csrf")


def csrf_nonce(request: Request) -> str:
    """The browser's CSRF nonce (cookie); the middleware makes one for first visits."""
    nonce: str = request.state.csrf_nonce
    return nonce


def csrf_token(request: Request) -> str:
    return csrf_signer(request).sign(csrf_nonce(request)).decode()


def csrf_ok(request: Request, submitted: str) -> bool:
    """Double-submit check: the form's signed token must carry this browser's cookie nonce."""
    if not submitted or len(submitted) > 200 or CSRF_COOKIE not in request.cookies:
        return False
    try:
        nonce = csrf_signer(request).unsign(submitted).decode()
    except (BadSignature, UnicodeDecodeError):
        return False
    return secrets.compare_digest(nonce, request.cookies[CSRF_COOKIE])


def _signed_in(session: RequestSession, token: str, kind: str) -> User | None:
    """The token's user, read in a read of its own (``RequestSession.reading``): no write
    lock, even where the route's unit of work began first, and no transaction left open
    across the hop from this dependency's worker thread to the route's. The user stays
    loaded (the session does not expire on commit)."""
    with session.reading():
        return accounts.user_for_token(session, token, kind)


def cookie_user(request: Request, session: ReadSession) -> User | None:
    """The page's viewer; for a signed-in one, also the header's counts (tables awaiting
    them, unread notices: ``turns.header_counts``, one SELECT) in the sign-in's read."""
    token = request.cookies.get(SESSION_COOKIE, "")
    if not token:
        return None
    with session.reading():  # as _signed_in
        user = accounts.user_for_token(session, token, "session")
        if user is not None:
            request.state.header_counts = turns.header_counts(session, user.id)
    return user


LOGIN_NEEDED = "ログインが必要です（Authorization: Bearer <token>）。"


def bearer_token(request: Request) -> str | None:
    """The token of an ``Authorization: Bearer …`` header, or None."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def bearer_user(request: Request, session: ReadSession) -> User | None:
    token = bearer_token(request)
    return _signed_in(session, token, "api") if token is not None else None


async def require_bearer_header(request: Request) -> None:
    """401 for a request without a bearer token, before its body is validated — what the
    routes that look the token up in a dependency answer. For routes that look it up in
    their own worker thread (the post route); reads no database."""
    if bearer_token(request) is None:
        raise Unauthorized(LOGIN_NEEDED)


def require_bearer_user(request: Request, session: ReadSession) -> User:
    user = bearer_user(request, session)
    if user is None:
        raise Unauthorized(LOGIN_NEEDED)
    return user


async def signed_in_work(request: Request, work: Callable[[Session, User], T]) -> T:
    """``work(session, user)`` for the bearer token's user, the sign-in and the work in one
    worker thread and one session (the busiest routes: a post, a sealed command), instead
    of a hop between the event loop and a worker thread for each sync dependency and one
    for the body. (Measured on SQLite, the posts a second barely moved: docs/performance.md.)
    It is these routes' unit of work, as ``unit_of_work`` is the others': the work commits
    when it returns, in the same thread, and is rolled back if it raises; it runs in the
    write lane (``write_lane``)."""
    database: Database = request.app.state.database
    token = bearer_token(request)

    def run() -> T:
        with database.session() as session:
            # Read in the transaction the work goes on with, which its rate limit counts in
            # too (``ratelimit.counted_post``): one transaction for the whole request, and no
            # hop to another thread between the read and the writes that would hold SQLite's
            # write lock, so the read needs no transaction of its own (``_signed_in``'s).
            user = accounts.user_for_token(session, token, "api") if token is not None else None
            if user is None:
                raise Unauthorized(LOGIN_NEEDED)
            result = work(session, user)
            session.commit()
            return result

    return await anyio.to_thread.run_sync(run, limiter=write_lane(request))


PageUser = Annotated[User | None, Depends(cookie_user)]
ApiUser = Annotated[User, Depends(require_bearer_user)]
OptionalApiUser = Annotated[User | None, Depends(bearer_user)]


def template_context(request: Request, user: User | None, **extra: Any) -> dict[str, Any]:
    settings: Settings = request.app.state.settings
    return {
        "request": request,
        "user": user,
        "csrf_token": csrf_token(request),
        "site_name": settings.site_name,
        **extra,
    }
