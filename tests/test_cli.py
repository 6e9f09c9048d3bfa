"""The bbsgm command: migrate, check, admin, tick — run as a real process against a database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from app import accounts
from app.config import Settings
from app.db import Database
from app.models import User
from tests.conftest import unique_name


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
