"""Profile of the post path: where `bbsgm serve` spends its time while 16 clients post
えいつく commands (the load of bench/post_throughput.py), sampled with py-spy.

    pip install py-spy
    python bench/profile_post.py [postgresql+psycopg://…] [--gil] [--kind=<kind>]

Prints the functions with the largest share of samples (inclusive, and self) over every thread
of the server process, and the posting rate while profiled. By default a thread counts while it
runs or waits in C (so a thread blocked on SQLite's write lock shows up: where requests wait);
with --gil only the thread holding the GIL counts (where the CPU goes). With --kind=<kind>,
the load is that kind's scripted games, as `post_throughput.py --all-kinds` posts them.
"""

from __future__ import annotations

import asyncio
import collections
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bbsgm_serve, machine, scratch_database
from post_throughput import (
    CLIENTS,
    GAMES_EACH,
    deal_games,
    feeds,
    kind_feeds,
    record_script,
    run_bbsgm,
)

from app.db.engine import Database

TOP = 30
PROFILE_SECONDS = 15.0


def frame_name(frame: str) -> str:
    """py-spy raw frames look like `function (path/to/file.py:123)`; drop the line."""
    name, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    for marker in ("/site-packages/", "/work/main/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
    return f"{name} ({path})"


def summarise(raw: Path) -> None:
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = [frame_name(f) for f in stack.split(";")[1:]]  # [0] is the process/thread
        if not frames:
            continue
        total += count
        for name in set(frames):
            inclusive[name] += count
        own[frames[-1]] += count
    print(f"\n{total} busy samples; inclusive share (app and libraries):")
    for name, count in inclusive.most_common(TOP):
        print(f"  {count / total:6.1%}  {name}")
    print("\ninclusive share, bbsgm's own functions and the grammar library:")
    ours = [(n, c) for n, c in inclusive.most_common() if "(app/" in n or "(lark/" in n]
    for name, count in ours[:TOP]:
        print(f"  {count / total:6.1%}  {name}")
    print("\nself share:")
    for name, count in own.most_common(TOP):
        print(f"  {count / total:6.1%}  {name}")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    server_url = args[0] if args else None
    kind = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--kind=")), None)
    if shutil.which("py-spy") is None:
        raise SystemExit("py-spy is not installed: pip install py-spy")
    print(f"machine: {machine()}")
    with scratch_database(server_url) as url, tempfile.TemporaryDirectory() as tmp:
        db = Database(url)
        if kind is None:
            clients = feeds(deal_games(db, CLIENTS, GAMES_EACH), record_script(db))
        else:
            clients = kind_feeds(db, kind, CLIENTS)[0]
        db.dispose()
        server = bbsgm_serve(url, 2 if server_url else 1)
        raw = Path(tmp) / "profile.txt"
        spy = [
            "py-spy",
            "record",
            "--format",
            "raw",
            "--rate",
            "200",
            "--subprocesses",
            "--pid",
            str(server.proc.pid),
            "--output",
            str(raw),
        ]
        if "--gil" in sys.argv:
            spy.append("--gil")
        sampler = subprocess.Popen(spy, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            result = asyncio.run(run_bbsgm(server.url, clients, PROFILE_SECONDS))
        finally:
            sampler.send_signal(2)  # SIGINT: py-spy writes what it has
            sampler.wait(timeout=60)
            server.stop()
        rate = result["requests"] / result["elapsed"]
        print(f"profiled: {result['requests']} posts, {rate:.1f}/s")
        summarise(raw)
        if keep := os.environ.get("BENCH_PROFILE_RAW"):  # the stacks, for a closer look
            shutil.copy(raw, keep)


if __name__ == "__main__":
    main()
