"""The board pictures (`GET /api/games/{id}/board.svg`) in Chromium (Debian's, driven by
Playwright): they load on the game page, the thread page and the replay page of an えいつく and a
新新エリューシス game in play; user text drawn in them (a game title, a parent's HINT) never runs,
opened on its own or embedded; they fit a phone's width; and `as=me` adds a child's own hand
while the public picture shows no hand."""

from __future__ import annotations

import os
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Dialog, Page, ViewportSize, expect

from app.games import svg
from tests.conftest import ApiUser, LiveServer, api_user

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

RULE = "card.color != prev.color"
# User text that reaches a picture. Player names cannot hold < > & " '
# (app/accounts/users.py), so the markup goes where free text is drawn: a game's title (the
# recruiting picture) and a parent's HINT (新新エリューシス). Each is short enough to be drawn on
# one line, uncut, so that a picture that stopped escaping would hold a well-formed <script>
# element (and the test would see it run).
TITLE_MARKUP = "<script>alert(__pwned=2)</script>"
HINT_MARKUP = "<script>__pwned=1</script>"
HAND_LABEL = "あなたの手札"
PICTURE = "figure.board-picture img"
PHONE = ViewportSize(width=390, height=844)
# The pictures are svg.WIDTH units wide with no text under svg.MIN_FONT_SIZE units; on a phone
# the smallest text must still come out at this many CSS pixels.
SMALLEST_READABLE_PX = 9

LOADED = "(img) => img.complete"
# Elements whose right edge is past the viewport: what makes a page scroll sideways.
OVERFLOWING = """() => [...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
  .map((e) => e.localName + (e.id ? '#' + e.id : '')
    + (typeof e.className === 'string' && e.className.trim()
       ? '.' + e.className.trim().split(/\\s+/).join('.') : '')
    + ' right=' + Math.round(e.getBoundingClientRect().right))
  .slice(0, 15)"""


@dataclass
class Table:
    kind: str
    id: int
    thread_id: int
    gm: ApiUser
    players: list[ApiUser]


def post(user: ApiUser, table: Table, body: str) -> dict[str, Any]:
    answer = user.post(f"/api/threads/{table.thread_id}/posts", {"body": body})
    assert answer.status_code == 201, answer.text
    reply: dict[str, Any] = answer.json()["replies"][0]
    assert reply["ok"], f"{body}: {reply['body']}"
    return reply


def legal(user: ApiUser, table: Table) -> list[str]:
    commands: list[str] = user.get(f"/api/games/{table.id}/legal").json()["commands"]
    return commands


def view_of(client: httpx.Client, table: Table) -> dict[str, Any]:
    view: dict[str, Any] = client.get(f"/api/games/{table.id}").json()["view"]
    return view


def applied_moves(client: httpx.Client, table: Table) -> int:
    return len(client.get(f"/api/games/{table.id}/moves").json())


def new_table(gm: ApiUser, kind: str, title: str, players: list[ApiUser]) -> Table:
    game = gm.post("/api/games", {"kind": kind, "title": title, "options": {}}).json()
    table = Table(kind, game["id"], game["thread_id"], gm, players)
    for player in players:
        post(player, table, "JOIN")
    post(gm, table, "START")
    return table


@pytest.fixture(scope="module")
def http(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def eitsuku(http: httpx.Client) -> Table:
    """An えいつく game in its second week: both players chose, set a card if they could, ended."""
    table = new_table(api_user(http), "eitsuku", "絵図の卓", [api_user(http), api_user(http)])
    for player in table.players:
        for _ in range(4):  # a 6 on the set-up die: choose first (one choice or two)
            chooses = [line for line in legal(player, table) if line.startswith("CHOOSE")]
            if not chooses:
                break
            post(player, table, chooses[0])
        sets = [line for line in legal(player, table) if line.startswith("SET ")]
        if sets:
            post(player, table, sets[0])
        post(player, table, "END")
    assert view_of(http, table)["week"] == 2
    return table


def red(card: str) -> bool:
    return card[0] in "♥♦"


def right_play(lines: list[str], last: str) -> str | None:
    """A one-card PLAY declared rightly under RULE (the colour must change), a success first."""
    right = []
    for line in lines:
        parts = line.split()
        if parts[0] != "PLAY" or len(parts) != 3:
            continue
        succeeds = red(parts[2]) != red(last)
        if (parts[1] == "○") == succeeds:
            right.append((not succeeds, line))
    return min(right)[1] if right else None


@pytest.fixture(scope="module")
def eleusis(http: httpx.Client) -> Table:
    """A 新新エリューシス game in play: a parent (the first to join) and four children, the
    parent's sealed formal rule, ten cards and more played, and the parent's HINT (markup)."""
    table = new_table(api_user(http), "eleusis", "帰納の絵", [api_user(http) for _ in range(5)])
    parent, *children = table.players
    sealed = parent.post(f"/api/games/{table.id}/sealed", {"body": f"RULE {RULE}"}).json()
    assert sealed["sealed"]["ok"], sealed
    hinted = False
    for _ in range(40):
        view = view_of(http, table)
        if view["hint_allowed"] and not hinted:
            post(parent, table, f"HINT {HINT_MARKUP}")
            hinted = True
        if hinted and view["played"] >= 12:
            break
        for child in children:
            line = right_play(legal(child, table), view["line"][-1]["card"])
            if line is not None:
                post(child, table, line)
                break
        else:
            pytest.fail("no child could play")
    assert hinted and view_of(http, table)["hints"][0]["text"] == HINT_MARKUP
    return table


@pytest.fixture(params=["eitsuku", "eleusis"])
def table(request: pytest.FixtureRequest) -> Table:
    found: Table = request.getfixturevalue(request.param)
    return found


@pytest.fixture
def page(browser: Browser, live_server: LiveServer) -> Iterator[Page]:
    context = browser.new_context(base_url=live_server.url, locale="ja-JP")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    yield page
    context.close()
    assert errors == [], f"JavaScript, CSP or loading errors in the page: {errors}"


def the_three_pages(client: httpx.Client, table: Table) -> list[str]:
    moves = applied_moves(client, table)
    assert moves > 0
    return [
        f"/games/{table.id}",
        f"/threads/{table.thread_id}",
        f"/games/{table.id}/replay?at={moves}",
    ]


def pictures_loaded(page: Page) -> list[str]:
    """Waits for every board picture of the page (scrolled to, for the lazy ones in posts) and
    returns their src; each must have loaded with a width."""
    sources = []
    for img in page.locator(PICTURE).element_handles():
        img.scroll_into_view_if_needed()
        page.wait_for_function(LOADED, arg=img, timeout=10_000)
        src = img.get_attribute("src") or ""
        width = img.evaluate("(img) => img.naturalWidth")
        assert width > 0, f"{page.url}: the picture {src} did not load"
        sources.append(src)
    return sources


def test_board_pictures_load_on_the_game_thread_and_replay_pages(
    page: Page, http: httpx.Client, table: Table
) -> None:
    game, thread, replay = the_three_pages(http, table)
    at = replay.rsplit("=", 1)[1]
    board = f"/api/games/{table.id}/board.svg"

    page.goto(game)
    sources = pictures_loaded(page)
    assert sources and sources[0].startswith(f"{board}?v="), sources

    page.goto(thread)
    expect(page.locator("#game " + PICTURE)).to_have_count(1)
    in_posts = page.locator("figure.board-picture.board-in-post img")
    assert in_posts.count() >= 1, "no bot reply in the thread shows the board"
    sources = pictures_loaded(page)
    assert all(re.fullmatch(rf"{board}\?(v=\d+|at=\d+)", src) for src in sources), sources

    page.goto(replay)
    assert pictures_loaded(page) == [f"{board}?at={at}"]


def test_markup_in_a_title_or_a_hint_never_runs_in_the_picture(
    page: Page, http: httpx.Client, eleusis: Table
) -> None:
    dialogs: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    gm = api_user(http)
    recruiting = gm.post(
        "/api/games", {"kind": "eitsuku", "title": TITLE_MARKUP, "options": {}}
    ).json()
    cases = [(recruiting["id"], TITLE_MARKUP), (eleusis.id, HINT_MARKUP)]
    for game_id, markup in cases:
        url = f"/api/games/{game_id}/board.svg"
        raw = http.get(url).text
        assert "<script" not in raw and "&lt;script&gt;" in raw, raw[:400]

        response = page.goto(url)  # the picture opened on its own: a document of its own
        assert response is not None and response.ok
        csp = response.headers.get("content-security-policy", "")
        assert "default-src 'none'" in csp and "sandbox" in csp, csp
        assert "script-src" not in csp
        assert page.evaluate("document.documentElement.localName") == "svg"
        assert page.evaluate("document.getElementsByTagName('script').length") == 0
        assert markup in page.evaluate("document.documentElement.textContent")
        assert page.evaluate("typeof window.__pwned") == "undefined"

        page.goto(f"/games/{game_id}")  # embedded as the game page's <img>
        pictures_loaded(page)
        expect(page.locator("body")).to_contain_text(markup)  # shown as text, where it is
        assert page.evaluate("typeof window.__pwned") == "undefined"
    assert dialogs == []


def test_pages_with_pictures_fit_a_phone(
    browser: Browser, live_server: LiveServer, http: httpx.Client, table: Table
) -> None:
    context = browser.new_context(
        base_url=live_server.url, locale="ja-JP", viewport=PHONE, device_scale_factor=2
    )
    try:
        page = context.new_page()
        for url in the_three_pages(http, table):
            page.goto(url)
            pictures_loaded(page)
            if url == f"/games/{table.id}":
                page.locator("#game figure.board-picture").evaluate("(f) => f.scrollIntoView()")
                page.screenshot(path=f"/tmp/board-phone-{table.kind}.png")
            width = page.evaluate("window.innerWidth")
            scroll = page.evaluate("document.documentElement.scrollWidth")
            assert scroll <= width, f"{url} scrolls sideways: {page.evaluate(OVERFLOWING)}"
            # A post's own picture is a thumbnail on a phone, the whole one a tap away
            # (tests/test_phone_browser.py); the game page's and the replay's are read there.
            for img in page.locator(
                "figure.board-picture:not(.board-in-post) img"
            ).element_handles():
                box = img.evaluate("(img) => img.getBoundingClientRect().toJSON()")
                assert box["left"] >= 0 and box["right"] <= width, (url, box)
                smallest = box["width"] / svg.WIDTH * svg.MIN_FONT_SIZE
                assert smallest >= SMALLEST_READABLE_PX, f"{url}: drawn too small to read: {box}"
    finally:
        context.close()


def log_in(page: Page, name: str) -> None:
    page.goto("/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", "password123")
    page.click("form.auth-form button[type=submit]")
    expect(page.locator(".whoami")).to_have_text(f"{name} さん")


def card_titles(picture: str) -> Counter[str]:
    """The playing cards drawn in a picture (each face-up card carries its name as <title>)."""
    return Counter(re.findall(r"<title>([♠♥♦♣][0-9AJQK]+)</title>", picture))


def test_own_picture_adds_the_childs_hand_and_the_public_one_shows_none(
    page: Page, http: httpx.Client, eleusis: Table
) -> None:
    child = eleusis.players[1]
    hand = child.get(f"/api/games/{eleusis.id}/view").json()["hand"]
    assert hand, "the child holds cards"
    log_in(page, child.name)
    page.goto(f"/games/{eleusis.id}")
    src = pictures_loaded(page)[0]  # the panel's, before any in a post
    assert src.endswith("&as=me"), src
    own = page.evaluate("(src) => fetch(src).then((r) => r.text())", src)
    public = http.get(f"/api/games/{eleusis.id}/board.svg").text

    assert HAND_LABEL not in public
    assert f"{HAND_LABEL}({len(hand)}枚)" in own
    own_hand = own.split(HAND_LABEL, 1)[1]
    assert card_titles(own_hand) == Counter(hand)
    assert card_titles(own) - card_titles(own_hand) == card_titles(public)
