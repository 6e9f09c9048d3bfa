"""Alembic environment. Configured from code (app/db/migrate.py); uses the app's engine setup so
SQLite gets the same pragmas as the running service."""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import Engine

from app.archive.search import is_search_object
from app.db.engine import make_engine
from app.db.models import Base, UTCDateTime

config = context.config
target_metadata = Base.metadata


def render_item(type_: str, obj: Any, autogen_context: Any) -> str | bool:
    """Migrations must not import app types: UTCDateTime is stored as a plain DateTime(tz)."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    return False


def include_name(name: str | None, type_: str, parent_names: Any) -> bool:
    """The search index (FTS5 tables and triggers, trigram indexes) is not in the models."""
    return not is_search_object(name)


def run_migrations() -> None:
    engine: Engine | None = config.attributes.get("engine")
    owned = engine is None
    if engine is None:
        engine = make_engine(config.attributes["database_url"])
    try:
        with engine.connect() as connection:
            context.configure(
                connection=connection,
                target_metadata=target_metadata,
                render_as_batch=connection.dialect.name == "sqlite",
                compare_type=True,
                render_item=render_item,
                include_name=include_name,
            )
            with context.begin_transaction():
                context.run_migrations()
    finally:
        if owned:
            engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; run `bbsgm migrate`")
run_migrations()
