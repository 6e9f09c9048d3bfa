"""Alembic driven from code (there is no alembic.ini): upgrade, and the model/migration check."""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from app.config import Settings


def alembic_config(settings: Settings, engine: Engine | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(settings.migrations_dir))
    config.attributes["database_url"] = settings.database_url
    if engine is not None:
        config.attributes["engine"] = engine
    return config


def upgrade(settings: Settings, engine: Engine | None = None, revision: str = "head") -> None:
    command.upgrade(alembic_config(settings, engine), revision)


def make_revision(settings: Settings, message: str) -> None:
    command.revision(alembic_config(settings), message=message, autogenerate=True)
