"""Benchmark: time to serve a 1,000-post thread page, against serving the same bytes as a
static file from the same server.

    python bench/thread_page.py                    # SQLite file
    python bench/thread_page.py postgresql+psycopg://postgres@127.0.0.1:55432/postgres

A thread of 1,000 posts (talk of varied length with >>N anchors and URLs, every 10th a
command line with the bot's answer) is read as one page (`BBSGM_POSTS_PER_PAGE=1000`) from
`bbsgm serve`, whose app also serves the page's own bytes, saved once, from a StaticFiles
mount: same process, middleware and connection. Sequential GETs, median of 30 each after a
warm-up. Prints both medians and last ``thread_page_ratio <x>``: page time / static time.

Also printed, not in the ratio: the page answered 304 to a browser that has it
(If-None-Match), and the page right after each of 30 あぼーん / 戻す by the GM (written straight
in the database, as another worker would): the posts are then put together again from each
post's kept fragment (app/web/thread_cache.py).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    ROOT,
    SECRET,
    Server,
    free_port,
    machine,
    make_users,
    percentile,
    scratch_database,
)
from sqlalchemy import select

from app.db.engine import Database
from app.db.models import User
from app.forum import moderation
from app.forum import service as forum
from app.gm import service as gm

POSTS = 1000
ROUNDS = 30


def fill(db: Database) -> int:
    users = make_users(db, ["pagegm", "pagea", "pageb", "pagec"])
    with db.session() as session:
        master = session.get(User, users["pagegm"][0])
        people = [session.get(User, users[n][0]) for n in ("pagea", "pageb", "pagec")]
        assert master is not None and all(people)
        game = gm.create_game(session, master, "eitsuku", "千レス", {}, SECRET)
        for person in people[:2]:
            assert person is not None
            gm.submit_post(session, game.thread_id, person, "JOIN", SECRET)
        gm.submit_post(session, game.thread_id, master, "START", SECRET)
        thread = forum.get_thread(session, game.thread_id)
        while thread.post_count < POSTS:
            n = thread.post_count
            who = people[n % 3]
            assert who is not None
            if n % 10 == 0:
                body = "SET 主演 役者9"  # a syntax error: the bot answers with a caret
            else:
                body = (
                    f">>{max(1, n - 3)} それな\n"
                    + "長文の書き込みです。" * (n % 7)
                    + (f"\nhttp://127.0.0.1/ref/{n}" if n % 5 == 0 else "")
                )
            gm.submit_post(session, thread.id, who, body, SECRET)
            session.refresh(thread)
        session.commit()
        return thread.id


def median_get(client: httpx.Client, path: str) -> float:
    client.get(path)
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        reply = client.get(path)
        times.append(time.perf_counter() - t0)
        assert reply.status_code == 200
    return percentile(times, 0.5)


def median_not_modified(client: httpx.Client, path: str) -> float:
    tag = client.get(path).headers["etag"]
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        reply = client.get(path, headers={"If-None-Match": tag})
        times.append(time.perf_counter() - t0)
        assert reply.status_code == 304
    return percentile(times, 0.5)


def median_after_hiding(client: httpx.Client, db: Database, thread_id: int, path: str) -> float:
    """Each round the GM hides post 5 or shows it again, then the page is read."""
    times = []
    for round_ in range(ROUNDS):
        with db.session() as session:
            master = session.scalar(select(User).where(User.name == "pagegm"))
            moderation.set_hidden(session, thread_id, 5, master, hidden=round_ % 2 == 0)
            session.commit()
        t0 = time.perf_counter()
        reply = client.get(path)
        times.append(time.perf_counter() - t0)
        assert reply.status_code == 200 and ("あぼーん" in reply.text) == (round_ % 2 == 0)
    return percentile(times, 0.5)


def app_with_static() -> Any:
    """bbsgm's app plus a mount serving BENCH_STATIC_DIR; for uvicorn --factory."""
    from fastapi.staticfiles import StaticFiles

    from app.main import create_app

    app = create_app()
    app.mount("/bench-static", StaticFiles(directory=os.environ["BENCH_STATIC_DIR"]))
    return app


def main() -> None:
    server_url = sys.argv[1] if len(sys.argv) > 1 else None
    print(f"machine: {machine()}")
    with scratch_database(server_url) as url, tempfile.TemporaryDirectory() as static:
        db = Database(url)
        thread_id = fill(db)
        port = free_port()
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "BENCH_STATIC_DIR": static,
            "BBSGM_DATABASE_URL": url,
            "BBSGM_SECRET_KEY": SECRET,
            "BBSGM_TICK_SECONDS": "0",
            "BBSGM_DELIVER_SECONDS": "0",
            "BBSGM_POSTS_PER_PAGE": "1000",
        }
        args = [sys.executable, "-m", "uvicorn", "--factory", "bench.thread_page:app_with_static"]
        server = Server([*args, "--port", str(port), "--log-level", "warning"], env, port)
        try:
            server.wait_ready("/api/boards")
            with httpx.Client(base_url=server.url, timeout=60) as client:
                page = client.get(f"/threads/{thread_id}")
                assert page.status_code == 200 and page.text.count('class="post ') >= POSTS
                (Path(static) / "thread.html").write_bytes(page.content)
                dynamic = median_get(client, f"/threads/{thread_id}")
                static_time = median_get(client, "/bench-static/thread.html")
                not_modified = median_not_modified(client, f"/threads/{thread_id}")
                changed = median_after_hiding(client, db, thread_id, f"/threads/{thread_id}")
        finally:
            server.stop()
            db.dispose()
    size = len(page.content) / 1024
    print(f"database: {make_url_name(url)}, page {size:.0f} KiB, {POSTS} posts")
    print(f"thread page   {dynamic * 1000:8.1f} ms (median of {ROUNDS})")
    print(f"static file   {static_time * 1000:8.1f} ms")
    print(f"not modified  {not_modified * 1000:8.1f} ms (304 to If-None-Match)")
    print(f"after あぼーん {changed * 1000:8.1f} ms (posts put together again from fragments)")
    print(f"thread_page_ratio {dynamic / static_time:.2f}")


def make_url_name(url: str) -> str:
    return url.split(":", 1)[0]


if __name__ == "__main__":
    main()
