"""Hostile markup (tests/data/xss.txt, one vector a line) in posts, thread and game titles,
account names and command arguments, read in Chromium: nothing executes and everything shows
as text.

Every page is read twice: once as served (with its Content-Security-Policy) and once with the
CSP bypassed, so that the escaping alone is what is proven — an injected handler would run
there. Execution is caught three ways: `window.alert`/`confirm`/`prompt` replaced by a counter
and the `dialog` event, the `window.__xss` flag that the vectors set, and the console. The DOM
is checked too (no element with an on… attribute, nothing but links and line breaks inside a
post body, no javascript: link), and the page's visible text must contain every vector.
Requests that would leave 127.0.0.1 are aborted and fail the test.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page, Route

from app import accounts
from app.db import Database
from app.errors import Invalid
from app.forum.service import clean_title
from app.games.base import normalise
from app.models import User
from tests.conftest import ApiUser, LiveServer
from tests.test_load_support import fast_users, password_hash

CHROMIUM = "/usr/bin/chromium"
VECTORS = [
    line
    for line in (Path(__file__).parent / "data" / "xss.txt").read_text("utf-8").splitlines()
    if line.strip()
]

pytestmark = pytest.mark.browser

if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is missing (.ci/test installs it)", allow_module_level=True)

INIT = """
window.__xss = 0;
window.alert = window.confirm = window.prompt = function () { window.__xss += 1; };
"""
DOM_CHECK = """
() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
      if (attr.name.toLowerCase().startsWith('on')) bad.push(el.tagName + ' ' + attr.name);
    }
  }
  for (const text of document.querySelectorAll('.post-body, .post-name, pre, h1')) {
    for (const el of text.querySelectorAll('*')) {
      if (!['A', 'BR'].includes(el.tagName) && !el.matches('h1 > span.count')) {
        bad.push('in text: ' + el.tagName);
      }
    }
  }
  for (const a of document.querySelectorAll('a[href]')) {
    const href = a.getAttribute('href');
    if (!/^(\\/|#|\\?|https?:\\/\\/)/.test(href)) bad.push('link ' + href);
  }
  for (const tag of ['IFRAME', 'OBJECT', 'EMBED', 'MATH', 'BASE', 'MARQUEE', 'X']) {
    if (document.getElementsByTagName(tag).length) bad.push('element ' + tag);
  }
  return bad;
}
"""


def flat(text: str) -> str:
    return " ".join(text.split())


@dataclass
class Board:
    """Where the vectors were put, and what each page must show."""

    pages: dict[str, list[str]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    anywhere: list[str] = field(default_factory=list)  # on one of the pages at least
    game_page: str = ""


def valid_name(vector: str) -> str | None:
    try:
        return accounts.validate_name(vector)
    except Invalid:
        return None


@pytest.fixture(scope="module")
def board(live_server: LiveServer, database: Database) -> Board:
    made = Board()
    with httpx.Client(base_url=live_server.url, timeout=60) as web:
        gm, player, rival = fast_users(database, 3, web, prefix="xss")
        titles = [v for v in VECTORS if _title_ok(v)]
        assert len(titles) >= 50
        # Thread titles (the board lists them), and one thread holding every vector as a post.
        for vector in titles:
            made_thread = gm.post("/api/boards/lobby/threads", {"title": vector, "body": "x"})
            assert made_thread.status_code == 201, made_thread.text
        talk = gm.post("/api/boards/chat/threads", {"title": "xss", "body": "はじめ"}).json()
        for vector in VECTORS:
            sent = player.post(f"/api/threads/{talk['id']}/posts", {"body": vector})
            assert sent.status_code == 201, sent.text
        # Account names: the vectors that are valid names post in the thread.
        named = [n for n in (valid_name(v) for v in VECTORS) if n is not None]
        assert len(named) >= 4, named
        with database.session() as session:
            users = [User(name=n, password_hash=password_hash()) for n in named]
            session.add_all(users)
            session.flush()
            tokens = [accounts.issue_token(session, u, "api") for u in users]
            session.commit()
        for name, token in zip(named, tokens, strict=True):
            ApiUser(web, name, token).post(f"/api/threads/{talk['id']}/posts", {"body": name})
        made.names = named
        # Game titles, and command arguments the bot quotes back in its replies.
        games = [gm.post("/api/games", {"kind": "eitsuku", "title": t}).json() for t in titles]
        game = games[-1]
        for person in (player, rival):
            person.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
        gm.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"})
        quoted = []
        for vector in VECTORS:
            line = f"SET 主演 {vector}"
            reply = player.post(f"/api/threads/{game['thread_id']}/posts", {"body": line})
            answer = reply.json()["replies"][0]
            assert answer["ok"] is False and normalise(line) in answer["body"]
            quoted.append(normalise(line))
        kick = gm.post(f"/api/threads/{game['thread_id']}/posts", {"body": f"KICK {named[0]}"})
        assert kick.status_code == 201
        # The last post anchors the first vector post, off the game page: its hover preview
        # comes from the JSON API and is built by app.js.
        player.post(f"/api/threads/{game['thread_id']}/posts", {"body": ">>8 ほら"})

        shown = [flat(clean_title(t)) for t in titles]
        made.game_page = f"/games/{game['id']}"
        made.pages = {
            "/boards/lobby?page=1": shown[-30:],
            "/boards/lobby?page=2": shown[-60:-30],
            "/boards/lobby?page=3": shown[:-60],
            f"/threads/{talk['id']}": [*VECTORS, *named],
            "/games?page=1": shown[-30:],
            "/games?page=2": shown[-60:-30],
            "/games?page=3": shown[:-60],
            f"/threads/{game['thread_id']}?page=1": [],
            f"/threads/{game['thread_id']}?page=2": [],
            made.game_page: [shown[-1], quoted[-1], *named[:1]],
            f"/games/{game['id']}/log": [shown[-1]],
        }
        made.anywhere = quoted
    return made


def _title_ok(vector: str) -> bool:
    try:
        clean_title(vector)
    except Invalid:
        return False
    return True


@dataclass
class Watch:
    dialogs: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)


def open_page(browser: Browser, live_server: LiveServer, bypass_csp: bool) -> tuple[Page, Watch]:
    context = browser.new_context(base_url=live_server.url, bypass_csp=bypass_csp)
    context.add_init_script(INIT)
    watch = Watch()
    loopback = urlsplit(live_server.url).hostname

    def only_loopback(route: Route) -> None:
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "about:")) or host == loopback:
            route.continue_()
        else:
            watch.escaped.append(route.request.url)
            route.abort()

    context.route("**/*", only_loopback)
    page = context.new_page()
    page.on("dialog", lambda dialog: (watch.dialogs.append(dialog.message), dialog.dismiss()))
    page.on("console", lambda message: watch.console.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: watch.console.append(f"pageerror: {error}"))
    return page, watch


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["as served", "csp bypassed"])
def test_nothing_executes_and_everything_shows_as_text(
    browser: Browser, live_server: LiveServer, board: Board, bypass_csp: bool
) -> None:
    page, watch = open_page(browser, live_server, bypass_csp)
    try:
        seen = []
        for path, wanted in board.pages.items():
            page.goto(path)
            page.wait_for_load_state("load")
            assert page.evaluate("window.__xss") == 0, path
            assert page.evaluate(DOM_CHECK) == [], path
            text = flat(page.inner_text("body"))
            missing = [w for w in wanted if flat(w) not in text]
            assert missing == [], f"{path}: shown differently: {missing[:3]}"
            seen.append(text)
        everything = "\n".join(seen)
        assert [w for w in board.anywhere if flat(w) not in everything] == []
        assert watch.dialogs == []
        assert watch.escaped == []
        assert [
            m for m in watch.console if "xss" in m.lower() or "security policy" in m.lower()
        ] == []
        assert [m for m in watch.console if m.startswith(("error", "pageerror"))] == []
    finally:
        page.context.close()


def test_the_anchor_preview_from_the_api_is_text(
    browser: Browser, live_server: LiveServer, board: Board
) -> None:
    page, watch = open_page(browser, live_server, bypass_csp=True)
    try:
        page.goto(board.game_page)
        anchor = page.locator("a.anchor").last
        anchor.hover()
        preview = page.locator(".anchor-preview")
        preview.wait_for(state="visible", timeout=10_000)
        assert "SET 主演 <script>window.__xss=1</script>" in preview.inner_text()
        assert preview.locator("script, img, svg").count() == 0
        assert page.evaluate("window.__xss") == 0 and watch.dialogs == []
    finally:
        page.context.close()


def test_the_corpus_is_large_and_varied() -> None:
    assert len(VECTORS) >= 50 and len(set(VECTORS)) == len(VECTORS)
    assert sum("onerror" in v.lower() for v in VECTORS) >= 10
    assert any("javascript:" in v for v in VECTORS) and any("<script" in v for v in VECTORS)
