"""The game panel kept between requests (app/web/panel_cache.py): keyed by everything the
panel is made of, so whatever changes — by another worker, a GM's tool or a write straight in
the database, with the game's version moved or not — the next panel shows it, and a reader is
never handed another's lines or picture. Each test reads the panel first (so an entry is kept)
and again after the change; ``/games/{id}/panel`` is the panel alone (live.js's refresh)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from jinja2 import Environment
from sqlalchemy import update
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.config import Settings
from app.db.engine import Database
from app.db.models import Game, GamePlayer, User
from app.gm import service as gm
from app.web import panel_cache
from app.web.common import game_panel
from app.web.templating import make_templates
from tests.conftest import TEST_SECRET, ApiUser, LiveServer, unique_name
from tests.support.load_support import fast_users, session_cookie, started_eitsuku

BOARD_TEXT = re.compile(r'<details class="board board-text">.*?</details>', re.S)
LEGAL = re.compile(r'<div class="legal">.*?</div>', re.S)


@dataclass
class Game_:
    server: LiveServer
    database: Database
    gm: ApiUser
    players: list[ApiUser]
    game: dict[str, Any]

    def panel(self, user: ApiUser | None = None, lang: str = "") -> str:
        with httpx.Client(base_url=self.server.url, timeout=30) as browser:
            if user is not None:
                browser.cookies.set("bbsgm_session", session_cookie(self.database, user.name))
            query = f"?lang={lang}" if lang else ""
            reply = browser.get(f"/games/{self.game['id']}/panel{query}")
            assert reply.status_code == 200
            return reply.text

    def write(self, **values: Any) -> None:
        """The game row changed straight in the database, its version left as it is."""
        with self.database.session() as session:
            session.execute(update(Game).where(Game.id == self.game["id"]).values(**values))
            session.commit()

    def version(self) -> int:
        with self.database.session() as session:
            row = session.get(Game, self.game["id"])
            assert row is not None
            return row.version


@pytest.fixture
def table(live_server: LiveServer, database: Database) -> Iterator[Game_]:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        gm, first, second = fast_users(database, 3, web, prefix="panel")
        game = started_eitsuku(gm, [first, second], "パネルの卓")
        yield Game_(live_server, database, gm, [first, second], game)


def test_the_panel_follows_the_game_row_where_the_version_stays(table: Game_) -> None:
    version = table.version()
    changes: list[tuple[dict[str, Any], str]] = [
        ({"title": "改名した卓"}, "改名した卓"),
        ({"paused": True}, "（中断中）"),
        (
            {"deadline_at": datetime(2031, 5, 6, 3, 4, 5, tzinfo=UTC), "deadline_hours": 77},
            "77時間ごと",
        ),
        ({"deadline_at": datetime(2032, 5, 6, 3, 4, 5, tzinfo=UTC)}, "2032/05/06"),
        ({"deadline_hours": 78}, "78時間ごと"),
        ({"status": "finished"}, "終了"),
    ]
    for values, shown in changes:
        assert shown not in table.panel()
        table.write(**values)
        assert shown in table.panel(), values
    assert table.version() == version


def test_the_panel_follows_the_names_of_its_gm_and_seats(table: Game_) -> None:
    before = table.panel()
    with table.database.session() as session:
        session.execute(
            update(GamePlayer)
            .where(GamePlayer.game_id == table.game["id"], GamePlayer.seat == 0)
            .values(name="席の新しい名")
        )
        session.commit()
    seat_renamed = table.panel()
    with table.database.session() as session:
        session.execute(update(User).where(User.name == table.gm.name).values(name="新GM名"))
        session.commit()
    gm_renamed = table.panel()
    assert "席の新しい名" not in before and "1. 席の新しい名" in seat_renamed
    assert "新GM名" not in seat_renamed and "GM: 新GM名" in gm_renamed


def test_the_panel_follows_the_state_where_the_version_stays(table: Game_) -> None:
    """The board is drawn from the state itself: a state put back with the version kept (no
    path of the bot does this) shows the board it was."""
    with table.database.session() as session:
        row = session.get(Game, table.game["id"])
        assert row is not None
        state_before = row.state
    board_before = BOARD_TEXT.findall(table.panel())
    player = next(
        p for p in table.players if p.get(f"/api/games/{table.game['id']}/legal").json()["commands"]
    )
    line = player.get(f"/api/games/{table.game['id']}/legal").json()["commands"][0]
    posts = f"/api/threads/{table.game['thread_id']}/posts"
    assert player.post(posts, {"body": line}).json()["replies"][0]["ok"]
    board_after = BOARD_TEXT.findall(table.panel())
    assert board_after != board_before
    table.write(state=state_before)
    assert BOARD_TEXT.findall(table.panel()) == board_before


def test_each_reader_gets_their_own_lines_and_picture(table: Game_) -> None:
    anonymous = table.panel()
    assert not LEGAL.findall(anonymous) and "as=me" not in anonymous
    for player in table.players:
        own = table.panel(player)
        legal = player.get(f"/api/games/{table.game['id']}/legal").json()["commands"]
        shown = "".join(LEGAL.findall(own))
        assert sorted(re.findall(r'data-line="([^"]*)"', shown)) == sorted(legal)
        assert "as=me" in own
    assert "as=me" in table.panel(table.gm)
    assert table.panel() == anonymous


def test_english_and_japanese_panels_are_kept_apart(table: Game_) -> None:
    japanese = table.panel()
    english = table.panel(lang="en")
    assert "盤面（公開情報）" in japanese
    assert "The board (public information)" in english and "盤面（公開情報）" not in english


def test_every_input_of_the_panel_moves_its_key(session: Session, user: User) -> None:
    """Two readers whose panels differ in any one input never share an entry: the reader's
    own picture alone (a seat with no line to post looks like an outsider otherwise), the
    lines to send sealed, the written examples, the final result."""
    master = accounts.register(session, unique_name("key"), "password123")
    game = gm.create_game(session, master, "eitsuku", "鍵の卓", {}, TEST_SECRET)
    base = game_panel(session, game, user)
    game.state = {"a": 1}  # a state to draw: the picture is the reader's own only with one
    changes: list[dict[str, Any]] = [
        {"seat": 0},
        {"legal": ["SET 主演 役者3"]},
        {"sealed_legal": ["SEAL x"]},
        {"examples": [("CHAT 何か", False)]},
    ]
    keys = {panel_cache.panel_key(base)}
    for change in changes:
        keys.add(panel_cache.panel_key({**base, **change}))
    game.result = {"ranking": []}
    keys.add(panel_cache.panel_key(base))
    game.version += 1
    keys.add(panel_cache.panel_key(base))
    assert None not in keys and len(keys) == len(changes) + 3


def test_a_panel_whose_inputs_are_not_json_is_rendered_uncached(
    session: Session, user: User, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An input JSON cannot hold (here a set among the lines) leaves the panel without a key:
    it is rendered for the request, never kept, and never an error."""
    master = accounts.register(session, unique_name("raw"), "password123")
    game = gm.create_game(session, master, "eitsuku", "生の卓", {}, TEST_SECRET)
    panel = {**game_panel(session, game, user), "legal": [{"SET 主演 役者3"}]}
    assert panel_cache.panel_key(panel) is None

    def keep(key: object, body: bytes) -> tuple[bytes, bytes]:
        raise AssertionError("a panel without a key was kept")

    monkeypatch.setattr(panel_cache.PANELS, "put", keep)
    html = panel_cache.render_panel(make_templates(settings).env, panel)
    assert "生の卓" in html and "SET 主演 役者3" in html


def _panel_template_reading(tmp_path: Path, settings: Settings, extra: str) -> Environment:
    """The site's templates, but games/panel.html also shows ``extra``: a field added to the
    template, which no list of the cache's was told of."""
    copied = tmp_path / "templates"
    shutil.copytree(settings.templates_dir, copied)
    panel = copied / "games" / "panel.html"
    panel.write_text(panel.read_text() + f'<p class="added">{extra}</p>\n')
    return make_templates(settings.model_copy(update={"templates_dir": copied})).env


ADDED = re.compile(r'<p class="added">(.*?)</p>')


def test_a_field_added_to_the_panel_template_is_in_the_cache_key(
    session: Session, user: User, settings: Settings, tmp_path: Path
) -> None:
    """The key is the digest of the panel's whole context, not of a list of its fields: a
    column the template starts to show (the game's creation time, the GM's account date, a
    seat's user id) moves the key when it changes, the version left as it is."""
    env = _panel_template_reading(
        tmp_path,
        settings,
        "{{ panel.game.created_at }}|{{ panel.game.gm.created_at }}"
        "|{{ panel.game.players | map(attribute='user_id') | join(',') }}",
    )
    master = accounts.register(session, unique_name("add"), "password123")
    game = gm.create_game(session, master, "eitsuku", "足した卓", {}, TEST_SECRET)
    shown = [ADDED.findall(panel_cache.render_panel(env, game_panel(session, game, user)))]
    version = game.version
    game.created_at = datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC)
    shown.append(ADDED.findall(panel_cache.render_panel(env, game_panel(session, game, user))))
    assert game.gm is not None
    game.gm.created_at = datetime(2032, 1, 2, 3, 4, 5, tzinfo=UTC)
    shown.append(ADDED.findall(panel_cache.render_panel(env, game_panel(session, game, user))))
    game.players.append(GamePlayer(seat=0, user_id=user.id, name=user.name))
    shown.append(ADDED.findall(panel_cache.render_panel(env, game_panel(session, game, user))))
    assert game.version == version
    assert "2031-01-02" in shown[1][0] and "2032-01-02" in shown[2][0]
    assert shown[3][0].endswith(f"|{user.id}")
    assert len({tuple(found) for found in shown}) == 4


def test_a_value_added_to_the_panels_context_is_in_the_cache_key(
    session: Session, user: User, settings: Settings, tmp_path: Path
) -> None:
    env = _panel_template_reading(tmp_path, settings, "{{ panel.added }}")
    master = accounts.register(session, unique_name("ctx"), "password123")
    game = gm.create_game(session, master, "eitsuku", "文脈の卓", {}, TEST_SECRET)
    first = panel_cache.render_panel(env, {**game_panel(session, game, user), "added": "一"})
    second = panel_cache.render_panel(env, {**game_panel(session, game, user), "added": "二"})
    assert ADDED.findall(first) == ["一"] and ADDED.findall(second) == ["二"]
