"""Your tables on a phone (390x844, ja-JP) in Debian's Chromium (issue #43): the header's badge
on every page, /me with the tables awaiting you first, notifications grouped by game and read
per game; nothing scrolls sideways and no header item breaks over lines. Screenshots are kept
for a person to look at (BBSGM_SCREENSHOTS, else the test's tmp_path)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from app.db.engine import Database
from tests.conftest import LiveServer, api_user
from tests.test_phone_browser import BROKEN_NAV_ITEMS, OVERFLOWING
from tests.test_tables_http import eitsuku_table, say

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

PHONE = ViewportSize(width=390, height=844)


def log_in(page: Page, name: str) -> None:
    page.goto("/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", "password123")
    page.click("form.auth-form button[type=submit]")
    expect(page.locator(".whoami")).to_have_text(f"{name} さん")


def fits(page: Page, where: str) -> None:
    assert page.evaluate(OVERFLOWING) == [], where
    assert page.evaluate(BROKEN_NAV_ITEMS) == [], where


def test_badge_me_and_grouped_notifications_on_a_phone(
    browser: Browser, live_server: LiveServer, database: Database, tmp_path: Path
) -> None:
    shots = Path(os.environ.get("BBSGM_SCREENSHOTS", str(tmp_path)))
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        me = api_user(client)
        # Waiting for them; moved on from them (they ENDed their week); recruiting.
        _gm, _seated, waiting = eitsuku_table(client, database, 2, "今週の卓", with_=(me,))
        _gm, _seated, moved = eitsuku_table(client, database, 2, "済んだ卓", with_=(me,))
        assert say(me, moved["thread_id"], "END")["ok"]
        host = api_user(client)
        made = host.post("/api/games", {"kind": "idolwp", "title": "募集中の卓", "options": {}})
        assert say(me, made.json()["thread_id"], "JOIN")["ok"]
    context = browser.new_context(viewport=PHONE, locale="ja-JP", base_url=live_server.url)
    try:
        page = context.new_page()
        log_in(page, me.name)
        # The badge: one table awaits them, on every page.
        for path in ("/", "/games", f"/threads/{waiting['thread_id']}", f"/games/{moved['id']}"):
            page.goto(path)
            expect(page.locator(".site-nav .badge-turns")).to_have_text("1")
            fits(page, path)
        page.goto("/")
        page.screenshot(path=str(shots / "tables-badge-390.png"))

        # /me: 「あなたの番: 1 卓」 and the table awaiting them, then their other tables.
        page.goto("/me")
        expect(page.locator("#your-turns h2").first).to_have_text("あなたの番: 1 卓")
        rows = page.locator(".my-table")
        expect(rows).to_have_count(3)
        expect(rows.nth(0)).to_have_class("my-table awaits-you")
        expect(rows.nth(0)).to_contain_text("今週の卓")
        expect(rows.nth(0)).to_contain_text("未提出:")
        for other in (1, 2):
            expect(rows.nth(other)).to_have_class("my-table")
        boxes = [rows.nth(i).bounding_box() for i in range(3)]
        assert all(box is not None for box in boxes)
        tops = [box["y"] for box in boxes if box is not None]
        assert tops == sorted(tops)  # shown in that order, top to bottom
        fits(page, "/me")
        page.screenshot(path=str(shots / "tables-me-390.png"), full_page=True)

        # Notifications grouped by game, the newest first, each with its unread count.
        page.goto("/notifications")
        groups = page.locator(".notice-group")
        expect(groups).to_have_count(2)
        expect(groups.nth(0).locator("h2")).to_contain_text("済んだ卓")
        expect(groups.nth(1).locator("h2")).to_contain_text("今週の卓")
        for index in (0, 1):
            expect(groups.nth(index).locator(".group-unread")).to_have_text("未読 1 件")
        expect(page.locator(".site-nav .badge-unread")).to_have_text("2")
        fits(page, "/notifications")
        page.screenshot(path=str(shots / "tables-notifications-390.png"), full_page=True)
        groups.nth(0).locator("form.mark-read button").click()
        expect(page.locator(".site-nav .badge-unread")).to_have_text("1")
        read, still = page.locator(".notice-group").nth(0), page.locator(".notice-group").nth(1)
        expect(read.locator(".group-unread")).to_have_count(0)
        expect(read.locator("form.mark-read")).to_have_count(0)
        expect(still.locator(".group-unread")).to_have_text("未読 1 件")
        fits(page, "/notifications, one game read")
        page.screenshot(path=str(shots / "tables-notifications-read-390.png"), full_page=True)
    finally:
        context.close()
