"""The bbsgm command: migrate, check, admin, tick, serve — run as a real process against a
database."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from app.accounts import users as accounts
from app.config import Settings
from app.db.engine import Database
from app.db.models import User
from tests.conftest import TEST_SECRET, _free_port, unique_name


def bbsgm(url: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BBSGM_DATABASE_URL": url, "BBSGM_SECRET_KEY": "cli-test"}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_admin_grant_and_revoke(database: Database) -> None:
    name = unique_name()
    with database.session() as session:
        accounts.register(session, name, "password123")
        session.commit()
    granted = bbsgm(database.url, "admin", "grant", name)
    assert granted.returncode == 0, granted.stderr
    with database.session() as session:
        assert session.scalar(select(User.is_admin).where(User.name == name)) is True
    assert bbsgm(database.url, "admin", "revoke", name).returncode == 0
    with database.session() as session:
        assert session.scalar(select(User.is_admin).where(User.name == name)) is False
    unknown = bbsgm(database.url, "admin", "grant", unique_name())
    assert unknown.returncode == 1 and "いません" in unknown.stderr


def test_check_and_tick_on_a_healthy_database(database: Database) -> None:
    checked = bbsgm(database.url, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 problem(s)" in checked.stdout
    ticked = bbsgm(database.url, "tick")
    assert ticked.returncode == 0 and "bbsgm tick:" in ticked.stdout


def test_migrate_creates_a_fresh_sqlite_database_with_a_kept_secret(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    env = {k: v for k, v in os.environ.items() if k != "BBSGM_SECRET_KEY"}
    env["BBSGM_DATABASE_URL"] = url
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "migrate"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    key_file = tmp_path / ".bbsgm-secret-key"
    assert key_file.exists() and len(key_file.read_text().strip()) >= 32
    assert oct(key_file.stat().st_mode)[-3:] == "600"
    db = Database(url)
    with db.session() as session:
        from app.forum.service import list_boards

        assert {"lobby", "chat", "eitsuku"} <= {b.slug for b in list_boards(session)}
    db.dispose()


def test_serve_warns_when_base_url_is_unset(
    database: Database, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Links in webhooks and mail are built away from any request: without BBSGM_BASE_URL
    they use the address each subscription was made from, and `serve` says so at start."""
    import uvicorn

    from app import cli

    runs: list[dict[str, object]] = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: runs.append(kwargs))
    unset = Settings(database_url=database.url, secret_key="cli-test")
    monkeypatch.setattr(cli, "get_settings", lambda: unset)
    assert cli.main(["serve", "--port", "8123"]) == 0
    warning = capsys.readouterr().err
    assert len(runs) == 1 and "BBSGM_BASE_URL is not set" in warning
    assert "webhook" in warning and "mail" in warning

    configured = unset.model_copy(update={"base_url": "https://bbs.example.org"})
    monkeypatch.setattr(cli, "get_settings", lambda: configured)
    assert cli.main(["serve", "--port", "8123"]) == 0
    captured = capsys.readouterr()
    assert "BBSGM_BASE_URL" not in captured.err
    assert "links in webhooks and mail: https://bbs.example.org/" in captured.out


# --- `bbsgm serve`: uvicorn's own workers, as a real process over loopback ----------------


class Serving:
    """`bbsgm serve --workers N` on a SQLite file of its own, in its own process group."""

    def __init__(self, tmp_path: Path, workers: int, port: int | None = None) -> None:
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / f"serve-{self.port}-{time.monotonic_ns()}.log"
        env = {
            **os.environ,
            "BBSGM_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.db'}",
            "BBSGM_SECRET_KEY": TEST_SECRET,
            "BBSGM_TICK_SECONDS": "0",
            "BBSGM_DELIVER_SECONDS": "0",
        }
        command = ["serve", "--port", str(self.port), "--workers", str(workers)]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app.cli", *command],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def workers(self) -> set[int]:
        """The serving processes under the command (not multiprocessing's resource tracker)."""
        pid = self.process.pid
        found = set()
        with contextlib.suppress(OSError):
            for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
                with contextlib.suppress(OSError):
                    if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes():
                        found.add(int(child))
        return found

    def wait_serving(self, workers: int, timeout: float = 90) -> set[int]:
        """Polls until ``workers`` processes run under the command and it answers over HTTP."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            with contextlib.suppress(httpx.TransportError):
                answered = httpx.get(self.url + "/api/boards", timeout=5).status_code == 200
                if answered and len(running := self.workers()) == workers:
                    return running
            time.sleep(0.1)
        raise AssertionError(f"not serving with {workers} workers:\n{self.output()}")

    def end(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


@contextlib.contextmanager
def serving(tmp_path: Path, workers: int, port: int | None = None) -> Iterator[Serving]:
    served = Serving(tmp_path, workers, port)
    try:
        yield served
    finally:
        served.end()


def _gone(pids: set[int]) -> bool:
    return not any(Path(f"/proc/{pid}").exists() for pid in pids)


@pytest.mark.http
def test_serve_with_two_workers_serves_from_two_processes_and_keeps_two(tmp_path: Path) -> None:
    """Two worker processes answer over loopback; one killed is replaced and the command
    serves on; SIGTERM to the command stops every worker and the command exits 0."""
    with serving(tmp_path, 2) as served:
        first = served.wait_serving(2)
        with httpx.Client(base_url=served.url, timeout=30) as client:
            assert all(client.get("/api/boards").status_code == 200 for _ in range(20))
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 90
        while victim in served.workers() or len(served.workers()) != 2:
            assert time.monotonic() < deadline, served.output()
            time.sleep(0.1)
        everyone = served.wait_serving(2)
        assert victim not in everyone
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=60) == 0, served.output()
        assert _gone(everyone | first)


@pytest.mark.http
def test_ctrl_c_stops_serve_and_its_workers_and_the_command_exits_0(tmp_path: Path) -> None:
    """Ctrl-C signals the terminal's whole process group: the command and each worker."""
    with serving(tmp_path, 2) as served:
        everyone = served.wait_serving(2)
        os.killpg(served.process.pid, signal.SIGINT)
        assert served.process.wait(timeout=60) == 0, served.output()
        assert _gone(everyone)


@pytest.mark.http
def test_a_second_serve_on_the_same_address_fails_and_the_first_serves_on(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, 2) as first:
        first.wait_serving(2)
        with serving(tmp_path, 2, port=first.port) as second:
            assert second.process.wait(timeout=90) != 0
            assert "in use" in second.output()
        assert httpx.get(first.url + "/api/boards", timeout=30).status_code == 200


def test_serve_on_a_database_that_does_not_answer_fails_before_any_worker_starts() -> None:
    """PostgreSQL unreachable: said once by the command, which exits 1 and serves nothing."""
    url = f"postgresql+psycopg://bbsgm@127.0.0.1:{_free_port()}/bbsgm?connect_timeout=5"
    port = _free_port()
    done = bbsgm(url, "serve", "--port", str(port), "--workers", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the database does not answer" in done.stderr
    assert "serving on" not in done.stdout
