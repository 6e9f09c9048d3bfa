"""Test tiers: pure (no fixtures), service (a per-test rolled-back transaction), HTTP (a real
uvicorn server over loopback). The database is SQLite, or PostgreSQL when
BBSGM_TEST_DATABASE_URL names a server (a fresh database is created on it for the run)."""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import settings as hypothesis_settings
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.config import Settings
from app.db import migrate
from app.db.engine import Database, follow_transactions
from app.db.models import User
from app.gm.service import ensure_game_boards
from app.main import create_app

TEST_SECRET = "test-secret-key-not-for-production"

# CI (CI=true) draws the same examples for the same code, so whether a commit lands does not
# hang on the draw; runs elsewhere draw new ones each time, which is how the fuzzers keep
# finding what CI's fixed draw misses (docs/security.md).
hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    hypothesis_settings.load_profile("ci")


def _create_pg_database(server_url: str) -> tuple[str, str]:
    url = make_url(server_url).set(drivername="postgresql+psycopg")
    name = f"bbsgm_test_{os.getpid()}_{secrets.token_hex(4)}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False), name


def _drop_pg_database(server_url: str, name: str) -> None:
    url = make_url(server_url).set(drivername="postgresql+psycopg")
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = os.environ.get("BBSGM_TEST_DATABASE_URL")
    if server:
        url, name = _create_pg_database(server)
        yield url
        _drop_pg_database(server, name)
    else:
        path = tmp_path_factory.mktemp("db") / "bbsgm-test.db"
        yield f"sqlite:///{path}"


@pytest.fixture(scope="session")
def settings(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    # No background deadline runner in tests: they call tick() with an explicit clock.
    return Settings(
        database_url=database_url,
        secret_key=TEST_SECRET,
        tick_seconds=0,
        deliver_seconds=0,
        rate_limits=False,  # the suite posts fast from one address; test_limits.py has its own
        base_url=None,  # not the environment's: links use where each subscription was made
    )


@pytest.fixture(scope="session")
def database(settings: Settings) -> Iterator[Database]:
    db = Database(settings.database_url)
    migrate.upgrade(settings, db.engine)
    with db.session() as session:
        ensure_game_boards(session)
        session.commit()
    yield db
    db.dispose()


@pytest.fixture
def session(database: Database) -> Iterator[Session]:
    """A session whose work is rolled back after the test (services may commit savepoints)."""
    connection = database.engine.connect()
    transaction = connection.begin()
    with Session(bind=connection, join_transaction_mode="create_savepoint") as s:
        follow_transactions(s)  # as the app's sessions do (Database's factories)
        yield s
    transaction.rollback()
    connection.close()


def unique_name(prefix: str = "u") -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


@pytest.fixture
def user(session: Session) -> User:
    return accounts.register(session, unique_name(), "password123")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LiveServer:
    def __init__(self, settings: Settings, database: Database) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        app = create_app(settings, database)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def live_server(settings: Settings, database: Database) -> Iterator[LiveServer]:
    server = LiveServer(settings, database)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def client(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=30) as c:
        yield c


class ApiUser:
    def __init__(self, client: httpx.Client, name: str, token: str) -> None:
        self.client = client
        self.name = name
        self.token = token
        self.headers = {"Authorization": f"Bearer {token}"}

    def get(self, path: str, **kw: object) -> httpx.Response:
        return self.client.get(path, headers=self.headers, **kw)  # type: ignore[arg-type]

    def post(self, path: str, json: object) -> httpx.Response:
        return self.client.post(path, json=json, headers=self.headers)


def api_user(client: httpx.Client, name: str | None = None) -> ApiUser:
    name = name or unique_name()
    reply = client.post("/api/register", json={"name": name, "password": "password123"})
    assert reply.status_code == 201, reply.text
    token = client.post("/api/login", json={"name": name, "password": "password123"}).json()
    return ApiUser(client, name, token["token"])


@pytest.fixture
def alice(client: httpx.Client) -> ApiUser:
    return api_user(client)


@pytest.fixture
def bob(client: httpx.Client) -> ApiUser:
    return api_user(client)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "live_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.http)


def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (never `playwright install`), one per module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
