"""The 名前欄 (name field) and 2ch tripcodes (app/forum/names.py, docs/forum.md).

The algorithm is checked against published pairs of key and trip: the examples of the PHP
tripcode explainer reprinted on the 2ch-trip wiki page "2chのトリップ生成" (program.sagasite.info,
from pc.casey.jp; `#istrip` is also the Perl example of the Gurochan tripcode FAQ, `Wikipedia`
the Japanese Wikipedia article's), and the test vectors of the tripcode-rs crate (Huton/
tripcode-rs: 10-character, 生キー, 12-character and 2ch's HTML escaping), the Elixir ex_tripcode
library's Shift_JIS keys, and a Python sketch's doctest. One published pair is not followed:
tripcode-rs writes the 12-character trip of ``twelve bytes`` as ``t+lnR7LBqNQY``, keeping the
``+`` of base64, where the 2ch-spec testers (windyakin's "おそらく２ちゃんねる仕様に一番近い
トリップテスター", the 0ch-style board scripts) write ``tr/+/./``: bbsgm follows the testers.

Then the properties, the name field's rules, and over HTTP: pages, the API, a game, and every
GET route searched for the key after posting with it.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import String, Text, func, or_, select
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import Base, Post, Thread, User
from app.errors import Invalid
from app.forum import names
from app.forum import service as forum
from app.forum.moderation import set_admin
from app.gm.reply import BOT_NAME
from tests.conftest import ApiUser, LiveServer, api_user, unique_name
from tests.support.load_support import session_cookie
from tests.test_fuzz_api import ENDPOINTS
from tests.test_gm_http import new_game, pick
from tests.test_pages import csrf, register

SECRET = "s"
CRYPT_ALPHABET = re.compile(r"[./0-9A-Za-z]{10}")
SHA_ALPHABET = re.compile(r"[./0-9A-Za-z]{12}")

PUBLISHED = [
    # 10 characters: the casey.jp examples, Wikipedia's, Gurochan's FAQ ("User#password").
    ("テスト", "SQ2Wyjdi7M"),
    ("Wikipedia", "Ig9vRBfuyA"),
    ("istrip", "/WG5qp963c"),
    ("password", "ozOtJW9BFA"),
    ("ニコニコ", "pA8Bpf.Qvk"),
    # ex_tripcode (Shift_JIS keys) and tripcode-rs (4chan's examples agree on plain ASCII)
    ("エリクサー", "VTaBo/Ew8o"),
    ("トリップ", "XSSH/ryx32"),
    ("tripcode", "3GqYIJ3Obs"),
    ("k", "nOA3ItxPxI"),
    ("[K", "GDsuFp4oF6"),
    ("2 V", "IG4wjn.Cxc"),
    ("|TB~", "P97zJ5IHPI"),
    ("(~A5|", ".HIpR.ZMqM"),
    ("[6??Pz", "9zAZPOvSZI"),
    ("ErdxpJ$", "KgeLOKK0NQ"),
    ("dib3Q_4x", "BX6/llcs1o"),
    ("R%!IuxM.t", "6trdEPfEr6"),
    ("7 bytes", "W/RvZlE2K."),
    # 12 characters: casey.jp and tripcode-rs
    ("TESTTESTTESTTEST", "TDxLX5/h3FIK"),
    ("テストテストテスト", "Iwo2kAiiMPp6"),
    ("POVD@psDFdsopfij", "50D13FhHVb0y"),
    ("123ABCdef#=?", "/ybNw16ve2hX"),
    ("<12 bytes", "/9L00Vb1PBcb"),
    # 生キー (raw keys), and the keys 2ch leaves undefined
    ("#0123456789abcdef./", "IP9Lda5FPc"),
    ("#FF00000000000000", "7Uzd/KllpE"),
    ("#FF00FFFFFFFFFFFF", "7Uzd/KllpE"),  # crypt stops at the zero byte
    ("#1145145554560721..", "14cvFmVHg2"),
    ("$23456789012", "???"),
    ("#abcdefghijklmnop", "???"),
    ("#fedcba9876543210!!", "???"),
    # 2ch escapes " < > (not &) before it hashes; the escaped length decides 10 or 12
    ('abc"def', "TIWS518hyaVm"),
    ('"abcdef', "Wg38i4X473pB"),
    ("<>", "Gw/f5wZwNg"),
    ('"<', "LZ4ugyvTWU"),
    ("&", "2r2Ga7GHRc"),
]


# --- the algorithm --------------------------------------------------------------------------


@pytest.mark.parametrize(("key", "trip"), PUBLISHED)
def test_published_tripcodes(key: str, trip: str) -> None:
    assert names.tripcode(key) == trip


def test_twelve_character_trip_writes_plus_as_dot() -> None:
    # base64 of the SHA-1 of "twelve bytes" begins "t+lnR7LBqNQY" (tripcode-rs keeps the +).
    assert names.tripcode("twelve bytes") == "t.lnR7LBqNQY"


def test_tripcode_properties() -> None:
    keys = [f"key{n}" for n in range(50)] + ["あ", "𠮷", "😀", "a b", "ｱｲｳ"]
    trips = [names.tripcode(key) for key in keys]
    assert trips == [names.tripcode(key) for key in keys]  # the same key, the same trip
    assert len(set(trips)) == len(trips)  # different keys, different trips
    assert all(CRYPT_ALPHABET.fullmatch(trip) for trip in trips)
    # 12 bytes of Shift_JIS or more: 12 characters. 6 kana are 12 bytes, 11 ASCII are not.
    assert SHA_ALPHABET.fullmatch(names.tripcode("あいうえおか"))
    assert CRYPT_ALPHABET.fullmatch(names.tripcode("a" * 11))
    long_trips = {names.tripcode(f"a long pass phrase {n}") for n in range(50)}
    assert len(long_trips) == 50 and all(SHA_ALPHABET.fullmatch(t) for t in long_trips)
    # DES reads 8 bytes: short keys that share them share the trip, long ones do not.
    assert names.tripcode("abcdefgh") == names.tripcode("abcdefghXY")
    assert names.tripcode("abcdefghXYZW") != names.tripcode("abcdefghXYZV")


def test_unencodable_characters_hash_as_the_browser_sends_them() -> None:
    # A form in Shift_JIS sends 😀 as "&#128512;" (9 bytes: a 10-character trip).
    assert names.key_bytes("😀") == b"&#128512;"
    assert names.tripcode("😀") == names.tripcode("&#128512;")


# --- the name field -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "name", "key"),
    [
        ("名前#secret", "名前", "secret"),
        ("名前＃secret", "名前", "secret"),
        ("#secret", "", "secret"),
        ("名前#a#b", "名前", "a#b"),
        ("名前#", "名前", None),
        ("  名\u3000前  ", "名 前", None),
        ("◆偽トリ★GM", "◇偽トリ☆GM", None),
        ("<b>太字</b>", "<b>太字</b>", None),
    ],
)
def test_read_field(field: str, name: str, key: str | None) -> None:
    asked = names.read_field(field)
    assert asked.name == name
    assert asked.trip == (names.tripcode(key) if key is not None else None)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("x" * 33, "32文字"),
        ("名前\x00", "制御文字"),
        ("名前\u200b", "制御文字"),
        ("名前#" + "k" * 129, "128文字"),
        ("名前#key\x07", "制御文字"),
    ],
)
def test_read_field_refuses(field: str, message: str) -> None:
    with pytest.raises(Invalid, match=message) as caught:
        names.read_field(field)
    assert caught.value.field == "name"


def test_shown_name_and_back() -> None:
    assert names.shown("太郎", "Ab3dEfGh1J") == "太郎 ◆Ab3dEfGh1J"
    assert names.split_shown("太郎 ◆Ab3dEfGh1J") == ("太郎", "Ab3dEfGh1J")
    assert names.split_shown("太郎") == ("太郎", None)
    assert names.split_shown(BOT_NAME) == (BOT_NAME, None)
    # An account name from before ◆ was refused in names still cannot show a trip mark.
    assert names.shown("a◆b", None) == "a◇b"
    assert len(names.shown("x" * names.NAME_MAX, "y" * 12)) == names.SHOWN_MAX
    column: Any = Post.__table__.c.author_name
    assert column.type.length >= names.SHOWN_MAX


def test_account_names_may_not_hold_the_marks(session: Session) -> None:
    for name in ("a◆b", "GM★", "◆trip", "☆star"):
        with pytest.raises(Invalid, match="予約"):
            accounts.validate_name(name)
    assert accounts.validate_name("a☆b") == "a☆b"


# --- the service ----------------------------------------------------------------------------


def test_shown_author(session: Session, user: User) -> None:
    other = accounts.register(session, unique_name(), "password123")
    assert forum.shown_author(session, user, None) == user.name
    assert forum.shown_author(session, user, "") == user.name
    trip = names.tripcode("secret")
    assert forum.shown_author(session, user, "#secret") == f"{user.name} ◆{trip}"
    assert forum.shown_author(session, user, f"{user.name}#secret") == f"{user.name} ◆{trip}"
    assert forum.shown_author(session, user, "名無しさん#secret") == f"名無しさん ◆{trip}"
    assert forum.shown_author(session, user, "★GM") == "☆GM"
    for taken in (other.name, f"  {other.name} ", f"{other.name}#secret"):
        with pytest.raises(Invalid, match="別のアカウント"):
            forum.shown_author(session, user, taken)
    for reserved in ("GM", "ｇｍ", "Admin", "system#k", "bot"):
        with pytest.raises(Invalid, match="予約"):
            forum.shown_author(session, user, reserved)


def test_thread_with_a_name_field_stores_the_trip_not_the_key(session: Session, user: User) -> None:
    key = f"key-{uuid.uuid4().hex[:8]}"
    board = forum.get_board(session, "chat")
    thread, first = forum.create_thread(
        session, board, user, "題", "本文", SECRET, name=f"名無しさん#{key}"
    )
    assert first.author_name == f"名無しさん ◆{names.tripcode(key)}"
    assert first.author_id == user.id  # the account stays known
    session.flush()
    assert _rows_holding(session, key) == []
    with pytest.raises(Invalid, match="制御文字"):
        forum.create_thread(session, board, user, "題2", "本文", SECRET, name="a\x01")
    refused = select(func.count()).select_from(Thread).where(Thread.title == "題2")
    assert session.scalar(refused) == 0
    assert thread.post_count == 1


def _rows_holding(session: Session, needle: str) -> list[str]:
    """Every table and column of the database whose text holds ``needle``."""
    found = []
    for table in Base.metadata.sorted_tables:
        columns = [c for c in table.c if isinstance(c.type, String | Text)]
        if columns:
            hit = session.execute(
                select(func.count())
                .select_from(table)
                .where(or_(*(c.contains(needle, autoescape=True) for c in columns)))
            ).scalar()
            if hit:
                found.append(table.name)
    return found


# --- over HTTP: the API -----------------------------------------------------------------------


def test_api_post_without_name_is_unchanged(client: httpx.Client, alice: ApiUser) -> None:
    thread = alice.post("/api/boards/chat/threads", {"title": "名前なし", "body": "1"}).json()
    for payload in ({"body": "2"}, {"body": "3", "name": None}, {"body": "4", "name": ""}):
        reply = alice.post(f"/api/threads/{thread['id']}/posts", payload)
        assert reply.status_code == 201, reply.text
        assert reply.json()["post"]["author"] == alice.name
    assert thread["post"]["author"] == alice.name


def test_api_name_field_and_the_same_trip_in_another_thread(
    client: httpx.Client, alice: ApiUser, bob: ApiUser
) -> None:
    key = f"k{uuid.uuid4().hex[:8]}"
    trip = names.tripcode(key)
    first = alice.post(
        "/api/boards/chat/threads", {"title": "トリ", "body": "1", "name": f"名無し#{key}"}
    )
    assert first.status_code == 201 and first.json()["post"]["author"] == f"名無し ◆{trip}"
    other = bob.post("/api/boards/lobby/threads", {"title": "別スレ", "body": "1"}).json()
    again = alice.post(f"/api/threads/{other['id']}/posts", {"body": "同一人物", "name": f"#{key}"})
    assert again.json()["post"]["author"] == f"{alice.name} ◆{trip}"
    # Whoever knows the key shows the trip; the name field is not an account.
    bobs = bob.post(f"/api/threads/{other['id']}/posts", {"body": "b", "name": f"名無し#{key}"})
    assert bobs.json()["post"]["author"] == f"名無し ◆{trip}"
    forged = bob.post(f"/api/threads/{other['id']}/posts", {"body": "b", "name": f"名無し ◆{trip}"})
    assert forged.json()["post"]["author"] == f"名無し ◇{trip}"
    read = client.get(f"/api/threads/{other['id']}").json()["posts"]
    assert [p["author"] for p in read] == [
        bob.name,
        f"{alice.name} ◆{trip}",
        f"名無し ◆{trip}",
        f"名無し ◇{trip}",
    ]


@pytest.mark.parametrize(
    ("name", "message"),
    [("x" * 33, "32文字"), ("GM", "予約"), ("a\u200bb", "制御文字"), ("名前#" + "k" * 200, "128")],
)
def test_api_refused_name_field_stores_nothing(
    client: httpx.Client, alice: ApiUser, name: str, message: str
) -> None:
    thread = alice.post("/api/boards/chat/threads", {"title": "拒否", "body": "1"}).json()
    reply = alice.post(f"/api/threads/{thread['id']}/posts", {"body": "2", "name": name})
    assert reply.status_code == 422 and message in reply.json()["detail"]
    refused = alice.post("/api/boards/chat/threads", {"title": "拒否", "body": "1", "name": name})
    assert refused.status_code == 422
    assert client.get(f"/api/threads/{thread['id']}").json()["thread"]["post_count"] == 1


def test_another_accounts_name_is_refused(
    client: httpx.Client, alice: ApiUser, bob: ApiUser
) -> None:
    thread = alice.post("/api/boards/chat/threads", {"title": "なりすまし", "body": "1"}).json()
    reply = bob.post(f"/api/threads/{thread['id']}/posts", {"body": "私です", "name": alice.name})
    assert reply.status_code == 422 and "別のアカウント" in reply.json()["detail"]
    own = alice.post(f"/api/threads/{thread['id']}/posts", {"body": "私", "name": alice.name})
    assert own.status_code == 201 and own.json()["post"]["author"] == alice.name


def test_game_commands_act_for_the_account_whatever_the_name(client: httpx.Client) -> None:
    master = api_user(client)
    players = [api_user(client) for _ in range(3)]
    ids = new_game(master, players[:2])
    thread = f"/api/threads/{ids['thread_id']}/posts"
    # Joining under a typed name seats the account.
    joined = players[2].post(thread, {"body": "JOIN", "name": "名無しさん#k"})
    assert joined.status_code == 201 and joined.json()["replies"][0]["ok"], joined.text
    assert joined.json()["post"]["author"] == f"名無しさん ◆{names.tripcode('k')}"
    start = master.post(thread, {"body": "START", "name": "司会#gm"}).json()
    assert start["replies"][0]["ok"] and start["replies"][0]["author"] == BOT_NAME
    seated = client.get(f"/api/games/{ids['id']}").json()["players"]
    assert sorted(p["name"] for p in seated) == sorted(p.name for p in players)
    # A move made under a typed name is the account's, in its seat.
    mover = next(p for p in players if p.get(f"/api/games/{ids['id']}/legal").json()["commands"])
    line = pick(mover.get(f"/api/games/{ids['id']}/legal").json()["commands"])
    moved = mover.post(thread, {"body": line, "name": "代理人#k"})
    assert moved.json()["replies"][0]["ok"], moved.text
    moves = client.get(f"/api/games/{ids['id']}/moves").json()
    assert moves[-1]["actor"] == mover.name
    # The same typed name and key from someone without a seat moves nothing.
    stranger = api_user(client)
    tried = stranger.post(thread, {"body": line, "name": "代理人#k"})
    assert tried.status_code == 201
    assert tried.json()["post"]["author"] == moved.json()["post"]["author"]
    assert tried.json()["replies"][0]["ok"] is False
    assert client.get(f"/api/games/{ids['id']}/moves").json() == moves
    # A seated player's account name is not a name field anyone else may use.
    posing = stranger.post(thread, {"body": line, "name": mover.name})
    assert posing.status_code == 422
    assert client.get(f"/api/games/{ids['id']}/moves").json() == moves


# --- over HTTP: pages, and the key nowhere -----------------------------------------------------


@pytest.fixture
def browser(live_server: LiveServer) -> Any:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        yield web


def test_page_forms_take_the_name_field(browser: httpx.Client) -> None:
    me = register(browser)
    key = f"page-{uuid.uuid4().hex[:8]}"
    trip = names.tripcode(key)
    board = browser.get("/boards/chat")
    assert 'name="name"' in board.text
    made = browser.post(
        "/boards/chat/threads",
        data={"title": "名前欄", "body": "1", "name": f"スレ主#{key}", "csrf_token": csrf(board)},
    )
    assert made.status_code == 303, made.text
    location = made.headers["location"]
    page = browser.get(location)
    assert f'スレ主 <span class="post-trip">◆{trip}</span>' in page.text
    # The form's 名前欄 starts empty (placeholder: the account's name).
    assert re.search(r'name="name"[^>]*value=""', page.text)
    assert f'placeholder="{me}"' in page.text
    posted = browser.post(
        f"{location}/posts",
        data={"body": "2", "name": f"★GM◆{key}", "csrf_token": csrf(page)},
        follow_redirects=True,
    )
    assert posted.status_code == 200
    assert '<span class="post-name">☆GM◇' in posted.text  # the key after ◆ is a name here
    assert key in posted.text  # (it was typed as a name, not after #)
    shown = browser.post(
        f"{location}/posts",
        data={"body": "3", "name": f"<i>x</i>#{key}", "csrf_token": csrf(page)},
        follow_redirects=True,
    )
    assert f'&lt;i&gt;x&lt;/i&gt; <span class="post-trip">◆{trip}</span>' in shown.text
    assert "<i>x</i>" not in shown.text


def test_page_refused_or_previewed_name_comes_back_to_the_poster_only(
    browser: httpx.Client,
) -> None:
    register(browser)
    board = browser.get("/boards/chat")
    made = browser.post(
        "/boards/chat/threads", data={"title": "プレビュー", "body": "1", "csrf_token": csrf(board)}
    )
    location = made.headers["location"]
    page = browser.get(location)
    refused = browser.post(
        f"{location}/posts", data={"body": "2", "name": "GM#k", "csrf_token": csrf(page)}
    )
    assert refused.status_code == 422 and "予約された名前" in refused.text
    assert 'value="GM#k"' in refused.text
    previewed = browser.post(
        f"{location}/preview", data={"body": "2", "name": "名前#k", "csrf_token": csrf(page)}
    )
    assert previewed.status_code == 200 and 'value="名前#k"' in previewed.text
    again = browser.get(location)
    assert "名前#k" not in again.text and again.text.count('class="post post-') == 1
    english = browser.post(
        f"{location}/posts?lang=en", data={"body": "2", "name": "x" * 40, "csrf_token": csrf(page)}
    )
    assert "32" in english.text and "名前欄の名前" not in english.text


def test_site_admins_see_the_account_behind_a_typed_name(
    live_server: LiveServer, database: Database, client: httpx.Client, alice: ApiUser
) -> None:
    thread = alice.post("/api/boards/chat/threads", {"title": "誰", "body": "1"}).json()
    alice.post(f"/api/threads/{thread['id']}/posts", {"body": "2", "name": "名無しさん#k"})
    alice.post(f"/api/threads/{thread['id']}/posts", {"body": "3", "name": "#k"})
    admin, member = api_user(client), api_user(client)
    with database.session() as session:
        set_admin(session, admin.name, True)
        session.commit()
    told = f"（アカウント: {alice.name}）"
    for who, sees in ((admin, 1), (member, 0)):
        cookie = {"cookie": f"bbsgm_session={session_cookie(database, who.name)}"}
        page = client.get(f"/threads/{thread['id']}", headers=cookie).text
        assert page.count(told) == sees, who.name
    assert told not in client.get(f"/threads/{thread['id']}").text


def test_the_key_is_nowhere_after_posting_with_it(
    live_server: LiveServer, database: Database, client: httpx.Client
) -> None:
    """Post with a key through the page form and the API, in a talk thread and in a game's,
    then read every GET route of the app — the thread pages, the API, the live stream, the
    feeds, the dat and subject files, the game pages, the export, search — anonymously and as
    the poster: the trip shows, the key never; and no column of the database holds it."""
    key = f"KEY{uuid.uuid4().hex[:10]}"  # ASCII: the same in JSON, HTML, XML and Shift_JIS
    trip = names.tripcode(key)
    master, poster = api_user(client), api_user(client)
    ids = new_game(master, [poster])
    talk = master.post("/api/boards/chat/threads", {"title": "鍵", "body": "1"}).json()
    for thread_id in (talk["id"], ids["thread_id"]):
        sent = poster.post(f"/api/threads/{thread_id}/posts", {"body": "api", "name": f"名#{key}"})
        assert sent.status_code == 201, sent.text
    token = session_cookie(database, poster.name)
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        web.cookies.set("bbsgm_session", token)
        page = web.get(f"/threads/{talk['id']}")
        form = {"body": "page", "name": f"#{key}", "csrf_token": csrf(page)}
        assert web.post(f"/threads/{talk['id']}/posts", data=form).status_code == 303
    feed = poster.post("/api/me/feed", {}).json()["url"]
    values = {
        "thread_id": [talk["id"], ids["thread_id"]],
        "key": [talk["id"]],
        "slug": ["chat", "eitsuku"],
        "board": ["chat", "eitsuku"],
        "game_id": [ids["id"]],
        "token": [feed.rsplit("/", 1)[-1].removesuffix(".atom")],
        "code": ["en"],
        "name": ["x"],
        "kind": ["eitsuku"],
    }
    last = {
        thread_id: client.get(f"/api/threads/{thread_id}").json()["thread"]["post_count"]
        for thread_id in values["thread_id"]
    }
    read = 0
    for method, path in ENDPOINTS:
        if method != "GET" or path.startswith("/test/"):
            continue
        urls = [path]
        for param in re.findall(r"{(\w+)}", path):
            urls = [u.replace(f"{{{param}}}", str(v)) for u in urls for v in values[param]]
        for url in urls:
            params = {"q": "api"} if "search" in url else None
            upto = last[int(url.split("/")[-2])] if url.endswith("/events") else 0
            for headers in ({}, poster.headers, {"cookie": f"bbsgm_session={token}"}):
                text = _read(client, url, headers, params, upto)
                assert key not in text, url
                read += 1
    assert read > 100
    dat = client.get(f"/chat/dat/{talk['id']}.dat").content.decode("cp932")
    assert f"名 </b>◆{trip} <b>" in dat and f"{poster.name} </b>◆{trip} <b>" in dat
    page = client.get(f"/threads/{talk['id']}").text
    assert page.count(f'<span class="post-trip">◆{trip}</span>') == 2
    with database.session() as session:
        assert _rows_holding(session, key) == []


def _read(client: httpx.Client, url: str, headers: dict[str, str], params: Any, last: int) -> str:
    """A GET's answer as text; an event stream up to the post numbered ``last``."""
    with client.stream("GET", url, headers=headers, params=params) as reply:
        if reply.headers.get("content-type", "").startswith("text/event-stream"):
            lines, seen = [], 0
            for line in reply.iter_lines():
                lines.append(line)
                if line.startswith("id:"):
                    seen = int(line.removeprefix("id:").strip())
                if line == "" and seen >= last:
                    break
            return "\n".join(lines)
        reply.read()
        if "shift_jis" in reply.headers.get("content-type", "").lower():
            return reply.content.decode("cp932")
        return reply.text
