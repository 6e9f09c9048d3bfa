"""Live threads: what wakes a thread's Server-Sent Events streams when something is posted.

Streams never trust a notification's content: a wake-up only makes them read the posts after the
last one they sent (the SSE id is the レス番), so nothing is lost or doubled, and a reconnect with
``Last-Event-ID`` resumes exactly. Notifications:
- every process: after a commit that added posts, the threads touched in that session are woken
  in this process (``app.db.engine.after_commit``);
- PostgreSQL: ``pg_notify`` inside the same transaction (delivered only if it commits) reaches
  the ``LISTEN`` thread of every process that has live streams, so several workers or hosts
  see each other's posts;
- and streams re-read every ``BBSGM_LIVE_POLL_SECONDS`` anyway, which covers SQLite writers in
  other processes (``bbsgm tick`` from cron).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.engine import PG_KEEPALIVES, after_commit, is_pending, is_postgres

log = logging.getLogger("bbsgm.live")
CHANNEL = "bbsgm_threads"


# A thread's streams are woken at most once every FACTOR times the event loop's CPU time
# that the last wake-up took, and never held back more than MAX_GAP seconds: one post or
# twenty, a busy thread's fan-out then takes at most a fifth of the loop, and each wake-up
# carries every post since the last one. They are woken SLICE at a time, one slice a turn
# of the loop, so that the loop serves requests (posts) in between; a wake-up's cost is
# the loop's CPU time from its first slice to a turn after its last.
FACTOR = 5.0
MAX_GAP = 0.5
SLICE = 64


@dataclass(frozen=True, slots=True)
class Batch:
    """What a read gives a stream: its next events, the last レス番 in them (or the one it
    read after, if none) and how many posts they are."""

    events: bytes
    last: int
    count: int


Loader = Callable[[int], Awaitable[Batch]]


class Subscription:
    """One stream's place among its thread's streams (``Hub.subscribe``)."""

    __slots__ = ("channel", "event")

    def __init__(self, channel: _Channel) -> None:
        self.channel = channel
        self.event = asyncio.Event()


class _Channel:
    """A thread's streams in this process that read through one loader on one event loop."""

    __slots__ = (
        "cost",
        "front",
        "gap",
        "last_fired",
        "load",
        "loop",
        "mark",
        "open",
        "pending",
        "poll",
        "poll_timer",
        "reads",
        "source",
        "subscriptions",
        "thread_id",
        "timer",
        "waking",
    )

    def __init__(
        self,
        thread_id: int,
        loop: asyncio.AbstractEventLoop,
        source: Hashable,
        load: Loader,
    ) -> None:
        self.thread_id = thread_id
        self.loop = loop
        self.source = source
        self.load = load
        self.open = True
        self.subscriptions: set[Subscription] = set()
        # The reads since the last wake-up, by the レス番 they read after: done or in flight.
        self.reads: dict[int, asyncio.Future[Batch]] = {}
        self.front: int | None = None  # where the streams that are up to date are
        self.poll = math.inf
        self.poll_timer: asyncio.TimerHandle | None = None
        self.timer: asyncio.TimerHandle | None = None  # a wake-up held back
        self.waking: object | None = None  # the wake-up whose slices are being woken
        self.pending = False  # a wake came during that one: another is due after it
        self.last_fired = -math.inf
        self.gap = 0.0
        self.cost = 0.0  # the last wake-up's loop CPU seconds, so far
        self.mark = 0.0  # the loop thread's CPU time at the last slice


class Hub:
    """Per-process registry of waiting streams, by thread id, and the reads they share.

    ``wake`` may be called from any thread; the rest runs on the event loop a stream
    subscribed from. A wake is one callback on that loop, whatever the number of streams:
    there (at once, or when the thread's gap since its last wake-up is over: ``FACTOR``; a
    wake that comes while one is being delivered is folded into the next) it forgets the
    thread's reads, reads the posts after the newest one the streams have, and then sets
    every stream's event. Every ``poll`` seconds without a wake-up the streams are woken
    anyway.

    Streams of one thread that need the same posts (after the same レス番) share one read,
    ``read``: with a thousand streams on a thread, one post was read and rendered a thousand
    times, each read a transaction of its own (on SQLite one taking the write lock), and the
    posts behind them waited. A stream shares only a read
    that began after the thread's last wake-up, and clears its event before it asks for one:
    every post whose wake-up came before is then committed before the read began, so the
    read sees it; a post whose wake-up comes after wakes the stream again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # _channels: subscribers and wakers on other threads
        self._channels: dict[int, list[_Channel]] = {}
        # PostgreSQL: this process's LISTEN threads (one per running app), which listen only
        # while there are streams to wake (``ready``).
        self.listeners: list[PostgresListener] = []

    def has_streams(self) -> bool:
        return bool(self._channels)

    def wake_all(self) -> None:
        """Every thread with streams here: after a wait in which posts may have gone
        unnoticed (this process's LISTEN connection down, or not yet up)."""
        with self._lock:
            thread_ids = list(self._channels)
        for thread_id in thread_ids:
            self.wake(thread_id)

    async def ready(self) -> None:
        """Before a stream's first read, after it subscribed: on PostgreSQL, until this
        process LISTENs, so that every post committed after the read wakes the stream. A
        database that cannot be reached does not hold the stream: it polls."""
        for listener in list(self.listeners):
            await listener.listening()

    def subscribe(
        self, thread_id: int, source: Hashable, load: Loader, poll: float = math.inf
    ) -> Subscription:
        """From a stream, on its event loop. ``load(after)`` reads the posts after a レス番
        (streams with the same ``source`` share their loader); ``poll`` is how often, at
        most, the stream wants to be woken without a post (a thread's shortest counts)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            channels = self._channels.setdefault(thread_id, [])
            channel = next((c for c in channels if c.loop is loop and c.source == source), None)
            if channel is None:
                channel = _Channel(thread_id, loop, source, load)
                channels.append(channel)
        subscription = Subscription(channel)
        channel.subscriptions.add(subscription)
        if poll < channel.poll:
            channel.poll = poll
            self._arm_poll(channel)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        channel = subscription.channel
        channel.subscriptions.discard(subscription)
        if channel.subscriptions or not channel.open:
            return
        channel.open = False
        channel.waking = None
        channel.pending = False
        with self._lock:
            channels = self._channels.get(channel.thread_id, [])
            channels.remove(channel)
            if not channels:
                del self._channels[channel.thread_id]
        for timer in (channel.timer, channel.poll_timer):
            if timer is not None:
                timer.cancel()

    def wake(self, thread_id: int) -> None:
        """Thread-safe: may be called from worker threads and the LISTEN thread."""
        if thread_id not in self._channels:
            return  # a stream subscribing now reads after it subscribed: it sees the post
        with self._lock:
            channels = list(self._channels.get(thread_id, ()))
        for channel in channels:
            if not channel.loop.is_closed():
                channel.loop.call_soon_threadsafe(self._wake_here, channel)

    def _wake_here(self, channel: _Channel) -> None:
        if not channel.open or channel.timer is not None:
            return  # gone, or a wake-up is due already: it reads this post too
        if channel.waking is not None:
            channel.pending = True  # after this wake-up's last slice
            return
        due = channel.last_fired + channel.gap
        if due <= channel.loop.time():
            self._fire(channel)
        else:
            channel.timer = channel.loop.call_at(due, self._fire, channel)

    def _fire(self, channel: _Channel) -> None:
        if not channel.open:
            return
        channel.timer = None
        channel.last_fired = channel.loop.time()
        channel.cost = 0.0
        channel.reads = {}  # from before this wake-up: they may have missed its posts
        self._arm_poll(channel)
        token = object()
        channel.waking = token
        targets = list(channel.subscriptions)
        if channel.front is None:
            self._wake_slice(channel, token, targets, 0)
            return
        # The read the streams that are up to date will ask for, before they are woken.
        future = self._start_read(channel, channel.front)
        future.add_done_callback(lambda _done: self._wake_slice(channel, token, targets, 0))

    def _wake_slice(
        self, channel: _Channel, token: object, targets: list[Subscription], start: int
    ) -> None:
        """Sets the events of ``targets[start:start + SLICE]``; the streams run in the loop's
        next turn, and the next slice after them (each call adds the turn's CPU time)."""
        if channel.waking is not token:
            return  # the channel is gone
        now = time.thread_time()
        if start:
            channel.cost += now - channel.mark
        channel.mark = now
        if start < len(targets):
            end = start + SLICE
            for subscription in targets[start:end]:
                subscription.event.set()
            channel.loop.call_soon(self._wake_slice, channel, token, targets, end)
            return
        channel.waking = None
        channel.gap = min(MAX_GAP, FACTOR * channel.cost)
        if channel.pending:
            channel.pending = False
            self._wake_here(channel)

    def _arm_poll(self, channel: _Channel) -> None:
        if channel.poll_timer is not None:
            channel.poll_timer.cancel()
        channel.poll_timer = None
        if math.isfinite(channel.poll):
            channel.poll_timer = channel.loop.call_later(channel.poll, self._wake_here, channel)

    def _start_read(self, channel: _Channel, after: int) -> asyncio.Future[Batch]:
        future = asyncio.ensure_future(channel.load(after))
        channel.reads[after] = future
        future.add_done_callback(functools.partial(_read_done, channel))
        return future

    async def read(self, subscription: Subscription, after: int) -> Batch:
        """The posts after ``after``: the read of them since the thread's last wake-up if
        there is one, else a new one. Call it right after clearing the stream's event. A read
        goes on when a caller is cancelled (the others are still waiting for it)."""
        channel = subscription.channel
        future = channel.reads.get(after)
        if future is None:
            future = self._start_read(channel, after)
        if future.done():
            return future.result()
        return await asyncio.shield(future)


def _read_done(channel: _Channel, future: asyncio.Future[Batch]) -> None:
    if future.cancelled() or future.exception() is not None:  # retrieved: callers may be gone
        return
    last = future.result().last
    if channel.front is None or last > channel.front:
        channel.front = last  # where the streams that had this read are now


HUB = Hub()


def touched(session: Session, thread_id: int) -> None:
    """Called by the forum for every post it adds: wake the thread's streams once the
    session's transaction commits (``app.db.engine.after_commit``; nothing if it rolls back). On
    PostgreSQL a ``pg_notify`` in the same transaction tells the other processes."""
    key = ("live", thread_id)
    if is_pending(session, key):  # a post and the bot's reply: one wake-up is enough
        return
    after_commit(session, key, functools.partial(HUB.wake, thread_id))
    if is_postgres(session):
        session.execute(
            text("SELECT pg_notify(:channel, :payload)"),
            {"channel": CHANNEL, "payload": str(thread_id)},
        )


class PostgresListener:
    """A thread holding ``LISTEN bbsgm_threads`` on its own connection, waking this process,
    while the process has live streams (and ``IDLE_SECONDS`` after the last one left, for
    the browsers that reconnect). Without streams it holds no connection: every post's
    ``pg_notify`` woke every worker's LISTEN thread, which then competed for the GIL with
    the workers' posts."""

    IDLE_SECONDS = 30.0
    READY_SECONDS = 5.0  # a stream waits at most this long for LISTEN, then polls

    def __init__(self, dsn: str, hub: Hub) -> None:
        self.dsn = dsn
        self.hub = hub
        self._stop = threading.Event()
        self._wanted = threading.Event()  # a stream waits for LISTEN
        self._guard = threading.Lock()  # _listening and _waiters
        self._listening = False
        self.backend_pid: int | None = None  # the LISTEN connection's, while there is one
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._thread = threading.Thread(target=self._run, name="bbsgm-listen", daemon=True)

    def start(self) -> None:
        self.hub.listeners.append(self)
        self._thread.start()

    def stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.hub.listeners.remove(self)
        self._stop.set()
        self._wanted.set()
        self._thread.join(timeout=5)
        self._release()

    @property
    def is_listening(self) -> bool:
        return self._listening

    async def listening(self) -> None:
        """Returns once this process LISTENs (at once if it does), or after READY_SECONDS."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._guard:
            if self._listening or self._stop.is_set():
                return
            self._waiters.append((loop, future))
        self._wanted.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(future, self.READY_SECONDS)

    def _release(self) -> None:
        with self._guard:
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(_resolve, future)

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            if not (self._wanted.wait(timeout=1.0) or self.hub.has_streams()):
                continue
            if self._stop.is_set():
                return
            try:
                # TCP keepalives: a connection the network dropped without a word fails in a
                # minute, instead of leaving the streams with their polling only.
                dsn = psycopg.conninfo.make_conninfo(self.dsn, **PG_KEEPALIVES)
                with psycopg.connect(dsn, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.backend_pid = conn.info.backend_pid
                    with self._guard:
                        self._listening = True
                    self._release()
                    # Streams that stopped waiting for LISTEN (READY_SECONDS), or that were
                    # live while the connection was down, read again what came meanwhile.
                    self.hub.wake_all()
                    self._listen(conn)
                self.backend_pid = None
            except Exception:  # the database went away: retry, the streams still poll
                self.backend_pid = None
                with self._guard:
                    self._listening = False
                log.warning("LISTEN connection lost; retrying", exc_info=True)
                self._release()  # the streams waiting for it poll meanwhile
                self._stop.wait(2.0)

    def _listen(self, conn: Any) -> None:
        """Delivers notifications until the process has had no stream for IDLE_SECONDS."""
        idle_since: float | None = None
        while not self._stop.is_set():
            for note in conn.notifies(timeout=1.0):
                self._deliver(note.payload)
            if self.hub.has_streams():
                idle_since = None
                continue
            now = time.monotonic()
            if idle_since is None:
                idle_since = now
            if now - idle_since < self.IDLE_SECONDS:
                continue
            with self._guard:  # a stream subscribed since, or waiting: go on listening
                if self._waiters or self.hub.has_streams():
                    idle_since = None
                    continue
                self._listening = False
                self._wanted.clear()
            return
        with self._guard:
            self._listening = False

    def _deliver(self, payload: Any) -> None:
        try:
            self.hub.wake(int(payload))
        except (TypeError, ValueError):
            log.warning("ignored notification %r", payload)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
