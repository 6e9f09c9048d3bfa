"""What the benchmarks share: a throwaway database (a SQLite file, or a fresh database on a
PostgreSQL server), `bbsgm serve` as a process, accounts without argon2 work, percentiles,
and the game script that plays えいつく by its legal lines."""

from __future__ import annotations

import contextlib
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.accounts import users as accounts  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db import migrate  # noqa: E402
from app.db.engine import Database  # noqa: E402
from app.db.models import User  # noqa: E402
from app.gm.service import ensure_game_boards  # noqa: E402

SECRET = "bench-secret-key"
# The order the scripts prefer among legal lines (as tests/test_gm_http.py): a week's work.
PREFERENCE = ("CHOOSE", "RELEASE", "SET", "SCOUT 役者", "SCOUT", "DRAW", "END")


def pick(commands: list[str]) -> str:
    for prefix in PREFERENCE:
        for line in commands:
            if line.startswith(prefix):
                return line
    raise RuntimeError(f"nothing to play among {commands}")


@contextlib.contextmanager
def scratch_database(server_url: str | None) -> Iterator[str]:
    """A migrated, seeded database that is dropped afterwards; yields its URL."""
    if server_url:
        admin_url = make_url(server_url).set(drivername="postgresql+psycopg")
        name = f"bbsgm_bench_{os.getpid()}_{secrets.token_hex(4)}"
        admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        url = admin_url.set(database=name).render_as_string(hide_password=False)
        try:
            _prepare(url)
            yield url
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/bench.db"
            _prepare(url)
            yield url


def _prepare(url: str) -> None:
    settings = Settings(database_url=url, secret_key=SECRET, tick_seconds=0)
    db = Database(url)
    try:
        migrate.upgrade(settings, db.engine)
        with db.session() as session:
            ensure_game_boards(session)
            session.commit()
    finally:
        db.dispose()


def make_users(db: Database, names: list[str]) -> dict[str, tuple[int, str]]:
    """Accounts (one shared argon2 hash) with API tokens: name -> (id, token)."""
    hashed = accounts._hasher.hash("password123")
    with db.session() as session:
        users = [User(name=name, password_hash=hashed) for name in names]
        session.add_all(users)
        session.flush()
        made = {u.name: (u.id, accounts.issue_token(session, u, "api")) for u in users}
        session.commit()
    return made


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Server:
    """A command that serves HTTP on 127.0.0.1:port, in its own process group."""

    def __init__(self, args: list[str], env: dict[str, str], port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        handle, name = tempfile.mkstemp(prefix="bench-serve-", suffix=".log")
        self.log = Path(name)
        with os.fdopen(handle, "wb") as log:
            self.proc = subprocess.Popen(
                args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_ready(self, path: str, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(self.url + path, timeout=2).status_code < 500:
                    return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not start: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def bbsgm_serve(url: str, workers: int, **settings: str) -> Server:
    port = free_port()
    # Rate limits stay on, as deployed, so their counting is measured; the limits are raised
    # out of the way (the clients post far faster than people). BBSGM_* in the environment win.
    env = {
        "BBSGM_TICK_SECONDS": "0",
        "BBSGM_DELIVER_SECONDS": "0",
        "BBSGM_POSTS_PER_MINUTE_PER_ACCOUNT": "1000000",
        "BBSGM_POSTS_PER_MINUTE_PER_ADDRESS": "1000000",
        **{f"BBSGM_{k.upper()}": v for k, v in settings.items()},
        **os.environ,
        "BBSGM_DATABASE_URL": url,
        "BBSGM_SECRET_KEY": SECRET,
    }
    args = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    args += ["--workers", str(workers), "--log-level", "warning"]
    server = Server(args, env, port)
    server.wait_ready("/api/boards")
    return server


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def machine() -> str:
    cpu = "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return (
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs "
        f"({cpu}), {platform.system()} {platform.release()}"
    )


def process_tree(root: int) -> list[int]:
    """``root`` and its descendants (a server's supervisor and its workers)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found = [root]
    for pid in found:
        found += [child for child, parent in parents.items() if parent == pid]
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time these processes have used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total
