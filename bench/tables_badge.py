"""Benchmark: the thread page read signed in (the header's badge: tables awaiting you and
unread notices, issue #43) against the same page signed out and a static file, in one run.

    python bench/tables_badge.py                    # SQLite file
    python bench/tables_badge.py postgresql+psycopg://postgres@127.0.0.1:55432/postgres

The same 1,000-post thread as bench/thread_page.py (its ``fill``), served by the same app with
its static mount. The reader signed in is one of the game's players, whom the game waits for:
the badge shows 1. Sequential GETs, median of 30 each after a warm-up. Prints the medians,
``thread_page_ratio`` (signed out, as bench/thread_page.py) and last
``thread_page_signed_in_ratio <x>``: the signed-in page time / static time (floor: the same
as thread_page_ratio's, docs/performance.md).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, SECRET, Server, free_port, machine, scratch_database
from thread_page import POSTS, ROUNDS, fill, make_url_name, median_get

from app.db.engine import Database

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def signed_in(client: httpx.Client, name: str) -> None:
    form = client.get("/login")
    found = TOKEN.search(form.text)
    assert found is not None
    answer = client.post(
        "/login",
        data={"name": name, "password": "password123", "csrf_token": found.group(1)},
    )
    assert answer.status_code == 303, answer.text


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
        path = f"/threads/{thread_id}"
        try:
            server.wait_ready("/api/boards")
            with (
                httpx.Client(base_url=server.url, timeout=60) as client,
                httpx.Client(base_url=server.url, timeout=60) as reader,
            ):
                page = client.get(path)
                assert page.status_code == 200 and page.text.count('class="post ') >= POSTS
                (Path(static) / "thread.html").write_bytes(page.content)
                signed_in(reader, "pagea")
                mine = reader.get(path).text
                assert 'class="badge badge-turns"' in mine, "the reader's badge is missing"
                static_time = median_get(client, "/bench-static/thread.html")
                signed_out = median_get(client, path)
                with_badge = median_get(reader, path)
        finally:
            server.stop()
            db.dispose()
    print(f"database: {make_url_name(url)}, {POSTS} posts")
    print(f"static file          {static_time * 1000:8.1f} ms (median of {ROUNDS})")
    print(f"thread page          {signed_out * 1000:8.1f} ms (signed out)")
    print(f"thread page, badge   {with_badge * 1000:8.1f} ms (signed in, 1 table awaiting)")
    print(f"thread_page_ratio {signed_out / static_time:.2f}")
    print(f"thread_page_signed_in_ratio {with_badge / static_time:.2f}")


if __name__ == "__main__":
    main()
