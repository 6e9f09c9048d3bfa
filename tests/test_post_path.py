"""The post path. SQLAlchemy caches a statement's compiled form when it can make a cache key
for it, and compiling costs more than running a short statement: after a warm-up, no
statement a command post runs may be one SQLAlchemy had to compile afresh. Its writes keep
SQL NULL for "nothing", and its route answers 401 before reading a body."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import event, text
from sqlalchemy.engine import default

from app.accounts.ratelimit import Rule, count
from app.db.engine import Database
from tests.conftest import ApiUser, api_user
from tests.test_gm_http import pick

UNCACHED = (default.NO_CACHE_KEY, default.CACHING_DISABLED)


@pytest.fixture
def executed(database: Database) -> Iterator[list[tuple[str, Any]]]:
    """Every statement the engine runs while the test does, with SQLAlchemy's cache verdict."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, _p: Any, context: Any, _m: Any) -> None:
        seen.append((statement, getattr(context, "cache_hit", None)))

    event.listen(database.engine, "after_cursor_execute", record)
    yield seen
    event.remove(database.engine, "after_cursor_execute", record)


def play(player: ApiUser, game_id: int, thread_id: int) -> None:
    legal = player.get(f"/api/games/{game_id}/legal").json()["commands"]
    reply = player.post(f"/api/threads/{thread_id}/posts", {"body": pick(legal)})
    assert reply.status_code == 201 and reply.json()["replies"][0]["ok"], reply.text


def test_command_posts_compile_no_statement_afresh(
    client: httpx.Client, executed: list[tuple[str, Any]]
) -> None:
    master, player, other = api_user(client), api_user(client), api_user(client)
    game = master.post("/api/games", {"kind": "eitsuku", "title": "cache"}).json()
    thread_id = game["thread_id"]
    for who, line in ((player, "JOIN"), (other, "JOIN"), (master, "START")):
        assert who.post(f"/api/threads/{thread_id}/posts", {"body": line}).status_code == 201
    assert master.post(f"/api/threads/{thread_id}/posts", {"body": f"KICK {other.name}"})
    for _ in range(3):  # warm-up: every statement of the path is compiled once here
        play(player, game["id"], thread_id)
    executed.clear()
    for _ in range(6):
        play(player, game["id"], thread_id)
    assert executed, "the listener saw nothing"
    afresh = [statement for statement, verdict in executed if verdict in UNCACHED]
    assert afresh == []


def test_rate_limit_counting_compiles_nothing_afresh(
    database: Database, executed: list[tuple[str, Any]]
) -> None:
    rules = [Rule("post:user:cache", 5, 60, "x"), Rule("post:addr:cache", 5, 60, "y")]
    for round_ in range(3):
        if round_ == 1:
            executed.clear()  # the first round may compile
        with database.session() as session:
            assert count(session, rules, time.time()) is None
            session.rollback()
    assert executed, "the listener saw nothing"
    assert [s for s, verdict in executed if verdict in UNCACHED] == []


def test_nothing_is_stored_as_json_null(client: httpx.Client, database: Database) -> None:
    """Columns keep SQL NULL for "nothing" (a recruiting game has no result; a talk post no
    reply error), not a JSON null."""
    master, player = api_user(client), api_user(client)
    game = master.post("/api/games", {"kind": "eitsuku", "title": "null"}).json()
    assert (
        player.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"}).status_code == 201
    )
    with database.engine.connect() as conn:
        row = conn.execute(
            text("SELECT result IS NULL, players_at_start IS NULL FROM games WHERE id = :id"),
            {"id": game["id"]},
        ).one()
        assert tuple(row) == (True, True)
        errors = conn.execute(
            text("SELECT count(*) FROM posts WHERE thread_id = :t AND reply_error IS NOT NULL"),
            {"t": game["thread_id"]},
        ).scalar_one()
        assert errors == 0


def test_a_post_without_a_token_is_401_before_its_body_is_read(client: httpx.Client) -> None:
    reply = client.post("/api/threads/1/posts", json={"nobody": 1})
    assert reply.status_code == 401, reply.text
