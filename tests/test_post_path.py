"""The post path. SQLAlchemy caches a statement's compiled form when it can make a cache key
for it, and compiling costs more than running a short statement: after a warm-up, no
statement a command post runs may be one SQLAlchemy had to compile afresh. Its writes keep
SQL NULL for "nothing", and its route answers 401 before reading a body. Issue 42 (the post
path's speed): a command post, the bot's answer and the game's new state are one statement
each, none left for the session's flush, and a "your turn" notice is checked and written by
one statement, its deliveries' targets read by one more."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.engine import default
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.accounts.ratelimit import Rule, count
from app.db.engine import Database
from app.db.models import Game, Notification, User
from app.gm import service as gm
from tests.conftest import ApiUser, api_user, unique_name
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


SECRET = "s"


def started_game(session: Session) -> tuple[Game, list[User]]:
    """A started えいつく game of two players."""
    master, *players = (accounts.register(session, unique_name(), "password123") for _ in "gpq")
    game = gm.create_game(session, master, "eitsuku", "卓", {}, SECRET)
    for who, line in ((players[0], "JOIN"), (players[1], "JOIN"), (master, "START")):
        gm.submit_post(session, game.thread_id, who, line, SECRET)
    return game, players


def playing(game: Game, players: list[User]) -> tuple[User, str]:
    """A player the game waits for, and a line they may post."""
    for player in players:
        if legal := gm.legal_lines(game, player):
            return player, pick(legal)
    raise AssertionError("the game waits for nobody")


def writes_of(
    session: Session, executed: list[tuple[str, Any]], game: Game, user: User, body: str
) -> tuple[list[str], set[str], bool]:
    """What ``body``'s post wrote: its INSERT and UPDATE statements (the table each names),
    the kinds of object the session's flushes wrote, and whether its answer accepted it."""
    flushed: set[str] = set()

    def before_flush(flushing: Session, _context: Any, _instances: Any) -> None:
        flushed.update(type(o).__name__ for o in [*flushing.new, *flushing.dirty])

    executed.clear()
    event.listen(session, "before_flush", before_flush)
    try:
        _post, replies = gm.submit_post(session, game.thread_id, user, body, SECRET)
    finally:
        event.remove(session, "before_flush", before_flush)
    writes = [
        " ".join(statement.split()[:3])
        for statement, _verdict in executed
        if statement.lstrip().startswith(("INSERT", "UPDATE"))
    ]
    return writes, flushed, bool(replies[0].reply_ok)


def test_a_command_post_its_answer_and_its_game_are_written_by_one_statement_each(
    session: Session, executed: list[tuple[str, Any]]
) -> None:
    """The post and the bot's answer are one INSERT each, the game one UPDATE: statements, not
    objects left for a flush (a flush of one new post cost three times its INSERT)."""
    game, players = started_game(session)
    for _ in range(4):
        player, line = playing(game, players)
        writes, flushed, ok = writes_of(session, executed, game, player, line)
        assert ok
        assert writes.count("INSERT INTO posts") == 2 and writes.count("UPDATE games SET") == 1
        assert not flushed & {"Post", "Game"}


def test_a_refused_command_post_and_its_answer_are_two_inserts_and_the_game_is_untouched(
    session: Session, executed: list[tuple[str, Any]]
) -> None:
    game, players = started_game(session)
    player, _line = playing(game, players)
    writes, flushed, ok = writes_of(session, executed, game, player, "SET 主演")
    assert not ok
    assert [w for w in writes if "posts" in w or "games" in w] == ["INSERT INTO posts"] * 2
    assert not flushed


def test_a_your_turn_notice_is_checked_and_written_by_one_statement_its_targets_read_by_one(
    session: Session, executed: list[tuple[str, Any]]
) -> None:
    game, players = started_game(session)
    notices = select(func.count()).select_from(Notification).where(Notification.kind == "your_turn")
    for _ in range(40):  # the posts of a week, at least: the week's turn moves on
        told_before = session.scalar(notices)
        player, line = playing(game, players)
        executed.clear()
        gm.submit_post(session, game.thread_id, player, line, SECRET)
        if session.scalar(notices) != told_before:
            break
    else:
        raise AssertionError("no post told anybody it was their turn")
    statements = [" ".join(statement.split()) for statement, _verdict in executed[:-1]]
    on_notices = [s for s in statements if "notifications" in s]
    assert len(on_notices) == 1 and on_notices[0].startswith("INSERT INTO notifications")
    assert "NOT (EXISTS" in on_notices[0]  # told of this turn already: not told again
    targets = [s for s in statements if "webhooks" in s]
    assert len(targets) == 1 and "FROM users LEFT OUTER JOIN webhooks" in targets[0]
