"""Live threads: what wakes a thread's Server-Sent Events streams when something is posted.

Streams never trust a notification's content: a wake-up only makes them read the posts after the
last one they sent (the SSE id is the レス番), so nothing is lost or doubled, and a reconnect with
``Last-Event-ID`` resumes exactly. Notifications:
- every process: after a commit that added posts, the threads touched in that session are woken
  in this process (SQLAlchemy ``after_commit``);
- PostgreSQL: ``pg_notify`` inside the same transaction (delivered only if it commits) reaches
  every process's ``LISTEN`` thread, so several workers or hosts see each other's posts;
- and streams re-read every ``BBSGM_LIVE_POLL_SECONDS`` anyway, which covers SQLite writers in
  other processes (``bbsgm tick`` from cron).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.orm import Session

log = logging.getLogger("bbsgm.live")
CHANNEL = "bbsgm_threads"
_TOUCHED = "bbsgm_touched_threads"


class Hub:
    """Per-process registry of waiting streams, by thread id."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: dict[int, set[asyncio.Event]] = {}
        self._lock = threading.Lock()

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def subscribe(self, thread_id: int) -> asyncio.Event:
        waiter = asyncio.Event()
        with self._lock:
            self._waiters.setdefault(thread_id, set()).add(waiter)
        return waiter

    def unsubscribe(self, thread_id: int, waiter: asyncio.Event) -> None:
        with self._lock:
            waiters = self._waiters.get(thread_id)
            if waiters is not None:
                waiters.discard(waiter)
                if not waiters:
                    del self._waiters[thread_id]

    def wake(self, thread_id: int) -> None:
        """Thread-safe: may be called from worker threads and the LISTEN thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._lock:
            waiters = list(self._waiters.get(thread_id, ()))
        for waiter in waiters:
            loop.call_soon_threadsafe(waiter.set)


HUB = Hub()


def touched(session: Session, thread_id: int, *, notified: bool = False) -> None:
    """Called by the forum for every post it adds: wake the thread's streams on commit.
    ``notified``: the caller's own statement ran ``pg_notify`` for the thread already (the
    numbering UPDATE does, on PostgreSQL)."""
    touched: set[int] = session.info.setdefault(_TOUCHED, set())
    if thread_id in touched:  # a post and the bot's reply: one wake-up is enough
        return
    touched.add(thread_id)
    if not notified and session.get_bind().dialect.name == "postgresql":
        session.execute(
            text("SELECT pg_notify(:channel, :payload)"),
            {"channel": CHANNEL, "payload": str(thread_id)},
        )


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    for thread_id in session.info.pop(_TOUCHED, set()):
        HUB.wake(thread_id)


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    session.info.pop(_TOUCHED, None)


class PostgresListener:
    """A thread holding ``LISTEN bbsgm_threads`` on its own connection, waking this process."""

    def __init__(self, dsn: str, hub: Hub) -> None:
        self.dsn = dsn
        self.hub = hub
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bbsgm-listen", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self.dsn, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=1.0):
                            self._deliver(note.payload)
            except Exception:  # the database went away: retry, the streams still poll
                log.warning("LISTEN connection lost; retrying", exc_info=True)
                self._stop.wait(2.0)

    def _deliver(self, payload: Any) -> None:
        try:
            self.hub.wake(int(payload))
        except (TypeError, ValueError):
            log.warning("ignored notification %r", payload)
