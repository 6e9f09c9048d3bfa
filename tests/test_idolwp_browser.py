"""IM@S x Workerplacement (idolwp) in Chromium (Debian's, driven by Playwright), as a new user
plays it: a game made and seated over the JSON API, then each of the two players, logged in
through /login in a browser context of their own, drafts and plays the first turns from the
game page alone (a legal-line button fills the post form, the form is sent, the page comes
back with the bot's answer in the thread section and a new board picture); the rest of the
game is played fast over the API, and the finished game's page shows the final ranking."""

from __future__ import annotations

import os
import random
import re
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.conftest import ApiUser, LiveServer, api_user

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

PICTURE = "#game figure.board-picture img"
BUTTONS = "#game .legal:not(.legal-sealed) button.fill-command"
FORM_BODY = "#reply textarea[name=body]"
SUBMIT = "#reply button[type=submit]:not(.secondary)"
LOADED = "(img) => img.complete && img.naturalWidth > 0"
# Posts made through the game page: the draft (2 idols each for 2 players) and then turns.
PAGE_POSTS = 14
API_POST_LIMIT = 2000


class Pages:
    """One browser context per player, each logged in; any console or page error is kept."""

    def __init__(self, browser: Browser, live_server: LiveServer) -> None:
        self.browser = browser
        self.live_server = live_server
        self.errors: list[str] = []
        self.contexts: list[BrowserContext] = []

    def open(self, name: str) -> Page:
        context = self.browser.new_context(base_url=self.live_server.url, locale="ja-JP")
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"{name}: {exc}"))
        page.on(
            "console",
            lambda msg: self.errors.append(f"{name}: {msg.text}") if msg.type == "error" else None,
        )
        log_in(page, name)
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def pages(browser: Browser, live_server: LiveServer) -> Iterator[Pages]:
    opened = Pages(browser, live_server)
    yield opened
    opened.close()
    assert opened.errors == [], f"JavaScript, CSP or loading errors in the pages: {opened.errors}"


def log_in(page: Page, name: str) -> None:
    page.goto("/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", "password123")
    page.click("form.auth-form button[type=submit]")
    expect(page.locator(".whoami")).to_have_text(f"{name} さん")


def api_post(user: ApiUser, thread_id: int, body: str) -> dict[str, Any]:
    answer = user.post(f"/api/threads/{thread_id}/posts", {"body": body})
    assert answer.status_code == 201, answer.text
    reply: dict[str, Any] = answer.json()["replies"][0]
    assert reply["ok"], f"{user.name}: {body}: {reply['body']}"
    return reply


def game_json(client: httpx.Client, game_id: int) -> dict[str, Any]:
    found: dict[str, Any] = client.get(f"/api/games/{game_id}").json()
    return found


def the_one_waited_for(game: dict[str, Any]) -> str:
    waiting: list[str] = game["view"]["waiting_for"]
    assert len(waiting) == 1, game["view"]
    return waiting[0]


def picture(page: Page) -> str:
    """The game panel's board picture, once it has loaded with a width; returns its src."""
    img = page.locator(PICTURE)
    expect(img).to_have_count(1)
    handle = img.element_handle()
    assert handle is not None
    page.wait_for_function(LOADED, arg=handle, timeout=10_000)
    return img.get_attribute("src") or ""


def version_of(src: str) -> str:
    found = re.search(r"[?&]v=(\d+)", src)
    assert found, src
    return found.group(1)


def play_from_the_page(
    page: Page,
    client: httpx.Client,
    player: ApiUser,
    game_id: int,
    choose: Callable[[list[str]], str],
    step: str,
) -> str:
    """One post as a player makes it in the browser; returns the line posted."""
    page.goto(f"/games/{game_id}")
    before = picture(page)
    assert before == f"/api/games/{game_id}/board.svg?v={version_of(before)}&as=me", before
    buttons = page.locator(BUTTONS)
    lines = [button.get_attribute("data-line") or "" for button in buttons.all()]
    legal = player.get(f"/api/games/{game_id}/legal").json()
    assert legal["sealed"] == [], legal
    assert lines == legal["commands"], f"{step}: the page's buttons are not the legal lines"
    assert lines, f"{step}: no legal line to click"
    line = choose(lines)
    last = int(page.locator("#thread-latest").get_attribute("data-last") or "0")

    buttons.nth(lines.index(line)).click()
    expect(page.locator(FORM_BODY)).to_have_value(line)
    page.click(SUBMIT)

    page.wait_for_url(re.compile(rf"/games/{game_id}#thread-latest$"))
    latest = page.locator("#thread-latest")
    mine = latest.locator(f"article.post[id='{last + 1}']")
    expect(mine.locator(".post-name")).to_have_text(player.name)
    expect(mine.locator(".post-body")).to_contain_text(line)
    answer = latest.locator(f"article.post.post-gm[id='{last + 2}']")
    expect(answer.locator(".post-body")).to_contain_text(f"✔ {line}")
    expect(page.locator(".form-error")).to_have_count(0)
    expect(page.locator(FORM_BODY)).to_have_value("")

    after = picture(page)
    assert version_of(after) != version_of(before), f"{step}: the picture did not change"
    assert version_of(after) == str(game_json(client, game_id)["version"]), (step, after)
    return line


def stay_on_the_board(seeded: random.Random) -> Callable[[list[str]], str]:
    """A seeded pick among the lines, leaving the goal for last so that the page plays more
    than a dash to it (events, training, cards)."""

    def choose(lines: list[str]) -> str:
        return seeded.choice([line for line in lines if not line.endswith(" G")] or lines)

    return choose


def test_a_new_user_plays_idolwp_from_the_game_page_to_the_final_ranking(
    client: httpx.Client, pages: Pages
) -> None:
    master = api_user(client)
    players = {user.name: user for user in (api_user(client), api_user(client))}
    made = master.post("/api/games", {"kind": "idolwp", "title": "ブラウザのアイドル卓"})
    assert made.status_code == 201, made.text
    game_id, thread_id = made.json()["id"], made.json()["thread_id"]
    for user in players.values():
        api_post(user, thread_id, "JOIN")
    api_post(master, thread_id, "START")
    assert game_json(client, game_id)["view"]["phase"] == "draft"

    seeded = random.Random("idolwp-browser")
    browsers = {name: pages.open(name) for name in players}
    posted: list[str] = []
    for number in range(1, PAGE_POSTS + 1):
        name = the_one_waited_for(game_json(client, game_id))
        step = f"page post {number} by {name}"
        line = play_from_the_page(
            browsers[name], client, players[name], game_id, stay_on_the_board(seeded), step
        )
        posted.append(line)
        assert pages.errors == [], f"{step} ({line}): {pages.errors}"
    assert [line.split()[0] for line in posted[:4]] == ["PICK"] * 4, posted
    assert game_json(client, game_id)["view"]["phase"] == "play"
    assert any(line.startswith("MOVE ") for line in posted), posted

    for _ in range(API_POST_LIMIT):
        game = game_json(client, game_id)
        if game["status"] == "finished":
            break
        user = players[the_one_waited_for(game)]
        lines = user.get(f"/api/games/{game_id}/legal").json()["commands"]
        assert lines, game["view"]
        api_post(user, thread_id, seeded.choice(lines))
    else:
        pytest.fail(f"the game did not end in {API_POST_LIMIT} posts")

    final = game_json(client, game_id)
    ranked = [entry["name"] for entry in final["result"]["ranking"]]
    assert sorted(ranked) == sorted(players)
    for name, page in browsers.items():
        page.goto(f"/games/{game_id}")
        expect(page.locator("#game .game-status")).to_contain_text("終了")
        rows = page.locator("#game table.ranking tbody tr")
        expect(rows).to_have_count(len(players))
        shown = [row.locator("td").nth(1).inner_text() for row in rows.all()]
        assert shown == ranked, f"{name}'s page: {shown} != {ranked}"
        for row, entry in zip(rows.all(), final["result"]["ranking"], strict=True):
            expect(row.locator("td").nth(2)).to_have_text(str(entry["score"]))
        src = picture(page)
        assert version_of(src) == str(final["version"]), src
        expect(page.locator(BUTTONS)).to_have_count(0)
    assert pages.errors == [], pages.errors
