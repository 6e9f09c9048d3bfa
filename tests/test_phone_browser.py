"""The site on a phone (390x844, ja-JP) in Chromium (Debian's, driven by Playwright): no page
scrolls sideways (a long line in a post or a title, a sealed rule's SHA-256, wide tables), the
header's links never break inside a word, and a game page has a sticky switch to its board, its
commands and the player's own hand. And the board is drawn once per game page: the public
board (the picture and its text), then the player's own section with only what the public one
lacks (their hand, their secret), never a second full board — for a seated player of each kind.

The games are made and played into a state with something private over the JSON API."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

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
    made = gm.post("/api/games", {"kind": kind, "title": f"スマホの{kind}卓", "options": {}})
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
