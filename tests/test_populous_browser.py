"""ポピュラス 草案21 (populous) in Chromium (Debian's, driven by Playwright), as a new user meets
it: the master registers through the pages and makes the game at /games/new; three players,
each logged in through /login in a browser context of their own, join from the game page (the
JOIN button fills the post form); the master starts it from the page. From the game pages
alone the players then choose their races (RACE buttons under 今できる命令), draft their skills
and split their cubes through the sealed form (a sealed button fills #sealed), and play a full
turn each (AREA, PLACE, PLAY … one legal-line button a post, then one post of two lines); each
post is answered by the bot and the board picture comes back with a new version. The rest of
the game is played fast over the JSON API; the finished game's pages show 終了 and the final
ranking, and the picture, opened on its own at a phone's width, fits and labels every square.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, ViewportSize, expect

from app.games import svg
from app.games.populous import svg as populous_svg
from tests.conftest import ApiUser, LiveServer, api_user, unique_name

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

TITLE = "ブラウザの創世卓"
PICTURE = "#game figure.board-picture img"
LEGAL = "#game .legal:not(.legal-sealed):not(.legal-examples)"
BUTTONS = f"{LEGAL} button.fill-command"
SEALED_BUTTONS = "#game .legal-sealed button.fill-command[data-target=sealed]"
ANY_BUTTON = "#game button.fill-command"
FORM_BODY = "#reply textarea[name=body]"
SUBMIT = "#reply button[type=submit]:not(.secondary)"
SEALED_BODY = "#sealed textarea[name=body]"
SEALED_SUBMIT = "#sealed button[type=submit]"
LOADED = "(img) => img.complete && img.naturalWidth > 0"
PHONE = ViewportSize(width=390, height=844)
# The picture is svg.WIDTH units wide, its squares labelled in text populous_svg.LABEL_SIZE
# units high: on a phone's game page a label must still come out this many CSS pixels high.
SMALLEST_READABLE_PX = 9
API_MOVE_LIMIT = 3000
# How wide the page is, scrolled: the root element's width (an <svg> opened on its own too).
SCROLL_WIDTH = """() => Math.max(document.documentElement.scrollWidth,
  document.scrollingElement ? document.scrollingElement.scrollWidth : 0)"""
# Every <text> of the picture that is exactly a square's id, with its box on the page.
SQUARE_LABELS = r"""() => [...document.querySelectorAll('text')]
  .filter((t) => /^\d\d[abc]$/.test(t.textContent.trim()))
  .map((t) => {
    const box = t.getBoundingClientRect();
    return {id: t.textContent.trim(), left: box.left, right: box.right, height: box.height};
  })"""


class Pages:
    """One browser context per person, each logged in; any console or page error is kept."""

    def __init__(self, browser: Browser, live_server: LiveServer) -> None:
        self.browser = browser
        self.live_server = live_server
        self.errors: list[str] = []
        self.contexts: list[BrowserContext] = []

    def new_page(self, name: str, viewport: ViewportSize | None = None) -> Page:
        context = self.browser.new_context(
            base_url=self.live_server.url, locale="ja-JP", viewport=viewport
        )
        self.contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: self.errors.append(f"{name}: {exc}"))
        page.on(
            "console",
            lambda msg: self.errors.append(f"{name}: {msg.text}") if msg.type == "error" else None,
        )
        return page

    def logged_in(self, name: str, viewport: ViewportSize | None = None) -> Page:
        page = self.new_page(name, viewport)
        log_in(page, name)
        return page

    def registered(self, name: str) -> Page:
        page = self.new_page(name)
        page.goto("/register")
        page.fill("input[name=name]", name)
        page.fill("input[name=password]", "password123")
        page.click("form.auth-form button[type=submit]")
        expect(page.locator(".whoami")).to_have_text(f"{name} さん")
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


def game_json(client: httpx.Client, game_id: int) -> dict[str, Any]:
    found: dict[str, Any] = client.get(f"/api/games/{game_id}").json()
    return found


def the_one_waited_for(game: dict[str, Any]) -> str:
    waiting: list[str] = game["view"]["waiting_for"]
    assert len(waiting) == 1, game["view"]
    return waiting[0]


def legal_of(user: ApiUser, game_id: int) -> dict[str, list[str]]:
    answer = user.get(f"/api/games/{game_id}/legal")
    assert answer.status_code == 200, answer.text
    legal: dict[str, list[str]] = answer.json()
    return legal


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


def lines_of(page: Page, selector: str) -> list[str]:
    return [button.get_attribute("data-line") or "" for button in page.locator(selector).all()]


def options_of(page: Page, select: str) -> list[str]:
    return [
        option.get_attribute("value") or "" for option in page.locator(f"{select} option").all()
    ]


def last_post(page: Page) -> int:
    return int(page.locator("#thread-latest").get_attribute("data-last") or "0")


def new_picture(page: Page, client: httpx.Client, game_id: int, before: str, step: str) -> None:
    """The picture came back with the game's new version, and loaded."""
    after = picture(page)
    assert version_of(after) != version_of(before), f"{step}: the picture did not change"
    assert version_of(after) == str(game_json(client, game_id)["version"]), (step, after)


def post_from_the_page(
    page: Page, client: httpx.Client, name: str, game_id: int, lines: list[str], step: str
) -> Locator:
    """Click the buttons of `lines` (one a line of the post form), send the form, and see the
    post and the bot's answer in the game page's thread section; returns the answer."""
    before = picture(page)
    last = last_post(page)
    for line in lines:
        page.locator(f"{BUTTONS}[data-line='{line}']").first.click()
    expect(page.locator(FORM_BODY)).to_have_value("\n".join(lines))
    page.click(SUBMIT)

    page.wait_for_url(re.compile(rf"/games/{game_id}#thread-latest$"))
    latest = page.locator("#thread-latest")
    mine = latest.locator(f"article.post[id='{last + 1}']")
    expect(mine.locator(".post-name")).to_have_text(name)
    for line in lines:
        expect(mine.locator(".post-body")).to_contain_text(line)
    answer = latest.locator(f"article.post.post-gm[id='{last + 2}']")
    expect(answer).to_have_count(1)
    expect(page.locator(".form-error")).to_have_count(0)
    expect(page.locator(FORM_BODY)).to_have_value("")
    new_picture(page, client, game_id, before, step)
    return answer


def play_from_the_page(
    page: Page,
    client: httpx.Client,
    player: ApiUser,
    game_id: int,
    choose: Callable[[list[str]], list[str]],
    step: str,
) -> list[str]:
    """One post as a player makes it in the browser, of the lines `choose` takes among the
    page's legal-line buttons (which are the API's legal lines); returns the lines posted."""
    page.goto(f"/games/{game_id}")
    lines = lines_of(page, BUTTONS)
    legal = legal_of(player, game_id)
    assert lines == legal["commands"], f"{step}: the page's buttons are not the legal lines"
    assert lines_of(page, SEALED_BUTTONS) == legal["sealed"], f"{step}: sealed buttons"
    assert lines, f"{step}: no legal line to click"
    expect(page.locator(LEGAL).locator("h3")).to_have_text("今できる命令")
    chosen = choose(lines)
    answer = post_from_the_page(page, client, player.name, game_id, chosen, step)
    for line in chosen:
        expect(answer.locator(".post-body")).to_contain_text(f"✔ {line}")
    return chosen


def seal_from_the_page(
    page: Page,
    client: httpx.Client,
    player: ApiUser,
    game_id: int,
    chooser: random.Random,
    step: str,
) -> str:
    """A sealed line sent as a player sends it: its button fills the sealed form at #sealed,
    the form is sent; the answer comes back privately in the page's sealed list, and the
    thread is told only that a sealed command came. Returns the line."""
    page.goto(f"/games/{game_id}")
    before = picture(page)
    legal = legal_of(player, game_id)
    lines = lines_of(page, SEALED_BUTTONS)
    assert lines == legal["sealed"], f"{step}: the page's sealed buttons are not the legal lines"
    assert lines_of(page, BUTTONS) == legal["commands"] == [], f"{step}: {legal}"
    assert lines, f"{step}: no sealed line to click"
    line = chooser.choice(lines)
    last = last_post(page)
    sent = len(page.locator(".sealed-list li").all())

    page.locator(f"{SEALED_BUTTONS}[data-line='{line}']").first.click()
    expect(page.locator(SEALED_BODY)).to_have_value(line)
    expect(page.locator(FORM_BODY)).to_have_value("")
    page.click(SEALED_SUBMIT)

    page.wait_for_url(re.compile(rf"/games/{game_id}#sealed$"))
    expect(page.locator(".form-error")).to_have_count(0)
    mine = page.locator(".sealed-list li")
    expect(mine).to_have_count(sent + 1)
    expect(mine.last.locator("pre").first).to_have_text(line)
    expect(mine.last.locator("pre.preview-reply")).to_contain_text(f"✔ {line}")
    expect(mine.last.locator("pre.preview-reply.failed")).to_have_count(0)
    answer = page.locator(f"#thread-latest article.post.post-gm[id='{last + 1}'] .post-body")
    expect(answer).to_contain_text(f"{player.name} さんから封印コマンドが届きました")
    expect(answer).to_contain_text("✔ （封印）")
    expect(answer).not_to_contain_text(f"✔ {line}")
    if line.startswith("PICK "):  # the kept skill is the player's own, on the own section
        expect(page.locator(".own-view")).to_contain_text(line.removeprefix("PICK "))
    new_picture(page, client, game_id, before, step)
    return line


def no_sideways_scroll(page: Page, where: str) -> None:
    width = page.evaluate(SCROLL_WIDTH)
    assert width <= PHONE["width"], f"{where}: scrolls sideways ({width} px wide)"


def picture_fits_the_phone(page: Page, where: str) -> None:
    picture(page)
    box = page.locator(PICTURE).evaluate("(img) => img.getBoundingClientRect().toJSON()")
    assert box["left"] >= 0 and box["right"] <= PHONE["width"], (where, box)
    smallest = box["width"] / svg.WIDTH * populous_svg.LABEL_SIZE
    assert smallest >= SMALLEST_READABLE_PX, f"{where}: drawn too small to read: {box}"
    no_sideways_scroll(page, where)


def squares_of(view: dict[str, Any]) -> list[str]:
    return sorted(square["id"] for tile in view["map"] for square in tile["squares"])


def stay_in_the_turn(chooser: random.Random) -> Callable[[list[str]], list[str]]:
    """A seeded pick of one line, END last (so the page plays each step of the turn)."""

    def choose(lines: list[str]) -> list[str]:
        return [chooser.choice([line for line in lines if line != "END"] or lines)]

    return choose


def finish_over_the_api(
    client: httpx.Client, players: dict[str, ApiUser], game_id: int, chooser: random.Random
) -> None:
    """The rest of the game as fast as it goes: whoever is waited for posts one of their legal
    lines (not END while there is another), or seals one while only sealed lines are legal."""
    for _ in range(API_MOVE_LIMIT):
        game = game_json(client, game_id)
        if game["status"] == "finished":
            return
        user = players[game["view"]["waiting_for"][0]]
        legal = legal_of(user, game_id)
        if legal["commands"]:
            lines = [line for line in legal["commands"] if line != "END"] or legal["commands"]
            posted = user.post(
                f"/api/threads/{game['thread_id']}/posts", {"body": chooser.choice(lines)}
            )
            assert posted.status_code == 201, posted.text
            reply = posted.json()["replies"][0]
            assert reply["ok"], reply["body"]
        else:
            assert legal["sealed"], (legal, game["view"])
            sealed = user.post(
                f"/api/games/{game_id}/sealed", {"body": chooser.choice(legal["sealed"])}
            )
            assert sealed.status_code in (200, 201), sealed.text
            assert sealed.json()["sealed"]["ok"], sealed.text
    pytest.fail(f"the game did not end in {API_MOVE_LIMIT} moves")


def test_a_new_user_plays_populous_from_the_game_page_to_the_final_ranking(
    client: httpx.Client, pages: Pages
) -> None:
    chooser = random.Random("populous-browser")
    master_name = unique_name("g")
    master = pages.registered(master_name)
    master.goto("/games/new")
    options = options_of(master, "select[name=kind]")
    assert "populous" in options, options
    master.select_option("select[name=kind]", "populous")
    master.fill("input[name=title]", TITLE)
    master.click("form.auth-form button[type=submit]")
    expect(master.locator("#game h2")).to_contain_text(TITLE)
    expect(master.locator("#game h2")).to_contain_text("ポピュラス 草案21")
    made = re.search(r"/games/(\d+)$", master.url)
    assert made, master.url
    game_id = int(made.group(1))
    game = game_json(client, game_id)
    assert (game["kind"], game["title"], game["gm"]) == ("populous", TITLE, master_name), game
    assert game["status"] == "recruiting", game
    picture(master)

    players = {user.name: user for user in (api_user(client) for _ in range(3))}
    browsers = {name: pages.logged_in(name) for name in players}
    for seat, (name, page) in enumerate(browsers.items(), start=1):
        page.goto(f"/games/{game_id}")
        answer = post_from_the_page(page, client, name, game_id, ["JOIN"], f"{name} joins")
        expect(answer.locator(".post-body")).to_contain_text(f"{name} さんが参加しました")
        expect(page.locator("#game .game-meta")).to_contain_text(f"{seat}. {name}")

    master.goto(f"/games/{game_id}")
    answer = post_from_the_page(master, client, master_name, game_id, ["START"], "START")
    expect(answer.locator(".post-body")).to_contain_text("ゲーム開始")
    expect(master.locator("#game .game-status")).to_contain_text("進行中")
    assert game_json(client, game_id)["view"]["phase"] == "race"

    # The races, in turn, from the buttons under 今できる命令.
    races: list[str] = []
    while (game := game_json(client, game_id))["view"]["phase"] == "race":
        name = the_one_waited_for(game)
        step = f"race {len(races) + 1} by {name}"
        chosen = play_from_the_page(
            browsers[name], client, players[name], game_id, stay_in_the_turn(chooser), step
        )
        assert [line.split()[0] for line in chosen] == ["RACE"], chosen
        races.extend(chosen)
        assert pages.errors == [], f"{step}: {pages.errors}"
    assert len(races) == len(players), races

    # The draft and the cube split: every player at once, sealed, from the sealed form.
    sealed: list[str] = []
    while (game := game_json(client, game_id))["view"]["phase"] in ("draft", "cubes"):
        waiting = game["view"]["waiting_for"]
        assert waiting, game["view"]
        name = waiting[0]
        step = f"sealed {len(sealed) + 1} by {name} ({game['view']['phase']})"
        sealed.append(
            seal_from_the_page(browsers[name], client, players[name], game_id, chooser, step)
        )
        assert pages.errors == [], f"{step}: {pages.errors}"
        assert len(sealed) <= 30, sealed
    assert [line.split()[0] for line in sealed] == ["PICK"] * 15 + ["CUBES"] * 3, sealed
    assert game["view"]["phase"] == "play", game["view"]

    # A full turn for each player, one legal-line button a post; then the next turn's area
    # and END (the rest of the turn by default) in one post of two lines.
    turns: list[tuple[str, list[str]]] = []
    posted = 0
    while True:
        name = the_one_waited_for(game_json(client, game_id))
        if not turns or turns[-1][0] != name:
            if len(turns) == len(players):
                break
            assert name not in [owner for owner, _ in turns], (name, turns)
            turns.append((name, []))
        posted += 1
        step = f"turn {len(turns)} post {len(turns[-1][1]) + 1} by {name}"
        turns[-1][1].extend(
            play_from_the_page(
                browsers[name], client, players[name], game_id, stay_in_the_turn(chooser), step
            )
        )
        assert pages.errors == [], f"{step}: {pages.errors}"
        assert posted <= 60, turns
    assert sorted(owner for owner, _ in turns) == sorted(players), turns
    for owner, lines in turns:
        kinds = [line.split()[0] for line in lines]
        assert kinds[0] == "AREA", (owner, lines)
        assert {"PLAY", "FACEDOWN", "NEWGEN"} & set(kinds), (owner, lines)

    def area_then_end(lines: list[str]) -> list[str]:
        areas = [line for line in lines if line.startswith("AREA ")]
        assert areas and "END" in lines, lines
        return [chooser.choice(areas), "END"]

    both = play_from_the_page(
        browsers[name], client, players[name], game_id, area_then_end, "AREA and END"
    )
    assert the_one_waited_for(game_json(client, game_id)) != name, both

    # Midway, on a phone: the game page with its buttons does not scroll sideways.
    phone = pages.logged_in(the_one_waited_for(game_json(client, game_id)), PHONE)
    phone.goto(f"/games/{game_id}")
    expect(phone.locator(BUTTONS).first).to_be_visible()
    picture_fits_the_phone(phone, "the game page in play")

    # The rest of the game, fast, over the JSON API; the master's page stays open on the game
    # (the live thread refreshes its panel after each of the bot's posts), the others are left.
    for page in [*browsers.values(), phone]:
        page.goto("about:blank")
    master.goto(f"/games/{game_id}")
    picture(master)
    finish_over_the_api(client, players, game_id, chooser)

    final = game_json(client, game_id)
    ranking = final["result"]["ranking"]
    ranked = [entry["name"] for entry in ranking]
    assert sorted(ranked) == sorted(players), ranking
    expect(master.locator("#game .game-status")).to_contain_text("終了")
    expect(master.locator("#game table.ranking tbody tr")).to_have_count(len(players))
    expect(master.locator(PICTURE)).to_have_attribute(
        "src", re.compile(rf"[?&]v={final['version']}(&|$)")
    )
    picture(master)
    for name, page in [*browsers.items(), (master_name, master)]:
        page.goto(f"/games/{game_id}")
        expect(page.locator("#game .game-status")).to_contain_text("終了")
        rows = page.locator("#game table.ranking tbody tr")
        expect(rows).to_have_count(len(players))
        shown = [row.locator("td").nth(1).inner_text() for row in rows.all()]
        assert shown == ranked, f"{name}'s page: {shown} != {ranked}"
        for row, entry in zip(rows.all(), ranking, strict=True):
            expect(row.locator("td").nth(0)).to_have_text(str(entry["rank"]))
            expect(row.locator("td").nth(2)).to_have_text(str(entry["score"]))
        expect(page.locator(ANY_BUTTON)).to_have_count(0)
        expect(page.locator("#sealed form")).to_have_count(0)
        src = picture(page)
        assert version_of(src) == str(final["version"]), src

    # On a phone: the finished game's page, then the picture opened on its own.
    phone.goto(f"/games/{game_id}")
    expect(phone.locator("#game table.ranking")).to_be_visible()
    picture_fits_the_phone(phone, "the finished game's page")
    squares = squares_of(final["view"])
    assert len(squares) == 30 and "12a" in squares, squares
    for url in (f"/api/games/{game_id}/board.svg", f"/api/games/{game_id}/board.svg?as=me"):
        shown_svg = phone.goto(url)
        assert shown_svg is not None and shown_svg.ok, url
        assert shown_svg.headers["content-type"].startswith("image/svg+xml"), shown_svg.headers
        no_sideways_scroll(phone, url)
        labels = phone.evaluate(SQUARE_LABELS)
        assert sorted(label["id"] for label in labels) == squares, f"{url}: {labels}"
        for label in labels:
            assert label["left"] >= 0 and label["right"] <= PHONE["width"], (url, label)
            assert label["height"] > 0, f"{url}: a square's label is not drawn: {label}"
    assert pages.errors == [], pages.errors
