"""Settings: the only reader of the environment."""

from __future__ import annotations

import secrets
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

from app.db.engine import is_sqlite_file
from app.games.resources import resource_dir

DEFAULT_DATABASE_URL = "sqlite:///bbsgm.db"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BBSGM_", extra="ignore")

    database_url: str = DEFAULT_DATABASE_URL
    secret_key: str | None = None
    secure_cookies: bool = False
    site_name: str = "bbsgm 掲示板"
    timezone: str = "Asia/Tokyo"
    threads_per_page: int = Field(default=30, ge=1, le=500)
    posts_per_page: int = Field(default=100, ge=1, le=1000)
    # How often each server process checks turn deadlines (0: never; use `bbsgm tick`).
    tick_seconds: int = Field(default=30, ge=0, le=86_400)
    # SQLite: how often each server process puts new posts into the search index, a file of its
    # own (0: never; a search still finds the posts beyond the index, by scanning them).
    # PostgreSQL indexes in the transaction.
    search_index_seconds: float = Field(default=1.0, ge=0, le=3600)
    # SQLite: how often each server process copies the WAL into the database file (a
    # checkpoint), so that commits need not (0: the commits do it, SQLite's default).
    wal_checkpoint_seconds: float = Field(default=0.25, ge=0, le=3600)
    # Live threads re-read the database at least this often (covers writers that cannot
    # notify this process, e.g. `bbsgm tick` on SQLite).
    live_poll_seconds: float = Field(default=15.0, gt=0, le=86_400)
    # Notifications by webhook and mail (app/notify/delivery.py).
    # The site's public address for the links in webhook and mail messages, which are built
    # by a background worker, away from any request. None (unset): each subscription's links
    # use the address of the request that made it (docs/notifications.md).
    base_url: str | None = None
    deliver_seconds: int = Field(default=5, ge=0, le=3600)  # 0: only `bbsgm deliver`
    smtp_host: str | None = None  # mail is off until this is set
    smtp_port: int = 25
    smtp_user: str | None = None
    smtp_password: str | None = None
    smtp_from: str = "bbsgm@localhost"
    smtp_starttls: bool = False
    # Rate limits (app/accounts/ratelimit.py), counted in the database; 0 turns one limit off and
    # rate_limits=false all of them. Logins count per address and per account name tried.
    rate_limits: bool = True
    posts_per_minute_per_account: int = Field(default=30, ge=0)
    # Webhooks, mail and feed URLs added, removed or renewed (each writes a row).
    settings_changes_per_minute_per_account: int = Field(default=10, ge=0)
    posts_per_minute_per_address: int = Field(default=60, ge=0)
    registrations_per_hour_per_address: int = Field(default=20, ge=0)
    logins_per_minute_per_address: int = Field(default=30, ge=0)
    logins_per_minute_per_account: int = Field(default=10, ge=0)
    # Any request body over this is refused with 413 before it is parsed.
    max_request_bytes: int = Field(default=256 * 1024, ge=1024)
    # Requests inside the app at once, per process; the others queue in the event loop. Below
    # the worker threads (40) and within the database pool (app.main.open_database keeps a
    # connection for each): then no request waits for a thread or a connection that a waiting
    # one holds. None: 6 on PostgreSQL (one process's Python runs one thread at a time; beyond
    # a few inside, more only contend for it), 2 on SQLite, where
    # every transaction takes the one write lock and waiters poll for it, so fewer inside
    # means fairer turns.
    max_requests_in_flight: int | None = Field(default=None, ge=1, le=1000)
    templates_dir: Path = Field(default_factory=lambda: resource_dir("templates"))
    grammar_dir: Path = Field(default_factory=lambda: resource_dir("grammar"))
    migrations_dir: Path = Field(default_factory=lambda: resource_dir("migrations"))

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        """``https://bbs.example.org/forum/`` is kept as ``https://bbs.example.org/forum``
        (links append ``/games/1``); an empty value is unset."""
        value = (value or "").strip().rstrip("/")
        if not value:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("BBSGM_BASE_URL must be an absolute http(s) URL")
        return value

    @property
    def is_sqlite(self) -> bool:
        return make_url(self.database_url).get_backend_name() == "sqlite"

    def secret_key_path(self) -> Path:
        """Where a generated key is kept: beside the SQLite file, or in the working directory."""
        url = make_url(self.database_url)
        if is_sqlite_file(url):
            return Path(str(url.database)).resolve().parent / ".bbsgm-secret-key"
        return Path.cwd() / ".bbsgm-secret-key"

    def resolved_secret_key(self) -> str:
        """The configured key, or one generated once and kept beside the database."""
        if self.secret_key:
            return self.secret_key
        path = self.secret_key_path()
        try:
            existing = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            existing = ""
        if existing:
            return existing
        key = secrets.token_urlsafe(48)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open(
                "x", encoding="utf-8"
            ) as fh:  # never overwrite a concurrent writer's key
                fh.write(key + "\n")
            path.chmod(0o600)
        except FileExistsError:
            return path.read_text(encoding="utf-8").strip()
        return key


@lru_cache
def get_settings() -> Settings:
    return Settings()
