"""Read-only 2ch-style files for dedicated BBS browsers (docs/archive.md, "Dedicated browsers"):
``subject.txt`` and ``dat/{key}.dat`` in Shift_JIS (cp932)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy.orm import Session

from app.archive import dat
from app.db.models import Post, Thread
from app.forum import service as forum
from tests.conftest import api_user

EXPECTED = Path(__file__).parent / "data" / "archive_thread.dat"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_dat_matches_the_hand_written_file_byte_for_byte(session: Session) -> None:
    """Escapes, ` <br> `, the title on the first line only, あぼーん (padded to the bytes of the
    text it hides), and a numeric character reference for what cp932 cannot encode (the emoji)."""
    board = forum.get_board(session, "chat")
    thread = Thread(
        board_id=board.id,
        title='テスト<スレ> & "引用" 😀',
        created_at=at("2026-11-22T01:28:09.120000"),
        last_post_at=at("2026-11-23T03:04:06"),
        post_count=4,
    )
    session.add(thread)
    session.flush()
    rows = [
        ("太郎", "talk", "2026-11-22T01:28:09.120000", "Ab+/Cd12",
         "こんにちは\n>>1 を見てね <b>太字</b> & \"quote\" 'single'"),
        ("★GM", "gm", "2026-11-22T15:00:00.005000", "GMbot001",
         "絵文字😀と〜波ダッシュと髙橋さん\n\n空行の後"),
        ("花子", "talk", "2026-11-23T03:04:05.678901", "Hana0003", "消される本文"),
        ("次郎", "talk", "2026-11-23T03:04:06", "Jiro0004", "a<>b<>c\tタブ  二つの空白"),
    ]  # fmt: skip
    for number, (name, kind, when, daily, body) in enumerate(rows, start=1):
        session.add(
            Post(
                thread_id=thread.id,
                number=number,
                author_name=name,
                daily_id=daily,
                body=body,
                kind=kind,
                created_at=at(when),
                hidden_at=at(when) if name == "花子" else None,
            )
        )
    session.flush()
    assert dat.dat(session, thread) == EXPECTED.read_bytes()


def test_subject_lines_are_key_title_and_count(session: Session) -> None:
    board = forum.get_board(session, "chat")
    thread = Thread(
        board_id=board.id, title="題<名> 🎲", post_count=12, last_post_at=at("2099-01-01T00:00:00")
    )
    session.add(thread)
    session.flush()
    first = dat.subject(session, board).split(b"\n")[0]
    assert first == f"{thread.dat_key}.dat<>題&lt;名&gt; &#127922; (12)".encode("cp932")


def dat_key(client: httpx.Client, board: str, thread_id: int) -> int:
    """The thread's key, as its board's subject.txt lists it."""
    for line in client.get(f"/{board}/subject.txt").content.decode("cp932").splitlines():
        key = line.split(".dat<>")[0]
        if (
            client.get(f"/test/read.cgi/{board}/{key}/", follow_redirects=False).headers["location"]
            == f"/threads/{thread_id}"
        ):
            return int(key)
    raise AssertionError(f"thread {thread_id} is not in /{board}/subject.txt")


def thread_via_api(client: httpx.Client) -> tuple[int, str]:
    user = api_user(client)
    created = user.post(
        "/api/boards/chat/threads", {"title": "専ブラで読むスレ", "body": "一つ目\n二行目 😀"}
    )
    assert created.status_code == 201, created.text
    thread_id = created.json()["id"]
    for n in range(2, 4):
        reply = user.post(f"/api/threads/{thread_id}/posts", {"body": f"{n}つ目 <>&"})
        assert reply.status_code == 201
    return thread_id, user.name


def test_dat_and_subject_over_http(client: httpx.Client) -> None:
    thread_id, name = thread_via_api(client)
    key = dat_key(client, "chat", thread_id)
    subject = client.get("/chat/subject.txt")
    assert subject.status_code == 200
    assert subject.headers["content-type"].lower() == "text/plain; charset=shift_jis"
    assert f"{key}.dat<>専ブラで読むスレ (3)\n" in subject.content.decode("cp932")
    got = client.get(f"/chat/dat/{key}.dat")
    assert got.status_code == 200 and "last-modified" in got.headers
    text = got.content.decode("cp932")
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) == 4
    assert lines[0].startswith(f"{name}<><>") and lines[0].endswith("<>専ブラで読むスレ")
    assert "<> 一つ目 <br> 二行目 &#128512; <>" in lines[0]
    assert lines[2].endswith("<> 3つ目 &lt;&gt;&amp; <>")
    # A browser's differential fetch: the bytes after the lines it has.
    start = got.content.index(b"\n") + 1
    tail = client.get(f"/chat/dat/{key}.dat", headers={"Range": f"bytes={start}-"})
    assert tail.status_code == 206 and tail.content == got.content[start:]
    size = len(got.content)
    assert tail.headers["content-range"] == f"bytes {start}-{size - 1}/{size}"
    beyond = client.get(f"/chat/dat/{key}.dat", headers={"Range": f"bytes={size + 1}-"})
    assert beyond.status_code == 416
    setting = client.get("/chat/SETTING.TXT")
    assert setting.status_code == 200 and "BBS_TITLE=雑談" in setting.content.decode("cp932")
    opened = client.get(f"/test/read.cgi/chat/{key}/", follow_redirects=False)
    assert opened.status_code == 301 and opened.headers["location"] == f"/threads/{thread_id}"


def test_dat_routes_never_shadow_the_site(client: httpx.Client) -> None:
    thread_id, _name = thread_via_api(client)
    key = dat_key(client, "chat", thread_id)
    assert client.get(f"/lobby/dat/{key}.dat").status_code == 404  # another board's
    assert client.get(f"/lobby/dat/{thread_id}.dat").status_code == 404
    assert client.get("/chat/dat/abc.dat").status_code == 404
    assert client.get("/chat/dat/0.dat").status_code == 404
    assert client.get(f"/chat/dat/{10**12}.dat").status_code == 404
    assert client.get("/nosuchboard/subject.txt").status_code == 404
    api = client.get("/api/subject.txt")
    assert api.status_code == 404 and "detail" in api.json()
    for path in ("/static/subject.txt", "/games/subject.txt", "/threads/subject.txt"):
        assert client.get(path).status_code in (404, 422), path
    assert client.get("/boards/chat").status_code == 200
    assert client.get(f"/threads/{thread_id}").status_code == 200
    assert client.get("/login").status_code == 200
