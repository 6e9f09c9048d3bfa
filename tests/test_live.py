"""Live threads: Server-Sent Events deliver every new post once, in order, and resume from
Last-Event-ID after a reconnect (HTTP over loopback)."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import ApiUser, LiveServer, api_user


def read_events(
    url: str, headers: dict[str, str], out: queue.Queue[dict[str, Any]], stop: threading.Event
) -> None:
    try:
        with (
            httpx.Client(timeout=httpx.Timeout(30, read=30)) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            event: dict[str, Any] = {}
            for line in response.iter_lines():
                if stop.is_set():
                    return
                if not line:
                    if event.get("event") == "post":
                        out.put(event)
                    event = {}
                    continue
                field, _, value = line.partition(":")
                event[field] = value.strip()
    except httpx.TransportError:
        if not stop.is_set():  # a test that stopped the server after `stop` cut the stream
            raise


@pytest.fixture
def thread(client: httpx.Client) -> Iterator[tuple[ApiUser, int]]:
    user = api_user(client)
    created = user.post("/api/boards/chat/threads", {"title": "ライブ", "body": "1"}).json()
    yield user, created["id"]


def collect(out: queue.Queue[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    return [out.get(timeout=20) for _ in range(count)]


def start_reader(
    url: str, headers: dict[str, str] | None = None
) -> tuple[queue.Queue[dict[str, Any]], threading.Event]:
    out: queue.Queue[dict[str, Any]] = queue.Queue()
    stop = threading.Event()
    threading.Thread(target=read_events, args=(url, headers or {}, out, stop), daemon=True).start()
    return out, stop


def test_new_posts_stream_live_once_each(
    live_server: LiveServer, thread: tuple[ApiUser, int]
) -> None:
    user, thread_id = thread
    out, stop = start_reader(f"{live_server.url}/threads/{thread_id}/events")
    try:
        first = collect(out, 1)
        assert first[0]["id"] == "1"
        for i in range(2, 6):
            assert (
                user.post(f"/api/threads/{thread_id}/posts", {"body": f"live {i}"}).status_code
                == 201
            )
        events = collect(out, 4)
        assert [e["id"] for e in events] == ["2", "3", "4", "5"]
        payload = json.loads(events[-1]["data"])
        assert payload["body"] == "live 5" and payload["number"] == 5
        assert 'id="5"' in payload["html"] and "live 5" in payload["html"]
        assert out.empty()
    finally:
        stop.set()


def test_many_streams_of_one_thread_each_get_every_post_once(
    live_server: LiveServer, thread: tuple[ApiUser, int]
) -> None:
    """The streams of a thread share their reads (app/live/hub.py): each still gets every post
    once, in order, with its own data, whether it came before the posts or among them."""
    user, thread_id = thread
    url = f"{live_server.url}/api/threads/{thread_id}/events?after=1"
    readers = [start_reader(url) for _ in range(20)]
    try:
        for i in range(2, 6):
            reply = user.post(f"/api/threads/{thread_id}/posts", {"body": f"みんなへ {i}"})
            assert reply.status_code == 201
            readers.append(start_reader(url))
        for i in range(6, 9):
            user.post(f"/api/threads/{thread_id}/posts", {"body": f"みんなへ {i}"})
        for out, _stop in readers:
            events = collect(out, 7)
            assert [e["id"] for e in events] == [str(n) for n in range(2, 9)]
            assert [json.loads(e["data"])["body"] for e in events] == [
                f"みんなへ {n}" for n in range(2, 9)
            ]
            assert out.empty()
    finally:
        for _out, stop in readers:
            stop.set()


def test_reconnect_resumes_from_last_event_id(
    live_server: LiveServer, thread: tuple[ApiUser, int]
) -> None:
    user, thread_id = thread
    for i in range(2, 5):
        user.post(f"/api/threads/{thread_id}/posts", {"body": f"{i}"})
    out, stop = start_reader(
        f"{live_server.url}/api/threads/{thread_id}/events", {"Last-Event-ID": "2"}
    )
    try:
        assert [e["id"] for e in collect(out, 2)] == ["3", "4"]
        user.post(f"/api/threads/{thread_id}/posts", {"body": "5"})
        assert [e["id"] for e in collect(out, 1)] == ["5"]
    finally:
        stop.set()


def test_bot_replies_stream_too(live_server: LiveServer, client: httpx.Client) -> None:
    master = api_user(client)
    created = master.post("/api/games", {"kind": "eitsuku", "title": "ライブ卓"}).json()
    out, stop = start_reader(f"{live_server.url}/threads/{created['thread_id']}/events")
    try:
        collect(out, 1)
        player = api_user(client)
        player.post(f"/api/threads/{created['thread_id']}/posts", {"body": "JOIN"})
        events = collect(out, 2)
        kinds = [json.loads(e["data"])["kind"] for e in events]
        assert kinds == ["command", "gm"]
    finally:
        stop.set()


def test_unknown_thread_stream_is_404(client: httpx.Client) -> None:
    assert client.get("/threads/999999999/events").status_code == 404


def test_postgres_notify_reaches_another_process(
    settings: Any, database: Any, thread: tuple[ApiUser, int]
) -> None:
    """Several server processes on PostgreSQL: a post made through one process wakes the
    streams of another through LISTEN/NOTIFY (polling is switched off in that process)."""
    import os
    import subprocess
    import sys
    import time

    if not settings.database_url.startswith("postgresql"):
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's; SQLite serves one process")
    from tests.conftest import _free_port

    user, thread_id = thread
    port = _free_port()
    env = {
        **os.environ,
        "BBSGM_DATABASE_URL": settings.database_url,
        "BBSGM_SECRET_KEY": settings.resolved_secret_key(),
        "BBSGM_LIVE_POLL_SECONDS": "3600",
        "BBSGM_TICK_SECONDS": "0",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                if httpx.get(f"{url}/api/boards", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        out, stop = start_reader(f"{url}/threads/{thread_id}/events")
        try:
            assert [e["id"] for e in collect(out, 1)] == ["1"]
            user.post(f"/api/threads/{thread_id}/posts", {"body": "別のプロセスから"})
            event = out.get(timeout=60)  # only NOTIFY can deliver this: polling is off
            assert event["id"] == "2"
        finally:
            stop.set()
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_postgres_listens_only_while_this_process_has_streams(settings: Any, database: Any) -> None:
    """Every post's ``pg_notify`` wakes each process that LISTENs, so a process holds its
    LISTEN connection only while it has streams: none before the first, a stream's first
    read waits until it LISTENs (a post committed after that read reaches it by NOTIFY), and
    IDLE_SECONDS after the last stream left the connection is closed."""
    import asyncio
    import time

    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from app.live import hub as live

    if not settings.database_url.startswith("postgresql"):
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    url = make_url(settings.database_url).set(drivername="postgresql")
    hub = live.Hub()
    listener = live.PostgresListener(url.render_as_string(hide_password=False), hub)
    listener.IDLE_SECONDS = 0.5
    thread_id = 987_654_321

    def backend_alive(pid: int) -> bool:
        with database.engine.connect() as conn:
            query = text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid")
            return bool(conn.execute(query, {"pid": pid}).scalar_one())

    def notify() -> None:
        with database.engine.begin() as conn:
            conn.execute(text("SELECT pg_notify(:c, :p)"), {"c": live.CHANNEL, "p": str(thread_id)})

    async def load(after: int) -> live.Batch:
        return live.Batch(b"", after, 0)

    async def until(condition: Any, what: str, seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, f"never: {what}"
            await asyncio.sleep(0.01)

    async def main() -> int:
        await asyncio.sleep(1.5)  # a second and a half without streams
        assert not listener.is_listening and listener.backend_pid is None
        subscription = hub.subscribe(thread_id, "test", load)
        await hub.ready()
        assert listener.is_listening, "the first read came before LISTEN"
        pid = listener.backend_pid
        assert pid is not None and backend_alive(pid)
        subscription.event.clear()
        notify()  # another process's post, committed after the stream's first read
        await until(subscription.event.is_set, "the notification woke the stream")
        hub.unsubscribe(subscription)
        await until(lambda: not listener.is_listening, "LISTEN ended without streams")
        return pid

    listener.start()
    try:
        pid = asyncio.run(main())
    finally:
        listener.stop()
    for _ in range(200):  # the server ends the closed connection's backend
        if not backend_alive(pid):
            break
        time.sleep(0.05)
    assert not backend_alive(pid)


def test_postgres_streams_read_again_when_listen_comes_up(settings: Any) -> None:
    """Streams that were live while their process did not LISTEN (the connection down, or
    slower than a stream's wait for it) may have missed a NOTIFY: when LISTEN comes up, every
    thread with streams is woken to read again."""
    import asyncio
    import time

    from sqlalchemy.engine import make_url

    from app.live import hub as live

    if not settings.database_url.startswith("postgresql"):
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    url = make_url(settings.database_url).set(drivername="postgresql")
    hub = live.Hub()
    listener = live.PostgresListener(url.render_as_string(hide_password=False), hub)

    async def load(after: int) -> live.Batch:
        return live.Batch(b"", after, 0)

    async def main() -> None:
        subscription = hub.subscribe(987_654_322, "test", load)  # no wait for LISTEN
        subscription.event.clear()
        listener.start()
        deadline = time.monotonic() + 20
        while not subscription.event.is_set():
            assert time.monotonic() < deadline, "never woken when LISTEN came up"
            await asyncio.sleep(0.01)
        assert listener.is_listening
        hub.unsubscribe(subscription)

    try:
        asyncio.run(main())
    finally:
        listener.stop()


def test_a_hidden_posts_text_is_not_served_from_a_read_shared_before_the_hide(
    live_server: LiveServer, client: httpx.Client
) -> None:
    """The streams of a thread share their reads until the thread's next wake-up: an あぼーん
    wakes the thread too, so a stream that (re)connects after it reads the post afresh, hidden,
    never the text a read made before the hide still held."""
    master = api_user(client)
    created = master.post("/api/games", {"kind": "eitsuku", "title": "隠す卓"}).json()
    thread_id = created["thread_id"]
    secret = "あとで隠す話"
    posted = master.post(f"/api/threads/{thread_id}/posts", {"body": secret})
    number = posted.json()["post"]["number"]
    url = f"{live_server.url}/api/threads/{thread_id}/events"
    first, stop_first = start_reader(url)
    try:
        before = collect(first, number)
        assert json.loads(before[-1]["data"])["body"] == secret
        hidden = master.post(f"/api/threads/{thread_id}/posts/{number}/hide", {})
        assert hidden.status_code == 200, hidden.text
        second, stop_second = start_reader(url)
        try:
            after = collect(second, number)
            assert [e["id"] for e in after] == [e["id"] for e in before]
            assert secret not in json.dumps(json.loads(after[-1]["data"]), ensure_ascii=False)
        finally:
            stop_second.set()
    finally:
        stop_first.set()
