"""The site on a phone (390x844, ja-JP) in Chromium (Debian's, driven by Playwright): no page
scrolls sideways (a long line in a post or a title, a sealed rule's SHA-256, wide tables), the
header's links never break inside a word, and a game page has a sticky switch to its board, its
commands and the player's own hand. And the board is drawn once per game page: the public
board (the picture and its text), then the player's own section with only what the public one
lacks (their hand, their secret), never a second full board — for a seated player of each kind.

The games are made and played into a state with something private over the JSON API."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from app.games import GAMES
from tests.conftest import ApiUser, LiveServer, api_user

CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

PHONE = ViewportSize(width=390, height=844)
KINDS = ("eitsuku", "eleusis", "populous", "idolwp", "cardbattle")
RULE = "card.color != prev.color"
# One word far wider than a phone: a post body, a thread title (at most 100 characters).
LONG_WORD = "https://example.com/" + "x" * 200
LONG_TITLE = "長い" + "y" * 90
# Elements whose right edge is past the viewport: what makes a page scroll sideways.
OVERFLOWING = """() => [...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
  .map((e) => e.localName + (e.id ? '#' + e.id : '')
    + (typeof e.className === 'string' && e.className.trim()
       ? '.' + e.className.trim().split(/\\s+/).join('.') : '')
    + ' right=' + Math.round(e.getBoundingClientRect().right))
  .slice(0, 15)"""
# How many lines the text of an element runs over: its text boxes, a new line wherever a box
# starts below the middle of the one before (fonts of one line differ by a pixel or two).
LINES = """(element) => {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const boxes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    boxes.push(...[...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0));
  }
  boxes.sort((a, b) => a.top - b.top);
  let lines = 0;
  let bottom = -Infinity;
  for (const box of boxes) {
    if (box.top >= bottom) lines += 1;
    bottom = Math.max(bottom, box.top + box.height / 2);
  }
  return lines;
}"""
# The header's items whose text runs over more than one line.
BROKEN_NAV_ITEMS = f"""() => [
  ...document.querySelectorAll('.site-header .site-name, .site-nav > *')]
  .filter((item) => ({LINES})(item) > 1)
  .map((item) => item.textContent.trim())"""
OPEN_BOARDS = "document.querySelectorAll('details').forEach((d) => { d.open = true; })"
# Each game's own (private) part, as the board templates mark it: what the own section holds.
OWN_HAND = {
    "eitsuku": ".eitsuku-own-stock",
    "eleusis": ".eleusis-hand",
    "populous": ".populous-hand",
    "idolwp": ".idolwp-hand",
    "cardbattle": ".cardbattle-own-magic",
}


@dataclass
class Table:
    kind: str
    id: int
    thread_id: int
    gm: ApiUser
    players: list[ApiUser]

    def view(self, user: ApiUser | None = None) -> dict[str, Any]:
        if user is None:
            found: dict[str, Any] = self.gm.client.get(f"/api/games/{self.id}").json()["view"]
            return found
        own: dict[str, Any] = user.get(f"/api/games/{self.id}/view").json()
        return own

    def legal(self, user: ApiUser) -> dict[str, list[str]]:
        found: dict[str, list[str]] = user.get(f"/api/games/{self.id}/legal").json()
        return found

    def post(self, user: ApiUser, body: str) -> None:
        answer = user.post(f"/api/threads/{self.thread_id}/posts", {"body": body})
        assert answer.status_code == 201, answer.text
        reply = answer.json()["replies"][0]
        assert reply["ok"], f"{body}: {reply['body']}"

    def seal(self, user: ApiUser, body: str) -> None:
        answer = user.post(f"/api/games/{self.id}/sealed", {"body": body})
        assert answer.status_code in (200, 201), answer.text
        assert answer.json()["sealed"]["ok"], answer.text

    def by_name(self, name: str) -> ApiUser:
        return next(user for user in self.players if user.name == name)


def new_table(client: httpx.Client, kind: str, players: int) -> Table:
    gm = api_user(client)
    title = f"スマホの{sorted(GAMES).index(kind) + 1}番卓"  # never the key: listings show none
    made = gm.post("/api/games", {"kind": kind, "title": title, "options": {}})
    assert made.status_code == 201, made.text
    table = Table(kind, made.json()["id"], made.json()["thread_id"], gm, [])
    for _ in range(players):
        user = api_user(client)
        table.players.append(user)
        table.post(user, "JOIN")
    table.post(gm, "START")
    return table


def play_eitsuku(client: httpx.Client) -> Table:
    """えいつく in its first week, each player having bought a budget card (in the stock)."""
    table = new_table(client, "eitsuku", 2)
    for player in table.players:
        for _ in range(4):  # a 6 on the set-up die: choose first
            chooses = [line for line in table.legal(player)["commands"] if "CHOOSE" in line]
            if not chooses:
                break
            table.post(player, chooses[0])
        buys = [line for line in table.legal(player)["commands"] if line.startswith("SCOUT")]
        table.post(player, buys[0])
    return table


def red(card: str) -> bool:
    return card[0] in "♥♦"


def play_eleusis(client: httpx.Client) -> Table:
    """新新エリューシス with the parent's formal rule sealed (its SHA-256 shown) and cards
    played by the children."""
    table = new_table(client, "eleusis", 4)
    parent, *children = table.players
    table.seal(parent, f"RULE {RULE}")
    assert table.view()["rule_hash"]
    for _ in range(6):
        last = table.view()["line"][-1]["card"]
        for child in children:
            plays = []
            for line in table.legal(child)["commands"]:
                parts = line.split()
                if parts[0] == "PLAY" and len(parts) == 3:
                    right = (red(parts[2]) != red(last)) == (parts[1] == "○")
                    if right:
                        plays.append(line)
            if plays:
                table.post(child, plays[0])
                break
    return table


def play_populous(client: httpx.Client) -> Table:
    """ポピュラス 草案21 past the races, the draft and the cubes: hands and skills are secret."""
    table = new_table(client, "populous", 3)
    while (view := table.view())["phase"] == "race":
        user = table.by_name(view["waiting_for"][0])
        table.post(user, table.legal(user)["commands"][0])
    while table.view()["phase"] == "draft":
        for user in table.players:
            sealed = table.legal(user)["sealed"]
            if sealed:
                table.seal(user, sealed[0])
    for user in table.players:
        table.seal(user, "CUBES 情熱 2 食料 3 信仰 2")
    assert table.view()["phase"] == "play"
    return table


def play_idolwp(client: httpx.Client) -> Table:
    """IM@S x Workerplacement after its draft, played until the second player holds cards."""
    table = new_table(client, "idolwp", 2)
    for _ in range(80):
        view = table.view()
        if view["phase"] != "draft" and table.view(table.players[1])["players"][1].get("hand"):
            break
        user = table.by_name(view["waiting_for"][0])
        lines = table.legal(user)["commands"]
        # Toward the 営業 (sales) spaces that deal cards, never the goal.
        sales = {space["id"] for space in view["board"]["spaces"] if space["type"] == "sales"}
        toward = [line for line in lines if line.split()[-1] in sales]
        table.post(
            user, (toward or [line for line in lines if not line.endswith(" G")] or lines)[0]
        )
    else:
        pytest.fail("the second player never held a card")
    return table


def play_cardbattle(client: httpx.Client) -> Table:
    """掲示板進行カードゲーム with both decks sealed and revealed: the magic cards are secret."""
    table = new_table(client, "cardbattle", 2)
    for user in table.players:
        # A magic card of the player's own collection (docs/cards.md "Collections").
        held = client.get(f"/api/cards/collections/{user.name}").json()["cards"]
        magic = next(card["name"] for card in held if card["kind"] == "magic")
        for deck in table.legal(user)["sealed"]:  # three normal cards: add a magic card
            answer = user.post(f"/api/games/{table.id}/sealed", {"body": f"{deck} MAGIC {magic}"})
            if answer.json()["sealed"]["ok"]:
                break
        else:
            pytest.fail(f"no deck with {magic} could be sealed")
    assert table.view()["phase"] != "deck"
    return table


PLAY = {
    "eitsuku": play_eitsuku,
    "eleusis": play_eleusis,
    "populous": play_populous,
    "idolwp": play_idolwp,
    "cardbattle": play_cardbattle,
}


@pytest.fixture(scope="module")
def http(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def tables(http: httpx.Client) -> dict[str, Table]:
    return {kind: PLAY[kind](http) for kind in KINDS}


@pytest.fixture(scope="module")
def long_thread(http: httpx.Client) -> int:
    author = api_user(http)
    made = author.post(
        "/api/boards/chat/threads", {"title": LONG_TITLE, "body": f"長い行:\n{LONG_WORD}"}
    )
    assert made.status_code == 201, made.text
    thread_id: int = made.json()["id"]
    return thread_id


class Phone:
    """A phone's browser context (ja-JP); any console or page error is kept."""

    def __init__(self, browser: Browser, live_server: LiveServer) -> None:
        self.context: BrowserContext = browser.new_context(
            base_url=live_server.url, locale="ja-JP", viewport=PHONE, device_scale_factor=2
        )
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on(
            "console",
            lambda msg: self.errors.append(msg.text) if msg.type == "error" else None,
        )

    def log_in(self, name: str) -> None:
        page = self.page
        page.goto("/login")
        page.fill("input[name=name]", name)
        page.fill("input[name=password]", "password123")
        page.click("form.auth-form button[type=submit]")
        expect(page.locator(".whoami")).to_have_text(f"{name} さん")


@pytest.fixture
def phone(browser: Browser, live_server: LiveServer) -> Iterator[Phone]:
    opened = Phone(browser, live_server)
    yield opened
    opened.context.close()
    assert opened.errors == [], f"JavaScript, CSP or loading errors in the page: {opened.errors}"


def fits(page: Page, url: str) -> None:
    """The page at url, every <details> opened, neither scrolls sideways nor breaks a header
    link inside a word."""
    answer = page.goto(url)
    assert answer is not None and answer.ok, url
    page.evaluate(OPEN_BOARDS)
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= PHONE["width"], f"{url} scrolls sideways: {page.evaluate(OVERFLOWING)}"
    broken = page.evaluate(BROKEN_NAV_ITEMS)
    assert broken == [], f"{url}: header items broken over lines: {broken}"


def test_no_page_scrolls_sideways_and_no_header_link_breaks_on_a_phone(
    phone: Phone, tables: dict[str, Table], long_thread: int
) -> None:
    eleusis = tables["eleusis"]
    rule_hash = eleusis.view()["rule_hash"]
    pages = [
        "/",
        "/boards/chat",
        f"/threads/{long_thread}",
        "/games",
        *(f"/games/{table.id}" for table in tables.values()),
        *(f"/threads/{table.thread_id}" for table in tables.values()),
        "/archive",
        f"/games/{eleusis.id}/replay",
        "/cards",
        "/login",
        "/register",
    ]
    for url in pages:
        fits(phone.page, url)
    # The sealed rule's SHA-256 is shown, whole, on the game page.
    phone.page.goto(f"/games/{eleusis.id}")
    phone.page.evaluate(OPEN_BOARDS)
    expect(phone.page.locator("code.eleusis-hash").first).to_have_text(rule_hash)
    # Logged in: the header holds more (お知らせ, the name, ログアウト).
    phone.log_in(eleusis.players[1].name)
    for url in ("/", "/notifications", f"/games/{eleusis.id}", f"/threads/{long_thread}"):
        fits(phone.page, url)


def test_the_log_replay_new_game_and_search_pages_fit_a_phone(
    phone: Phone, tables: dict[str, Table], long_thread: int
) -> None:
    """The pages a game links to besides its own — its progress log (a wide table of the GM's
    operations), its replay — for every kind, the new game form and search results (a game's
    thread, a long word in a post) neither scroll sideways nor break a header link."""
    pages = [
        *(f"/games/{table.id}/log" for table in tables.values()),
        *(f"/games/{table.id}/replay" for table in tables.values()),
        *(f"/games/{table.id}/replay?at=1" for table in tables.values()),
        "/games/new",
        *(f"/games/new?kind={kind}" for kind in KINDS),
    ]
    for url in pages:
        fits(phone.page, url)
    # Searches that find the game threads' titles and posts, and the long word's post.
    for query in ("スマホの", LONG_WORD[:40], LONG_TITLE[:4]):
        fits(phone.page, f"/search?q={query}")
        expect(phone.page.locator(".search-hit, .search-threads li").first).to_be_attached()
    phone.log_in(tables["eleusis"].gm.name)  # the GM: the log lists their operations
    for url in (f"/games/{tables['eleusis'].id}/log", "/games/new"):
        fits(phone.page, url)


def in_view(page: Page, selector: str) -> bool:
    """The element's top is on screen, below the sticky switch (not hidden under it)."""
    found: bool = page.evaluate(
        """(selector) => {
          const box = document.querySelector(selector).getBoundingClientRect();
          const bar = document.querySelector('.game-jump').getBoundingClientRect();
          return box.top >= bar.bottom - 1 && box.top < window.innerHeight;
        }""",
        selector,
    )
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_a_sticky_switch_reaches_the_board_the_commands_and_the_own_hand(
    phone: Phone, tables: dict[str, Table], kind: str
) -> None:
    table = tables[kind]
    page = phone.page
    player = table.players[1]
    phone.log_in(player.name)
    page.goto(f"/games/{table.id}")
    switch = page.locator("nav.game-jump")
    expect(switch).to_be_visible()
    targets = {link.get_attribute("href") for link in switch.locator("a").all()}
    assert {"#board", "#panel", "#own", "#reply"} <= targets, targets
    for target in ("#board", "#panel", "#own", "#board"):
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        expect(switch).to_be_in_viewport()
        box = switch.bounding_box()
        assert box is not None and box["y"] >= -0.5 and box["y"] < 80, box
        switch.locator(f"a[href='{target}']").click()
        page.wait_for_function("(target) => location.hash === target", arg=target, timeout=5_000)
        assert in_view(page, target), f"{kind}: {target} is not in view after the switch"
    # The switch's links stay whole (no word split over lines) and the bar does not scroll
    # the page sideways.
    lines = [link.evaluate(LINES) for link in switch.locator("a").all()]
    assert lines == [1] * len(lines), lines
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def player_hand(table: Table, player: ApiUser) -> list[str]:
    """What the player holds that the own section must show (えいつく: the open stock)."""
    mine = table.view(player)
    seat = table.players.index(player)
    if table.kind == "eleusis":
        cards: list[str] = mine["hand"]
    elif table.kind == "eitsuku":
        cards = list(mine["players"][seat]["stock"])
    elif table.kind == "cardbattle":
        cards = mine["players"][seat]["magic"]
    else:
        cards = mine["players"][seat]["hand"]
    return cards


def the_board_once(page: Page, kind: str) -> None:
    """One picture (the posts' own dated pictures aside) and one text board, in #board; the
    own section holds no board and the public one no hand."""
    page.evaluate(OPEN_BOARDS)
    expect(page.locator("figure.board-picture:not(.board-in-post)")).to_have_count(1)
    expect(page.locator(f"section.{kind}-board")).to_have_count(1)
    expect(page.locator(f"#board section.{kind}-board")).to_have_count(1)
    expect(page.locator("#own")).to_have_count(1)
    expect(page.locator(f"#own section.{kind}-board")).to_have_count(0)
    expect(page.locator(f"#board {OWN_HAND[kind]}")).to_have_count(0)


@pytest.mark.parametrize("kind", KINDS)
def test_the_board_is_drawn_once_and_the_own_section_holds_the_hand(
    phone: Phone, tables: dict[str, Table], kind: str
) -> None:
    table = tables[kind]
    player = table.players[1]
    phone.log_in(player.name)
    phone.page.goto(f"/games/{table.id}")
    the_board_once(phone.page, kind)
    hand = phone.page.locator(f"#own {OWN_HAND[kind]}")
    expect(hand).to_have_count(1)
    cards = player_hand(table, player)
    assert cards, f"{kind}: the player holds nothing to show"
    text = hand.inner_text()
    for card in cards:
        assert card in text, f"{kind}: {card} is not in the own section: {text}"


@pytest.mark.parametrize("kind", KINDS)
def test_the_gm_too_sees_the_board_once(phone: Phone, tables: dict[str, Table], kind: str) -> None:
    table = tables[kind]
    phone.log_in(table.gm.name)
    phone.page.goto(f"/games/{table.id}")
    expect(phone.page.locator("#own h2")).to_have_text("GM の視点")
    the_board_once(phone.page, kind)
    if kind != "eitsuku":  # every seat's secret (えいつく has none); a parent holds no cards
        seats = [
            player for player in table.players if kind != "eleusis" or player_hand(table, player)
        ]
        expect(phone.page.locator(f"#own {OWN_HAND[kind]}")).to_have_count(len(seats))


# --------------------------------------------------------------------------- one turn in reach
# Issue #43: the lines legal now beside the post form (the turn dock, sticky at the bottom of
# a phone's screen), multi-part moves built by tapping their parts, each built line accepted
# through the real post path.

DOCK = "#turn"
REPLY_BODY = "#reply textarea[name=body]"
REPLY_SUBMIT = "#reply button[type=submit]:not(.secondary)"
SEALED_BODY = "#sealed textarea[name=body]"


def moves(table: Table) -> list[str]:
    found = table.gm.client.get(f"/api/games/{table.id}/moves").json()
    return [move["command"] for move in found]


def on_screen(page: Page, selector: str) -> bool:
    """The whole element is inside the viewport (not scrolled off, not under the bar)."""
    inside: bool = page.evaluate(
        """(selector) => {
          const box = document.querySelector(selector).getBoundingClientRect();
          return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight + 0.5;
        }""",
        selector,
    )
    return inside


def above_the_dock(page: Page, index: int) -> None:
    """Scroll as a thumb does: the index-th legal button just above the dock (which stays at
    the bottom of the screen); it must then be on screen and not under the dock or the bar."""
    page.evaluate(
        """(index) => {
          const button = document.querySelectorAll('#panel button.fill-command')[index];
          const dock = document.querySelector('#turn').getBoundingClientRect();
          window.scrollBy(0, button.getBoundingClientRect().bottom - dock.top + 8);
        }""",
        index,
    )
    uncovered = page.evaluate(
        """(index) => {
          const button = document.querySelectorAll('#panel button.fill-command')[index];
          const box = button.getBoundingClientRect();
          const hit = document.elementFromPoint(box.left + 2, box.top + box.height / 2);
          return hit !== null && hit.closest('button.fill-command') === button;
        }""",
        index,
    )
    assert uncovered, f"legal button {index} is under the dock or the switch"


def test_a_legal_line_and_the_post_form_share_one_screen_and_a_tap_does_not_jump(
    phone: Phone, http: httpx.Client
) -> None:
    """R (issue #43) the lines legal now next to the post form: with a legal button on screen
    the form is on the same screen; a tap puts the line in the form without scrolling the page,
    and a second tap adds a second line."""
    table = new_table(http, "eitsuku", 2)
    player = max(table.players, key=lambda user: len(table.legal(user)["commands"]))
    lines = table.legal(player)["commands"]
    assert len(lines) >= 2, lines
    page = phone.page
    phone.log_in(player.name)
    page.goto(f"/games/{table.id}")
    first = page.locator("#panel button.fill-command").first
    above_the_dock(page, 0)
    assert on_screen(page, "#panel button.fill-command"), "the legal button is not on screen"
    assert on_screen(page, REPLY_BODY), "the post form is not on the legal button's screen"
    before = page.evaluate("window.scrollY")
    first.click()
    line = first.get_attribute("data-line")
    expect(page.locator(REPLY_BODY)).to_have_value(str(line))
    expect(page.locator(f"{DOCK} .dock-status")).to_contain_text(str(line))
    assert abs(page.evaluate("window.scrollY") - before) < 2, "the tap scrolled the page"
    second = page.locator("#panel button.fill-command").nth(1)
    above_the_dock(page, 1)
    second.click()
    expect(page.locator(REPLY_BODY)).to_have_value(f"{line}\n{second.get_attribute('data-line')}")
    page.screenshot(path="/tmp/phone-dock.png")
    # The dock folds: closed, only its heading stays at the bottom.
    folds = page.locator("#turn details[open] > summary")
    for left in range(folds.count(), 0, -1):
        folds.first.click()
        expect(folds).to_have_count(left - 1)
    expect(page.locator(REPLY_BODY)).to_be_hidden()
    expect(page.locator(f"{DOCK} .builder:visible")).to_have_count(0)
    box = page.locator(DOCK).bounding_box()
    assert box is not None and box["height"] < 200, box


def cubes_table(http: httpx.Client) -> Table:
    """ポピュラス at its cube split (every split a sealed line)."""
    table = new_table(http, "populous", 3)
    while (view := table.view())["phase"] == "race":
        user = table.by_name(view["waiting_for"][0])
        table.post(user, table.legal(user)["commands"][0])
    while table.view()["phase"] == "draft":
        for user in table.players:
            sealed = table.legal(user)["sealed"]
            if sealed:
                table.seal(user, sealed[0])
    assert table.view()["phase"] == "cubes"
    return table


def test_the_cube_split_is_three_steppers_that_offer_only_legal_splits_and_send_one(
    phone: Phone, http: httpx.Client
) -> None:
    """R the cube split as three steppers (sum shown); a split that is not a legal line cannot
    be added; the built line is a legal one and the game accepts it sealed."""
    table = cubes_table(http)
    player = table.players[0]
    legal = set(table.legal(player)["sealed"])
    page = phone.page
    phone.log_in(player.name)
    page.goto(f"/games/{table.id}")
    builder = page.locator(".builder-stepper")
    expect(builder).to_be_visible()
    expect(builder.locator(".stepper")).to_have_count(3)
    assert on_screen(page, ".builder-stepper .builder-add"), "the stepper is not on screen"
    steps = builder.locator(".stepper")
    # Up on the first label until the split is no longer legal (the other two fixed).
    start = builder.locator(".builder-line").inner_text()
    assert start in legal, start
    for _ in range(8):
        if steps.nth(0).locator(".step-up").is_disabled():
            break
        steps.nth(0).locator(".step-up").click()
        shown = builder.locator(".builder-line").inner_text()
        if not shown:
            expect(builder.locator(".builder-add")).to_be_disabled()
            expect(builder.locator(".builder-illegal")).to_be_visible()
            break
        assert shown in legal, shown
    else:
        pytest.fail("the first stepper never reached an illegal split")
    # Back one and take a unit from the second: a legal split, its sum shown.
    steps.nth(0).locator(".step-down").click()
    expect(builder.locator(".builder-add")).to_be_enabled()
    line = builder.locator(".builder-line").inner_text()
    values = [int(v) for v in line.split()[2::2]]
    expect(builder.locator(".step-sum")).to_have_text(str(sum(values)))
    builder.locator(".builder-add").click()
    expect(page.locator(SEALED_BODY)).to_have_value(line)
    page.click("#sealed button[type=submit]")
    expect(page.locator(".sealed-list pre.preview-reply").last).to_be_visible()
    expect(page.locator(".sealed-list pre.preview-reply.failed")).to_have_count(0)
    expect(page.locator(".sealed-list li").last.locator("pre").first).to_have_text(line)


def test_an_eleusis_play_of_several_cards_is_built_by_tapping_them_in_order(
    phone: Phone, http: httpx.Client
) -> None:
    """R a child plays 1–4 cards in one PLAY: tapped in order (a tapped card again: taken back),
    at most as many as a line may hold, the line posted and accepted."""
    table = new_table(http, "eleusis", 4)
    parent = table.players[0]
    table.seal(parent, f"RULE {RULE}")
    child = table.by_name(table.view()["waiting_for"][0])
    hand = table.view(child)["hand"]
    page = phone.page
    phone.log_in(child.name)
    page.goto(f"/games/{table.id}")
    builder = page.locator(".builder-cards")
    expect(builder).to_be_visible()
    chips = builder.locator(".card-chip")
    expect(chips).to_have_count(len(hand))
    most = int(str(builder.get_attribute("data-most")))
    assert most == 4
    for i in range(most):
        chips.nth(i).click()
    expect(chips.nth(most)).to_be_disabled()  # no fifth card
    chips.nth(1).click()  # taken back
    expect(chips.nth(most)).to_be_enabled()
    expect(chips.nth(1)).to_have_attribute("aria-pressed", "false")
    builder.locator(".builder-mark input[value='●']").check()
    chosen = [hand[0], hand[2], hand[3]]
    expect(builder.locator(".builder-line")).to_have_text(f"PLAY ● {' '.join(chosen)}")
    builder.locator(".builder-add").click()
    expect(page.locator(REPLY_BODY)).to_have_value(f"PLAY ● {' '.join(chosen)}")
    page.screenshot(path="/tmp/phone-eleusis.png")
    done = len(moves(table))
    page.click(REPLY_SUBMIT)
    page.wait_for_url(f"**/games/{table.id}*")
    played = moves(table)[done:]
    assert played and played[0].split()[:2] == ["PLAY", "●"], played
    assert len(played[0].split()) == 2 + len(chosen), played


def test_a_populous_turn_is_built_step_by_step_into_one_post_the_game_takes_whole(
    phone: Phone, http: httpx.Client
) -> None:
    """R a turn is sequential (area, wrath, placement, hand play, moves, end): the builder
    offers each step's lines legal after the ones chosen, and the one post holding them all is
    applied whole, in that order."""
    table = cubes_table(http)
    for user in table.players:
        table.seal(user, "CUBES 情熱 2 食料 3 信仰 2")
    player = table.by_name(table.view()["waiting_for"][0])
    page = phone.page
    phone.log_in(player.name)
    page.goto(f"/games/{table.id}")
    builder = page.locator(".builder-chain")
    expect(builder).to_be_visible()
    chosen: list[str] = []
    for _ in range(CHAIN_STEPS):
        buttons = builder.locator(".chain-next button.chain-line")
        if buttons.count() == 0:
            break
        # END last: every other step first, the first line of each.
        lines = [str(b.get_attribute("data-line")) for b in buttons.all()]
        pick = next((line for line in lines if line != "END"), "END")
        builder.locator(f".chain-next button.chain-line[data-line='{pick}']").click()
        chosen.append(pick)
        expect(builder.locator(".chain-chosen li")).to_have_count(len(chosen))
        expect(builder).to_have_attribute("data-steps", str(len(chosen)))
    assert len(chosen) >= 3, chosen
    expect(builder.locator(".chain-done")).to_be_visible()
    expect(page.locator(REPLY_BODY)).to_have_value("\n".join(chosen))
    page.screenshot(path="/tmp/phone-populous.png")
    done = len(moves(table))
    page.click(REPLY_SUBMIT)
    page.wait_for_url(f"**/games/{table.id}*")
    assert moves(table)[done:] == chosen


CHAIN_STEPS = 12


def test_the_turn_steps_fragment_answers_only_a_seated_player_and_refuses_an_illegal_line(
    phone: Phone, http: httpx.Client
) -> None:
    """Hidden information: the look-ahead answers only a player of the game; a line that is
    not legal now gets 422 and no lines."""
    table = cubes_table(http)
    for user in table.players:
        table.seal(user, "CUBES 情熱 2 食料 3 信仰 2")
    player = table.by_name(table.view()["waiting_for"][0])
    url = f"/games/{table.id}/turn"
    assert http.get(url).status_code == 403  # nobody logged in
    phone.log_in(player.name)
    bad = phone.page.request.get(url, params={"line": "END END"})
    assert bad.status == 422 and "chain-line" not in bad.text()
    first = table.legal(player)["commands"][0]
    good = phone.page.request.get(url, params={"line": first})
    assert good.status == 200 and "chain-line" in good.text(), good.text()


NO_SIDEWAYS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"


def test_the_archive_and_the_replay_fit_a_phone_and_the_replay_marks_are_drawn(
    phone: Phone, tables: dict[str, Table]
) -> None:
    """R (issue #43) the archive list and the replay readable at 390 px: no sideways scroll; the
    replay's controls drawn as pictures (no ⏮ ⏭ a phone font lacks), each frame saying what
    the move did (its public events, the GM's reply); in English too."""
    table = tables["eitsuku"]
    page = phone.page
    for url in ("/archive", "/archive?lang=en", f"/games/{table.id}/replay?at=1"):
        page.goto(url)
        assert page.evaluate(NO_SIDEWAYS), f"{url}: {page.evaluate(OVERFLOWING)}"
    nav = page.locator(".replay-nav")
    text = nav.inner_text()
    assert not set("⏮⏭") & set(text), text
    icons = nav.locator("svg.replay-icon")
    expect(icons).to_have_count(4)
    for icon in icons.all():
        box = icon.bounding_box()
        assert box is not None and box["width"] >= 8 and box["height"] >= 8, box
    expect(page.locator(".replay-happened").first).to_be_visible()
    expect(page.locator(".replay-reply").first).not_to_be_empty()
    # The move's public events, as the export lists them.
    record = table.gm.client.get(f"/api/games/{table.id}/export").json()
    events = next(move for move in record["moves"] if not move["undone"])["events"]
    assert events, record["moves"][0]
    expect(page.locator(".replay-events li")).to_have_text(events)
    page.screenshot(path="/tmp/phone-replay.png", full_page=False)
    page.goto(f"/games/{table.id}/replay?at=1&lang=en")
    assert page.evaluate(NO_SIDEWAYS)
    expect(page.locator(".replay-nav .replay-next")).to_contain_text("Next move")
    expect(page.locator(".replay-happened h3").first).to_contain_text("What")


def test_the_transcript_is_the_export_as_text_with_sealed_moves_still_hidden(
    http: httpx.Client, tables: dict[str, Table]
) -> None:
    """docs/export.md, "Transcript": every move of the export, its events and the thread's
    posts as plain text; what the JSON hides before the end (a sealed move, the seed) the text
    hides too."""
    table = tables["populous"]
    record = http.get(f"/api/games/{table.id}/export").json()
    answer = http.get(f"/games/{table.id}/transcript.txt")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    text = answer.text
    for move in record["moves"]:
        assert f"{move['seq']}. {move['actor']}: {move['command']}" in text
    assert any(move["sealed"] for move in record["moves"])
    assert "CUBES 情熱 2 食料 3 信仰 2" not in text  # sealed splits stay （封印） until the end
    assert "（終局後に公開）" in text
    for post in record["thread"]["posts"]:
        assert f"{post['number']} {post['author']}" in text


def test_the_dock_and_its_builders_speak_english(phone: Phone, http: httpx.Client) -> None:
    """Every page and message in Japanese and English: the turn dock and its builders."""
    table = cubes_table(http)
    phone.log_in(table.players[0].name)
    phone.page.goto(f"/games/{table.id}?lang=en")
    expect(phone.page.locator(".builder-stepper legend")).to_contain_text("Build CUBES by numbers")
    expect(phone.page.locator(".builder-stepper .builder-add")).to_have_text("Add this line")
    phone.page.locator(".builder-stepper .builder-add").click()
    expect(phone.page.locator("#turn .dock-status")).to_contain_text("Added to the post form:")


def test_an_imas_memory_conversion_is_three_steppers_whose_sum_must_be_legal(
    phone: Phone, http: httpx.Client
) -> None:
    """R a memory chip turns into 3 ability chips of the player's choice (`CONVERT MEMORY Vo Vo
    Da`): Vo/Da/Vi steppers with their sum shown; a mix that is not three chips cannot be
    added; the one added is posted and applied."""
    table = new_table(http, "idolwp", 2)
    while (view := table.view())["phase"] == "draft":
        user = table.by_name(view["waiting_for"][0])
        picks = table.legal(user)["commands"]
        memory = [line for line in picks if line in ("PICK 春香", "PICK 雪歩")]
        table.post(user, (memory or picks)[0])
    for _ in range(6):
        user = table.by_name(table.view()["waiting_for"][0])
        lines = table.legal(user)["commands"]
        if any(line.startswith("CONVERT MEMORY ") for line in lines):
            break
        table.post(user, next(line for line in lines if line.startswith("MOVE ")))
    else:
        pytest.fail("nobody with a memory chip came to play")
    page = phone.page
    phone.log_in(user.name)
    page.goto(f"/games/{table.id}")
    builder = page.locator(".builder-stepper", has_text="CONVERT MEMORY")
    expect(builder).to_be_visible()
    steps = builder.locator(".stepper")
    expect(steps).to_have_count(3)
    assert [s.locator(".stepper-label").inner_text() for s in steps.all()] == ["Vo", "Da", "Vi"]
    expect(builder.locator(".step-sum")).to_have_text("3")
    steps.nth(0).locator(".step-up").click()
    expect(builder.locator(".step-sum")).to_have_text("4")
    expect(builder.locator(".builder-add")).to_be_disabled()
    expect(builder.locator(".builder-illegal")).to_be_visible()
    steps.nth(1).locator(".step-down").click()
    expect(builder.locator(".builder-add")).to_be_enabled()
    line = builder.locator(".builder-line").inner_text()
    assert line in lines and line.split()[2:].count("Vo") == 2, line
    builder.locator(".builder-add").click()
    expect(page.locator(REPLY_BODY)).to_have_value(line)
    done = len(moves(table))
    page.click(REPLY_SUBMIT)
    page.wait_for_url(f"**/games/{table.id}*")
    assert moves(table)[done:] == [line]


def test_the_builders_follow_the_turn_when_the_panel_refreshes_live(
    phone: Phone, http: httpx.Client
) -> None:
    """A builder never offers the lines of an old state: when the bot's reply refreshes the
    panel, the dock's builders are rebuilt for the lines legal now (here: the turn passes to
    this player, who had none)."""
    table = cubes_table(http)
    for user in table.players:
        table.seal(user, "CUBES 情熱 2 食料 3 信仰 2")
    active = table.by_name(table.view()["waiting_for"][0])
    following = table.players[(table.players.index(active) + 1) % len(table.players)]
    page = phone.page
    phone.log_in(following.name)
    page.goto(f"/games/{table.id}")
    expect(page.locator(".builder-chain")).to_have_count(0)
    table.post(active, "END")
    assert table.view()["waiting_for"] == [following.name]
    chain = page.locator(".builder-chain")
    expect(chain).to_be_visible(timeout=20_000)
    first = table.legal(following)["commands"]
    buttons = chain.locator(".chain-next button.chain-line")
    assert [b.get_attribute("data-line") for b in buttons.all()] == first


def test_a_folded_dock_stays_folded_on_the_next_page_and_open_once_unfolded(
    phone: Phone, http: httpx.Client
) -> None:
    """R (issue #43) the dock's folded state is remembered: a player who folds the post form
    finds it folded when the game page loads again (on this device), and open again once
    unfolded."""
    table = new_table(http, "eitsuku", 2)
    player = max(table.players, key=lambda user: len(table.legal(user)["commands"]))
    page = phone.page
    phone.log_in(player.name)
    page.goto(f"/games/{table.id}")
    expect(page.locator("#reply")).to_have_attribute("open", "")
    page.locator("#reply > summary").click()
    expect(page.locator(REPLY_BODY)).to_be_hidden()
    page.reload()
    expect(page.locator("#reply > summary")).to_be_visible()
    expect(page.locator(REPLY_BODY)).to_be_hidden()
    page.locator("#reply > summary").click()
    expect(page.locator(REPLY_BODY)).to_be_visible()
    page.reload()
    expect(page.locator(REPLY_BODY)).to_be_visible()


@pytest.mark.parametrize("kind", KINDS)
def test_a_board_picture_in_a_post_takes_at_most_half_the_screen_and_opens_whole(
    phone: Phone, tables: dict[str, Table], kind: str
) -> None:
    """A round's post carries the board picture (930–1,360 px tall at 390 px, a newcomer's
    round posts four screens long): in a post on a phone it is at most half the screen high,
    and a tap opens the whole picture."""
    page = phone.page
    page.goto(f"/threads/{tables[kind].thread_id}")
    figure = page.locator("figure.board-in-post").first
    figure.scroll_into_view_if_needed()
    img = figure.locator("a.board-zoom img")
    page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 0", arg=img.element_handle()
    )
    box = img.bounding_box()
    assert box is not None and 0 < box["height"] <= PHONE["height"] / 2, box
    href = figure.locator("a.board-zoom").get_attribute("href") or ""
    assert re.fullmatch(rf"/api/games/{tables[kind].id}/board\.svg\?at=\d+", href), href
    expect(figure.locator(".board-zoom-hint")).to_be_visible()
