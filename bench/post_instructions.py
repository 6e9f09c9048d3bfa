"""Benchmark: CPU instructions per command post, counted by valgrind (callgrind), against a bare
FastAPI endpoint inserting one row — both the real ASGI app called in process, no sockets.

    apt-get install valgrind
    python bench/post_instructions.py [PG URL]

Why: on a shared virtual machine wall-clock throughput moves by ±30 % within minutes
(docs/performance.md), while an instruction count repeats to about 1 %. A change to the post
path shows here as a number that does not depend on what else the machine is doing. It leaves
out what `post_throughput.py` measures and this cannot: uvicorn, sockets, waiting.

With a PostgreSQL server URL the database is a fresh one made there, and what is counted is
the client's side of a post (the app's Python, psycopg, libpq), not the server's.

How: a child process builds a SQLite file (one えいつく game per client, as post_throughput.py
deals them), warms up, then posts the script's command lines through the whole app (every
middleware, the route, the game master, commit) one after another. It runs twice under
callgrind, with two games and with four; the difference, divided by the posts between them, is
the cost of a post without start-up. The baseline is post_throughput.py's bare endpoint
(`baseline_app`: one INSERT with the same engine settings), counted the same way. Prints both
and last ``post_instructions_ratio <x>`` = instructions per post ÷ per bare insert.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, SECRET, machine, scratch_database
from post_throughput import deal_games, record_script

GAMES = (2, 4)  # games posted in the two counted runs (after one game of warm-up)
SERVER_URL = "BENCH_INSTRUCTIONS_SERVER"  # the PostgreSQL server, for the child processes


async def call(app: Any, path: str, body: dict[str, str], headers: dict[str, str]) -> int:
    """One request through the ASGI app; returns the status (the body is checked by callers)."""
    raw = json.dumps(body).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            *((k.lower().encode(), v.encode()) for k, v in headers.items()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(raw)).encode()),
            (b"host", b"bench"),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    sent = False
    answer: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        await asyncio.Event().wait()  # the client never goes away
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
        elif message["type"] == "http.response.body":
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    if answer["status"] != 201:
        raise RuntimeError(f"{path}: {answer['status']} {answer['body'][:300]!r}")
    if path.endswith("/posts") and not json.loads(answer["body"])["replies"][0]["ok"]:
        raise RuntimeError(f"refused: {answer['body'][:300]!r}")
    return int(answer["status"])


def child(which: str, games: int) -> None:
    """Under callgrind: set up, warm up with one game, then post ``games`` games' lines."""
    from app.archive.search import index_pending
    from app.config import Settings
    from app.db.engine import Database
    from app.main import create_app

    with scratch_database(os.environ.get(SERVER_URL)) as url:
        db = Database(url)
        script = record_script(db)
        plan = deal_games(db, 1, games + 1)[0]
        db.dispose()
        os.environ["BENCH_DATABASE_URL"] = url
        if which == "bbsgm":
            settings = Settings(
                database_url=url,
                secret_key=SECRET,
                tick_seconds=0,
                deliver_seconds=0,
                posts_per_minute_per_account=1_000_000,
                posts_per_minute_per_address=1_000_000,
                # Indexed once at the end, as a busy server does (in batches of a second's
                # posts), instead of on a clock that valgrind's slowness would make tick
                # every few posts.
                search_index_seconds=0,
            )
            app: Any = create_app(settings)
            requests = [
                (f"/api/threads/{thread_id}/posts", {"body": line}, token)
                for thread_id, token in plan
                for line in script
            ]
        else:
            from post_throughput import baseline_app

            app = baseline_app()
            lines = [f"SET 主演 役者{i % 6 + 1}" for i in range(len(script))]
            requests = [("/rows", {"body": line}, "") for _ in plan for line in lines]

        async def run() -> None:
            async with app.router.lifespan_context(app):
                for path, body, token in requests:
                    headers = {"Authorization": f"Bearer {token}"} if token else {}
                    await call(app, path, body, headers)
                if which == "bbsgm":
                    index_pending(app.state.database)

        asyncio.run(run())


def counted(which: str, games: int) -> int:
    """Instructions of one child run, as callgrind reports them."""
    with tempfile.TemporaryDirectory() as tmp:
        args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out"]
        args += [sys.executable, __file__, "--child", which, str(games)]
        env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT)}
        done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or found is None:
            raise RuntimeError(f"{which} run failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
        return int(found.group(1))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")
    if len(sys.argv) > 1:
        os.environ[SERVER_URL] = sys.argv[1]
    print(f"machine: {machine()}")
    with scratch_database(os.environ.get(SERVER_URL)) as url:
        from app.db.engine import Database

        db = Database(url)
        posts_per_game = len(record_script(db))
        db.dispose()
    between = (GAMES[1] - GAMES[0]) * posts_per_game
    per: dict[str, float] = {}
    for which in ("bbsgm", "baseline"):
        low, high = (counted(which, games) for games in GAMES)
        per[which] = (high - low) / between
        what = "command post" if which == "bbsgm" else "bare insert"
        print(f"{which:<9} {per[which] / 1e6:8.2f} M instructions per {what} ({between} requests)")
    print(f"post_instructions_ratio {per['bbsgm'] / per['baseline']:.2f}")


if __name__ == "__main__":
    main()
