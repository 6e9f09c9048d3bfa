"""Helpers for the load, crash, limit and attack tests (no tests here).

`ServeProcess` runs `bbsgm serve` as a real process group (so it can be SIGKILLed whole);
`fast_users` makes accounts with tokens straight in the database, skipping the argon2 work of
/api/register (0.2 s a hash on the test machine) where registration is not what is tested.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import Post, Thread, User
from tests.conftest import ApiUser, _free_port, unique_name

_PASSWORD_HASH: list[str] = []


def password_hash() -> str:
    """One argon2 hash of "password123", made once, shared by every fast account."""
    if not _PASSWORD_HASH:
        _PASSWORD_HASH.append(accounts._hasher.hash("password123"))
    return _PASSWORD_HASH[0]


def fast_users(
    database: Database, count: int, client: httpx.Client, prefix: str = "u"
) -> list[ApiUser]:
    """``count`` accounts (password "password123") with API tokens, made in one transaction."""
    with database.session() as session:
        hashed = password_hash()
        users = [User(name=unique_name(prefix), password_hash=hashed) for _ in range(count)]
        session.add_all(users)
        session.flush()
        tokens = [accounts.issue_token(session, user, "api") for user in users]
        session.commit()
        return [ApiUser(client, u.name, t) for u, t in zip(users, tokens, strict=True)]


def started_eitsuku(gm: ApiUser, seats: list[ApiUser], title: str) -> dict[str, Any]:
    """An えいつく game made by ``gm``, every seat joined, started (the GM's START accepted)."""
    game: dict[str, Any] = gm.post(
        "/api/games", {"kind": "eitsuku", "title": title, "options": {}}
    ).json()
    for seat in seats:
        seat.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
    started = gm.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"}).json()
    assert started["replies"][0]["ok"], started
    return game


def session_cookie(database: Database, name: str) -> str:
    """A browser session token for an existing account (the bbsgm_session cookie)."""
    with database.session() as session:
        user = session.scalar(select(User).where(User.name == name))
        assert user is not None
        token = accounts.issue_token(session, user, "session")
        session.commit()
        return token


def serve_env(database_url: str, secret: str, **settings: str) -> dict[str, str]:
    """The environment of a `bbsgm serve` for tests: no background runners, no rate limits
    unless ``settings`` (BBSGM_* names without the prefix, lower case) say otherwise."""
    env = {
        **os.environ,
        "BBSGM_DATABASE_URL": database_url,
        "BBSGM_SECRET_KEY": secret,
        "BBSGM_TICK_SECONDS": "0",
        "BBSGM_DELIVER_SECONDS": "0",
        "BBSGM_RATE_LIMITS": "false",
    }
    env.update({f"BBSGM_{key.upper()}": value for key, value in settings.items()})
    return env


class ServeProcess:
    """`bbsgm serve --workers N` in its own process group, logging to a file."""

    def __init__(self, env: dict[str, str], workers: int, log: Path) -> None:
        self.env = env
        self.workers = workers
        self.log_path = log
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 90) -> None:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "app.cli",
                    "serve",
                    "--port",
                    str(self.port),
                    "--workers",
                    str(self.workers),
                    "--log-level",
                    "warning",
                ],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{self.url}/api/boards", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"bbsgm serve did not start:\n{self.log()}")
            time.sleep(0.1)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]

    def kill(self) -> None:
        """SIGKILL to the whole process group: the supervisor and every worker, no clean-up."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self.proc = None

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def thread_posts(database: Database, thread_id: int) -> list[Post]:
    with database.session() as session:
        return list(
            session.scalars(select(Post).where(Post.thread_id == thread_id).order_by(Post.number))
        )


def post_count(database: Database, thread_id: int) -> int:
    with database.session() as session:
        thread = session.get(Thread, thread_id)
        assert thread is not None
        return thread.post_count


def assert_numbered(posts: list[Post], post_count: int) -> None:
    """レス番 1..post_count, each once."""
    assert [p.number for p in posts] == list(range(1, post_count + 1))


def assert_each_command_answered_once(posts: list[Post]) -> None:
    """No half-applied post: every command post has exactly one bot reply, and nothing else
    is answered (the post and its reply are written in one transaction)."""
    commands = {p.number for p in posts if p.kind == "command"}
    replies = [p.reply_to for p in posts if p.kind == "gm" and p.reply_to is not None]
    assert sorted(replies) == sorted(commands)
