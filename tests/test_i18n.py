"""The English UI beside Japanese (docs/i18n.md): the catalog is complete, English pages carry no
Japanese outside user content and game terms, Japanese is the default, and the switch."""

from __future__ import annotations

import ast
import asyncio
import os
import re
import threading
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import uvicorn
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po

from app import i18n
from app.archive import listing
from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.games import all_games, find_game
from app.gm.service import ensure_game_boards
from app.main import create_app
from app.web import messages
from app.web.templating import make_templates
from tests.conftest import (
    LiveServer,
    _create_pg_database,
    _drop_pg_database,
    _free_port,
    api_user,
    repo_root,
    unique_name,
)

# Kana, CJK ideographs, CJK punctuation (「」、。) and full-width forms (（）／).
JAPANESE = re.compile(
    r"[\u3000-\u303f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
)
PLACEHOLDER = re.compile(r"%\((\w+)\)s")
MAPPING = repo_root() / "app" / "locale" / "babel.cfg"
CATALOG = repo_root() / "app" / "locale" / "en" / "LC_MESSAGES" / "messages.po"
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


# --- the catalog -----------------------------------------------------------------------------


def extracted() -> dict[tuple[str | None, str], tuple[str, ...]]:
    """Every message of templates/ and app/, found with the documented mapping."""
    with MAPPING.open() as config:
        method_map, options_map = parse_mapping_cfg(config)
    found: dict[tuple[str | None, str], tuple[str, ...]] = {}
    for _file, _line, message, _comments, context in extract_from_dir(
        str(repo_root()), method_map, options_map
    ):
        forms = message if isinstance(message, tuple) else (message,)
        found[(context, forms[0])] = forms
    return found


@pytest.fixture(scope="module")
def catalog() -> Any:
    with CATALOG.open("rb") as source:
        return read_po(source, locale="en")


def test_the_mapping_finds_templates_python_and_board_html_but_not_summaries() -> None:
    found = extracted()
    assert len(found) > 300
    ids = {msgid for _ctx, msgid in found}
    assert "板一覧" in ids  # templates/forum/
    assert "予算の山" in ids  # templates/games/eitsuku/board.html.j2
    assert "ページが見つかりません。" in ids  # app/web/messages.py
    assert (
        "フォームの有効期限が切れたか、別のページから送信されました。もう一度送信してください。"
        in ids
    )
    assert not any("■" in msgid for msgid in ids)  # summary.txt.j2 stays out


def test_every_message_has_a_complete_english_translation(catalog: Any) -> None:
    problems = []
    for (context, msgid), forms in extracted().items():
        entry = catalog.get(msgid, context=context)
        if entry is None:
            problems.append(f"missing: {msgid!r}")
            continue
        if entry.fuzzy:
            problems.append(f"fuzzy: {msgid!r}")
        strings = entry.string if isinstance(entry.string, tuple) else (entry.string,)
        if len(forms) > 1 and len(strings) != 2:
            problems.append(f"not plural: {msgid!r}")
        wanted = set(PLACEHOLDER.findall(forms[0]))
        for text in strings:
            if not text or not text.strip():
                problems.append(f"empty: {msgid!r}")
            elif set(PLACEHOLDER.findall(text)) != wanted:
                problems.append(f"placeholders differ: {msgid!r} -> {text!r}")
            elif JAPANESE.search(text):
                problems.append(f"Japanese left in the English: {msgid!r} -> {text!r}")
            elif text.count("%") != len(PLACEHOLDER.findall(text)) + 2 * text.count("%%"):
                problems.append(f"stray %: {text!r}")
    assert not problems, "\n".join(problems)


def test_the_catalog_has_nothing_stale(catalog: Any) -> None:
    found = extracted()
    stale = [m.id for m in catalog if m.id and (m.context, _first(m.id)) not in found]
    assert not stale, f"in the catalog but no longer in the code: {stale}"


def _first(msgid: str | tuple[str, ...]) -> str:
    return msgid[0] if isinstance(msgid, tuple) else msgid


# --- English wording ---------------------------------------------------------------------------

# Nouns that English inflects. After a number that can be 1 they need the message's plural
# forms (ngettext; {% trans count=… %}…{% pluralize %}…) or a wording that puts no number
# before them ("moves applied: 3"): "1 rounds" is what the Japanese-shaped message gave.
COUNTED_NOUNS = (
    "cards|chips|characters|days|games|hours|idols|memories|minutes|moves|players|points|posts|"
    "rounds|seconds|skills|squares|threads|times|towns|turns|webhooks|weeks|words|workers"
)
COUNTED = re.compile(rf"(?:%\((\w+)\)s|(?<![\d.,–-])\b(\d+)) (?:{COUNTED_NOUNS})\b")
# Values that are never 1: limits from the settings and the code (at least 2 by construction).
NEVER_ONE = {"max", "min", "length", "high", "window"}
# Pieces joined as Japanese joins them: "Round 3of 12", "approved.Propose", "name(note)".
JOINED = (
    re.compile(r"\b\w*[a-z][A-Z]\w*\b"),  # camelCase out of two words
    re.compile(r"[A-Za-z]%\(\w+\)s|%\(\w+\)s[A-Za-z]"),  # a word glued to a value
    re.compile(r"[a-z]{2}[.!?;,][A-Za-z]|[,;][A-Za-z]"),  # no space after punctuation
    re.compile(r"\S {2,}\S"),
)
CAMEL_WORDS = {"KiB"}
FUNCTION_LIKE = re.compile(r"\bsha256\(")  # sha256(seed): notation, not a joined word


def wording_slips(text: str, counters: frozenset[str] = frozenset()) -> list[str]:
    """What reads wrong in one English message: a plural noun after a count that can be 1
    (``counters`` are the placeholders the message's own plural forms are chosen by, allowed
    in the plural form), words run together, a word glued to an opening bracket, brackets
    inside brackets."""
    slips = []
    text = re.sub(r"</?[a-z][^>]*>", "", text)  # markup: a link's address is no wording
    for match in COUNTED.finditer(text):
        name, digits = match.groups()
        if digits == "1" or (name is not None and name not in NEVER_ONE | counters):
            slips.append(f"a count that can be 1 before a plural: {match.group(0)!r}")
    for pattern in JOINED:
        slips += [
            f"run together: {m.group(0)!r}"
            for m in pattern.finditer(text)
            if m.group(0) not in CAMEL_WORDS
        ]
    shown = FUNCTION_LIKE.sub("f", PLACEHOLDER.sub("7", text))
    if re.search(r"\w\(", shown):
        slips.append(f"a word glued to its bracket: {shown!r}")
    depth = deepest = 0
    for char in shown:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        deepest = max(deepest, depth)
    if deepest > 1:
        slips.append(f"brackets inside brackets: {shown!r}")
    return slips


def test_english_wording_has_no_plural_slips_run_on_words_or_nested_brackets(
    catalog: Any,
) -> None:
    """Every English message of the catalog, checked for what translating Japanese piece by
    piece leaves: "1 rounds", "Round 3of 12", "name(note)", "((…))"."""
    problems = []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        plural = isinstance(message.id, tuple)
        for index, text in enumerate(strings):
            counters = frozenset(PLACEHOLDER.findall(text)) if plural and index > 0 else None
            for slip in wording_slips(text, counters or frozenset()):
                problems.append(f"{_first(message.id)!r} -> {text!r}: {slip}")
    assert not problems, "\n".join(problems)


def test_wording_slips_are_found() -> None:
    assert wording_slips("over (%(rounds)s rounds)")
    assert wording_slips("1 rounds played")
    assert not wording_slips("%(count)s cards", frozenset({"count"}))
    assert not wording_slips("at most %(max)s characters")
    assert wording_slips("Round %(round)sof %(rounds)s")
    assert wording_slips("every card approved.Propose a new one")
    assert wording_slips("%(name)s(%(step)s)") and not wording_slips("%(name)s (%(step)s)")
    assert wording_slips("Dealer (%(name)s (formal rule))") and wording_slips("((note))")
    assert not wording_slips("sha256(seed) = %(digest)s (the record’s)")
    assert not wording_slips("The request is too large (at most %(kib)s KiB).")


def test_a_message_is_plural_everywhere_or_nowhere() -> None:
    """One msgid is one catalog entry: a place that shows a plural message without
    {% pluralize %} gets its singular form whatever the count ("Hand (4 card)")."""
    with MAPPING.open() as config:
        method_map, options_map = parse_mapping_cfg(config)
    kinds: dict[tuple[str | None, str], set[str]] = {}
    places: dict[tuple[str | None, str], list[str]] = {}
    for file, line, message, _comments, context in extract_from_dir(
        str(repo_root()), method_map, options_map
    ):
        plural = isinstance(message, tuple) and len(message) > 1
        key = (context, message[0] if isinstance(message, tuple) else message)
        kinds.setdefault(key, set()).add("plural" if plural else "singular")
        places.setdefault(key, []).append(f"{file}:{line} ({'plural' if plural else 'singular'})")
    mixed = [f"{key[1]!r}: {places[key]}" for key, seen in kinds.items() if len(seen) > 1]
    assert not mixed, "\n".join(mixed)


def test_game_titles_in_the_catalog_are_the_registry_s_english_titles() -> None:
    with i18n.use_language("en"):
        for game in all_games():
            assert i18n.gettext(game.title_ja) == game.title_en
            assert messages.game_title(game) == game.title_en
    assert messages.game_title(all_games()[0]) == all_games()[0].title_ja


# --- messages made by services ---------------------------------------------------------------

ERRORS = {"ServiceError", "NotFound", "Invalid", "Conflict", "Unauthorized", "Forbidden"}
ERRORS |= {"RateLimited"}
# The JSON API (a contract in Japanese, with deps.py's Bearer check) and the CLI's importer never
# reach a page; the games' RuleError and the game master's refusals become the bot's posts,
# which stay Japanese.
NOT_ON_PAGES = ("app/api/", "app/games/", "app/archive/importer.py", "app/web/deps.py")


def _sample(node: ast.expr) -> list[str]:
    """The texts an expression can make, with every interpolated value as "7"."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [
            "".join(part.value if isinstance(part, ast.Constant) else "7" for part in node.values)
        ]
    if isinstance(node, ast.IfExp):
        return _sample(node.body) + _sample(node.orelse)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):  # N_("…%(x)s") % {...}
        inner = node.left
        if isinstance(inner, ast.Call) and inner.args:
            inner = inner.args[0]
        return [PLACEHOLDER.sub("7", text) for text in _sample(inner)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "N_":
        return _sample(node.args[0])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        return ["7"]  # str(exc): not Japanese
    raise AssertionError(f"cannot tell what this message says: {ast.unparse(node)}")


def page_messages() -> Iterator[tuple[str, str]]:
    """(where, text) of every message services and pages raise, and of the other Japanese
    labels that app/ hands to pages: verify's checks, the rate limit's parts, notifications."""
    root = repo_root()
    yield from notification_texts(root / "app" / "notify" / "notices.py")
    for path in sorted((root / "app").rglob("*.py")):
        where = path.relative_to(root).as_posix()
        if where.startswith(NOT_ON_PAGES):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            arguments: list[ast.expr] = []
            if name in ERRORS and node.args:
                arguments = [node.args[0]]
            elif where == "app/archive/verify.py" and name == "add" and len(node.args) == 3:
                arguments = [node.args[0], node.args[2]]
            elif where == "app/archive/verify.py" and "mismatches.append" in ast.unparse(func):
                arguments = [node.args[0]]  # the report's mismatch lines
            elif where == "app/accounts/ratelimit.py" and name == "Rule" and len(node.args) == 4:
                arguments = [node.args[3]]
            for argument in arguments:
                if isinstance(argument, ast.Name) and argument.id.isupper():
                    continue  # a module constant, checked with its definition below
                for text in _sample(argument):
                    yield f"{where}:{node.lineno}", text


def notification_texts(path: Path) -> Iterator[tuple[str, str]]:
    """Every Japanese text written in app/notify/notices.py: it only writes notifications, which the
    notifications page shows."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()  # docstrings, and the pieces of f-strings (sampled whole)
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skip.add(id(node.value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in node.values)
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str)
        )
        if not is_text or id(node) in skip:
            continue
        for text in _sample(node):
            if JAPANESE.search(text):
                yield f"app/notify/notices.py:{node.lineno}", text


def test_every_message_a_page_can_show_is_translated() -> None:
    texts = list(page_messages())
    assert len(texts) > 80
    for module, least in (("notices", 3), ("verify", 15), ("ratelimit", 6)):
        assert sum(f"app/{module}.py" in w or f"/{module}.py" in w for w, _ in texts) >= least
    texts += [("listing.SORTS", label) for label in listing.SORTS.values()]
    texts += [("listing.STATUS_CHOICES", label) for label in listing.STATUS_CHOICES.values()]
    from app.archive import frames, verify

    texts += [(f"verify.{n}", getattr(verify, n)) for n in ("SEED_HASH", "PUBLISHED", "REPLAY")]
    texts += [("frames.SEALED", frames.SEALED)]
    ended = SimpleNamespace(status="finished", players_at_start=["taro"], players=[])
    texts += [("frames.viewpoints", label) for _key, label in frames.viewpoints(ended)]
    texts += [("ratelimit per", "1分間"), ("ratelimit per", "1時間"), ("ratelimit per", "7秒間")]
    untranslated = []
    with i18n.use_language("en"):
        for where, text in texts:
            if not JAPANESE.search(text):
                continue
            shown = messages.translate(text)
            if JAPANESE.search(shown):
                untranslated.append(f"{where}: {text!r} -> {shown!r}")
    assert not untranslated, "\n".join(untranslated)


def test_messages_with_values_are_translated_with_their_values() -> None:
    with i18n.use_language("en"):
        limited = messages.translate(
            "この接続元からのログインが多すぎます（1分間に10回まで）。42秒後にもう一度お試しください。"
        )
        assert limited == (
            "Too many logins from this address (at most 10 per minute). Please try again in 42 s."
        )
        assert messages.translate("スレッド 12 はありません。") == "There is no thread 12."
        assert messages.translate("「卓」であなたの手番です（第2週）。") == (
            "It is your turn in “卓” (Week 2)."
        )
        assert messages.translate("at は 0〜3 です（適用された手は3手）。") == (
            "at is from 0 to 3 (moves applied: 3)."
        )
        # The same value twice must be the same text, else it is not this message.
        assert messages.translate("at は 0〜3 です（適用された手は4手）。").startswith("at は")
        assert messages.translate("ただの書き込み") == "ただの書き込み"  # user text: unchanged
    assert messages.translate("スレッド 12 はありません。") == "スレッド 12 はありません。"


def test_static_scripts_show_no_text_of_their_own() -> None:
    """Text the scripts show would have to come from the page (data attributes): none does."""
    for script in (repo_root() / "app" / "web" / "static").glob("*.js"):
        code = "\n".join(
            line
            for line in script.read_text(encoding="utf-8").splitlines()
            if not line.strip().startswith("//")
        )
        assert not JAPANESE.search(code), script.name


# --- pages in English ------------------------------------------------------------------------


def csrf(page: httpx.Response) -> str:
    match = TOKEN.search(page.text)
    assert match, "form without a CSRF token"
    return match.group(1)


def register(client: httpx.Client) -> str:
    name = unique_name("en")
    reply = client.post(
        "/register",
        data={"name": name, "password": "password123", "csrf_token": csrf(client.get("/register"))},
    )
    assert reply.status_code == 303, reply.text
    return name


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _escaped(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&#34;")
        .replace("'", "&#39;")
    )


def japanese_outside(html: str, content: list[str]) -> list[str]:
    """Japanese left on a page once user content and game terms are taken out: post bodies
    (stored posts, the bot's replies included), the legal command lines (game commands), the
    language switch's "日本語", and the known strings of ``content`` (names, titles, game data)."""
    html = re.sub(r'<div class="post-body">.*?</div>', "", html, flags=re.DOTALL)
    html = re.sub(r'<ul class="legal-list">.*?</ul>', "", html, flags=re.DOTALL)
    html = re.sub(r'<a class="lang-switch"[^>]*>日本語</a>', "", html)
    for text in sorted(set(content), key=len, reverse=True):
        if text and JAPANESE.search(text):
            html = html.replace(_escaped(text), "").replace(text, "")
    return [html[max(0, m.start() - 60) : m.end() + 60] for m in JAPANESE.finditer(html)]


class EnglishSite:
    """Pages to read in English: a thread with a post, a started game of every kind (the
    reader is its GM and a player), and an ended game for the archive."""

    def __init__(self, base: str, settings: Settings) -> None:
        self.base = base
        self.site_name = settings.site_name
        self.client = httpx.Client(base_url=self.base, timeout=30, cookies={i18n.COOKIE: "en"})
        self.name = register(self.client)
        api = httpx.Client(base_url=self.base, timeout=30)
        self.api = api
        token = api.post("/api/login", json={"name": self.name, "password": "password123"})
        self.headers = {"Authorization": f"Bearer {token.json()['token']}"}
        thread = api.post(
            "/api/boards/lobby/threads",
            json={"title": "Plain title", "body": "日本語の本文も書ける\n>>1"},
            headers=self.headers,
        ).json()
        self.thread_id = thread["id"]
        self.games: dict[str, dict[str, Any]] = {}
        for impl in all_games():
            self.games[impl.kind] = self._started_game(impl.kind, impl.min_players)
        ended = api.post(
            "/api/games",
            json={"kind": all_games()[0].kind, "title": "Ended table"},
            headers=self.headers,
        ).json()
        self.post(ended["thread_id"], "ABORT")
        self.content = [self.site_name, self.name]

    def post(self, thread_id: int, body: str, headers: dict[str, str] | None = None) -> None:
        reply = self.api.post(
            f"/api/threads/{thread_id}/posts", json={"body": body}, headers=headers or self.headers
        )
        assert reply.status_code == 201, reply.text

    def _started_game(self, kind: str, players: int) -> dict[str, Any]:
        game = self.api.post(
            "/api/games",
            json={"kind": kind, "title": f"{find_game(kind).title_en} table"},  # never the key
            headers=self.headers,
        ).json()
        self.post(game["thread_id"], "JOIN")
        for _ in range(players - 1):
            other = api_user(self.api)
            self.post(game["thread_id"], "JOIN", other.headers)
        self.post(game["thread_id"], "START")
        return game

    def game_terms(self, game_id: int) -> list[str]:
        """Every string of the game's public and private views: card, slot, event and rule
        names are game terms, shown as the rules write them."""
        public = self.api.get(f"/api/games/{game_id}", headers=self.headers).json()
        private = self.api.get(f"/api/games/{game_id}/view", headers=self.headers).json()
        return [*_strings(public), *_strings(private)]

    def close(self) -> None:
        self.client.close()
        self.api.close()


@pytest.fixture(scope="module")
def own_server(settings: Settings, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with a database of its own: the lists (games, archive, boards) then show only
    this module's titles and names, not the Japanese ones other test modules wrote. No
    lifespan: it would take the live-post hub over from the session's server."""
    pg_server = os.environ.get("BBSGM_TEST_DATABASE_URL")
    if pg_server:
        url, pg_name = _create_pg_database(pg_server)
    else:
        url = f"sqlite:///{tmp_path_factory.mktemp('i18n') / 'i18n.db'}"
    own = settings.model_copy(update={"database_url": url})
    database = Database(url)
    migrate.upgrade(own, database.engine)
    with database.session() as session:
        ensure_game_boards(session)
        session.commit()
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(own, database),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="off",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    database.dispose()
    if pg_server:
        _drop_pg_database(pg_server, pg_name)


@pytest.fixture(scope="module")
def site(own_server: str, settings: Settings) -> Iterator[EnglishSite]:
    english = EnglishSite(own_server, settings)
    yield english
    english.close()


def check_english(site: EnglishSite, path: str, status: int = 200, **extra: Any) -> str:
    page = site.client.get(path)
    assert page.status_code == status, (path, page.status_code)
    html = page.text
    assert '<html lang="en">' in html, path
    assert 'class="lang-switch" href="/lang/ja?next=' in html, path
    left = japanese_outside(html, site.content + list(extra.get("content", [])))
    assert not left, f"{path}: Japanese left in the English page:\n" + "\n".join(left)
    slips = page_wording_slips(html, site.content + list(extra.get("content", [])))
    assert not slips, f"{path}: English that reads wrong:\n" + "\n".join(slips)
    return html


# Elements that start a new line of text; the others (a, span, code, …) run on, so a piece of a
# template glued to the next one reads glued ("approved.Propose", "END>>5").
BLOCKS = re.compile(
    r"</?(?:p|div|li|ul|ol|dl|dt|dd|h[1-6]|tr|td|th|table|caption|section|header|footer|nav|"
    r"main|form|label|button|option|select|textarea|figure|figcaption|details|summary|br|hr|"
    r"title|article|aside|fieldset|legend|thead|tbody|pre)\b[^>]*>"
)


def page_wording_slips(html: str, content: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The checks of the catalog's English, on what a page shows once its templates have put
    the pieces together: a plural after 1, sentences or words run together, brackets inside
    brackets. Posts (user and bot text) and scripts are left out; the Japanese strings of
    ``content`` (names, game terms) read as a word, "Name"; a line with other Japanese is
    skipped."""
    html = re.sub(r'<div class="post-body">.*?</div>', "\n", html, flags=re.DOTALL)
    for known in sorted({c for c in content if c and JAPANESE.search(c)}, key=len, reverse=True):
        html = html.replace(_escaped(known), "Name").replace(known, "Name")
    html = re.sub(r"<(script|style)\b.*?</\1>", "\n", html, flags=re.DOTALL)
    text = re.sub(r"<[^>]*>", "", BLOCKS.sub("\n", html))
    slips = []
    for raw in text.splitlines():
        line = " ".join(unescape(raw).split())
        if not line or JAPANESE.search(line):
            continue
        found = [f"a plural after 1: {m.group(0)!r}" for m in PAGE_ONE.finditer(line)]
        found += [f"run together: {m.group(0)!r}" for m in PAGE_JOINED.finditer(line)]
        shown = FUNCTION_LIKE.sub("f", line)
        if re.search(r"[a-z]\(|\(\(|\)\)", shown):
            found.append("a word glued to its bracket, or brackets doubled")
        slips += [f"{slip} in {line!r}" for slip in found]
    return slips


PAGE_ONE = re.compile(rf"(?<![\d.,/:–-])\b1 (?:{COUNTED_NOUNS})\b")
PAGE_JOINED = re.compile(r"[a-z]{2}[.!?;][A-Z]|[a-z][,;][A-Za-z]|\w&gt;&gt;|\w>>\d")


def test_forum_pages_in_english(site: EnglishSite) -> None:
    index = check_english(site, "/")
    assert "Lobby" in index and "Chat" in index and "Boards" in index
    check_english(site, "/boards/lobby")
    thread = check_english(site, f"/threads/{site.thread_id}")
    assert "日本語の本文も書ける" in thread  # user content stays as written
    assert re.search(
        r"\d{4}/\d\d/\d\d\((Mon|Tue|Wed|Thu|Fri|Sat|Sun)\) \d\d:\d\d:\d\d\.\d\d", thread
    )


def test_account_pages_in_english(site: EnglishSite) -> None:
    with httpx.Client(base_url=site.base, cookies={i18n.COOKIE: "en"}) as visitor:
        for path in ("/login", "/register"):
            page = visitor.get(path)
            assert '<html lang="en">' in page.text
            assert not japanese_outside(page.text, [site.site_name]), path
        wrong = visitor.post(
            "/login",
            data={"name": "nobody-here", "password": "x" * 8, "csrf_token": csrf(page)},
        )
        assert wrong.status_code == 401 and "Wrong name or password." in wrong.text
        assert not japanese_outside(wrong.text, [site.site_name])


def test_game_pages_of_every_kind_in_english(site: EnglishSite) -> None:
    check_english(site, "/games")
    check_english(site, "/games/new")
    for kind, game in site.games.items():
        terms = site.game_terms(game["id"])
        html = check_english(site, f"/games/{game['id']}", content=terms)
        assert f'class="{kind}-board"' in html  # the board was rendered (and checked)
        check_english(site, f"/threads/{game['thread_id']}", content=terms)
        check_english(site, f"/games/{game['id']}/replay", content=terms)
        log = site.client.get(f"/games/{game['id']}/log").text
        log = re.sub(r"<tbody>.*?</tbody>", "", log, count=1, flags=re.DOTALL)  # stored log
        assert not japanese_outside(log, site.content + terms)


def test_boards_of_finished_and_busy_games_in_english(settings: Settings) -> None:
    """The board templates in every state the game tests reach (results, round history,
    failed strings, hands, a prophet): only game data may stay Japanese."""
    from app.games.eleusis import game as eleusis
    from tests.games.test_eitsuku_templates import _played_game
    from tests.games.test_eleusis_templates import _finished, _with_failed_strings

    env = make_templates(settings).env
    views = [
        ("eitsuku", _played_game(["太郎", "花子", "次郎"], "en-1", until_over=False)),
        ("eitsuku", _played_game(["太郎", "花子", "次郎", "三郎"], "en-2", until_over=True)),
    ]
    for state in (_with_failed_strings(), _finished(3)):
        views += [("eleusis", eleusis.view(state, viewer)) for viewer in (None, 0, 2, "gm")]
    rendered = ""
    with i18n.use_language("en"):
        for kind, view in views:
            html = env.get_template(f"games/{kind}/board.html.j2").render(view=view)
            left = japanese_outside(html, list(_strings(view)))
            assert not left, f"{kind}: Japanese left on the board:\n" + "\n".join(left)
            slips = page_wording_slips(html, list(_strings(view)))
            assert not slips, f"{kind}: English that reads wrong:\n" + "\n".join(slips)
            rendered += html
    for part in ("eitsuku-result", "eleusis-result", "eleusis-history", "eleusis-failed"):
        assert f'class="{part}' in rendered, part
    assert "<caption>Results</caption>" in rendered


def test_card_pages_in_english(site: EnglishSite) -> None:
    """The pool and a card's history; card names, texts and authors are game data."""
    pool = site.api.get("/api/cards").json()
    html = check_english(site, "/cards", content=list(_strings(pool)))
    assert "approved. <a" in html  # the sentence, a space, then the registry's link
    name = pool["cards"][0]["name"]
    history = site.api.get(f"/api/cards/{quote(name)}").json()
    check_english(site, f"/cards/{quote(name)}", content=[*_strings(pool), *_strings(history)])


def test_notifications_in_english(site: EnglishSite) -> None:
    html = check_english(site, "/notifications")
    assert "It is your turn in" in html  # a stored Japanese notification, translated


def test_archive_pages_in_english(site: EnglishSite) -> None:
    html = check_english(site, "/archive")
    assert "Ended table" in html and "Aborted" in html
    check_english(site, "/archive?status=active&sort=title")
    check_english(site, "/archive?from=yesterday", status=422)
    check_english(site, "/search?q=Plain")
    check_english(site, "/search?q=" + "x" * 300, status=422)
    check_english(site, "/archive/verify")


def test_error_pages_in_english(site: EnglishSite) -> None:
    assert "Page not found." in check_english(site, "/no/such/page", status=404)
    missing = check_english(site, "/threads/987654321", status=404)
    assert "There is no thread 987654321." in missing


def test_an_internal_error_page_is_in_the_reader_s_language(
    settings: Settings, database: Database
) -> None:
    """The 500 handler runs outside every middleware; it still knows the language. (Called
    in process, without the lifespan: a second server would take over the live-post hub.)"""
    app = create_app(settings, database)

    def broken() -> None:
        raise RuntimeError("a bug, on purpose")

    app.add_api_route("/broken", broken)

    async def fetch(cookies: dict[str, str]) -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", cookies=cookies
        ) as client:
            return await client.get("/broken")

    english = asyncio.run(fetch({i18n.COOKIE: "en"}))
    assert english.status_code == 500
    assert '<html lang="en">' in english.text
    assert "An internal server error occurred." in english.text
    japanese = asyncio.run(fetch({}))
    assert '<html lang="ja">' in japanese.text and "サーバー内部" in japanese.text


# --- the switch ------------------------------------------------------------------------------


def test_japanese_is_the_default_whatever_the_browser_asks(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url) as browser:
        page = browser.get("/", headers={"Accept-Language": "en-US,en;q=0.9"})
        assert '<html lang="ja">' in page.text and "板一覧" in page.text
        assert "bbsgm_lang" not in page.headers.get("set-cookie", "")
        assert '<a class="lang-switch" href="/lang/en?next=%2F" hreflang="en"' in page.text


def test_the_switch_sets_a_long_lax_cookie_and_goes_back(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url) as browser:
        reply = browser.get("/lang/en", params={"next": "/boards/lobby?page=1"})
        assert reply.status_code == 303
        assert reply.headers["location"] == "/boards/lobby?page=1"
        cookie = reply.headers["set-cookie"]
        assert cookie.startswith("bbsgm_lang=en;")
        assert "samesite=lax" in cookie.lower() and "Path=/" in cookie
        assert int(re.search(r"Max-Age=(\d+)", cookie).group(1)) >= 365 * 24 * 3600  # type: ignore[union-attr]
        page = browser.get("/boards/lobby")
        assert '<html lang="en">' in page.text and "Start a new thread" in page.text
        assert "/lang/ja?next=%2Fboards%2Flobby" in page.text
        back = browser.get("/lang/ja", params={"next": "/boards/lobby"})
        assert back.headers["location"] == "/boards/lobby"
        assert '<html lang="ja">' in browser.get("/boards/lobby").text


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/", "//evil.example/x", "/\\evil.example", "/\t/evil.example", "evil"],
)
def test_the_switch_never_sends_anyone_to_another_site(
    live_server: LiveServer, target: str
) -> None:
    with httpx.Client(base_url=live_server.url) as browser:
        reply = browser.get("/lang/en", params={"next": target})
        assert reply.status_code == 303 and reply.headers["location"] == "/"


def test_an_unknown_language_is_not_found_and_ignored(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url, cookies={i18n.COOKIE: "xx"}) as browser:
        assert browser.get("/lang/fr").status_code == 404
        page = browser.get("/", params={"lang": "fr"})
        assert '<html lang="ja">' in page.text and "bbsgm_lang" not in str(page.headers)


def test_lang_in_any_address_switches_and_is_remembered(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url) as browser:
        page = browser.get("/games", params={"lang": "en"})
        assert '<html lang="en">' in page.text and "Create a new game" in page.text
        assert "bbsgm_lang=en" in page.headers["set-cookie"]
        assert "/lang/ja?next=%2Fgames" in page.text  # the switch drops ?lang from next
        assert '<html lang="en">' in browser.get("/archive").text  # the cookie remembers
        assert '<html lang="ja">' in browser.get("/archive", params={"lang": "ja"}).text
        assert '<html lang="ja">' in browser.get("/").text


def test_the_json_api_stays_japanese(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url, cookies={i18n.COOKIE: "en"}) as browser:
        answer = browser.get("/api/threads/987654321", params={"lang": "en"})
        assert answer.status_code == 404
        assert answer.json() == {"detail": "スレッド 987654321 はありません。"}
        assert (
            "set-cookie" not in answer.headers or "bbsgm_lang" not in answer.headers["set-cookie"]
        )


def test_after_a_failed_form_the_switch_goes_back_to_the_form_page(
    live_server: LiveServer,
) -> None:
    with httpx.Client(base_url=live_server.url) as browser:
        form = browser.get("/login")
        page = browser.post(
            "/login",
            data={"name": "nobody-here", "password": "wrongpass", "csrf_token": csrf(form)},
            headers={"Referer": f"{live_server.url}/login?next=%2Fgames"},
        )
        assert "/lang/en?next=%2Flogin%3Fnext%3D%252Fgames" in page.text
        other = browser.post(
            "/login",
            data={"name": "nobody-here", "password": "wrongpass", "csrf_token": csrf(form)},
            headers={"Referer": "https://evil.example/login"},
        )
        assert '/lang/en?next=%2F"' in other.text


def test_concurrent_requests_each_keep_their_own_language(live_server: LiveServer) -> None:
    results: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def reader(language: str) -> None:
        with httpx.Client(base_url=live_server.url, cookies={i18n.COOKIE: language}) as c:
            for _ in range(8):
                page = c.get("/games").text
                ok = f'<html lang="{language}">' in page and (
                    ("Create a new game" in page) == (language == "en")
                )
                with lock:
                    results.append((language, ok))

    workers = [threading.Thread(target=reader, args=(lang,)) for lang in ["en", "ja"] * 4]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(results) == 64 and all(ok for _, ok in results)


def test_the_catalog_is_read_from_the_text_file_not_a_binary() -> None:
    locale = repo_root() / "app" / "locale"
    assert not list(locale.rglob("*.mo"))
    assert isinstance(i18n.translations("en"), i18n.Translations)
    assert Path(i18n.catalog_path("en")) == CATALOG
