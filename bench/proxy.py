"""Benchmark: docs/deploy.md's HAProxy configuration tried on this machine — Debian's haproxy,
`balance leastconn`, in front of two single-worker `bbsgm serve` processes on loopback.

    python bench/proxy.py                       # both processes on one SQLite file
    python bench/proxy.py --database-url postgresql+psycopg://postgres@127.0.0.1:55432/postgres

The configuration is read from the ```haproxy block of docs/deploy.md, as written there; only
the addresses are changed (the frontend and the two servers to free loopback ports, the stats
socket to a temporary directory) and the lines for running as a system daemon dropped
(`daemon`, `user`, `group`, `log`). `haproxy -c` checks it before it starts.

Once both processes are up and HAProxy's checks see both UP (polled, not waited for), a bounded
load: rounds of GETs of a thread page (30 posts) from concurrent keep-alive clients, each round
once straight to the first process and once through the proxy, then posts through the proxy
with the JSON API, and one live stream (Server-Sent Events) through the proxy that must carry a
post made meanwhile. Prints how HAProxy split the requests between the two processes (its stats
socket's CSV: responses per server) and last ``proxy_ratio <x>``: pages a second through the
proxy (two processes) / pages a second straight to one process, best round of each.

Every process started is stopped at the end, on error too.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, Server, bbsgm_serve, free_port, machine, make_users, scratch_database

from app.db.engine import Database

HAPROXY_CANDIDATES = ("haproxy", "/usr/sbin/haproxy")
INSTALL = "apt-get install -y haproxy"
DEPLOY_DOC = ROOT / "docs" / "deploy.md"
THREAD_POSTS = 30
CLIENTS = 8
DEADLINE_SECONDS = 240.0  # the whole run, whatever the flags


def find_haproxy() -> str | None:
    for candidate in HAPROXY_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    return None


def documented_config() -> str:
    """The first ```haproxy block of docs/deploy.md."""
    match = re.search(r"```haproxy\n(.*?)```", DEPLOY_DOC.read_text(encoding="utf-8"), re.S)
    if match is None:
        raise SystemExit(f"no ```haproxy block in {DEPLOY_DOC}")
    return match.group(1)


def local_config(
    text: str, frontend: int, backends: list[int], stats: Path, maxconn: int | None
) -> str:
    """The documented configuration on loopback: its bind and server addresses replaced (the
    servers in order, in each backend), its stats socket moved, its daemon lines dropped, and
    its global ``maxconn`` lowered to ``maxconn`` if given."""
    lines = []
    server_index = 0
    in_global = False
    for line in text.splitlines():
        word = line.split()[0] if line.split() else ""
        if line and not line[0].isspace():
            in_global = word == "global"
        if word in ("daemon", "user", "group", "log"):
            continue
        if in_global and word == "maxconn" and maxconn is not None:
            line = f"    maxconn {min(maxconn, int(line.split()[1]))}"
        elif word == "stats" and "socket" in line:
            line = f"    stats socket {stats} mode 600 level admin"
        elif word == "bind":
            line = f"    bind 127.0.0.1:{frontend}"
        elif word == "backend":
            server_index = 0
        elif word == "server":
            name = line.split()[1]
            rest = " ".join(line.split()[3:])
            line = f"    server {name} 127.0.0.1:{backends[server_index]} {rest}".rstrip()
            server_index += 1
        lines.append(line)
    return "\n".join(lines) + "\n"


def stats(sock: Path) -> list[dict[str, str]]:
    """HAProxy's ``show stat``, one row per proxy and server."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(5)
        conn.connect(str(sock))
        conn.sendall(b"show stat\n")
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    text = b"".join(chunks).decode().lstrip("# ")
    return list(csv.DictReader(io.StringIO(text)))


def responses(rows: list[dict[str, str]]) -> dict[tuple[str, str], int]:
    """Responses each server of each backend has answered (health checks not counted)."""
    kinds = ("hrsp_1xx", "hrsp_2xx", "hrsp_3xx", "hrsp_4xx", "hrsp_5xx", "hrsp_other")
    return {
        (row["pxname"], row["svname"]): sum(int(row[k] or 0) for k in kinds)
        for row in rows
        if row["svname"] not in ("FRONTEND", "BACKEND")
    }


def fd_maxconn() -> int | None:
    """The most connections haproxy can hold here: it needs two descriptors for each, and as
    a process not allowed to raise its hard limit (not root, or in a container) it stops
    at once when ``maxconn`` asks for more."""
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if hard == resource.RLIM_INFINITY else (hard - 100) // 2


def wait_until(
    check: Callable[[], bool], what: str, seconds: float = 60, alive: Callable[[], bool] = bool
) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and alive():
        with contextlib.suppress(OSError, httpx.TransportError):
            if check():
                return
        time.sleep(0.1)
    raise RuntimeError(f"timed out waiting for {what}")


class HAProxy:
    def __init__(self, binary: str, config: Path, log: Path) -> None:
        checked = subprocess.run(
            [binary, "-c", "-f", str(config)], capture_output=True, text=True, timeout=30
        )
        if checked.returncode != 0:
            raise RuntimeError(f"haproxy -c refused the config:\n{checked.stdout}{checked.stderr}")
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [binary, "-db", "-f", str(config)],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.log = log

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def pages_per_second(url: str, path: str, gets: int, deadline: float) -> tuple[float, int]:
    """``gets`` GETs of ``path`` from CLIENTS keep-alive clients at once; pages a second, and
    how many answers were not 200."""
    each = max(1, gets // CLIENTS)

    def client(_index: int) -> int:
        bad = 0
        with httpx.Client(base_url=url, timeout=30) as http:
            for _ in range(each):
                if time.monotonic() > deadline:
                    break
                bad += http.get(path).status_code != 200
        return bad

    started = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        bad = sum(pool.map(client, range(CLIENTS)))
    return each * CLIENTS / (time.perf_counter() - started), bad


def post_through(url: str, thread_id: int, tokens: list[str], posts: int, deadline: float) -> int:
    """``posts`` posts through the JSON API, one client per account; how many were stored."""
    each = max(1, posts // len(tokens))

    def poster(token: str) -> int:
        stored = 0
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, timeout=30, headers=headers) as http:
            for i in range(each):
                if time.monotonic() > deadline:
                    break
                reply = http.post(f"/api/threads/{thread_id}/posts", json={"body": f"経由 {i}"})
                stored += reply.status_code == 201
        return stored

    with ThreadPoolExecutor(len(tokens)) as pool:
        return sum(pool.map(poster, tokens))


def live_post_arrives(url: str, thread_id: int, token: str, after: int) -> float:
    """Seconds from a post's 201 to its event on a live stream opened through the proxy."""
    headers = {"Authorization": f"Bearer {token}"}
    with (
        httpx.Client(base_url=url, timeout=httpx.Timeout(10, read=30)) as http,
        http.stream("GET", f"/api/threads/{thread_id}/events", params={"after": after}) as stream,
    ):
        assert stream.status_code == 200, stream.status_code
        posted = http.post(
            f"/api/threads/{thread_id}/posts", json={"body": "ライブ"}, headers=headers
        )
        assert posted.status_code == 201, posted.text
        accepted = time.perf_counter()
        number = posted.json()["post"]["number"]
        for line in stream.iter_lines():
            if line == f"id: {number}":
                return time.perf_counter() - accepted
            if time.perf_counter() - accepted > 30:
                break
    raise RuntimeError("the live stream through the proxy did not carry the post")


@contextlib.contextmanager
def started(stop: Callable[[], None]) -> Iterator[None]:
    try:
        yield
    finally:
        stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="a PostgreSQL server (a scratch database on it)")
    parser.add_argument("--gets", type=int, default=400, help="GETs per round and target")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--posts", type=int, default=80, help="posts through the proxy")
    args = parser.parse_args()
    if not (1 <= args.gets <= 5000 and 1 <= args.rounds <= 10 and 0 <= args.posts <= 2000):
        parser.error("--gets 1..5000, --rounds 1..10, --posts 0..2000")
    binary = find_haproxy()
    if binary is None:
        print(f"bench/proxy.py: haproxy is not installed. On Debian: {INSTALL}", file=sys.stderr)
        return 2
    deadline = time.monotonic() + DEADLINE_SECONDS
    version = subprocess.run([binary, "-v"], capture_output=True, text=True).stdout.split("\n")[0]
    print(f"machine: {machine()}")
    print(f"proxy: {version}")

    with scratch_database(args.database_url) as url, tempfile.TemporaryDirectory() as tmp:
        db = Database(url)
        servers: list[Server] = []
        try:
            users = make_users(db, [f"proxy{i}" for i in range(CLIENTS)])
        finally:
            db.dispose()
        tokens = [token for _id, token in users.values()]
        try:
            for _ in range(2):
                servers.append(bbsgm_serve(url, 1))
            direct = servers[0].url
            ports = [int(s.url.rsplit(":", 1)[1]) for s in servers]
            front = free_port()
            sock = Path(tmp) / "haproxy.sock"
            config = Path(tmp) / "haproxy.cfg"
            limit = fd_maxconn()
            config.write_text(local_config(documented_config(), front, ports, sock, limit))
            if limit is not None and limit < 20000:
                print(f"global maxconn lowered to {limit} (this machine's descriptor limit)")
            proxy = HAProxy(binary, config, Path(tmp) / "haproxy.log")
            with started(proxy.stop):
                proxied = f"http://127.0.0.1:{front}"

                def running() -> bool:
                    if proxy.proc.poll() is None:
                        return True
                    raise RuntimeError(f"haproxy exited:\n{proxy.log.read_text()[-3000:]}")

                def all_up() -> bool:
                    rows = stats(sock)
                    up = [r for r in rows if r["svname"] not in ("FRONTEND", "BACKEND")]
                    return len(up) == 4 and all(r["status"] == "UP" for r in up)

                wait_until(lambda: sock.exists() and all_up(), "both servers UP", alive=running)
                wait_until(
                    lambda: httpx.get(proxied + "/api/boards", timeout=5).status_code == 200,
                    "an answer through the proxy",
                    alive=running,
                )
                db_kind = "PostgreSQL" if args.database_url else "SQLite"
                print(f"database: {db_kind}; 2 bbsgm serve processes (1 worker each) on loopback")
                thread_id = fill_thread(direct, tokens[0])
                page = f"/threads/{thread_id}"
                pages_per_second(direct, page, CLIENTS * 4, deadline)  # warm both caches
                pages_per_second(proxied, page, CLIENTS * 4, deadline)
                before = responses(stats(sock))
                straight, through, bad = [], [], 0
                for _ in range(args.rounds):
                    rate, failed = pages_per_second(direct, page, args.gets, deadline)
                    straight.append(rate)
                    bad += failed
                    rate, failed = pages_per_second(proxied, page, args.gets, deadline)
                    through.append(rate)
                    bad += failed
                stored = post_through(proxied, thread_id, tokens, args.posts, deadline)
                latency = live_post_arrives(proxied, thread_id, tokens[1], THREAD_POSTS + stored)
                after = responses(stats(sock))
                report(args, straight, through, bad, stored, latency, before, after)
                running()
        finally:
            for server in servers:
                server.stop()
    return 0


def fill_thread(url: str, token: str) -> int:
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, timeout=30, headers=headers) as http:
        made = http.post("/api/boards/chat/threads", json={"title": "プロキシ", "body": "1"})
        assert made.status_code == 201, made.text
        thread_id: int = made.json()["id"]
        for i in range(THREAD_POSTS - 1):
            body = f"{i} 番目の書き込み。>>1 を見てください https://example.org/{i}"
            reply = http.post(f"/api/threads/{thread_id}/posts", json={"body": body})
            assert reply.status_code == 201, reply.text
    return thread_id


def report(
    args: argparse.Namespace,
    straight: list[float],
    through: list[float],
    bad: int,
    stored: int,
    latency: float,
    before: dict[tuple[str, str], int],
    after: dict[tuple[str, str], int],
) -> None:
    rounds = ", ".join(f"{d:.0f}/{p:.0f}" for d, p in zip(straight, through, strict=True))
    print(f"thread page ({THREAD_POSTS} posts), {CLIENTS} keep-alive clients, ~{args.gets} GETs")
    print(f"  pages/s straight to one process / through haproxy, by round: {rounds}")
    print(f"  answers other than 200: {bad}")
    print(f"posts through haproxy (JSON API, {CLIENTS} accounts): {stored} of {args.posts} stored")
    print(f"live stream through haproxy: the post's event {latency * 1000:.0f} ms after its 201")
    print("requests per server, as haproxy counted them during the load:")
    for backend in sorted({b for b, _s in after}):
        counts = {s: after[(b, s)] - before.get((b, s), 0) for b, s in after if b == backend}
        total = sum(counts.values()) or 1
        split = ", ".join(f"{s} {n} ({100 * n / total:.0f} %)" for s, n in sorted(counts.items()))
        print(f"  {backend}: {split}")
    print(f"proxy_ratio {max(through) / max(straight):.2f}")


if __name__ == "__main__":
    sys.exit(main())
