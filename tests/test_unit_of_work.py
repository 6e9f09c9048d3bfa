"""Issue 42, "no commit in a route": a route reads (``ReadSession``) or writes in one unit of
work (``WriteSession``, app/web/deps.py) that commits when the route returns and rolls back
when it raises; a reading transaction cannot write. Checked on the code (every route of
app/web and app/api) and on a small app that uses the same dependencies."""

from __future__ import annotations

import ast
import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import anyio
import httpx
import pytest
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.config import Settings
from app.db import engine as app_db
from app.db import migrate
from app.db.engine import Database
from app.db.models import Base, Board
from app.web import deps

ROOT = Path(__file__).resolve().parent.parent
ROUTE_FILES = sorted([*ROOT.glob("app/web/*.py"), *ROOT.glob("app/api/*.py")])
UNIT_OF_WORK = ROOT / "app/web/deps.py"  # where a request's transactions end
HTTP_METHODS = {"get", "post", "put", "delete", "patch", "api_route", "websocket"}


def _routes(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            isinstance(d, ast.Call)
            and isinstance(d.func, ast.Attribute)
            and d.func.attr in HTTP_METHODS
            for d in node.decorator_list
        ):
            yield node


def test_no_route_commits_its_session() -> None:
    """No ``commit()`` in app/web or app/api but the unit of work's own (deps.py)."""
    found = []
    for path in ROUTE_FILES:
        if path == UNIT_OF_WORK:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "commit"
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_every_route_with_a_session_says_whether_it_reads_or_writes() -> None:
    """A route's session parameter is ``ReadSession`` or ``WriteSession``, never a bare
    ``Session``: whether it writes is decided where it is declared."""
    undecided = []
    for path in ROUTE_FILES:
        for route in _routes(ast.parse(path.read_text(encoding="utf-8"))):
            for arg in [*route.args.args, *route.args.kwonlyargs]:
                note = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                if "Session" in note and note not in ("ReadSession", "WriteSession"):
                    undecided.append(f"{path.relative_to(ROOT)}:{route.name}({arg.arg}: {note})")
    assert undecided == []


@pytest.fixture()
def database(tmp_path: Path) -> Iterator[Database]:
    db = Database(f"sqlite:///{tmp_path / 'uow.db'}")
    Base.metadata.create_all(db.engine)
    yield db
    db.dispose()


def _boards(db: Database) -> int:
    with db.read_session() as session:
        return int(session.scalar(select(func.count()).select_from(Board)) or 0)


def _board(slug: str) -> Board:
    return Board(slug=slug, title=slug, description="")


def test_a_reading_transaction_cannot_write(database: Database) -> None:
    """On SQLite a reading transaction begins without the write lock, so it must not write:
    SQLite refuses (``query_only``) instead of letting it race the writers."""
    with database.read_session() as session:
        session.add(_board("read"))
        with pytest.raises(OperationalError, match="readonly"):
            session.flush()
    session = database.request_sessionmaker()
    try:
        session.add(_board("request"))
        with pytest.raises(OperationalError, match="readonly"):
            session.flush()
    finally:
        session.close()
    assert _boards(database) == 0


def test_a_reading_transaction_cannot_write_on_the_configured_database(
    settings: Settings,
) -> None:
    """The same on the database the suite runs on (PostgreSQL under ``BBSGM_TEST_DATABASE_URL``:
    there the reading engine's transactions are ``READ ONLY``). A write in a read would
    otherwise be lost without a word when the session closes uncommitted."""
    db = Database(settings.database_url)
    migrate.upgrade(settings, db.engine)  # as the suite's database fixture (a no-op after it)
    slug = f"read-only-{uuid.uuid4().hex[:8]}"
    try:
        session = db.request_sessionmaker()
        try:
            session.add(_board(slug))
            with pytest.raises(DBAPIError, match=r"(?i)read-?only"):
                session.flush()
            session.rollback()
            session.begin_writes()  # the same pooled connection writes again once asked to
            session.add(_board(f"{slug}-w"))
            session.commit()
        finally:
            session.close()
        with db.read_session() as check:
            made = set(check.scalars(select(Board.slug).where(Board.slug.startswith(slug))))
        assert made == {f"{slug}-w"}
    finally:
        db.dispose()


def _app(database: Database) -> FastAPI:
    app = FastAPI()
    app.state.database = database

    @app.post("/boards/{slug}")
    def make(slug: str, session: deps.WriteSession) -> dict[str, str]:
        session.add(_board(slug))
        session.flush()
        return {"made": slug}

    @app.post("/boards/{slug}/refused")
    def refuse(slug: str, session: deps.WriteSession) -> dict[str, str]:
        session.add(_board(slug))
        session.flush()
        raise HTTPException(409, "refused after writing")

    @app.get("/boards")
    def count(session: deps.ReadSession) -> dict[str, int]:
        return {"boards": int(session.scalar(select(func.count()).select_from(Board)) or 0)}

    @app.get("/boards/sneaky/{slug}")
    def sneaky(slug: str, session: deps.ReadSession) -> dict[str, str]:
        session.add(_board(slug))
        session.flush()
        return {"made": slug}

    return app


def test_a_write_route_commits_when_it_returns(database: Database) -> None:
    with TestClient(_app(database)) as client:
        assert client.post("/boards/one").json() == {"made": "one"}
        assert client.get("/boards").json() == {"boards": 1}
    assert _boards(database) == 1


def test_a_write_route_that_raises_leaves_nothing_written(database: Database) -> None:
    with TestClient(_app(database)) as client:
        answer = client.post("/boards/two/refused")
        assert answer.status_code == 409
        assert client.get("/boards").json() == {"boards": 0}
    assert _boards(database) == 0


def test_a_read_route_that_tries_to_write_fails_and_writes_nothing(database: Database) -> None:
    with (
        TestClient(_app(database), raise_server_exceptions=True) as client,
        pytest.raises(OperationalError, match="readonly"),
    ):
        client.get("/boards/sneaky/three")
    assert _boards(database) == 0


_SEEN: list[Session] = []


def _viewer(session: deps.ReadSession) -> None:
    _SEEN.append(session)


def test_the_write_session_is_the_one_the_viewer_was_read_in(database: Database) -> None:
    """The viewer's dependencies and the route share the request's one session, so a
    user loaded by the sign-in can be written with (no second session to attach it to)."""
    app = FastAPI()
    app.state.database = database
    _SEEN.clear()

    @app.post("/x")
    def route(session: deps.WriteSession, viewer: Annotated[None, Depends(_viewer)]) -> None:
        _SEEN.append(session)

    with TestClient(app) as client:
        assert client.post("/x").status_code == 200
    assert len(_SEEN) == 2 and _SEEN[0] is _SEEN[1]


def test_a_write_routes_viewer_is_read_without_the_write_lock(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unit of work is entered before the viewer's dependency (parameter order), yet the
    sign-in reads apart (``RequestSession.reading``): a writer holding the lock keeps a
    request from its writes, not from knowing who sent it."""
    with database.session() as session:
        user = accounts.register(session, "viewer", "a long enough password")
        token = accounts.issue_token(session, user, "session")
        session.commit()
    app = FastAPI()
    app.state.database = database

    @app.post("/who")
    def who(session: deps.WriteSession, user: deps.PageUser) -> dict[str, str]:
        return {"name": user.name if user is not None else ""}

    monkeypatch.setattr(app_db, "BUSY_SECONDS", 0.5)
    with database.engine.connect() as holder, TestClient(app) as client:
        holder.begin()  # BEGIN IMMEDIATE: this process's write lock, held
        holder.exec_driver_sql("SELECT 1")
        answer = client.post("/who", cookies={deps.SESSION_COOKIE: token})
        holder.rollback()
    assert answer.json() == {"name": "viewer"}


def _lane_app(database: Database) -> FastAPI:
    """A post form's shape (``unit_of_work_in_one_thread``) and a ``WriteSession`` route."""
    app = _app(database)

    @app.post("/posted/{slug}")
    async def posted(slug: str, request: Request, session: deps.ReadSession) -> dict[str, str]:
        def work() -> dict[str, str]:
            session.add(_board(slug))
            session.flush()
            return {"made": slug}

        return await deps.unit_of_work_in_one_thread(request, session, work)

    return app


def test_on_sqlite_writers_wait_for_their_turn_in_the_event_loop_not_in_worker_threads(
    database: Database,
) -> None:
    """SQLite runs one write transaction at a time, so one post writes at a time
    (``deps.write_lane``): the others wait for their turn in the event loop, in the lane's
    queue (not started in a worker thread), and a page is served while they wait; then each
    writes."""
    app = _lane_app(database)
    lane = database.write_lane
    assert lane is not None and lane.total_tokens == 1

    async def scenario() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://uow") as client:
            async with lane:  # a writer in its turn
                writes = [asyncio.create_task(client.post(f"/posted/w{i}")) for i in range(8)]
                with anyio.fail_after(30):  # every writer in line, or they never queue there
                    while lane.statistics().tasks_waiting < len(writes):
                        await asyncio.sleep(0)
                page = await client.get("/boards")
                assert page.json() == {"boards": 0}
                # A WriteSession route takes no turn: it may work long before its first
                # write (a login's hash), and SQLite's lock is free here.
                assert (await client.post("/boards/apart")).json() == {"made": "apart"}
            return [answer.status_code for answer in await asyncio.gather(*writes)]

    assert asyncio.run(scenario()) == [200] * 8
    assert _boards(database) == 9
