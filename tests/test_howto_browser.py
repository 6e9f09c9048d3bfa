"""遊び方 pages on a phone (390x844, ja-JP) in Debian's Chromium driven by Playwright: from
/games/new a newcomer follows a game's link to its 遊び方 page, which reads without scrolling
sideways (commands, the worked turn's long bot replies, the content lists), in Japanese and
English. Screenshots go to the test's tmp_path for a person to look at."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from app.games import GAMES
from app.games.kit.howto import rules_path
from tests.conftest import LiveServer

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

PHONE = ViewportSize(width=390, height=844)
# Elements whose right edge is past the viewport: what makes a page scroll sideways.
OVERFLOWING = """() => [...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
  .map((e) => e.localName + (e.className ? '.' + e.className : '')
    + ' right=' + Math.round(e.getBoundingClientRect().right))
  .slice(0, 15)"""
SHOTS = os.environ.get("BBSGM_SCREENSHOTS")


@pytest.fixture
def phone(browser: Browser, live_server: LiveServer) -> Iterator[tuple[Page, list[str]]]:
    context: BrowserContext = browser.new_context(
        base_url=live_server.url, locale="ja-JP", viewport=PHONE, device_scale_factor=1
    )
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page, errors
    context.close()


def readable(page: Page) -> None:
    """Nothing wider than the phone, no sideways scroll."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], page.evaluate(OVERFLOWING)
    assert page.evaluate(OVERFLOWING) == []


def shoot(page: Page, tmp_path: Path, name: str) -> Path:
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_new_game_page_leads_to_a_howto_page_readable_at_390px(
    phone: tuple[Page, list[str]], tmp_path: Path, kind: str
) -> None:
    page, errors = phone
    page.goto("/games/new")
    readable(page)
    shoot(page, tmp_path, "games-new")
    link = page.locator(f'.game-kinds li[data-kind="{kind}"] a.howto-link')
    expect(link).to_be_visible()
    link.click()
    page.wait_for_url(f"**{rules_path(kind)}")
    expect(page.locator("h1")).to_contain_text("の遊び方")
    for anchor in ("about", "setup", "turn", "end", "commands", "example"):
        expect(page.locator(f"section#{anchor}")).to_be_visible()
    readable(page)
    shoot(page, tmp_path, f"howto-{kind}-top")
    page.locator("section#example").scroll_into_view_if_needed()
    shoot(page, tmp_path, f"howto-{kind}-example")
    page.locator("section#commands").scroll_into_view_if_needed()
    shoot(page, tmp_path, f"howto-{kind}-commands")
    if page.locator("section#content").count():
        page.locator("section#content h3").first.scroll_into_view_if_needed()
        shoot(page, tmp_path, f"howto-{kind}-content")
    assert errors == []


def test_howto_page_in_english_is_readable_at_390px(
    phone: tuple[Page, list[str]], tmp_path: Path
) -> None:
    page, errors = phone
    page.goto(rules_path("eleusis") + "?lang=en")
    expect(page.locator("h1")).to_have_text("How to play New New Eleusis")
    readable(page)
    page.locator("section#rule-language").scroll_into_view_if_needed()
    shoot(page, tmp_path, "howto-eleusis-en")
    assert errors == []
