"""Benchmark: posts carrying a valid えいつく command, per second, at 16 concurrent clients,
against a bare FastAPI endpoint that inserts one row into the same kind of database.

    python bench/post_throughput.py                       # SQLite file, one server process
    python bench/post_throughput.py postgresql+psycopg://postgres@127.0.0.1:55432/postgres
                                                          # a fresh database there, 2 workers
    python bench/post_throughput.py --all-kinds [URL]     # each of the five kinds in turn

Each client plays its own えいつく games over HTTP (`bbsgm serve`): two seats, the second
kicked so the bot ends its weeks, the first playing a script of legal lines recorded once on
the same seed, so every post is a command the bot applies (each answer is checked to be ok).
The baseline is this file's `baseline_app` under uvicorn with the same worker count, the same
engine settings (app.db.engine) and the same number of requests from the same 16 clients.

Both servers are started once and warmed up, unmeasured, with WARM_SECONDS of the same load:
a server's first requests open its pooled connections and build what it then keeps (compiled
statements and templates, FastAPI's per-route validators), several times the cost of a post
later, and a server runs for days. Then the two take turns: ROUNDS rounds of ROUND_SECONDS
of bbsgm, each followed by the baseline answering as many requests from each client as bbsgm
did in that round, while the other server idles. On a shared machine whose speed drifts by
tens of per cent within minutes, a ratio of one long run of each mostly measured the drift
(docs/performance.md). On SQLite a bbsgm round ends once its posts are indexed for search
(the server's background indexer does it a second after they are stored; what is left when
the round ends is indexed then, and the round's WAL checkpointed, in the round's time:
``index_caught_up``). Prints each
round's ratio, the throughput and p50/p99 latency of both over all rounds, and last
``post_throughput_ratio <x>``: bbsgm's posts per second divided by the baseline's inserts per
second, over all rounds.

With ``--all-kinds``, the same is done for every registered kind in turn: each client plays
games of that kind by its scripted game (tests/support/fuzz_states.py: a whole game, every seat
and the GM taking their recorded lines, secret ones through ``/sealed``), one line a post, on the
script's seed, so every post is a command the bot applies. Prints
``post_throughput_ratio_<kind> <x>`` for each and last ``post_throughput_ratio_min <x>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from pydantic import BaseModel
from sqlalchemy import Column, Integer, MetaData, Table, Text, insert

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    ROOT,
    SECRET,
    Server,
    bbsgm_serve,
    free_port,
    machine,
    make_users,
    percentile,
    pick,
    scratch_database,
)

from app.config import Settings
from app.db.engine import Database
from app.db.models import User
from app.gm import service as gm
from app.main import CHECKPOINT_BACKSTOP_PAGES, open_database

CLIENTS = 16
GAMES_EACH = 24  # 816 lines a client: 49 posts a second for the warm-up and every round
SEED = "b" * 64
ROUNDS = 3
ROUND_SECONDS = 5.0  # of bbsgm posting per round
WARM_SECONDS = 1.5


def record_script(db: Database) -> list[str]:
    """The lines seat 1 plays in a game whose seat 2 is kicked, on SEED, to the end."""
    users = make_users(db, ["scriptgm", "scriptp", "scriptq"])
    with db.session() as session:
        by = {name: session.get(User, uid) for name, (uid, _) in users.items()}
        master, player, kicked = by["scriptgm"], by["scriptp"], by["scriptq"]
        assert master and player and kicked
        game = gm.create_game(session, master, "eitsuku", "script", {}, SECRET, seed=SEED)
        for who, line in ((player, "JOIN"), (kicked, "JOIN"), (master, "START")):
            gm.submit_post(session, game.thread_id, who, line, SECRET)
        gm.submit_post(session, game.thread_id, master, f"KICK {kicked.name}", SECRET)
        session.commit()
        lines = []
        while game.status == "active":
            line = pick(gm.legal_lines(game, player))
            _post, replies = gm.submit_post(session, game.thread_id, player, line, SECRET)
            assert replies[0].reply_ok, replies[0].body
            session.commit()
            lines.append(line)
            session.refresh(game)
        return lines


def deal_games(db: Database, clients: int, games_each: int) -> list[list[tuple[int, str]]]:
    """Per client: [(thread id, token)] of games ready for the script."""
    names = [f"c{c}{role}{g}" for c in range(clients) for g in range(games_each) for role in "mpq"]
    users = make_users(db, names)
    plan: list[list[tuple[int, str]]] = []
    with db.session() as session:
        for c in range(clients):
            mine = []
            for g in range(games_each):
                master, player, kicked = (session.get(User, users[f"c{c}{r}{g}"][0]) for r in "mpq")
                assert master and player and kicked
                game = gm.create_game(
                    session, master, "eitsuku", f"b{c}-{g}", {}, SECRET, seed=SEED
                )
                for who, line in ((player, "JOIN"), (kicked, "JOIN"), (master, "START")):
                    gm.submit_post(session, game.thread_id, who, line, SECRET)
                gm.submit_post(session, game.thread_id, master, f"KICK {kicked.name}", SECRET)
                session.commit()
                mine.append((game.thread_id, users[f"c{c}p{g}"][1]))
            plan.append(mine)
    return plan


# A client's posts to come: (thread id, token, line), or (path, token, line) for a sealed one.
Feed = Iterator[tuple[int | str, str, str]]


def feeds(plan: list[list[tuple[int, str]]], script: list[str]) -> list[Feed]:
    """One feed per client: its games' script lines in order, resumed from round to round."""
    return [
        iter([(thread_id, token, line) for thread_id, token in games for line in script])
        for games in plan
    ]


@contextlib.asynccontextmanager
async def http_clients(url: str, count: int) -> AsyncIterator[list[httpx.AsyncClient]]:
    """The clients of a round, made before its clock starts: making one costs the client
    process about 30 ms (httpx loads its TLS settings), during which the clients already
    posting would not read their answers."""
    async with contextlib.AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(httpx.AsyncClient(base_url=url, timeout=120))
            for _ in range(count)
        ]


async def run_bbsgm(url: str, clients: list[Feed], seconds: float) -> dict[str, Any]:
    """Each client posts its next lines for ``seconds``."""
    latencies: list[float] = []

    async def client(c: httpx.AsyncClient, feed: Feed, stop_at: float) -> int:
        done = 0
        while time.perf_counter() < stop_at:
            item = next(feed, None)
            if item is None:  # a round cut short would measure nothing, or less
                raise RuntimeError("a client ran out of games: raise GAMES_EACH")
            where, token, line = item
            path = where if isinstance(where, str) else f"/api/threads/{where}/posts"
            t0 = time.perf_counter()
            reply = await c.post(
                path, json={"body": line}, headers={"Authorization": f"Bearer {token}"}
            )
            latencies.append(time.perf_counter() - t0)
            body = reply.json()
            ok = body["sealed"]["ok"] if isinstance(where, str) else body["replies"][0]["ok"]
            if reply.status_code != 201 or not ok:
                raise RuntimeError(f"{line}: {reply.status_code} {reply.text[:300]}")
            done += 1
        return done

    async with http_clients(url, len(clients)) as made:
        start = time.perf_counter()
        stop_at = start + seconds
        posting = (client(c, f, stop_at) for c, f in zip(made, clients, strict=True))
        counts = await asyncio.gather(*posting)
        elapsed = time.perf_counter() - start
    return {"requests": sum(counts), "counts": counts, "elapsed": elapsed, "lat": latencies}


async def run_baseline(url: str, counts: list[int]) -> dict[str, Any]:
    latencies: list[float] = []

    async def client(c: httpx.AsyncClient, n: int) -> None:
        for i in range(n):
            t0 = time.perf_counter()
            reply = await c.post("/rows", json={"body": f"SET 主演 役者{i % 6 + 1}"})
            latencies.append(time.perf_counter() - t0)
            assert reply.status_code == 201, reply.text

    async with http_clients(url, len(counts)) as made:
        start = time.perf_counter()
        await asyncio.gather(*(client(c, n) for c, n in zip(made, counts, strict=True)))
        elapsed = time.perf_counter() - start
    return {"requests": sum(counts), "elapsed": elapsed, "lat": latencies}


def index_caught_up(url: str) -> float:
    """SQLite: bbsgm indexes posts for search in batches, a second after they are stored (app.main's
    index_runner). The round's posts not yet indexed when it ends are indexed here, by the
    indexer's own batches (back to back), and the seconds it takes count as bbsgm's: the
    indexing is then not done in the baseline's turn, and bbsgm's time holds the indexing of all
    its posts but not the indexer's sleep. (Waiting for the server's indexer counted half a
    second of its sleep a round on average, anything from none to a whole second: a tenth to a
    sixth of a round's time, random.) The WAL the round wrote is
    then checkpointed, in the round's time as well. 0 on PostgreSQL."""
    if not url.startswith("sqlite"):
        return 0.0
    from app.archive.search import index_pending

    start = time.perf_counter()
    database = Database(url)
    # As the server: its commits do not checkpoint the WAL; its runner does, every quarter
    # second. The round's last pages are copied here, in the round's time too: waiting for
    # the indexer let the runner do it before the baseline's turn, which it would slow now.
    database.defer_checkpoints(CHECKPOINT_BACKSTOP_PAGES)
    try:
        index_pending(database)
        database.checkpoint()
    finally:
        database.dispose()
    return time.perf_counter() - start


def combine(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "requests": sum(r["requests"] for r in results),
        "elapsed": sum(r["elapsed"] for r in results),
        "lat": [x for r in results for x in r["lat"]],
    }


class Row(BaseModel):
    body: str


ROWS = Table(
    "bench_rows", MetaData(), Column("id", Integer, primary_key=True), Column("body", Text)
)


def baseline_app() -> Any:
    """One endpoint, one INSERT, the app's own engine and pool; for uvicorn --factory."""
    rows = ROWS
    db = open_database(Settings(database_url=os.environ["BENCH_DATABASE_URL"], secret_key=SECRET))
    rows.metadata.create_all(db.engine)
    app = FastAPI()

    @app.post("/rows", status_code=201)
    def add(row: Row) -> dict[str, bool]:
        with db.engine.begin() as conn:
            conn.execute(insert(rows).values(body=row.body))
        return {"ok": True}

    return app


def report(name: str, result: dict[str, Any]) -> float:
    rate = result["requests"] / result["elapsed"]
    p50 = percentile(result["lat"], 0.50) * 1000
    p99 = percentile(result["lat"], 0.99) * 1000
    count = result["requests"]
    print(f"{name:<9} {count:>6} requests {rate:8.1f}/s  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms")
    return rate


def baseline_serve(url: str, workers: int) -> Server:
    port = free_port()
    env = {**os.environ, "BENCH_DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "uvicorn", "--factory", "bench.post_throughput:baseline_app"]
    args += ["--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    bare = Server(args, env, port)
    try:
        bare.wait_ready("/docs")
    except BaseException:
        bare.stop()
        raise
    return bare


def kind_feeds(db: Database, kind: str, clients: int) -> tuple[list[Feed], int]:
    """Per client, games of ``kind`` played by its scripted game (all seats and the GM, one
    line a post, sealed lines through ``/sealed``), enough for the warm-up and every round;
    returns the feeds and the script's length."""
    from tests.support.fuzz_states import PLAYERS as SEATS
    from tests.support.fuzz_states import script

    seats = SEATS[kind]
    played = script(kind, [f"s{i}" for i in range(seats)])
    steps = played.steps
    games_each = max(2, -(-KIND_LINES // len(steps)))
    names = [
        f"{kind[:3]}{c}g{g}{role}"
        for c in range(clients)
        for g in range(games_each)
        for role in ["m", *(str(i) for i in range(seats))]
    ]
    users = make_users(db, names)
    plan: list[list[tuple[int | str, str, str]]] = []
    with db.session() as session:
        for c in range(clients):
            mine: list[tuple[int | str, str, str]] = []
            for g in range(games_each):
                prefix = f"{kind[:3]}{c}g{g}"
                master = session.get(User, users[f"{prefix}m"][0])
                assert master is not None
                # Lines may name players (EVENT ストライキ <name>): the script with these names.
                played = script(kind, [f"{prefix}{i}" for i in range(seats)])
                game = gm.create_game(
                    session, master, kind, prefix, dict(played.options), SECRET, seed=played.seed
                )
                for i in range(seats):
                    player = session.get(User, users[f"{prefix}{i}"][0])
                    assert player is not None
                    if kind == "cardbattle":  # decks come from collections (docs/cards.md)
                        from tests.support.cardbattle import hold

                        names_held = played.options["collections"][f"{prefix}{i}"]
                        hold(session, player, names_held)
                    gm.submit_post(session, game.thread_id, player, "JOIN", SECRET)
                gm.submit_post(session, game.thread_id, master, "START", SECRET)
                session.commit()
                for step in played.steps:
                    who = f"{prefix}m" if step.actor == "gm" else f"{prefix}{step.actor}"
                    where: int | str = (
                        f"/api/games/{game.id}/sealed" if step.sealed else game.thread_id
                    )
                    mine.append((where, users[who][1], step.line))
            plan.append(mine)
    return [iter(items) for items in plan], len(steps)


# Lines a client needs for the warm-up and the rounds: 640 is about 39 posts a second each,
# 620 a second for the 16 (160 ran out on a quiet machine: "a client ran out of games").
KIND_LINES = 640


def all_kinds(server_url: str | None) -> None:
    from app.games import GAMES

    workers = 2 if server_url else 1
    print(f"machine: {machine()}")
    ratios: dict[str, float] = {}
    with scratch_database(server_url) as url:
        db = Database(url)
        print(f"database: {db.engine.dialect.name}, {workers} worker process(es)")
        prepared = {kind: kind_feeds(db, kind, CLIENTS) for kind in GAMES}
        db.dispose()
        gc.freeze()
        server = bbsgm_serve(url, workers)
        bare = baseline_serve(url, workers)
        try:
            for kind, (clients, length) in prepared.items():
                ours: list[dict[str, Any]] = []
                base: list[dict[str, Any]] = []
                warm = asyncio.run(run_bbsgm(server.url, clients, WARM_SECONDS))
                asyncio.run(run_baseline(bare.url, warm["counts"]))
                for _ in range(ROUNDS):
                    ours.append(asyncio.run(run_bbsgm(server.url, clients, ROUND_SECONDS)))
                    ours[-1]["elapsed"] += index_caught_up(url)
                    base.append(asyncio.run(run_baseline(bare.url, ours[-1]["counts"])))
                print(f"{kind}: a game is {length} lines")
                mine = report("bbsgm", combine(ours))
                theirs = report("baseline", combine(base))
                ratios[kind] = mine / theirs
                print(f"post_throughput_ratio_{kind} {ratios[kind]:.3f}")
        finally:
            server.stop()
            bare.stop()
    print(f"post_throughput_ratio_min {min(ratios.values()):.3f}")


def main() -> None:
    arguments = [a for a in sys.argv[1:] if a != "--all-kinds"]
    server_url = arguments[0] if arguments else None
    if "--all-kinds" in sys.argv[1:]:
        all_kinds(server_url)
        return
    workers = 2 if server_url else 1
    print(f"machine: {machine()}")
    ours: list[dict[str, Any]] = []
    base: list[dict[str, Any]] = []
    with scratch_database(server_url) as url:
        db = Database(url)
        print(
            f"database: {db.engine.dialect.name}, {workers} worker process(es), {CLIENTS} clients"
        )
        script = record_script(db)
        clients = feeds(deal_games(db, CLIENTS, GAMES_EACH), script)
        db.dispose()
        print(f"script: {len(script)} lines a game, up to {GAMES_EACH} games a client")
        # The client process keeps every game's script: its garbage collector's full passes
        # over them stalled all 16 clients for ~110 ms at a time, and more often in bbsgm's
        # turns (its answers are larger). Set aside, they are not walked again.
        gc.freeze()
        server = bbsgm_serve(url, workers)
        bare = baseline_serve(url, workers)
        try:
            # Unmeasured first: a server's first requests build what it keeps (pooled
            # connections, compiled statements and templates, the routes' validators).
            warm = asyncio.run(run_bbsgm(server.url, clients, WARM_SECONDS))
            asyncio.run(run_baseline(bare.url, warm["counts"]))
            for number in range(1, ROUNDS + 1):
                ours.append(asyncio.run(run_bbsgm(server.url, clients, ROUND_SECONDS)))
                ours[-1]["elapsed"] += index_caught_up(url)
                base.append(asyncio.run(run_baseline(bare.url, ours[-1]["counts"])))
                mine, bare_rate = (r["requests"] / r["elapsed"] for r in (ours[-1], base[-1]))
                ratio = mine / bare_rate
                print(f"round {number}: {mine:.1f}/s against {bare_rate:.1f}/s, {ratio:.3f}")
        finally:
            server.stop()
            bare.stop()
    ours_rate = report("bbsgm", combine(ours))
    base_rate = report("baseline", combine(base))
    print(f"post_throughput_ratio {ours_rate / base_rate:.3f}")


if __name__ == "__main__":
    main()
