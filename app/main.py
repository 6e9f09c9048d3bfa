"""The ASGI application: pages (app.web), JSON API (app.api), security headers, error pages."""

from __future__ import annotations

import asyncio
import gc
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import psycopg
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import OperationalError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import games
from app.accounts import users as accounts
from app.accounts.ratelimit import RequestLimits, in_flight_limit
from app.api.archive import router as archive_api_router
from app.api.cards import router as cards_api_router
from app.api.games import router as games_api_router
from app.api.routes import router as api_router
from app.archive.search import INDEX_BATCH, index_batch
from app.config import Settings, get_settings
from app.db.engine import Database, is_sqlite_file
from app.db.models import User
from app.errors import ServiceError
from app.gm.deadlines import tick
from app.i18n import LanguageMiddleware
from app.live import hub as live
from app.notify.delivery import deliver_due
from app.web import deps
from app.web.archive_pages import router as archive_pages_router
from app.web.bbs_cgi import router as bbs_cgi_router
from app.web.card_pages import router as card_pages_router
from app.web.feed_pages import router as feed_router
from app.web.game_pages import router as game_pages_router
from app.web.headers import SecurityHeaders
from app.web.howto_pages import router as howto_pages_router
from app.web.live_pages import router as live_router
from app.web.pages import router as pages_router
from app.web.templating import make_templates
from app.web.user_pages import api_router as users_api_router
from app.web.user_pages import router as user_pages_router

log = logging.getLogger("bbsgm")

STATIC_DIR = Path(__file__).parent / "web" / "static"
DATABASE_UNAVAILABLE = "データベースが応答しません。しばらくしてからもう一度お試しください。"
RETRY_AFTER_UNAVAILABLE = 5  # seconds


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api")


def _unavailable(exc: Exception) -> bool:
    """A lock wait that ran out (SQLite) or a connection that failed (psycopg), whether
    SQLAlchemy wrapped the driver's error or not."""
    error = getattr(exc, "orig", None) or exc
    if isinstance(error, sqlite3.OperationalError):
        return "locked" in str(error) or "busy" in str(error)
    return isinstance(error, psycopg.OperationalError)


def open_database(settings: Settings) -> Database:
    """The app's engine. Its pool keeps a connection for every request
    let inside the app at once (``max_requests_in_flight``, app/accounts/ratelimit.py): with
    SQLAlchemy's default of five and twelve let in, the sixth to twelfth concurrent requests
    each opened a connection and closed it after use — a new PostgreSQL backend, with cold
    caches, per request. The overflow above it stays for the
    background runners and the live streams' reads."""
    if settings.is_sqlite and not is_sqlite_file(settings.database_url):
        return Database(settings.database_url)  # one connection per thread: no pool to size
    return Database(settings.database_url, pool_size=max(5, in_flight_limit(settings)))


def create_app(
    settings: Settings | None = None,
    database: Database | None = None,
    *,
    server_process: bool = False,
) -> FastAPI:
    """``server_process``: the app is the process's own (``bbsgm serve``'s workers), and its
    start settles the process's garbage collector (``settle_garbage_collector``)."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(games.warm_up)  # the grammars, before the first post
        if server_process:
            settle_garbage_collector()
        listener = None
        engine = app.state.database.engine
        if engine.dialect.name == "postgresql":
            dsn = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
            listener = live.PostgresListener(dsn, live.HUB)
            listener.start()
        runners = []
        if settings.tick_seconds > 0:
            runners.append(asyncio.create_task(deadline_runner(app, settings.tick_seconds)))
        if settings.deliver_seconds > 0:
            runners.append(asyncio.create_task(delivery_runner(app, settings.deliver_seconds)))
        if app.state.database.is_sqlite_file and settings.search_index_seconds > 0:
            every = settings.search_index_seconds
            runners.append(asyncio.create_task(index_runner(app, every)))
        if app.state.database.is_sqlite_file and settings.wal_checkpoint_seconds > 0:
            app.state.database.defer_checkpoints(CHECKPOINT_BACKSTOP_PAGES)
            every = settings.wal_checkpoint_seconds
            runners.append(asyncio.create_task(checkpoint_runner(app, every)))
        yield
        for runner in runners:
            runner.cancel()
        if listener is not None:
            listener.stop()
        if database is None:
            app.state.database.dispose()

    app = FastAPI(
        title="bbsgm",
        summary="掲示板 with a game-master bot — JSON API",
        version="1",
        docs_url="/api/docs",
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.database = database or open_database(settings)
    app.state.secret_key = settings.resolved_secret_key()
    app.state.templates = make_templates(settings)
    # Limits (app/accounts/ratelimit.py): bodies over max_request_bytes get 413 before any
    # parsing, at most max_requests_in_flight requests are inside the app at once, and a 429
    # gets Retry-After. Added before `security`, which wraps it and its answers.
    app.add_middleware(
        RequestLimits,
        max_bytes=settings.max_request_bytes,
        max_in_flight=in_flight_limit(settings),
    )

    # Security headers and the CSRF nonce cookie (app/web/headers.py); wraps the limits above.
    app.add_middleware(SecurityHeaders, secure_cookies=settings.secure_cookies)

    # Outermost of ours: the language is set before anything renders, error pages included.
    app.add_middleware(LanguageMiddleware, secure_cookies=settings.secure_cookies)

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": exc.message}, status_code=exc.status)
        return await error_page(request, exc.status, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if _wants_json(request):
            return JSONResponse(
                {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
            )
        message = {404: "ページが見つかりません。", 405: "その操作はできません。"}.get(
            exc.status_code, str(exc.detail)
        )
        return await error_page(request, exc.status_code, message)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        if _wants_json(request):
            errors = [
                {k: v for k, v in err.items() if k in ("loc", "msg", "type")}
                for err in exc.errors()
            ]
            return JSONResponse({"detail": errors}, status_code=422)
        return await error_page(request, 422, "リクエストの形式が正しくありません。")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        if _wants_json(request):
            return JSONResponse({"detail": "internal error"}, status_code=500)
        return await error_page(request, 500, "サーバー内部でエラーが起きました。")

    async def database_unavailable(request: Request, exc: Exception) -> Response:
        """The database did not answer in time: SQLite's write lock stayed taken for
        ``app.db.engine.BUSY_SECONDS``, or PostgreSQL could not be reached. Nothing was stored (the
        transaction is rolled back); 503 with Retry-After, not 500. Other operational errors
        (SQLite's "no such table", say) are the unexpected errors they are."""
        if not _unavailable(exc):
            return await unexpected(request, exc)
        log.warning("database unavailable on %s %s: %s", request.method, request.url.path, exc)
        headers = {"Retry-After": str(RETRY_AFTER_UNAVAILABLE)}
        if _wants_json(request):
            return JSONResponse({"detail": DATABASE_UNAVAILABLE}, status_code=503, headers=headers)
        response = await error_page(request, 503, DATABASE_UNAVAILABLE, lookup_viewer=False)
        response.headers.update(headers)
        return response

    for unavailable in (sqlite3.OperationalError, OperationalError, psycopg.OperationalError):
        app.add_exception_handler(unavailable, database_unavailable)

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(api_router)
    app.include_router(games_api_router)
    app.include_router(live_router)
    app.include_router(feed_router)
    app.include_router(pages_router)
    app.include_router(game_pages_router)
    app.include_router(howto_pages_router)
    app.include_router(archive_api_router)
    app.include_router(cards_api_router)
    app.include_router(bbs_cgi_router)
    app.include_router(users_api_router)
    app.include_router(user_pages_router)
    # Last: it serves /{board}/subject.txt and /{board}/dat/{key}.dat for BBS browsers.
    app.include_router(archive_pages_router)
    # After it: the registry's board is "cards", whose 2ch-style files are /cards/subject.txt.
    app.include_router(card_pages_router)
    return app


async def deadline_runner(app: FastAPI, every: int) -> None:
    """Each process ticks; the deadlines module makes sure each deadline applies once."""
    while True:
        await asyncio.sleep(every)
        try:
            await run_in_threadpool(tick, app.state.database, app.state.secret_key)
        except Exception:  # a failed tick must not stop the next one
            log.exception("deadline tick failed")


async def delivery_runner(app: FastAPI, every: int) -> None:
    """Webhooks and mail leave from here, never from a request."""
    while True:
        await asyncio.sleep(every)
        try:
            await run_in_threadpool(deliver_due, app.state.database, app.state.settings)
        except Exception:
            log.exception("delivery run failed")


async def index_runner(app: FastAPI, every: float) -> None:
    """SQLite: new posts go into the search index here, not in their own transaction."""
    while True:
        await asyncio.sleep(every)
        try:
            await index_run(app.state.database)
        except Exception:
            log.exception("search indexing failed")


async def index_run(database: Database, batch: Callable[[Database], int] = index_batch) -> int:
    """The backlog of the search index worked off, a batch at a time (``batch``), each in a
    worker thread; returns how many posts and changes it passed. The run stops at a batch
    that comes back short: the posts stored meanwhile wait for the next run.

    The batches write the search file only (``app.archive.search.SearchFile``), whose lock is
    not the posts': they run beside the posts, which neither wait for them nor take turns with
    them. (In the database's own file, each batch held every post of its moment up, paced to
    take a fifth of the line of writes at most.)"""
    total = 0
    while True:
        done = await run_in_threadpool(batch, database)
        total += done
        if done < INDEX_BATCH:
            return total


# With the checkpoint runner, a commit checkpoints only if the WAL has grown past this many
# pages (40 MB at SQLite's 4 KB pages; at a few hundred posts a second it grows a few MB a
# second): only when the runner cannot keep up or has stopped.
CHECKPOINT_BACKSTOP_PAGES = 10_000


async def checkpoint_runner(app: FastAPI, every: float) -> None:
    """SQLite: the WAL copied into the database file here, not by the commits of posts. A
    failure is logged once, not four times a second, until a checkpoint succeeds again."""
    failing = False
    while True:
        await asyncio.sleep(every)
        try:
            await run_in_threadpool(app.state.database.checkpoint)
        except Exception:
            if not failing:
                log.exception("WAL checkpoint failed (the commits checkpoint meanwhile)")
            failing = True
        else:
            failing = False


def _viewer(request: Request) -> User | None:
    """Who is logged in, for an error page's header (the same lookup as every page's
    ``PageUser``), in a session of its own: the route's may be gone or broken by now."""
    token = request.cookies.get(deps.SESSION_COOKIE, "")
    if not token:
        return None
    database: Database = request.app.state.database
    with database.read_session() as session:  # reads only: no write lock on SQLite
        return accounts.user_for_token(session, token, "session")


async def error_page(
    request: Request, status: int, message: str, *, lookup_viewer: bool = True
) -> Response:
    """The HTML error page, with the header of every other page: a logged-in visitor sees
    their name and the log-out button. ``lookup_viewer=False`` when the database is what
    failed; a lookup that fails anyway shows the page as to a visitor not logged in."""
    user: User | None = None
    if lookup_viewer:
        try:
            user = await run_in_threadpool(_viewer, request)
        except Exception:  # the page must still be answered
            log.warning("no viewer for the error page of %s", request.url.path, exc_info=True)
    templates = request.app.state.templates
    context = {
        "request": request,
        "user": user,
        "csrf_token": deps.csrf_token(request) if hasattr(request.state, "csrf_nonce") else "",
        "site_name": request.app.state.settings.site_name,
        "status": status,
        "message": message,
    }
    response: Response = templates.TemplateResponse(
        request, "error.html", context, status_code=status
    )
    return response


def app_factory() -> FastAPI:
    """Entry for ``uvicorn --factory`` (several workers each build their own app)."""
    return create_app(server_process=True)


# A server process's garbage collector, once the app has started. By then the process holds some
# 170,000 objects that live as long as it does — modules, routes, grammars, validators — and
# CPython's collector walked them all in every full collection: under the post benchmark's load a
# worker made one every ten seconds or so, 120–180 ms of CPU, every request in flight waiting
# meanwhile. Young collections came every 700 objects a request left behind (by CPython's default),
# some hundred a worker in ten seconds, and carried requests' objects still in use into the older
# generations, which made the full collections come. Now the garbage of the start is collected, what
# is left is moved out of the collector's sight for good (``gc.freeze``: objects reclaimed by their
# reference counts are still freed), and a young collection waits for 10,000 objects. Reference
# cycles made later are collected as before, a little later. Only the young threshold is set: the
# later two keep the interpreter's own values, which CPython 3.14's incremental collector reads
# differently from 3.11–3.13's generational one.
YOUNG_GC_THRESHOLD = 10_000


def settle_garbage_collector() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_GC_THRESHOLD, *gc.get_threshold()[1:])
