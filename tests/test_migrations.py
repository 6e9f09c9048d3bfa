"""Migrations are the only way the schema changes: after `upgrade head` the database matches
the models exactly."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from app.archive.search import is_search_object
from app.db import Database
from app.models import Base


def test_models_and_migrations_agree(database: Database) -> None:
    with database.engine.connect() as conn:
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "include_name": lambda name, _type, _parents: not is_search_object(name),
            },
        )
        diff = compare_metadata(context, Base.metadata)
    assert diff == []
