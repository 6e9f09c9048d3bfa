"""Issue #40: a line the game cannot handle — reading or applying it raises anything but
``RuleError`` / ``CommandSyntaxError`` — is a bug of the bot's, never a 500 (docs/security.md,
"Input that is not what it should be"). In the thread the post is stored and answered with a
refusal that says the bot could not read the line; a sealed command is stored as refused with
that answer; a preview answers the same and stores nothing. The game is unchanged each time.

The bug is a real one in a test-only kind, registered in the game registry (``app.games.GAMES``)
beside the real ones for this module's own server and database only: えいつく whose ``DRAW``
fails when applied and whose ``SCOUT 爆`` fails when read."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from app.config import Settings, get_settings
from app.db import migrate
from app.db.engine import Database
from app.db.models import Game, Post, SealedCommand
from app.games import GAMES
from app.games.base import Actor, Rng, State
from app.games.eitsuku import Eitsuku
from app.games.eitsuku.commands import Draw
from app.gm.service import ensure_game_boards
from app.gm.submission import UNREADABLE
from app.gm.text import text_environment
from tests.conftest import LiveServer, api_user


class Bugged(Eitsuku):
    """えいつく with two bugs: applying DRAW (in the thread or sealed) divides by zero, reading
    ``SCOUT 爆`` looks up what is not there."""

    kind = "bugged"
    title_ja = "不具合のあるえいつく"
    title_en = "Bugged Eitsuku"
    aliases = ("bugged",)

    def parse(self, line: str) -> Any:
        if line.strip().startswith("SCOUT") and "爆" in line:
            return {}["爆"]  # KeyError: the bug
        return super().parse(line)

    def needs_seal(self, state: State, command: Any) -> bool | None:
        # DRAW may come sealed too, so that the sealed path reaches the failing apply.
        return None if isinstance(command, Draw) else super().needs_seal(state, command)

    def execute(
        self, state: State, actor: Actor, command: Any, rng: Rng, sealed: bool
    ) -> list[dict[str, Any]]:
        if isinstance(command, Draw):
            return [{"text": str(1 // 0)}]  # ZeroDivisionError: the bug
        return super().execute(state, actor, command, rng, sealed)


@pytest.fixture(scope="module")
def bugged_server(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, str]]:
    """A server of its own on a database of its own, with the bugged kind registered (and
    taken out again after: no other module sees it, nor its board)."""
    GAMES[Bugged.kind] = Bugged()
    where = tmp_path_factory.mktemp("bugged")
    # Its templates are えいつく's: the site's templates, copied, with games/bugged beside.
    templates = where / "templates"
    shutil.copytree(settings.templates_dir, templates)
    shutil.copytree(templates / "games" / "eitsuku", templates / "games" / Bugged.kind)
    own = settings.model_copy(
        update={"database_url": f"sqlite:///{where / 'bbsgm.db'}", "templates_dir": templates}
    )
    # The bot's text templates are read where the settings of the environment say
    # (BBSGM_TEMPLATES_DIR), through settings and a template environment each made once:
    # both made again here (the same files for every real kind), and again after.
    environment = pytest.MonkeyPatch()
    environment.setenv("BBSGM_TEMPLATES_DIR", str(templates))
    get_settings.cache_clear()
    text_environment.cache_clear()
    database = Database(own.database_url)
    migrate.upgrade(own, database.engine)
    with database.session() as session:
        ensure_game_boards(session)
        session.commit()
    server = LiveServer(own, database)
    try:
        server.start()
        yield server, own.database_url
    finally:
        server.stop()
        database.dispose()
        environment.undo()
        get_settings.cache_clear()
        text_environment.cache_clear()
        del GAMES[Bugged.kind]


@pytest.fixture
def table(bugged_server: tuple[LiveServer, str]) -> Iterator[dict[str, Any]]:
    server, url = bugged_server
    with httpx.Client(base_url=server.url, timeout=30) as client:
        master, first, second = (api_user(client) for _ in range(3))
        made = master.post("/api/games", {"kind": Bugged.kind, "title": "不具合卓"})
        assert made.status_code == 201, made.text
        game = made.json()
        for user in (first, second):
            joined = user.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
            assert joined.json()["replies"][0]["ok"], joined.text
        started = master.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"})
        assert started.json()["replies"][0]["ok"], started.text
        yield {"game": game, "player": first, "url": url}


def _game_row(url: str, game_id: int) -> tuple[int, int, int, str]:
    database = Database(url)
    try:
        with database.session() as session:
            game = session.get(Game, game_id)
            assert game is not None
            posts = session.scalar(
                select(func.count()).select_from(Post).where(Post.thread_id == game.thread_id)
            )
            sealed = session.scalar(
                select(func.count())
                .select_from(SealedCommand)
                .where(SealedCommand.game_id == game_id)
            )
            return game.version, int(posts or 0), int(sealed or 0), repr(game.state)
    finally:
        database.dispose()


@pytest.mark.parametrize(
    "line", ["DRAW", "SCOUT 爆"], ids=["failing-when-applied", "failing-when-read"]
)
def test_a_line_the_bot_cannot_handle_is_a_stored_post_with_a_refusal(
    table: dict[str, Any], line: str
) -> None:
    url, game = table["url"], table["game"]
    version, posts, _sealed, state = _game_row(url, game["id"])
    reply = table["player"].post(
        f"/api/threads/{game['thread_id']}/posts", {"body": f"いきます\n{line}"}
    )
    assert reply.status_code == 201, reply.text
    answer = reply.json()
    assert answer["post"]["body"] == f"いきます\n{line}"  # the post is kept as written
    assert [r["ok"] for r in answer["replies"]] == [False]
    assert UNREADABLE in answer["replies"][0]["body"]
    after = _game_row(url, game["id"])
    assert after == (version, posts + 2, _sealed, state)  # the post and its answer; no move


@pytest.mark.parametrize(
    "line", ["DRAW", "SCOUT 爆"], ids=["failing-when-applied", "failing-when-read"]
)
def test_a_sealed_line_the_bot_cannot_handle_is_stored_as_refused(
    table: dict[str, Any], line: str
) -> None:
    url, game = table["url"], table["game"]
    version, posts, sealed, state = _game_row(url, game["id"])
    reply = table["player"].post(f"/api/games/{game['id']}/sealed", {"body": line})
    assert reply.status_code == 201, reply.text
    stored = reply.json()["sealed"]
    assert stored["ok"] is False and stored["body"] == line
    assert UNREADABLE in stored["reply"], stored["reply"]
    assert _game_row(url, game["id"]) == (version, posts, sealed + 1, state)


@pytest.mark.parametrize(
    "line", ["DRAW", "SCOUT 爆"], ids=["failing-when-applied", "failing-when-read"]
)
def test_a_preview_of_a_line_the_bot_cannot_handle_says_so_and_stores_nothing(
    table: dict[str, Any], line: str
) -> None:
    url, game = table["url"], table["game"]
    before = _game_row(url, game["id"])
    reply = table["player"].post(f"/api/games/{game['id']}/preview", {"body": line})
    assert reply.status_code == 200, reply.text
    answer = reply.json()
    assert [r["ok"] for r in answer["replies"]] == [False]
    assert UNREADABLE in answer["replies"][0]["body"]
    assert _game_row(url, game["id"]) == before
