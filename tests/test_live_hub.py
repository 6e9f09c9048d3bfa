"""app.live.hub.Hub, the live streams' fan-out: the streams of a thread share one read per
wake-up, wake-ups that come while one is delivered are folded into the next, and through all
of it every stream gets every post once, in order. No HTTP, no database: a list stands for
the thread, and each stream runs the loop of app/web/live_pages.py's."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Awaitable, Callable

import pytest

from app.live import hub as live

LIMIT = 5  # posts a read gives at most (live_pages.BATCH), small to test catching up


class FakeThread:
    """The posts of one thread (their レス番) and a loader reading them as the app's does."""

    def __init__(self, posts: int = 0) -> None:
        self.posts = list(range(1, posts + 1))
        self.loads = 0
        self.lock = threading.Lock()

    def post(self, hub: live.Hub, thread_id: int) -> int:
        """Commit a post, then wake the thread's streams (as the forum's after_commit does)."""
        with self.lock:
            number = len(self.posts) + 1
            self.posts.append(number)
        hub.wake(thread_id)
        return number

    async def load(self, after: int) -> live.Batch:
        self.loads += 1
        await asyncio.sleep(0)  # the read runs elsewhere (a worker thread) for a while
        with self.lock:
            newer = [n for n in self.posts if n > after][:LIMIT]
        events = b"".join(b"%d;" % n for n in newer)
        return live.Batch(events, newer[-1] if newer else after, len(newer))


class Stream:
    """One subscriber, running the stream loop of app/web/live_pages.py."""

    def __init__(
        self,
        hub: live.Hub,
        thread_id: int,
        load: Callable[[int], Awaitable[live.Batch]],
        start: int = 0,
        source: object = "db",
        poll: float = float("inf"),
    ) -> None:
        self.start = start
        self.received: list[int] = []
        self.reads = 0  # reads asked for; the stream awaits the last until it is answered
        self.task = asyncio.ensure_future(self._run(hub, thread_id, load, source, poll))

    async def _run(
        self,
        hub: live.Hub,
        thread_id: int,
        load: Callable[[int], Awaitable[live.Batch]],
        source: object,
        poll: float,
    ) -> None:
        last = self.start
        subscription = hub.subscribe(thread_id, source, load, poll)
        try:
            await hub.ready()
            while True:
                subscription.event.clear()
                self.reads += 1
                batch = await hub.read(subscription, last)
                if batch.count:
                    last = batch.last
                    self.received += [int(n) for n in batch.events.split(b";") if n]
                if batch.count < LIMIT:
                    await subscription.event.wait()
        finally:
            hub.unsubscribe(subscription)

    async def stop(self) -> None:
        self.task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self.task


async def until(condition: Callable[[], bool], what: str) -> None:
    """Let the loop run until ``condition()``; a guard against hanging, not a time limit on
    the fan-out."""
    for _ in range(20_000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never: {what}")


def test_the_streams_of_a_thread_share_one_read_per_wake_up() -> None:
    async def main() -> None:
        hub, thread = live.Hub(), FakeThread(posts=1)
        streams = [Stream(hub, 7, thread.load, start=1) for _ in range(200)]
        await until(lambda: thread.loads == 1, "the first read")
        for _ in range(10):
            number = thread.post(hub, 7)
            await until(lambda n=number: all(s.received[-1:] == [n] for s in streams), "a post")
        assert thread.loads == 1 + 10  # not 200 a post
        for stream in streams:
            assert stream.received == list(range(2, 12))
            await stream.stop()
        assert not hub._channels  # the last stream gone, nothing is kept for the thread

    asyncio.run(main())


def test_every_stream_gets_every_post_once_in_order_while_posts_pour_in() -> None:
    """Posts committed from other threads in bursts, faster than they are delivered (the
    wake-ups fold into fewer reads); streams join at any point and some leave early. Every
    stream has exactly the posts after its start, in order, up to when it left or to the end."""

    async def main() -> None:
        hub, thread = live.Hub(), FakeThread(posts=3)
        chance = random.Random(20261125)
        streams = [Stream(hub, 9, thread.load, start=chance.randint(0, 3)) for _ in range(40)]
        leaving: list[Stream] = []
        stop = threading.Event()

        def poster(seed: int) -> None:
            rng = random.Random(seed)
            for _ in range(60):
                thread.post(hub, 9)
                if rng.random() < 0.3:
                    stop.wait(rng.random() / 500)

        posters = [threading.Thread(target=poster, args=(seed,)) for seed in range(3)]
        for t in posters:
            t.start()
        while any(t.is_alive() for t in posters):
            await asyncio.sleep(chance.random() / 200)
            if chance.random() < 0.5:  # a reader arrives, resuming from what it last saw
                streams.append(Stream(hub, 9, thread.load, start=len(thread.posts)))
            if chance.random() < 0.2:
                gone = streams.pop(chance.randrange(len(streams)))
                await gone.stop()
                leaving.append(gone)
        for t in posters:
            t.join()
        final = len(thread.posts)

        def seen(stream: Stream) -> int:
            return stream.received[-1] if stream.received else stream.start

        await until(lambda: all(seen(s) == final for s in streams), "the last post")
        for stream in streams:
            assert stream.received == list(range(stream.start + 1, final + 1))
            await stream.stop()
        for stream in leaving:  # what it had when it left: a gapless run from its start
            assert stream.received == list(
                range(stream.start + 1, stream.start + 1 + len(stream.received))
            )
        assert thread.loads < 40 * final  # shared, whatever the exact number

    asyncio.run(main())


def test_a_read_from_before_a_wake_up_is_never_shared_after_it() -> None:
    """A stream arriving later, as far as an earlier read had read, reads afresh: the earlier
    read may have missed the posts woken since (and no wake-up may come to fix it)."""

    async def main() -> None:
        hub, thread = live.Hub(), FakeThread(posts=1)
        early = Stream(hub, 8, thread.load)  # reads after 0: [1]
        await until(lambda: early.received == [1], "the first post")
        for number in (2, 3):
            thread.post(hub, 8)
            await until(lambda n=number: early.received[-1:] == [n], "a post")
        late = Stream(hub, 8, thread.load)  # after 0 again, two wake-ups later
        await until(lambda: late.received == [1, 2, 3], "every post for the late stream")
        await early.stop()
        await late.stop()

    asyncio.run(main())


def test_a_stream_that_leaves_during_a_shared_read_does_not_cancel_it() -> None:
    async def main() -> None:
        hub = live.Hub()
        release = asyncio.Event()
        loads = 0

        async def slow_load(after: int) -> live.Batch:
            nonlocal loads
            loads += 1
            await release.wait()
            return live.Batch(b"1;2;", 2, 2)

        first = Stream(hub, 3, slow_load)
        second = Stream(hub, 3, slow_load)
        await until(lambda: loads == 1 and first.reads == second.reads == 1, "both reading")
        await first.stop()
        release.set()
        await until(lambda: second.received == [1, 2], "the read's posts")
        assert loads == 1
        await second.stop()

    asyncio.run(main())


def test_streams_poll_without_wake_ups() -> None:
    """A post from a process that cannot wake this one (SQLite, ``bbsgm tick``) is read at
    the thread's next poll."""

    async def main() -> None:
        hub, thread = live.Hub(), FakeThread()
        stream = Stream(hub, 4, thread.load, poll=0.01)
        await until(lambda: thread.loads == 1, "the first read")
        thread.posts.append(1)  # no wake
        await until(lambda: stream.received == [1], "the poll")
        await stream.stop()

    asyncio.run(main())


def test_streams_of_another_source_read_their_own() -> None:
    """Two apps (two databases) in one process with a thread of the same id: their streams
    never share a read."""

    async def main() -> None:
        hub, here, there = live.Hub(), FakeThread(), FakeThread(posts=2)
        mine = Stream(hub, 5, here.load, source="here")
        theirs = Stream(hub, 5, there.load, source="there")
        await until(lambda: theirs.received == [1, 2], "the other thread's posts")
        here.post(hub, 5)
        await until(lambda: mine.received == [1], "this thread's post")
        assert theirs.received == [1, 2]
        await mine.stop()
        await theirs.stop()

    asyncio.run(main())


def test_a_wake_for_a_thread_without_streams_does_nothing() -> None:
    hub = live.Hub()
    hub.wake(12345)  # from any thread, no loop involved
    assert not hub._channels
