"""The replay page in Chromium: keyboard arrows, the slider, links that swap the frame without
a reload (the URL still says ?at=N), the back button — and plain links without JavaScript."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from app.db.engine import Database
from tests.conftest import LiveServer
from tests.test_archive_helpers import play

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def game_id(database: Database) -> int:
    with database.session() as session:
        played = play(session)
        session.commit()
        return played.game.id


@pytest.fixture
def page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    context = browser.new_context(base_url=live_server.url, locale="ja-JP")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page
    context.close()
    assert errors == [], f"JavaScript or CSP errors in the page: {errors}"


def at_url(n: int) -> re.Pattern[str]:
    return re.compile(rf"[?&]at={n}(&|$)")


def test_keyboard_slider_and_links(page: Page, game_id: int) -> None:
    page.goto(f"/games/{game_id}/replay?at=0")
    heading = page.locator(".replay-heading")
    expect(heading).to_have_text("開始時の盤面")
    page.evaluate("window.__stayed = true")  # gone if the page reloads
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(at_url(1))
    expect(heading).to_have_text("1手目の後の盤面")
    expect(page.locator(".replay-move-list li.current")).to_have_count(1)
    expect(page.locator(".replay-post.current .replay-line")).to_have_count(1)
    page.keyboard.press("End")
    total = int(page.locator("#replay").get_attribute("data-total") or "0")
    expect(page).to_have_url(at_url(total))
    page.keyboard.press("Home")
    expect(page).to_have_url(at_url(0))
    page.locator("#replay-at").fill("5")
    expect(page).to_have_url(at_url(5))
    expect(page.locator("#replay-at-label")).to_have_text(f"5 / {total}")
    page.click(".replay-next")
    expect(page).to_have_url(at_url(6))
    expect(heading).to_have_text("6手目の後の盤面")
    page.go_back()
    expect(page).to_have_url(at_url(5))
    expect(heading).to_have_text("5手目の後の盤面")
    page.select_option("select[name=viewer]", "1")
    expect(page).to_have_url(re.compile(r"viewer=1"))
    assert page.evaluate("window.__stayed") is True


def test_plain_links_without_javascript(
    browser: Browser, live_server: LiveServer, game_id: int
) -> None:
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"/games/{game_id}/replay?at=0")
    page.click(".replay-next")
    expect(page).to_have_url(at_url(1))
    expect(page.locator(".replay-heading")).to_have_text("1手目の後の盤面")
    page.fill("#replay-at", "3")
    page.click(".replay-slider button")
    expect(page).to_have_url(at_url(3))
    context.close()
