"""Where the busiest writes of the API run: a post and a sealed command.

On SQLite, where one transaction at a time writes anyway, a write finding the database free
runs right in the event loop (``begin_now`` took the write lock without waiting): handing it to
a worker thread and back cost a fifth of the posts a second, the two threads passing the GIL
between them (docs/benchmarks.md, round 6). The writes of one event loop take their turns in
arrival order, and only the first in line asks for the write lock, every millisecond or two,
while a worker thread holds it (the search indexer, a page's form, a GM's action). Handing a
write that found the lock taken to a worker thread made the next ones find it taken too: a
tenth of the posts went to threads, each paying the GIL's back and forth, and the p99 doubled
(round 10). After about a tenth of a second (another process writing, a long transaction) the
first in line waits in a worker thread as any other writer does, still first in line.

On PostgreSQL, whose workers write side by side, every write runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable

from fastapi import Request
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.db import Database, begin_now

# ``work(session, in_loop)`` does the whole write in the session's transaction, commits and
# returns the answer's body; ``in_loop``: it runs in the event loop and may never wait for the
# write lock (app/ratelimit.py, ``counting_post``).
Work = Callable[[Session, bool], bytes]

PAUSES = (0.0005, 0.001, *(0.002,) * 50)
_LINES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
    weakref.WeakKeyDictionary()
)


async def in_turn(request: Request, work: Work) -> bytes:
    database: Database = request.app.state.database
    if not database.is_sqlite:
        return await run_in_threadpool(_in_thread, database, work)
    async with _line():
        for pause in PAUSES:
            with database.session() as session:
                if begin_now(session):
                    return work(session, True)
            await asyncio.sleep(pause)
        return await run_in_threadpool(_in_thread, database, work)


def _in_thread(database: Database, work: Work) -> bytes:
    with database.session() as session:
        return work(session, False)


def _line() -> asyncio.Lock:
    """The line of this event loop's writes (a lock belongs to one loop; tests run several)."""
    loop = asyncio.get_running_loop()
    line = _LINES.get(loop)
    if line is None:
        line = _LINES[loop] = asyncio.Lock()
    return line
