"""In Chromium (Debian's, driven by Playwright): register, log in, open a thread, post, see the
post with its レス番, and follow a working >>1 link with its hover preview."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import LiveServer, unique_name

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)


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


def test_register_login_post_and_follow_anchor(page: Page, live_server: LiveServer) -> None:
    name = unique_name("b")
    page.goto("/register")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", "password123")
    page.click("button[type=submit]")
    expect(page.locator(".whoami")).to_have_text(f"{name} さん")

    page.click("text=ログアウト")
    page.click("text=ログイン")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", "password123")
    page.click("form.auth-form button[type=submit]")
    expect(page.locator(".whoami")).to_have_text(f"{name} さん")

    page.goto("/boards/chat")
    page.fill("input[name=title]", "ブラウザから")
    page.fill("#new-thread textarea[name=body]", "最初の書き込み")
    page.click("#new-thread button[type=submit]")
    expect(page.locator("h1.thread-title")).to_contain_text("ブラウザから")

    page.fill("textarea[name=body]", ">>1 返信です")
    page.click("#reply button[type=submit]")
    second = page.locator("article.post[id='2']")
    expect(second.locator(".post-number")).to_have_text("2")
    expect(second.locator(".post-name")).to_have_text(name)
    expect(second.locator(".post-body")).to_contain_text("返信です")

    anchor = second.locator("a.anchor")
    anchor.hover()
    expect(page.locator(".anchor-preview")).to_contain_text("最初の書き込み")
    anchor.click()
    assert page.url.endswith("#1")
    expect(page.locator("article.post:target .post-number")).to_have_text("1")


def test_phone_width_has_no_horizontal_scroll(page: Page) -> None:
    page.set_viewport_size({"width": 375, "height": 700})
    page.goto("/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375


def register_in(page: Page, name: str) -> None:
    page.goto("/register")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", "password123")
    page.click("form.auth-form button[type=submit]")
    expect(page.locator(".whoami")).to_have_text(f"{name} さん")


def test_play_a_week_of_eitsuku_through_the_pages(
    browser: Browser, live_server: LiveServer
) -> None:
    contexts = [browser.new_context(base_url=live_server.url, locale="ja-JP") for _ in range(3)]
    try:
        master, aki, beni = (c.new_page() for c in contexts)
        names = [unique_name("g"), unique_name("a"), unique_name("b")]
        for page, name in zip((master, aki, beni), names, strict=True):
            register_in(page, name)

        master.goto("/games/new")
        master.select_option("select[name=kind]", "eitsuku")
        master.fill("input[name=title]", "ブラウザ卓")
        master.click("form.auth-form button[type=submit]")
        expect(master.locator(".game-panel h2")).to_contain_text("ブラウザ卓")
        game_url = master.url

        for player in (aki, beni):
            player.goto(game_url)
            player.click("button.fill-command[data-line='JOIN']")
            expect(player.locator("#reply textarea")).to_have_value("JOIN")
            player.click("#reply button[type=submit]")
            expect(player.locator(".game-meta")).to_contain_text(player_name(player, names))

        master.reload()
        master.click("button.fill-command[data-line='START']")
        master.click("#reply button[type=submit]")
        expect(master.locator(".game-status")).to_contain_text("進行中")

        for player in (aki, beni):
            player.reload()
            choose = player.locator("button.fill-command[data-line^='CHOOSE']")
            for _ in range(5):  # a 6 on the set-up die: choose first (one choice or two)
                if not choose.count():
                    break
                choose.first.click()
                player.click("#reply button[type=submit]")
                expect(player.locator("#thread-latest .post-gm").last).to_contain_text("✔")
                player.reload()
            player.click("button.fill-command[data-line='END']")
            player.click("#reply button[type=submit]")
            expect(player.locator("#thread-latest .post-gm").last).to_contain_text("✔")

        master.reload()
        expect(master.locator("#thread-latest .post-gm").last).to_contain_text("第2週")
    finally:
        for context in contexts:
            context.close()


def player_name(page: Page, names: list[str]) -> str:
    text = page.locator(".whoami").inner_text()
    return next(name for name in names if text.startswith(name))


def test_preview_shows_the_bot_answer_and_keeps_the_text(
    browser: Browser, live_server: LiveServer
) -> None:
    contexts = [browser.new_context(base_url=live_server.url, locale="ja-JP") for _ in range(2)]
    try:
        master, player = (c.new_page() for c in contexts)
        register_in(master, unique_name("g"))
        register_in(player, unique_name("p"))
        master.goto("/games/new")
        master.fill("input[name=title]", "プレビュー卓")
        master.click("form.auth-form button[type=submit]")
        game_url = master.url
        player.goto(game_url)
        player.fill("#reply textarea", "SET 主演 役者7")
        player.click("#reply button.secondary")
        expect(player.locator(".preview")).to_contain_text("1〜6")
        expect(player.locator("#reply textarea")).to_have_value("SET 主演 役者7")
        expect(player.locator(".thread-title .count")).to_have_text("(1)")  # nothing stored

        player.fill("#reply textarea", "荒らしの書き込み")
        player.click("#reply button[type=submit]:not(.secondary)")
        master.goto(game_url.replace("/games/", "/api/games/"))
        thread_id = master.evaluate("JSON.parse(document.body.innerText).thread_id")
        master.goto(f"/threads/{thread_id}")
        post = master.locator("article.post[id='2']")
        post.locator("form.mod button").click()
        expect(master.locator("article.post[id='2'] .post-body")).to_have_text("あぼーん")
        player.goto(f"/threads/{thread_id}")
        expect(player.locator("article.post[id='2'] .post-body")).to_have_text("あぼーん")
        expect(player.locator("article.post[id='2'] form.mod")).to_have_count(0)
    finally:
        for context in contexts:
            context.close()


def test_thread_page_shows_new_posts_live(page: Page, live_server: LiveServer) -> None:
    import httpx

    from tests.conftest import api_user

    with httpx.Client(base_url=live_server.url) as client:
        author = api_user(client)
        thread_id = author.post(
            "/api/boards/chat/threads", {"title": "生中継", "body": "1"}
        ).json()["id"]
        page.goto(f"/threads/{thread_id}")
        expect(page.locator("article.post")).to_have_count(1)
        author.post(f"/api/threads/{thread_id}/posts", {"body": "リロードなしで見える"})
        expect(page.locator("article.post[id='2'] .post-body")).to_have_text("リロードなしで見える")
        expect(page.locator(".thread-title .count")).to_have_text("(2)")
