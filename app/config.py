"""Settings: the only reader of the environment."""

from __future__ import annotations

import secrets
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url

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
    # Live threads re-read the database at least this often (covers writers that cannot
    # notify this process, e.g. `bbsgm tick` on SQLite).
    live_poll_seconds: float = Field(default=15.0, gt=0, le=86_400)
    max_body_chars: int = 10_000
    max_title_chars: int = 100
    templates_dir: Path = Field(default_factory=lambda: resource_dir("templates"))
    grammar_dir: Path = Field(default_factory=lambda: resource_dir("grammar"))
    migrations_dir: Path = Field(default_factory=lambda: resource_dir("migrations"))

    @property
    def is_sqlite(self) -> bool:
        return make_url(self.database_url).get_backend_name() == "sqlite"

    def secret_key_path(self) -> Path:
        """Where a generated key is kept: beside the SQLite file, or in the working directory."""
        url = make_url(self.database_url)
        if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
            return Path(url.database).resolve().parent / ".bbsgm-secret-key"
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
