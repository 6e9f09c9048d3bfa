"""Where the busiest writes of the API run, and how: a post and a sealed command.

Each does its whole work in one transaction — the token's user, the attempt counted
(``ratelimit.counting_post``), the write, commit, and the answer's JSON (the model serialised
once, not validated again) — instead of one hop per dependency and a transaction for the
counters (docs/benchmarks.md). The route asks for the token's presence only
(``deps.require_bearer_header``), so a missing token is answered 401 before the body is
validated, as on the other routes.

On SQLite, where one transaction at a time writes anyway, a write finding the database free
runs right in the event loop (``begin_now`` took the write lock without waiting): handing it to
a worker thread and back cost a fifth of the posts a second, the two threads passing the GIL
between them (docs/benchmarks.md, round 6). The writes of one event loop take their turns in
arrival order — each first gives the loop a turn, as below, or the writes of one turn of the
loop went one after another and the same clients came last every time (a fifth of the clients
at up to twice the others' latency, round 21) — and only the first in line asks for the write
lock, every millisecond or two, while a worker thread holds it (a page's form, a GM's action).
(The search indexer writes a file of its own and is in nobody's way: app/archive/search.py,
``SearchFile``.) Handing a write that found the lock taken to a worker thread made the next
ones find it taken too: a tenth of the posts went to threads, each paying the GIL's back and
forth, and the p99 doubled (round 10). After about a tenth of a second (another process
writing, a long transaction) the first in line waits in a worker thread as any other writer
does, still first in line.

On PostgreSQL with the server on this host (``Settings.pg_writes_run_in_loop``), a write runs
in the event loop too, start to end: handing it to a worker thread made every statement's wait
for the server a hand-over of the GIL between that thread and the event loop, which was a
tenth of a post's CPU, and the posts a second rose by about as much once it was gone
(docs/benchmarks.md, round 18). A write first gives the event loop a turn to take in the
requests that arrived meanwhile: run at once, the writes of one turn of the loop went one after
another before it looked at its sockets again, and a client whose request came just after the
look waited for the whole next turn, every time — at 16 clients, two posted at half the rate
of the others, and the p99 was 2.5 times the p50 (round 19; measured under uvloop, the event
loop uvicorn runs when it is installed, as ``uvicorn[standard]`` installs it). Its statements
go to the server over loopback or a Unix socket, a tenth of a millisecond each; one that waits
for a row lock longer than ``LOOP_LOCK_TIMEOUT_MS`` (another transaction holds the game, the
thread), or runs longer than
``LOOP_STATEMENT_TIMEOUT_MS``, gives up, and the write is done again from the start in a worker
thread, where it waits as any other does — without counting the attempt a second time. With
the server on another host, every write runs in a worker thread: the event loop would stop for
each round trip. What this leaves unbounded: each statement may run up to its limit; COMMIT's
wait for a synchronous standby; a server that stops answering altogether holds the event loop
until the connection's ``tcp_user_timeout`` (30 s) where it held a worker thread
(docs/security.md: ``BBSGM_PG_WRITES_IN_LOOP=off`` for those setups).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from collections.abc import Callable

from fastapi import Request, Response
from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app import ratelimit
from app.db import Database, begin_now, gave_up_waiting
from app.models import User
from app.web import deps

# ``work(session, in_loop)`` does the whole write in the session's transaction, commits and
# returns the answer's body; ``in_loop``: it runs in the event loop and may never wait for the
# write lock (app/ratelimit.py, ``counting_post``).
Work = Callable[[Session, bool], bytes]

log = logging.getLogger("bbsgm.turns")
PAUSES = (0.0005, 0.001, *(0.002,) * 50)
_LINES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


async def signed_in_write(request: Request, act: Callable[[Session, User], BaseModel]) -> Response:
    """``act`` writes for the token's user in the session's transaction; the model it returns
    is the answer, 201."""

    def work(session: Session, in_loop: bool) -> bytes:
        signed_in = functools.partial(deps.require_bearer_user, request, session)
        token = deps.bearer_token(request)
        with ratelimit.counting_post(
            session, request, signed_in, token=token, in_loop=in_loop
        ) as user:
            answer = act(session, user)
        session.commit()
        return answer.model_dump_json().encode()

    content = await in_turn(request, work)
    return Response(content, status_code=201, media_type="application/json")


async def in_turn(request: Request, work: Work) -> bytes:
    database: Database = request.app.state.database
    if not database.is_sqlite:
        if request.app.state.pg_writes_in_loop:
            await asyncio.sleep(0)  # the requests that came meanwhile take their places first
            try:
                with database.loop_session() as session:
                    try:
                        session.connection()  # the event loop's own connection, opened if new
                    except Exception:
                        # Refused (a connection pooler that takes no ``options``, say): this
                        # process writes in worker threads from now on.
                        log.warning("PostgreSQL writes leave the event loop", exc_info=True)
                        request.app.state.pg_writes_in_loop = False
                    else:
                        return work(session, True)
            except Exception as error:
                if not gave_up_waiting(error):
                    raise
                log.info(
                    "%s %s gave up waiting in the event loop (%s): done again in a thread",
                    request.method,
                    request.url.path,
                    type(getattr(error, "orig", error)).__name__,
                )
        return await run_in_threadpool(_in_thread, database, work)
    await asyncio.sleep(0)  # the requests that came meanwhile take their places in line first
    async with write_line():
        for pause in PAUSES:
            with database.session() as session:
                if begin_now(session):
                    return work(session, True)
            await asyncio.sleep(pause)
        return await run_in_threadpool(_in_thread, database, work)


def _in_thread(database: Database, work: Work) -> bytes:
    with database.session() as session:
        return work(session, False)


def write_line() -> asyncio.Lock:
    """The line of this event loop's writes (a lock belongs to one loop; tests run several)."""
    loop = asyncio.get_running_loop()
    line = _LINES.get(loop)
    if line is None:
        line = _LINES[loop] = asyncio.Lock()
    return line
