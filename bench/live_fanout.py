"""Benchmark: one thread watched live by N Server-Sent Events subscribers while it is posted
to at a steady rate; how long a post takes to reach every subscriber, and whether posting
keeps its pace.

    python bench/live_fanout.py --subscribers 100            # SQLite file, one server process
    python bench/live_fanout.py --subscribers 1000
    python bench/live_fanout.py --subscribers 1000 --workers 2 \\
        --database-url postgresql+psycopg://postgres@127.0.0.1:55432/postgres

`bbsgm serve` on a scratch database (bench/common.py); everything is on loopback. The
subscribers are raw asyncio connections in a child process of this one (``GET
/api/threads/{id}/events?after=…``, each event's ``id:`` — the post's レス番 — stamped with the
time its last byte arrived), so that reading them does not hold up the posters' clocks; both
processes stamp with the same monotonic clock. Each needs a file descriptor here and one in
the server: the soft RLIMIT_NOFILE is raised to the hard limit (the server inherits it), and
N is capped to what that allows, with a line saying so.

Posts are talk (no command, no bot reply) by POSTERS accounts over the JSON API. In order:

1. warm-up, unmeasured (the server's first posts build what it keeps);
2. steady, no subscribers: one post every 1/RATE s for STEADY_SECONDS to the thread, each
   sent on time whatever the answers to the earlier ones;
3. the N subscribers connect (after the thread's last post) and one post is awaited by all
   of them, so that every stream is live before the clock starts;
4. steady, with the subscribers: as 2. A post's latency to a subscriber runs from the moment
   its 201 reached the poster ("accepted") to the moment the subscriber had the whole event;
   p50/p99/max over all (subscriber, post) pairs. An event may come before the 201 does (the
   streams are woken at the commit, the answer is sent after): such pairs count with their
   negative latency and are counted apart;
5. saturation, for the record: ROUNDS turns of POSTERS clients posting back to back for
   CAPACITY_SECONDS, to another thread (no stream wakes) and then to the watched one (every
   post goes to every subscriber: the bytes sent grow with posts x subscribers, on the same
   two cores as the subscribers reading them), with the ratio of the two rates.

Every event of every post of 4. and 5. must reach every subscriber exactly once: missed and
doubled events are counted and printed (both must be 0). With several workers the
subscribers' connections are matched to the worker process that accepted them
(/proc/net/tcp and each process's file descriptors) and the events are counted per worker.
The server's CPU time (/proc) is printed per post alone and per event delivered.

Prints, last: ``live_fanout_p99_ms <x>`` (step 4) and ``live_post_rate_ratio <x>``: the
posts per second answered in step 4 divided by those of step 2 (the same schedule; each
rate counts until the last post's 201).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bbsgm_serve, machine, make_users, percentile, process_tree, scratch_database

from app.db.engine import Database

POSTERS = 8
WARM_SECONDS = 2.0
CAPACITY_SECONDS = 3.0  # a round of posting back to back
ROUNDS = 3
RATE = 10.0  # posts a second in the steady phase
STEADY_SECONDS = 10.0
GRACE_SECONDS = 30.0  # after the last post, for every event to arrive
CONNECT_BATCH = 50
FD_RESERVE = 256  # descriptors kept for everything else in this process and the server's


# --- the subscribers (child process) --------------------------------------------------------


class Subscriber(asyncio.Protocol):
    """One SSE connection: records, per レス番, when its event was complete."""

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.transport: Any = None
        self.started: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.head = bytearray()
        self.raw = bytearray()  # the body as it comes: chunked or not
        self.chunked = False
        self.text = bytearray()  # the event stream itself
        self.got: dict[int, float] = {}
        self.last = 0
        self.doubled = 0
        self.closed = False
        self.local_port = 0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.local_port = transport.get_extra_info("sockname")[1]
        transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if not self.started.done():
            self.started.set_exception(ConnectionError(f"closed before the answer: {exc}"))

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if not self.started.done():
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.head[:end]).lower()
            data = bytes(self.head[end + 4 :])
            self.chunked = b"transfer-encoding: chunked" in head
            self.started.set_result(int(head.split(b" ", 2)[1]))
        if self.chunked:
            raw = self.raw
            raw += data
            at = 0
            while True:
                eol = raw.find(b"\r\n", at)
                if eol < 0:
                    break
                size = int(bytes(raw[at:eol]).split(b";")[0], 16)
                if len(raw) < eol + 2 + size + 2:
                    break
                self.text += raw[eol + 2 : eol + 2 + size]
                at = eol + 4 + size
            del raw[:at]
        else:
            self.text += data
        text = self.text
        at = 0
        while True:
            end = text.find(b"\r\n\r\n", at)
            if end < 0:
                break
            if text.startswith(b"id: ", at):
                number = int(text[at + 4 : text.find(b"\r\n", at)])
                if number in self.got:
                    self.doubled += 1
                else:
                    self.got[number] = now
                    self.last = max(self.last, number)
            at = end + 4
        del text[:at]


async def open_one(loop: asyncio.AbstractEventLoop, sub: Subscriber, port: int) -> int | str:
    try:
        await loop.create_connection(lambda: sub, "127.0.0.1", port)
        return await asyncio.wait_for(sub.started, 60)
    except (OSError, TimeoutError) as error:
        return repr(error)


async def subscribers_main(conn: multiprocessing.connection.Connection) -> None:
    loop = asyncio.get_running_loop()
    subs: list[Subscriber] = []
    while True:
        command, *args = await loop.run_in_executor(None, conn.recv)
        if command == "connect":
            port, path, count = args
            request = (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Accept: text/event-stream\r\n\r\n"
            ).encode()
            statuses: list[int | str] = []
            for first in range(0, count, CONNECT_BATCH):
                batch = [Subscriber(request) for _ in range(min(CONNECT_BATCH, count - first))]
                statuses += await asyncio.gather(*(open_one(loop, s, port) for s in batch))
                subs += batch
            conn.send((statuses, [s.local_port for s in subs]))
        elif command == "wait":  # until every open subscriber has an event at least this new
            number, timeout = args
            deadline = time.perf_counter() + timeout
            while time.perf_counter() < deadline:
                if all(s.last >= number or s.closed for s in subs):
                    break
                await asyncio.sleep(0.01)
            conn.send(sum(1 for s in subs if s.last < number))
        elif command == "report":
            usage = resource.getrusage(resource.RUSAGE_SELF)
            conn.send(
                (
                    [(s.got, s.doubled, s.closed) for s in subs],
                    usage.ru_utime + usage.ru_stime,
                )
            )
        elif command == "close":
            for s in subs:
                if s.transport is not None:
                    s.transport.close()
            subs = []
            await asyncio.sleep(0.5)
            conn.send("closed")
        elif command == "exit":
            return


def subscribers_process(conn: multiprocessing.connection.Connection) -> None:
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    asyncio.run(subscribers_main(conn))


# --- the posters (this process) ---------------------------------------------------------------


@dataclass
class Posting:
    posts: list[tuple[int, float, float]] = field(default_factory=list)  # number, sent, 201
    elapsed: float = 0.0

    @property
    def rate(self) -> float:
        return len(self.posts) / self.elapsed


async def post_one(client: httpx.AsyncClient, thread_id: int, token: str, body: str) -> Any:
    sent = time.perf_counter()
    answer = await client.post(
        f"/api/threads/{thread_id}/posts",
        json={"body": body},
        headers={"Authorization": f"Bearer {token}"},
    )
    accepted = time.perf_counter()
    if answer.status_code != 201:
        raise RuntimeError(f"post refused: {answer.status_code} {answer.text[:300]}")
    return answer.json()["post"]["number"], sent, accepted


def body_text(i: int) -> str:
    return f"実況 {i}: " + "いまの一手、どう見る？" * (1 + i % 4)


async def capacity(url: str, thread_id: int, tokens: list[str], seconds: float) -> Posting:
    """POSTERS clients post back to back for ``seconds``."""
    result = Posting()

    async def poster(client: httpx.AsyncClient, token: str, stop_at: float) -> None:
        i = 0
        while time.perf_counter() < stop_at:
            result.posts.append(await post_one(client, thread_id, token, body_text(i)))
            i += 1

    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=120))
            for _ in tokens
        ]
        start = time.perf_counter()
        stop_at = start + seconds
        await asyncio.gather(*(poster(c, t, stop_at) for c, t in zip(clients, tokens, strict=True)))
        result.elapsed = time.perf_counter() - start
    return result


async def steady(
    url: str, thread_id: int, tokens: list[str], rate: float, seconds: float
) -> Posting:
    """One post every 1/rate s, each sent on time whether or not earlier ones were answered."""
    result = Posting()
    count = int(rate * seconds)
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        start = time.perf_counter()

        async def at(i: int) -> None:
            await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
            result.posts.append(
                await post_one(client, thread_id, tokens[i % len(tokens)], body_text(i))
            )

        await asyncio.gather(*(at(i) for i in range(count)))
        result.elapsed = time.perf_counter() - start
    return result


# --- helpers --------------------------------------------------------------------------------


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


def worker_of_ports(server_pid: int, server_port: int, client_ports: list[int]) -> dict[int, int]:
    """Client port -> the pid of the server process holding that connection's other end."""
    inode_of_port: dict[int, str] = {}
    wanted = set(client_ports)
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(name).read_text().splitlines()[1:]:
                fields = line.split()
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if local_port == server_port and remote_port in wanted:
                    inode_of_port[remote_port] = fields[9]
    pid_of_inode: dict[str, int] = {}
    for pid in process_tree(server_pid):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith("socket:["):
                        pid_of_inode[target[8:-1]] = pid
    return {
        port: pid_of_inode[inode] for port, inode in inode_of_port.items() if inode in pid_of_inode
    }


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of these processes so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def answered(posting: Posting, q: float) -> float:
    """A percentile of the posts' times from sending to their 201."""
    return percentile([accepted - sent for _n, sent, accepted in posting.posts], q)


def ms(seconds: float) -> float:
    return seconds * 1000


def latencies(
    posts: list[tuple[int, float, float]], got: list[dict[int, float]]
) -> tuple[list[float], int, int]:
    """Over every (subscriber, post): seconds from the 201 to the event, missed pairs, and
    pairs whose event came before the 201."""
    values: list[float] = []
    missed = early = 0
    for number, _sent, accepted in posts:
        for mine in got:
            when = mine.get(number)
            if when is None:
                missed += 1
            else:
                values.append(when - accepted)
                early += when < accepted
    return values, missed, early


# --- the run --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--database-url", help="a PostgreSQL server (a scratch database on it)")
    parser.add_argument("--workers", type=int, help="server processes (1 on SQLite, else 2)")
    parser.add_argument("--rate", type=float, default=RATE, help="posts a second, steady phase")
    parser.add_argument("--seconds", type=float, default=STEADY_SECONDS, help="steady phase")
    parser.add_argument(
        "--capacity-seconds", type=float, default=CAPACITY_SECONDS, help="one round's posting"
    )
    parser.add_argument("--posters", type=int, default=POSTERS)
    args = parser.parse_args()
    workers = args.workers or (2 if args.database_url else 1)
    if not 1 <= args.subscribers <= 20_000 or not 0 < args.rate <= 1000:
        parser.error("--subscribers 1..20000, --rate up to 1000")
    if not 0 < args.seconds <= 120 or not 0 < args.capacity_seconds <= 120:
        parser.error("phases of at most 120 s")

    limit = raise_fd_limit()
    subscribers = min(args.subscribers, limit - FD_RESERVE)
    print(f"machine: {machine()}")
    if subscribers < args.subscribers:
        print(f"subscribers capped to {subscribers} by RLIMIT_NOFILE {limit} (hard limit)")
    # The child forks now, before this process has threads, engines or an event loop.
    parent_end, child_end = multiprocessing.Pipe()
    child = multiprocessing.get_context("fork").Process(
        target=subscribers_process, args=(child_end,), daemon=True
    )
    child.start()

    def ask(*message: Any, timeout: float = 300) -> Any:
        parent_end.send(message)
        if not parent_end.poll(timeout):
            raise RuntimeError(f"the subscribers' process did not answer {message[0]}")
        return parent_end.recv()

    try:
        with scratch_database(args.database_url) as url:
            db = Database(url)
            print(
                f"database: {db.engine.dialect.name}, {workers} worker process(es), "
                f"{subscribers} subscribers, {args.posters} posters"
            )
            users = make_users(db, [f"live{i}" for i in range(args.posters)])
            db.dispose()
            tokens = [token for _id, token in users.values()]
            server = bbsgm_serve(url, workers)
            try:
                run(server.url, server.proc.pid, tokens, subscribers, args, ask)
            finally:
                server.stop()
    finally:
        with contextlib.suppress(Exception):
            parent_end.send(("exit",))
        child.join(timeout=10)
        if child.is_alive():
            child.kill()


def run(
    url: str, server_pid: int, tokens: list[str], subscribers: int, args: Any, ask: Any
) -> None:
    load_start = os.getloadavg()[0]
    threads = []
    for title in ("実況スレ", "別スレ"):  # watched, unwatched
        created = httpx.post(
            f"{url}/api/boards/chat/threads",
            json={"title": title, "body": "ライブ配信のベンチ"},
            headers={"Authorization": f"Bearer {tokens[0]}"},
            timeout=60,
        )
        created.raise_for_status()
        threads.append(created.json()["id"])
    watched, unwatched = threads
    pids = process_tree(server_pid)

    def timed(posting: Any) -> tuple[Posting, float]:
        """The posting's result and the server's CPU seconds meanwhile."""
        cpu = cpu_seconds(pids)
        done: Posting = asyncio.run(posting)
        return done, cpu_seconds(pids) - cpu

    def steadily() -> Any:
        return steady(url, watched, tokens, args.rate, args.seconds)

    asyncio.run(capacity(url, unwatched, tokens, WARM_SECONDS))
    asyncio.run(capacity(url, watched, tokens, WARM_SECONDS))
    alone, alone_cpu = timed(steadily())
    per_post = alone_cpu / len(alone.posts)
    print(
        f"steady, no subscribers: {len(alone.posts)} posts at {args.rate:g}/s, "
        f"{alone.rate:.2f}/s answered, p50 {ms(answered(alone, 0.5)):.1f} ms, "
        f"p99 {ms(answered(alone, 0.99)):.1f} ms; server CPU {ms(per_post):.2f} ms a post"
    )

    newest = max(number for number, _s, _a in alone.posts)
    port = int(url.rsplit(":", 1)[1])
    started = time.perf_counter()
    path = f"/api/threads/{watched}/events?after={newest}"
    statuses, ports = ask("connect", port, path, subscribers)
    bad = [s for s in statuses if s != 200]
    if bad:
        raise RuntimeError(f"{len(bad)} subscribers not connected: {bad[:5]}")
    print(f"{subscribers} subscribers connected in {time.perf_counter() - started:.1f} s")
    owner = worker_of_ports(server_pid, port, ports)
    per_worker: dict[int, list[int]] = {}
    for index, p in enumerate(ports):
        per_worker.setdefault(owner.get(p, 0), []).append(index)
    print(
        "subscribers per server process: "
        + ", ".join(f"pid {pid or '?'}: {len(ix)}" for pid, ix in sorted(per_worker.items()))
    )

    async def one_post() -> tuple[int, float, float]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            got: tuple[int, float, float] = await post_one(client, watched, tokens[0], "同期")
            return got

    number, _s, _a = asyncio.run(one_post())
    lagging = ask("wait", number, GRACE_SECONDS)
    if lagging:
        raise RuntimeError(f"{lagging} subscribers never had the first post")

    watched_run, watched_cpu = timed(steadily())
    ask("wait", max(n for n, _s, _a in watched_run.posts), GRACE_SECONDS)

    # Saturation, for the record: back-to-back posting in turns, to the other thread (no
    # stream wakes) and to the watched one (every post goes to every subscriber).
    plain: list[Posting] = []
    busy: list[Posting] = []
    for turn in range(1, ROUNDS + 1):
        plain.append(asyncio.run(capacity(url, unwatched, tokens, args.capacity_seconds)))
        busy.append(asyncio.run(capacity(url, watched, tokens, args.capacity_seconds)))
        print(
            f"saturation round {turn}: {busy[-1].rate:.1f} posts/s to the watched thread, "
            f"{plain[-1].rate:.1f} to another, {busy[-1].rate / plain[-1].rate:.3f}"
        )
    waited = time.perf_counter()
    ask("wait", max(n for r in busy for n, _s, _a in r.posts), GRACE_SECONDS)
    drained = time.perf_counter() - waited
    report, client_cpu = ask("report")
    ask("close")

    got = [mine for mine, _d, _c in report]
    doubled = sum(d for _m, d, _c in report)
    closed = sum(c for _m, _d, c in report)
    print(f"subscribers' process: {client_cpu:.1f} s of CPU; closed by the server: {closed}")

    values, missed, early = latencies(watched_run.posts, got)
    print(
        f"steady, {subscribers} subscribers: {len(watched_run.posts)} posts at {args.rate:g}/s, "
        f"{watched_run.rate:.2f}/s answered, p50 {ms(answered(watched_run, 0.5)):.1f} ms, "
        f"p99 {ms(answered(watched_run, 0.99)):.1f} ms; {len(values)} events"
    )
    print(
        f"  201 -> event: p50 {ms(percentile(values, 0.50)):.1f} ms  "
        f"p99 {ms(percentile(values, 0.99)):.1f} ms  max {ms(max(values)):.1f} ms; "
        f"before the 201: {early}"
    )
    fanout_cpu = max(0.0, watched_cpu - len(watched_run.posts) * per_post)
    print(
        f"  server CPU {watched_cpu:.2f} s, {fanout_cpu:.2f} s more than the posts alone: "
        f"{fanout_cpu / max(1, len(values)) * 1e6:.1f} µs an event"
    )
    if os.environ.get("LIVE_FANOUT_DEBUG"):
        for number, _sent, accepted in sorted(watched_run.posts):
            mine = sorted(g[number] - accepted for g in got if number in g)
            print(f"  post {number}: p50 {ms(mine[len(mine) // 2]):.0f} max {ms(mine[-1]):.0f}")
    if len(per_worker) > 1:
        for pid, indexes in sorted(per_worker.items()):
            mine_values, mine_missed, _e = latencies(watched_run.posts, [got[i] for i in indexes])
            print(
                f"  pid {pid}: {len(indexes)} subscribers, {len(mine_values)} events, "
                f"missed {mine_missed}, p99 {ms(percentile(mine_values, 0.99)):.1f} ms"
            )
    busy_posts = [post for r in busy for post in r.posts]
    busy_values, busy_missed, _e = latencies(busy_posts, got)
    busy_rate = len(busy_posts) / sum(r.elapsed for r in busy)
    plain_rate = sum(len(r.posts) for r in plain) / sum(r.elapsed for r in plain)
    print(
        f"saturation: {busy_rate:.1f} posts/s to the watched thread ({len(busy_values)} "
        f"events, 201 -> event p99 {ms(percentile(busy_values, 0.99)):.1f} ms, the last "
        f"{drained:.1f} s after the last post), {plain_rate:.1f} to another: "
        f"{busy_rate / plain_rate:.3f}"
    )
    print(f"missed events: {missed + busy_missed}  doubled events: {doubled}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (at the start: {load_start:.1f})")
    print(f"live_fanout_p99_ms {ms(percentile(values, 0.99)):.1f}")
    print(f"live_post_rate_ratio {watched_run.rate / alone.rate:.3f}")


if __name__ == "__main__":
    main()
