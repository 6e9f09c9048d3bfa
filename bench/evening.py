"""Benchmark: a busy evening, open loop — the post's and the thread page's tail under the load
of a board in use, against their median alone in the same run.

    python bench/evening.py                                  # SQLite file, one server process
    python bench/evening.py --evenings 3 --seconds 60        # the defaults
    python bench/evening.py --database-url postgresql+psycopg://postgres@127.0.0.1:55432/postgres
    BBSGM_DATABASE_URL=postgresql+psycopg://… python bench/evening.py --workers 2

`bbsgm serve` on a scratch database (bench/common.py: a SQLite file, or a fresh database on
the PostgreSQL server given, migrated), on 127.0.0.1 and a free port, stopped at the end
whatever happens. Everything goes through the JSON API and the pages, as people's clients
would: accounts registered and logged in (`POST /api/register`, `/api/login`), games made by
their GM (`POST /api/games`), joined and started by posts (JOIN, START).

One evening is:

- TABLES tables (games) of the kinds in KINDS, where someone posts a legal line every
  POST_EVERY seconds: the table's next actor (its GM and seats in turn, from the one who
  posted last) is the first whose ``GET /api/games/{id}/legal`` lists a line, and one of their
  lines is taken at random (a sealed one through ``/sealed`` when only sealed ones are there;
  never the GM's PAUSE, UNDO or ABORT); these look-ups are made as soon as the previous post
  is answered, and are not measured;
- READERS readers, each loading one of the evening's thread pages (``/threads/{id}``) every
  READ_EVERY seconds;
- STREAMS live streams (``/api/threads/{id}/events``, Server-Sent Events) open on the tables'
  threads, read by a child process (raw sockets) so that reading them does not hold up this
  process's clock.

``--evenings N`` runs N such evenings at once (3 by default: 18 posts, 72 pages a second, 300
streams). A game that ends is replaced by a new table of its kind, and its streams move to the
new thread.

Open loop: every request has a time fixed in advance (a random phase, then one every period)
and is sent then, whether or not the earlier ones have been answered; its latency runs from
that scheduled time, so a server that stalls is charged for every request it held up
(coordinated omission). A table's posts wait for each other (the next line depends on the
last answer): a post sent late because the one before it (or its look-ups) was slow counts its
lateness too, and the posts' time from their sending is printed beside it.

First, alone (no other load): ALONE_POSTS posts, sequential, over one table of each kind, and
ALONE_PAGES page loads, after a few unmeasured ones of each; their medians are the baseline.
Then the evening runs for ``--seconds`` (60 by default), after which nothing new is sent and
what is in flight is awaited (DRAIN_SECONDS at most).

Prints the medians alone, the p50/p99 of posts (the thread's, sealed ones apart) and pages under
load, the requests sent per second, the errors (any answer not 2xx/3xx, any transport error or
stream that failed, which should all be 0; a line refused by the bot is still 201 and counted
apart as ``refused``), and last ``post_p99_ratio <x>`` = post p99 under load ÷ post p50 alone,
``page_p99_ratio <x>`` likewise. Target (issue 42, docs/performance.md): 10 or less for each.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
import os
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bbsgm_serve, cpu_seconds, machine, percentile, process_tree, scratch_database

KINDS = ("eitsuku", "populous", "idolwp", "cardbattle")
PLAYERS = {"eitsuku": 3, "populous": 3, "idolwp": 3, "cardbattle": 2, "eleusis": 4}
TABLES = 12  # an evening's, spread over KINDS
POST_EVERY = 2.0  # seconds between two posts at one table
READERS = 24
READ_EVERY = 1.0
STREAMS = 100
ALONE_POSTS = 48
ALONE_PAGES = 48
WARM = 6
DRAIN_SECONDS = 30.0
TIMEOUT = 60.0
PASSWORD = "evening-password-1"
PLATFORM = {"PAUSE", "RESUME", "UNDO", "ABORT"}
PLAYER_NAMES = ("ev_gm", "ev_p1", "ev_p2", "ev_p3", "ev_p4")


# --- the streams (child process) -------------------------------------------------------------


class Stream(asyncio.Protocol):
    """One SSE connection, counting what it is sent."""

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.transport: asyncio.Transport | None = None
        self.head = bytearray()
        self.status = 0
        self.events = 0
        self.received = 0
        self.lost = False  # closed by the other side
        self.closing = False  # closed by us

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = not self.closing

    def data_received(self, data: bytes) -> None:
        self.received += len(data)
        if not self.status:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            self.status = int(bytes(self.head).split(b" ", 2)[1])
            data = bytes(self.head[end:])
        self.events += data.count(b"event: post")

    def close(self) -> None:
        self.closing = True
        if self.transport is not None:
            self.transport.close()


async def streams_main(conn: multiprocessing.connection.Connection, port: int) -> None:
    loop = asyncio.get_running_loop()
    by_thread: dict[int, list[Stream]] = {}
    failed: list[str] = []
    done: list[Stream] = []

    async def open_streams(thread_id: int, count: int) -> None:
        request = (
            f"GET /api/threads/{thread_id}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Accept: text/event-stream\r\n\r\n"
        ).encode()
        for _ in range(count):
            try:
                _, stream = await loop.create_connection(lambda: Stream(request), "127.0.0.1", port)
            except OSError as error:
                failed.append(repr(error))
                continue
            by_thread.setdefault(thread_id, []).append(stream)

    while True:
        command, *args = await loop.run_in_executor(None, conn.recv)
        if command == "open":  # [(thread id, count)]; answered once all are connected
            for thread_id, count in args[0]:
                await open_streams(thread_id, count)
            deadline = time.perf_counter() + 60  # and each has had its answer's head
            every = [s for streams in by_thread.values() for s in streams]
            while time.perf_counter() < deadline and not all(s.status or s.lost for s in every):
                await asyncio.sleep(0.05)
            conn.send(sum(len(s) for s in by_thread.values()))
        elif command == "move":  # a table replaced: its streams follow it (not answered)
            old, new = args
            moved = by_thread.pop(old, [])
            for stream in moved:
                stream.close()
            done.extend(moved)
            await open_streams(new, len(moved))
        elif command == "report":
            every = done + [s for streams in by_thread.values() for s in streams]
            conn.send(
                {
                    "open": sum(len(s) for s in by_thread.values()),
                    "events": sum(s.events for s in every),
                    "bytes": sum(s.received for s in every),
                    "bad_status": sum(1 for s in every if s.status not in (0, 200)),
                    "no_answer": sum(1 for s in every if s.status == 0),
                    "lost": sum(1 for s in every if s.lost),
                    "failed": failed,
                }
            )
        elif command == "exit":
            for streams in by_thread.values():
                for stream in streams:
                    stream.close()
            conn.send("bye")
            return


def streams_process(conn: multiprocessing.connection.Connection, port: int) -> None:
    asyncio.run(streams_main(conn, port))


# --- the evening (this process) --------------------------------------------------------------


@dataclass
class Tally:
    post: list[float] = field(default_factory=list)  # seconds from the scheduled time
    sealed: list[float] = field(default_factory=list)
    page: list[float] = field(default_factory=list)
    post_served: list[float] = field(default_factory=list)  # from its sending, not its time
    late: list[float] = field(default_factory=list)  # pages sent after their time: ours
    loop_lag: list[float] = field(default_factory=list)  # this event loop's, every 10 ms
    errors: dict[str, int] = field(default_factory=dict)
    refused: int = 0
    legal_gets: int = 0
    replaced: int = 0
    examples: list[str] = field(default_factory=list)

    def error(self, what: str, detail: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1
        if len(self.examples) < 5:
            self.examples.append(f"{what}: {detail[:200]}")


class Refused(Exception):
    pass


@dataclass
class Table:
    kind: str
    game_id: int
    thread_id: int
    actors: list[str]  # tokens: the GM's first, then the seats'
    turn: int = 0
    line: tuple[str, str, bool] | None = None  # (token, line, sealed)


def checked(reply: httpx.Response, tally: Tally, what: str) -> bool:
    if 200 <= reply.status_code < 400:
        return True
    tally.error(what, f"{reply.status_code} {reply.text}")
    return False


class Board:
    """The server's accounts and tables, as their clients see them."""

    def __init__(self, url: str, tally: Tally, rng: random.Random) -> None:
        self.url = url
        self.tally = tally
        self.rng = rng
        self.tokens: dict[str, str] = {}
        self.client = httpx.AsyncClient(base_url=url, timeout=TIMEOUT)

    async def accounts(self) -> None:
        for name in PLAYER_NAMES:
            made = await self.client.post(
                "/api/register", json={"name": name, "password": PASSWORD}
            )
            if made.status_code != 201:
                raise RuntimeError(f"register {name}: {made.status_code} {made.text}")
            login = await self.client.post("/api/login", json={"name": name, "password": PASSWORD})
            if login.status_code != 200:
                raise RuntimeError(f"login {name}: {login.status_code} {login.text}")
            self.tokens[name] = login.json()["token"]

    async def post(self, client: httpx.AsyncClient, table: Table, token: str, line: str) -> Any:
        reply = await client.post(
            f"/api/threads/{table.thread_id}/posts",
            json={"body": line},
            headers={"Authorization": f"Bearer {token}"},
        )
        if reply.status_code != 201:
            raise RuntimeError(f"{line}: {reply.status_code} {reply.text[:300]}")
        return reply.json()

    async def new_table(self, kind: str, title: str) -> Table:
        """A game of ``kind`` made by its GM over the API, joined, started."""
        gm_token = self.tokens[PLAYER_NAMES[0]]
        made = await self.client.post(
            "/api/games",
            json={"kind": kind, "title": title, "options": {}},
            headers={"Authorization": f"Bearer {gm_token}"},
        )
        if made.status_code != 201:
            raise RuntimeError(f"new {kind} game: {made.status_code} {made.text[:300]}")
        game = made.json()
        seats = [self.tokens[name] for name in PLAYER_NAMES[1 : 1 + PLAYERS[kind]]]
        table = Table(kind, game["id"], game["thread_id"], [gm_token, *seats])
        for token, line in [(seat, "JOIN") for seat in seats] + [(gm_token, "START")]:
            answer = await self.post(self.client, table, token, line)
            if not answer["replies"] or not answer["replies"][0]["ok"]:
                raise RuntimeError(f"{kind} {line}: {answer}")
        table.turn = self.rng.randrange(len(table.actors))
        return table

    async def next_line(self, client: httpx.AsyncClient, table: Table) -> bool:
        """Find the table's next line (``table.line``); False once the game has ended."""
        table.line = None
        count = len(table.actors)
        for step in range(count):
            token = table.actors[(table.turn + step) % count]
            self.tally.legal_gets += 1
            reply = await client.get(
                f"/api/games/{table.game_id}/legal", headers={"Authorization": f"Bearer {token}"}
            )
            if not checked(reply, self.tally, "legal"):
                continue
            legal = reply.json()
            # The GM's platform lines (PAUSE, UNDO, ABORT …) would stop the table: a game's own.
            lines = [line for line in legal["commands"] if line.split()[0] not in PLATFORM]
            choices = [(line, False) for line in lines]
            choices = choices or [(line, True) for line in legal["sealed"]]
            if choices:
                line, sealed = self.rng.choice(choices)
                table.line = (token, line, sealed)
                table.turn = (table.turn + step) % count  # who moved may well move again
                return True
        return False

    async def play(self, client: httpx.AsyncClient, table: Table) -> tuple[bool, str]:
        """Send the table's line; (sealed, "") or (sealed, why it was refused)."""
        assert table.line is not None
        token, line, sealed = table.line
        headers = {"Authorization": f"Bearer {token}"}
        if sealed:
            reply = await client.post(
                f"/api/games/{table.game_id}/sealed", json={"body": line}, headers=headers
            )
        else:
            reply = await client.post(
                f"/api/threads/{table.thread_id}/posts", json={"body": line}, headers=headers
            )
        if not checked(reply, self.tally, "sealed" if sealed else "post"):
            return sealed, "error"
        answer = reply.json()
        answered = answer["sealed"] if sealed else (answer["replies"] or [{"ok": False}])[0]
        return sealed, "" if answered.get("ok") else f"{line}: {answered.get('error')}"


async def refusal_answer(board: Board, table: Table) -> str:
    """What a line the bot refuses is answered (a seat's START in a started game): a 201 with
    a reply whose ``ok`` is false, not an error status — which is why ``refused`` is counted
    apart from the errors."""
    reply = await board.client.post(
        f"/api/threads/{table.thread_id}/posts",
        json={"body": "START"},
        headers={"Authorization": f"Bearer {table.actors[1]}"},
    )
    replies = reply.json().get("replies") or [{}]
    answer = f"{reply.status_code}, ok {replies[0].get('ok')}"
    if reply.status_code != 201 or replies[0].get("ok") is not False:
        raise RuntimeError(f"a refused line was answered {answer}: {reply.text[:300]}")
    return answer


async def alone(board: Board, tables: list[Table]) -> tuple[list[float], list[float]]:
    """Posts over the tables in turn, then pages, one at a time; each timed alone."""
    posts: list[float] = []
    pages: list[float] = []
    client = board.client
    i = 0
    while len(posts) < ALONE_POSTS + WARM:
        table = tables[i % len(tables)]
        i += 1
        if not await board.next_line(client, table):
            tables[tables.index(table)] = await board.new_table(table.kind, f"alone {i}")
            continue
        t0 = time.perf_counter()
        sealed, refused = await board.play(client, table)
        elapsed = time.perf_counter() - t0
        if refused:
            raise RuntimeError(f"a legal line was refused alone: {refused}")
        if not sealed:
            posts.append(elapsed)
    for n in range(ALONE_PAGES + WARM):
        t0 = time.perf_counter()
        reply = await client.get(f"/threads/{tables[n % len(tables)].thread_id}")
        pages.append(time.perf_counter() - t0)
        if reply.status_code != 200:
            raise RuntimeError(f"page alone: {reply.status_code}")
    return posts[WARM:], pages[WARM:]


async def sleep_until(when: float) -> None:
    delay = when - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)


async def evening(
    board: Board,
    tables: list[list[Table]],
    streams: multiprocessing.connection.Connection,
    seconds: float,
) -> float:
    """Every evening's tables, readers and (already open) streams for ``seconds``."""
    tally, rng = board.tally, board.rng
    in_flight: set[asyncio.Task[None]] = set()
    # A kept connection is dropped before the server's keep-alive (uvicorn: 5 s) can close it
    # under a request being sent on it, which answers nothing (ReadError) — as browsers do.
    limits = httpx.Limits(
        max_connections=None, max_keepalive_connections=None, keepalive_expiry=2.0
    )

    async def at_table(client: httpx.AsyncClient, evening_tables: list[Table], i: int) -> None:
        table = evening_tables[i]
        due = start + rng.uniform(0, POST_EVERY)
        while due < stop_at:
            try:
                if table.line is None and not await board.next_line(client, table):
                    old = table.thread_id
                    table = await board.new_table(table.kind, f"{table.kind} again")
                    evening_tables[i] = table
                    tally.replaced += 1
                    streams.send(("move", old, table.thread_id))
                    continue
                await sleep_until(due)
                sent = time.perf_counter()
                sealed, refused = await board.play(client, table)
                answered = time.perf_counter()
                (tally.sealed if sealed else tally.post).append(answered - due)
                if not sealed:
                    tally.post_served.append(answered - sent)
                if refused and refused != "error":
                    tally.refused += 1
                    tally.examples.append(f"refused: {refused[:200]}")
                table.line = None
            except httpx.TransportError as error:
                tally.error("transport (table)", repr(error))
                table.line = None
            except RuntimeError as error:  # a new table could not be made: this one stops
                tally.error("new table", str(error))
                return
            due += POST_EVERY

    async def load_page(client: httpx.AsyncClient, due: float, thread_id: int) -> None:
        await sleep_until(due)
        tally.late.append(time.perf_counter() - due)
        try:
            reply = await client.get(f"/threads/{thread_id}")
        except httpx.TransportError as error:
            tally.error("transport (page)", repr(error))
            return
        tally.page.append(time.perf_counter() - due)
        checked(reply, tally, "page")

    async def reader(client: httpx.AsyncClient, evening_tables: list[Table]) -> None:
        due = start + rng.uniform(0, READ_EVERY)
        while due < stop_at:  # each load its own task: sent on time, answered or not
            task = asyncio.create_task(load_page(client, due, rng.choice(evening_tables).thread_id))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
            due += READ_EVERY
            await sleep_until(due - 0.05)

    async def watch_loop() -> None:
        await sleep_until(start)
        while time.perf_counter() < stop_at:
            before = time.perf_counter()
            await asyncio.sleep(0.01)
            tally.loop_lag.append(time.perf_counter() - before - 0.01)

    async with contextlib.AsyncExitStack() as stack:

        async def client() -> httpx.AsyncClient:
            made = httpx.AsyncClient(base_url=board.url, timeout=TIMEOUT, limits=limits)
            return await stack.enter_async_context(made)

        players = [
            at_table(await client(), evening_tables, i)
            for evening_tables in tables
            for i in range(len(evening_tables))
        ]
        readers = [
            reader(await client(), evening_tables)
            for evening_tables in tables
            for _ in range(READERS)
        ]
        # The clock starts once every client is made (making one costs ~30 ms here).
        start = time.perf_counter() + 0.5
        stop_at = start + seconds
        await asyncio.gather(*players, *readers, watch_loop())
        if in_flight:
            await asyncio.wait(in_flight, timeout=DRAIN_SECONDS)
    return time.perf_counter() - start


def raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def run(
    url: str, server_pid: int, evenings: int, seconds: float, seed: int
) -> dict[str, Any]:
    tally = Tally()
    board = Board(url, tally, random.Random(seed))
    load_before = os.getloadavg()[0]
    port = int(url.rsplit(":", 1)[1])
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=streams_process, args=(child, port), daemon=True)
    process.start()
    loop = asyncio.get_running_loop()

    async def ask(*message: Any) -> Any:
        parent.send(message)
        return await asyncio.wait_for(loop.run_in_executor(None, parent.recv), 120)

    try:
        async with board.client:
            await board.accounts()
            firsts = [await board.new_table(kind, f"alone {kind}") for kind in KINDS]
            refusal = await refusal_answer(board, firsts[0])
            post_alone, page_alone = await alone(board, firsts)
            tables = [
                [
                    await board.new_table(KINDS[t % len(KINDS)], f"evening {e + 1} table {t + 1}")
                    for t in range(TABLES)
                ]
                for e in range(evenings)
            ]
            spread = [
                (evening_tables[s % len(evening_tables)].thread_id, 1)
                for evening_tables in tables
                for s in range(STREAMS)
            ]
            opened = await ask("open", spread)
            pids = {"server": process_tree(server_pid), "streams": [process.pid or 0]}
            cpu = {name: cpu_seconds(tree) for name, tree in pids.items()}
            cpu["load"] = cpu_seconds([os.getpid()])
            elapsed = await evening(board, tables, parent, seconds)
            cpu = {
                name: (cpu_seconds(pids.get(name, [os.getpid()])) - used) / elapsed
                for name, used in cpu.items()
            }
            streams = await ask("report")
            await ask("exit")
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
    return {
        "post_alone": post_alone,
        "page_alone": page_alone,
        "tally": tally,
        "elapsed": elapsed,
        "opened": opened,
        "streams": streams,
        "cpu": cpu,
        "loadavg": (load_before, os.getloadavg()[0]),
        "refusal": refusal,
    }


def report(found: dict[str, Any], evenings: int, seconds: float) -> None:
    tally: Tally = found["tally"]
    streams = found["streams"]
    elapsed = found["elapsed"]
    post_p50_alone = percentile(found["post_alone"], 0.5)
    page_p50_alone = percentile(found["page_alone"], 0.5)
    print(
        f"alone: post p50 {ms(post_p50_alone)} ({len(found['post_alone'])} posts, "
        f"{', '.join(KINDS)}), page p50 {ms(page_p50_alone)} ({len(found['page_alone'])} pages)"
    )
    print(
        f"load: {evenings} evening(s) for {seconds:.0f} s, each {TABLES} tables posting every "
        f"{POST_EVERY:g} s, {READERS} readers a page every {READ_EVERY:g} s, {STREAMS} streams"
    )
    print(
        f"sent: {len(tally.post) / elapsed:.1f} posts/s, "
        f"{len(tally.sealed) / elapsed:.1f} sealed/s, {len(tally.page) / elapsed:.1f} pages/s, "
        f"{tally.legal_gets / elapsed:.1f} /legal a second (unmeasured), "
        f"{tally.replaced} tables replaced"
    )
    post_p99 = percentile(tally.post, 0.99)
    page_p99 = percentile(tally.page, 0.99)
    print(
        f"post under load: p50 {ms(percentile(tally.post, 0.5))}, p99 {ms(post_p99)}, "
        f"max {ms(max(tally.post))} ({len(tally.post)} posts; from their sending, not their "
        f"time: p50 {ms(percentile(tally.post_served, 0.5))}, "
        f"p99 {ms(percentile(tally.post_served, 0.99))})"
    )
    if tally.sealed:
        print(
            f"sealed under load: p50 {ms(percentile(tally.sealed, 0.5))}, "
            f"p99 {ms(percentile(tally.sealed, 0.99))} ({len(tally.sealed)})"
        )
    print(
        f"page under load: p50 {ms(percentile(tally.page, 0.5))}, p99 {ms(page_p99)}, "
        f"max {ms(max(tally.page))} ({len(tally.page)} pages)"
    )
    print(
        f"streams: {found['opened']} opened, {streams['open']} open at the end, "
        f"{streams['events']} post events, {streams['bytes'] / 1e6:.1f} MB received"
    )
    stream_errors = (
        streams["bad_status"] + streams["no_answer"] + streams["lost"] + len(streams["failed"])
    )
    errors = sum(tally.errors.values()) + stream_errors
    print(
        f"errors: {errors} ({tally.errors or 'no request'}; streams: {streams['bad_status']} "
        f"not 200, {streams['no_answer']} unanswered, {streams['lost']} closed by the server, "
        f"{len(streams['failed'])} not connected), refused: {tally.refused}"
    )
    cpu = found["cpu"]
    print(
        f"this load generator: pages sent late by p50 {ms(percentile(tally.late, 0.5))}, p99 "
        f"{ms(percentile(tally.late, 0.99))}; its event loop late by p99 "
        f"{ms(percentile(tally.loop_lag, 0.99))}, max {ms(max(tally.loop_lag))}"
    )
    print(
        f"CPU (cores): server {cpu['server']:.2f}, load generator {cpu['load']:.2f}, streams' "
        f"reader {cpu['streams']:.2f}; the machine's load average {found['loadavg'][0]:.1f} at the "
        f"start, {found['loadavg'][1]:.1f} at the end (2 cores: above 2, others' work shares them)"
    )
    print(f"a refused line (a seat's START) is answered {found['refusal']}: counted as refused")
    for example in tally.examples:
        print(f"  {example}")
    print(f"post_p99_ratio {post_p99 / post_p50_alone:.1f}")
    print(f"page_p99_ratio {page_p99 / page_p50_alone:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--evenings", type=int, default=3, help="evenings at once (default 3)")
    parser.add_argument("--seconds", type=float, default=60.0, help="the evening's length")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BBSGM_DATABASE_URL"),
        help="a PostgreSQL server (a fresh database is made there); default: a SQLite file",
    )
    parser.add_argument("--workers", type=int, help="server processes (default 1 on SQLite)")
    parser.add_argument("--seed", type=int, default=1, help="the clients' choices")
    args = parser.parse_args()
    if not 1 <= args.evenings <= 10 or not 1 <= args.seconds <= 600:
        parser.error("--evenings 1–10, --seconds 1–600")
    server_url = args.database_url
    if server_url and server_url.startswith("sqlite"):
        server_url = None
    workers = args.workers or (2 if server_url else 1)
    raise_fd_limit()
    print(machine())
    with scratch_database(server_url) as url:
        server = bbsgm_serve(
            url,
            workers,
            registrations_per_hour_per_address="1000",
            logins_per_minute_per_address="1000",
        )
        try:
            found = asyncio.run(
                run(server.url, server.proc.pid, args.evenings, args.seconds, args.seed)
            )
        finally:
            server.stop()
    print(f"database: {'PostgreSQL' if server_url else 'SQLite'}, {workers} server process(es)")
    report(found, args.evenings, args.seconds)


if __name__ == "__main__":
    main()
