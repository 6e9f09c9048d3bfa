"""The 遊び方 links of issue #43's first evening, tapped on a phone (Debian's Chromium at
390x844, ja-JP, against the suite's live server): from the home page's lobby to a kind's 遊び方,
from a 遊び方 page to making a table of that kind, and the lobby guide's links. Screenshots go
to the test's tmp_path (or $BBSGM_SCREENSHOTS)."""

from __future__ import annotations

import os
import shutil

import httpx
import pytest
from playwright.sync_api import expect

from app.games import GAMES
from app.games.kit.howto import rules_path
from tests.conftest import LiveServer, api_user, unique_name
from tests.test_first_evening_browser import Phone, register
from tests.test_first_evening_browser import phone as phone  # the fixture, shared

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)


@pytest.mark.parametrize("kind", ["eleusis"])
def test_the_home_pages_lobby_leads_a_newcomer_to_each_kinds_howto(
    phone: Phone, live_server: LiveServer, kind: str
) -> None:
    """Slice 1: on the front page, every kind's 遊び方 is one tap away, and a recruiting
    table's own kind's from its entry."""
    title = f"{unique_name('卓')}"
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        made = api_user(client).post("/api/games", {"kind": kind, "title": title, "options": {}})
        assert made.status_code == 201, made.text
    page = phone.page
    page.goto("/")
    entry = page.locator("#recruiting li.lobby-game", has_text=title)
    expect(entry.get_by_role("link", name=f"{GAMES[kind].title_ja}の遊び方")).to_have_attribute(
        "href", rules_path(kind)
    )
    links = page.locator("#recruiting .lobby-howtos a")
    expect(links).to_have_count(len(GAMES))
    phone.fits()
    page.locator("#recruiting .lobby-howtos").scroll_into_view_if_needed()
    phone.shoot("links-1-home")
    page.locator(f'#recruiting .lobby-howtos a[data-kind="{kind}"]').click()
    page.wait_for_url(f"**{rules_path(kind)}")
    expect(page.locator("h1")).to_have_text(f"{GAMES[kind].title_ja}の遊び方")


@pytest.mark.parametrize("kind", ["populous"])
def test_a_howto_page_leads_to_a_new_table_of_its_kind_and_its_recruiting_tables(
    phone: Phone, live_server: LiveServer, kind: str
) -> None:
    """Slice 2: from the 遊び方 page, このゲームの卓を作る opens the form with the kind chosen
    (its options only); the kind's recruiting tables are listed there too."""
    title = f"{unique_name('募集')}"
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        made = api_user(client).post("/api/games", {"kind": kind, "title": title, "options": {}})
        assert made.status_code == 201, made.text
    page = phone.page
    register(phone)
    page.goto(rules_path(kind))
    top = page.locator(".howto-play-links")
    expect(top.get_by_role("link", name="このゲームの卓を作る")).to_be_visible()
    phone.fits()
    phone.shoot("links-2-howto-top")
    page.locator(".howto-play-links a[href='#play']").click()
    play = page.locator("section#play")
    expect(play.get_by_role("link", name=title)).to_have_attribute(
        "href", f"/games/{made.json()['id']}"
    )
    phone.shoot("links-2-howto-play")
    play.get_by_role("link", name="このゲームの卓を作る").click()
    page.wait_for_url(f"**/games/new?kind={kind}")
    expect(page.locator("select[name=kind]")).to_have_value(kind)
    expect(page.locator(f'fieldset.game-options[data-kind="{kind}"]')).to_be_visible()
    expect(page.locator('fieldset.game-options[data-kind="eitsuku"]')).to_be_hidden()
    phone.fits()
