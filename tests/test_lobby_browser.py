"""The lobby and a player's page on a phone (390x844, ja-JP) in Debian's Chromium: nothing
scrolls sideways with a long game title in the lobby, and the player's page (record, ratings,
finished games) fits; screenshots are kept for a person to look at (docs/forum.md)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, ViewportSize

from app.db.engine import Database
from tests.conftest import LiveServer, api_user
from tests.test_archive_helpers import play, unique_words
from tests.test_phone_browser import OVERFLOWING

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

PHONE = ViewportSize(width=390, height=844)
LONG_TITLE = "長い卓名" + "z" * 90


def test_lobby_and_player_page_fit_a_phone(
    browser: Browser, live_server: LiveServer, database: Database, tmp_path: Path
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        gm = api_user(web)
        made = gm.post("/api/games", {"kind": "idolwp", "title": LONG_TITLE, "options": {}})
        assert made.status_code == 201, made.text
    with database.session() as session:
        done = play(session, players=3, title=f"{unique_words()}の決勝卓")
        name = done.players[0].name
        session.commit()
    context = browser.new_context(viewport=PHONE, locale="ja-JP")
    try:
        page = context.new_page()
        shots = Path(os.environ.get("BBSGM_SCREENSHOTS", str(tmp_path)))
        for path, shot, marker in (
            ("/", "lobby-390.png", ".lobby-game"),
            (f"/users/{name}", "user-390.png", ".user-finished li"),
        ):
            answer = page.goto(live_server.url + path)
            assert answer is not None and answer.status == 200
            assert page.locator(marker).count() >= 1, path
            assert page.evaluate(OVERFLOWING) == [], path
            page.screenshot(path=str(shots / shot), full_page=True)
        assert page.locator(".user-ratings .provisional").count() >= 1  # one game: 暫定
    finally:
        context.close()
