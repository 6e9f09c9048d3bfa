"""Writing from a 専ブラ: ``POST /test/bbs.cgi`` as JDim sends it (cp932 percent-encoding, no
Origin, a Host without the port, HTTP Basic), over real HTTP; app passwords on /me; thread keys;
the dat's 差分 answers after an あぼーん (docs/senbura.md)."""

from __future__ import annotations

import base64
import re
import socket
from datetime import UTC, datetime
from email.utils import formatdate
from pathlib import Path

import httpx
import sqlalchemy as sa
from sqlalchemy.orm import Session

from app.archive import dat
from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.db.models import Post, Thread
from app.forum import service as forum
from app.web import bbs_cgi
from app.web.archive_pages import shown_modified
from tests.conftest import LiveServer, api_user, unique_name

SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-.@_")
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def jdim_quote(text: str) -> str:
    """JDim's encoding of a field: MS932, every byte but ``A-Za-z0-9*-.@_`` as %XX, and a
    character MS932 has no code for as ``&#NNNNN;`` (itself percent-encoded)."""
    raw = text.encode("cp932", errors="xmlcharrefreplace")
    return "".join(chr(b) if b in SAFE else f"%{b:02X}" for b in raw)


def jdim_body(fields: list[tuple[str, str]]) -> bytes:
    return "&".join(f"{k}={jdim_quote(v)}" for k, v in fields).encode("ascii")


def basic(name: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()


def jdim_post(
    server: LiveServer, fields: list[tuple[str, str]], auth: str | None, board: str = "chat"
) -> tuple[int, str, bytes]:
    """The request as JDim puts it on the wire, byte for byte (a raw socket: no client library
    adds a header JDim does not send): ``Host`` without the port, no Origin, a Referer."""
    body = jdim_body(fields)
    lines = [
        "POST /test/bbs.cgi HTTP/1.1",
        "Host: 127.0.0.1",
        "User-Agent: Monazilla/1.00 JDim/0.9.0",
        f"Referer: http://127.0.0.1/{board}/",
        "Content-Type: application/x-www-form-urlencoded",
        f"Content-Length: {len(body)}",
        "Cookie: bbsgm_csrf=x",
        "Connection: close",
    ]
    if auth is not None:
        lines.append(f"Authorization: {auth}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, content = b"".join(chunks).partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    content_type = ""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        if name.lower() == "content-type":
            content_type = value.strip()
        if name.lower() == "transfer-encoding" and "chunked" in value:
            content = _unchunk(content)
    return status, content_type, content


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size_line, _, rest = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2 :]
    return out


def reply_fields(board: str, key: int, message: str, name: str = "", mail: str = "") -> list:
    return [
        ("bbs", board),
        ("key", str(key)),
        ("time", "1764633600"),
        ("submit", "書き込む"),
        ("FROM", name),
        ("mail", mail),
        ("MESSAGE", message),
    ]


def new_thread_fields(board: str, title: str, message: str) -> list:
    return [
        ("bbs", board),
        ("time", "1764633600"),
        ("submit", "新規スレッド作成"),
        ("subject", title),
        ("FROM", ""),
        ("mail", ""),
        ("MESSAGE", message),
    ]


def key_of(client: httpx.Client, board: str, title: str) -> int:
    for line in client.get(f"/{board}/subject.txt").content.decode("cp932").splitlines():
        if f"<>{title} (" in line:
            return int(line.split(".dat<>")[0])
    raise AssertionError(f"{title} not in /{board}/subject.txt")


def dat_lines(client: httpx.Client, board: str, key: int) -> list[str]:
    got = client.get(f"/{board}/dat/{key}.dat")
    assert got.status_code == 200
    return got.content.decode("cp932").splitlines()


def is_done(content_type: str, content: bytes) -> bool:
    """How JDim reads success: the page (MS932) titled 書きこみました or marked 2ch_X:true."""
    page = content.decode("cp932")
    return "charset=shift_jis" in content_type.lower() and (
        "<title>書きこみました。</title>" in page and "<!-- 2ch_X:true -->" in page
    )


def error_text(content: bytes) -> str:
    page = content.decode("cp932")
    assert "<!-- 2ch_X:error -->" in page
    found = re.findall(r"<b>([^<]*)</b>", page)
    assert found, page
    return found[-1]


# --- posting -------------------------------------------------------------------------------------


def test_a_thread_and_a_reply_written_as_jdim_sends_them_are_stored(
    live_server: LiveServer, client: httpx.Client
) -> None:
    user = api_user(client)
    auth = basic(user.name, "password123")
    title = f"専ブラから立てた{unique_name()}"
    status, ctype, content = jdim_post(
        live_server, new_thread_fields("chat", title, "一つ目"), auth
    )
    assert status == 200 and is_done(ctype, content), content.decode("cp932")
    key = key_of(client, "chat", title)
    assert len(str(key)) == 10
    message = "二行目まで <b>&amp; 😀\n>>1 どうも"
    status, ctype, content = jdim_post(
        live_server, reply_fields("chat", key, message, name="旅人#秘密の鍵", mail="sage"), auth
    )
    assert status == 200 and is_done(ctype, content)
    lines = dat_lines(client, "chat", key)
    assert len(lines) == 2
    name, mail, _date, body, _title = lines[1].split("<>")
    assert name.startswith("旅人 </b>◆") and mail == "sage"
    # The emoji came as &#128512; (percent-encoded) and is stored as the character; < and &
    # came raw and are escaped in the dat as every post's are.
    assert body == " 二行目まで &lt;b&gt;&amp;amp; &#128512; <br> &gt;&gt;1 どうも "
    thread_id = int(
        client.get(f"/test/read.cgi/chat/{key}/", follow_redirects=False)
        .headers["location"]
        .rsplit("/", 1)[1]
    )
    stored = client.get(f"/api/threads/{thread_id}").json()["posts"][1]
    assert stored["body"] == "二行目まで <b>&amp; 😀\n>>1 どうも"


def test_a_game_command_from_bbs_cgi_is_answered_by_the_bot_in_the_dat(
    live_server: LiveServer, client: httpx.Client
) -> None:
    master = api_user(client)
    made = master.post("/api/games", {"kind": "eitsuku", "title": "専ブラ卓", "options": {}})
    assert made.status_code == 201, made.text
    thread_id = made.json()["thread_id"]
    key = key_of(client, "eitsuku", "専ブラ卓")
    player = api_user(client)
    status, ctype, content = jdim_post(
        live_server,
        reply_fields("eitsuku", key, "参加"),
        basic(player.name, "password123"),
        board="eitsuku",
    )
    assert status == 200 and is_done(ctype, content)
    assert "★GM" in content.decode("cp932")  # the bot's answer is on the page too
    lines = dat_lines(client, "eitsuku", key)
    assert lines[-2].split("<>")[3] == " 参加 "
    assert lines[-1].startswith("★GM")
    seats = client.get(f"/api/games/{made.json()['id']}").json()["players"]
    assert player.name in [s["name"] for s in seats]
    # A rejected command is stored and explained, as from the web page.
    status, ctype, content = jdim_post(
        live_server,
        reply_fields("eitsuku", key, "START"),
        basic(player.name, "password123"),
        board="eitsuku",
    )
    assert status == 200 and is_done(ctype, content)
    lines = dat_lines(client, "eitsuku", key)
    assert lines[-2].split("<>")[3] == " START "
    assert lines[-1].startswith("★GM") and lines[-1] != lines[-3]
    assert thread_id > 0


def test_without_or_with_wrong_credentials_the_error_page_says_how_to_sign_in(
    live_server: LiveServer, client: httpx.Client
) -> None:
    user = api_user(client)
    title = f"認証{unique_name()}"
    for auth in (None, basic(user.name, "wrong-password"), "Basic !!!", basic("nobody-x", "p")):
        status, ctype, content = jdim_post(live_server, new_thread_fields("chat", title, "x"), auth)
        assert status == 200 and "charset=shift_jis" in ctype.lower()
        message = error_text(content)
        assert "専ブラの板の設定" in message and "アプリパスワード" in message
    assert title not in client.get("/chat/subject.txt").content.decode("cp932")


def test_a_refused_post_answers_the_reason_and_stores_nothing(
    live_server: LiveServer, client: httpx.Client
) -> None:
    user = api_user(client)
    auth = basic(user.name, "password123")
    status, _ctype, content = jdim_post(live_server, reply_fields("chat", 1, "  "), auth)
    assert status == 200 and "スレッド" in error_text(content)
    title = f"空{unique_name()}"
    status, _ctype, content = jdim_post(live_server, new_thread_fields("chat", title, " "), auth)
    assert error_text(content) == "ＥＲＲＯＲ：本文が空です。"
    status, _ctype, content = jdim_post(live_server, new_thread_fields("nosuch", title, "x"), auth)
    assert "板" in error_text(content)


def test_spectators_muted_by_the_gm_are_refused_from_a_senbura_too(
    live_server: LiveServer, client: httpx.Client
) -> None:
    master = api_user(client)
    options = {"mute_spectators": True}
    made = master.post("/api/games", {"kind": "eitsuku", "title": "静かな卓", "options": options})
    assert made.status_code == 201, made.text
    thread_id = made.json()["thread_id"]
    for _ in range(3):
        seat = api_user(client)
        assert seat.post(f"/api/threads/{thread_id}/posts", {"body": "参加"}).status_code == 201
    assert master.post(f"/api/threads/{thread_id}/posts", {"body": "START"}).status_code == 201
    key = key_of(client, "eitsuku", "静かな卓")
    outsider = api_user(client)
    _status, _ctype, content = jdim_post(
        live_server,
        reply_fields("eitsuku", key, "がんばれ"),
        basic(outsider.name, "password123"),
        board="eitsuku",
    )
    assert "観戦者" in error_text(content)
    assert "がんばれ" not in client.get(f"/eitsuku/dat/{key}.dat").content.decode("cp932")


# --- CSRF-free safety ----------------------------------------------------------------------------


def test_a_request_from_a_web_page_never_posts_even_with_credentials(
    live_server: LiveServer, client: httpx.Client
) -> None:
    """A browser resends cached Basic credentials and the site's cookies with a cross-site
    form; it also always sends Origin (POST) and Sec-Fetch-Site: such requests are refused."""
    user = api_user(client)
    title = f"越境{unique_name()}"
    body = jdim_body(new_thread_fields("chat", title, "x"))
    for extra in (
        {"Origin": "https://evil.example"},
        {"Origin": live_server.url},
        {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"},
        {"Origin": "null"},
    ):
        got = client.post(
            "/test/bbs.cgi",
            content=body,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Authorization": basic(user.name, "password123"),
                **extra,
            },
        )
        assert got.status_code == 200 and "ウェブブラウザ" in error_text(got.content), extra
    assert title not in client.get("/chat/subject.txt").content.decode("cp932")


def test_the_site_session_cookie_never_signs_in_to_bbs_cgi(
    live_server: LiveServer, client: httpx.Client
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as browser:
        page = browser.get("/register")
        name = unique_name()
        token = TOKEN.search(page.text)
        assert token is not None
        made = browser.post(
            "/register", data={"name": name, "password": "password123", "csrf_token": token[1]}
        )
        assert made.status_code in (200, 303)
        assert browser.cookies  # signed in by cookie
        title = f"クッキー{unique_name()}"
        got = browser.post(
            "/test/bbs.cgi",
            content=jdim_body(new_thread_fields("chat", title, "x")),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert "ログインしていません" in error_text(got.content)
    assert title not in client.get("/chat/subject.txt").content.decode("cp932")


# --- app passwords -------------------------------------------------------------------------------


def sign_up(browser: httpx.Client) -> str:
    """A new account, signed in by the site's cookie in ``browser``; its name."""
    name = unique_name()
    token = TOKEN.search(browser.get("/register").text)
    assert token is not None
    browser.post(
        "/register", data={"name": name, "password": "password123", "csrf_token": token[1]}
    )
    return name


def test_an_app_password_made_on_me_signs_in_until_it_is_revoked(
    live_server: LiveServer, client: httpx.Client
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as browser:
        name = sign_up(browser)
        page = browser.get("/me")
        assert page.status_code == 200 and "アプリパスワード" in page.text
        token = TOKEN.search(page.text)
        assert token is not None
        made = browser.post(
            "/me/app-passwords", data={"action": "new", "label": "JDim", "csrf_token": token[1]}
        )
        assert made.status_code == 201
        shown = re.search(r'id="made-app-password" value="([^"]+)"', made.text)
        assert shown is not None
        password = shown[1]
        again = browser.get("/me")
        assert password not in again.text and "JDim" in again.text  # shown once
        title = f"アプリ{unique_name()}"
        _status, ctype, content = jdim_post(
            live_server, new_thread_fields("chat", title, "x"), basic(name, password)
        )
        assert is_done(ctype, content)
        no_csrf = browser.post("/me/app-passwords", data={"action": "revoke", "password_id": "1"})
        assert no_csrf.status_code == 403
        row = re.search(r'name="password_id" value="(\d+)"', again.text)
        assert row is not None
        token = TOKEN.search(again.text)
        assert token is not None
        gone = browser.post(
            "/me/app-passwords",
            data={"action": "revoke", "password_id": row[1], "csrf_token": token[1]},
        )
        assert gone.status_code in (200, 303)
        _status, ctype, content = jdim_post(
            live_server, new_thread_fields("chat", title + "2", "x"), basic(name, password)
        )
        assert "違います" in error_text(content)
        # The account's own password still works.
        _status, ctype, content = jdim_post(
            live_server, new_thread_fields("chat", title + "3", "x"), basic(name, "password123")
        )
        assert is_done(ctype, content)


# --- sage, keys ----------------------------------------------------------------------------------


def test_sage_keeps_the_threads_place_and_age_raises_it(
    live_server: LiveServer, client: httpx.Client
) -> None:
    user = api_user(client)
    auth = basic(user.name, "password123")
    low, high = f"下{unique_name()}", f"上{unique_name()}"
    for title in (low, high):
        jdim_post(live_server, new_thread_fields("chat", title, "x"), auth)
    low_key = key_of(client, "chat", low)

    def order() -> list[str]:
        text = client.get("/chat/subject.txt").content.decode("cp932")
        return [line for line in text.splitlines() if low in line or high in line]

    assert high in order()[0]
    jdim_post(live_server, reply_fields("chat", low_key, "下げ", mail="sage"), auth)
    assert high in order()[0] and "(2)" in order()[1]  # counted, not raised
    jdim_post(live_server, reply_fields("chat", low_key, "上げ", mail=""), auth)
    assert low in order()[0]


def test_thread_keys_read_as_creation_seconds_and_are_unique_per_board(session: Session) -> None:
    """A new thread's key is the second it was made, or the next one its board has free."""
    from app.accounts import users as accounts
    from app.db.models import Board

    board = Board(slug=unique_name("k"), title="鍵", description="")
    session.add(board)
    session.flush()
    author = accounts.register(session, unique_name(), "password123")
    made = [forum.create_thread(session, board, author, f"同時{n}", "x", "s")[0] for n in range(3)]
    previous = 0
    for thread in made:
        assert thread.dat_key == max(int(thread.created_at.timestamp()), previous + 1)
        previous = thread.dat_key
    other = forum.create_thread(session, forum.get_board(session, "lobby"), author, "別", "x", "s")
    assert other[0].dat_key >= int(other[0].created_at.timestamp())  # per board: its own seconds
    assert dat.thread_by_key(session, board, str(made[1].dat_key)).id == made[1].id


def test_the_migration_gives_old_threads_their_creation_second_bumping_collisions(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'keys.db'}"
    settings = Settings(database_url=url, secret_key="k", tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    try:
        migrate.upgrade(settings, database.engine, "0017_app_passwords")
        at = datetime(2026, 11, 22, 1, 2, 3, tzinfo=UTC)
        with database.engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO boards (slug, title, description, sort_order, thread_count)"
                    " VALUES ('b', 'B', '', 0, 3), ('c', 'C', '', 1, 1)"
                )
            )
            for board, micro in ((1, 1), (1, 2), (1, 3), (2, 4)):
                conn.execute(
                    sa.text(
                        "INSERT INTO threads (board_id, title, created_at, last_post_at,"
                        " post_count) VALUES (:b, 't', :at, :at, 0)"
                    ),
                    {"b": board, "at": at.replace(microsecond=micro).isoformat(" ")},
                )
        migrate.upgrade(settings, database.engine)
        with database.engine.connect() as conn:
            keys = conn.execute(sa.text("SELECT board_id, dat_key FROM threads ORDER BY id")).all()
        second = int(at.timestamp())
        assert [tuple(k) for k in keys] == [
            (1, second),
            (1, second + 1),
            (1, second + 2),
            (2, second),
        ]
    finally:
        database.dispose()


# --- the dat's 差分 answers ---------------------------------------------------------------------


def test_after_an_abon_a_range_request_from_an_older_copy_gets_exactly_the_new_lines(
    live_server: LiveServer, client: httpx.Client
) -> None:
    """JDim 0.9 marks a thread 壊れています on a 416 and does not fetch it again by itself, so an
    あぼーん keeps every byte offset: the older copy plus the 206 is the dat, the hidden text
    aside."""
    master = api_user(client)
    made = master.post("/api/games", {"kind": "eitsuku", "title": "あぼーん卓", "options": {}})
    thread_id = made.json()["thread_id"]
    key = key_of(client, "eitsuku", "あぼーん卓")
    writer = api_user(client)
    for text in ("長い長い長い長い書き込み", "短"):
        writer.post(f"/api/threads/{thread_id}/posts", {"body": text})
    old = client.get(f"/eitsuku/dat/{key}.dat")
    assert old.status_code == 200
    for number in (2, 3):
        hidden = master.post(f"/api/threads/{thread_id}/posts/{number}/hide", {})
        assert hidden.status_code == 200, hidden.text
    writer.post(f"/api/threads/{thread_id}/posts", {"body": "三つ目"})
    whole = client.get(f"/eitsuku/dat/{key}.dat").content
    lines = whole.decode("cp932").splitlines()
    assert lines[1].split("<>")[3].strip() == "あぼーん" and "長い" not in whole.decode("cp932")
    assert lines[2].split("<>")[3] == " あ "  # 短 (2 bytes) hidden: room for one character
    assert len(whole.split(b"\n")[1]) == len(old.content.split(b"\n")[1])
    asked = {"Range": f"bytes={len(old.content)}-"}
    tail = client.get(f"/eitsuku/dat/{key}.dat", headers=asked)
    assert tail.status_code == 206 and old.content + tail.content == _unhidden(old, whole)
    assert "三つ目" in tail.content.decode("cp932")


def _unhidden(old: httpx.Response, whole: bytes) -> bytes:
    """``whole`` with the older copy's bytes where the copy has them."""
    return old.content + whole[len(old.content) :]


def test_if_modified_since_answers_304_only_for_a_copy_that_holds_every_post(
    live_server: LiveServer, client: httpx.Client
) -> None:
    user = api_user(client)
    made = user.post("/api/boards/chat/threads", {"title": f"日付{unique_name()}", "body": "x"})
    thread_id = made.json()["id"]
    key = key_of(client, "chat", made.json()["title"])
    got = client.get(f"/chat/dat/{key}.dat")
    modified = got.headers["last-modified"]
    headers = {"If-Modified-Since": modified}
    later = formatdate(2_000_000_000, usegmt=True)
    assert (
        client.get(f"/chat/dat/{key}.dat", headers={"If-Modified-Since": later}).status_code == 304
    )
    user.post(f"/api/threads/{thread_id}/posts", {"body": "新しい"})
    again = client.get(f"/chat/dat/{key}.dat", headers=headers)
    assert again.status_code == 200 and "新しい" in again.content.decode("cp932")
    subject = client.get("/chat/subject.txt")
    assert "last-modified" in subject.headers
    assert client.get("/chat/subject.txt", headers={"If-Modified-Since": later}).status_code == 304


def test_last_modified_is_never_later_than_the_last_complete_second() -> None:
    now = datetime(2026, 12, 2, 1, 0, 0, 500000, tzinfo=UTC)
    same_second = datetime(2026, 12, 2, 1, 0, 0, 100000, tzinfo=UTC)
    earlier = datetime(2026, 12, 2, 0, 59, 58, 900000, tzinfo=UTC)
    assert shown_modified(same_second, now) == int(now.timestamp()) - 1
    assert shown_modified(earlier, now) == int(earlier.timestamp())


def test_head_txt_and_bbsmenu_list_the_boards(
    live_server: LiveServer, client: httpx.Client
) -> None:
    head = client.get("/chat/head.txt")
    assert head.status_code == 200 and "ゲームの話も" in head.content.decode("cp932")
    menu = client.get("/bbsmenu.html", headers={"Host": "127.0.0.1"})
    text = menu.content.decode("cp932")
    assert f'<A HREF="http://127.0.0.1:{live_server.port}/chat/">雑談</A>' in text
    assert f"http://127.0.0.1:{live_server.port}/eitsuku/" in text
    listed = client.get("/bbsmenu.json").json()["menu_list"][0]["category_content"]
    assert {"chat", "lobby", "eitsuku"} <= {b["directory_name"] for b in listed}


# --- the form's decoding -------------------------------------------------------------------------


def test_references_decode_to_characters_but_never_to_control_characters() -> None:
    assert bbs_cgi.decode_references("a&#128512;b&#x1F600;") == "a😀b😀"
    assert bbs_cgi.decode_references("&#0;&#7;&#55296;&#1114112;") == "&#0;&#7;&#55296;&#1114112;"
    fields = bbs_cgi.read_form(jdim_body([("MESSAGE", "<&>\n😀"), ("FROM", "名#キー")]), "")
    assert fields == {"MESSAGE": "<&>\n😀", "FROM": "名#キー"}


def test_stored_mail_is_none_for_web_posts(session: Session) -> None:
    from app.accounts import users as accounts

    author = accounts.register(session, unique_name(), "password123")
    thread, post = forum.create_thread(
        session, forum.get_board(session, "chat"), author, "題", "x", "s"
    )
    assert post.mail is None
    line = dat.dat_line(post, thread.title)
    assert line.split("<>")[1] == ""
    assert isinstance(session.get(Post, post.id), Post)
    assert isinstance(session.get(Thread, thread.id), Thread)
