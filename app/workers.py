"""``bbsgm serve --workers N``: N server processes, and the command's own process, which
accepts every connection and hands it to the worker holding the fewest.

How connections are spread decides how fast several workers are: each worker runs one Python
at a time, so a worker holding more connections than the others makes their clients wait while
the others idle. uvicorn's own workers share one listening socket, and the event loop woken
first accepts every connection waiting there at once: clients that connect together (a
browser's keep-alive connections, a proxy's or a script's pool) often all landed on one worker
(docs/benchmarks.md, round 18). A socket of its own for each worker (``SO_REUSEPORT``, rounds
18–21) hashes each new connection to one of them: 16 connections split 8/8 only one time in
five, and 5/11 or worse one time in four, and the crowded worker's clients waited twice as
long (round 21). So the parent accepts, and passes each connection (its descriptor, over a Unix
socket: ``SCM_RIGHTS``) to the ready worker that holds the fewest open connections, as each
worker reports them (at every close, and at the latest a tick later). Handing one over costs
the parent a few tens of microseconds, once a connection, not once a request. A stuck worker
(stopped by SIGSTOP, say) is handed connections only while it holds no more than the others,
and at most as many as its channel's buffer queues; they wait until it runs again.

The parent does nothing else: it starts the workers and watches them. A worker that exits is
started again, unless it did so in the first ``STARTING_SECONDS`` of the command (then the
others are stopped and the command fails: a worker that cannot start — the database
unreachable, the settings wrong — will not start the next time either). No connection is
accepted before every worker has started (the first clients would all go to the first worker
up), or ``STARTING_SECONDS`` have passed with one that has; after that, a restarted worker gets
connections once it has started again. SIGINT or SIGTERM hands the connections waiting to be
accepted over, stops accepting and stops the workers, each serving what it was handed and
finishing its requests as uvicorn does, for up to ``STOP_SECONDS``; a second SIGINT or SIGTERM
meanwhile kills them at once. The command exits 0 when every worker stopped by itself (uvicorn,
done, raises the signal it caught again: a clean worker exits by SIGTERM), 1 when one had to be
killed, or had exited otherwise and was not yet replaced (a process manager or a deploy script
sees that the stop lost requests). Ctrl-C in a terminal signals the workers too; they leave it
to the parent's SIGTERM.
Where the system is not Linux, uvicorn's own workers are used.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import multiprocessing
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

import uvicorn

STARTING_SECONDS = 30.0  # a worker that exits this soon after the command's start failed to
STOP_SECONDS = 30.0  # after SIGTERM, how long a worker may take to finish its requests
WATCH_SECONDS = 0.5
RESTART_PAUSES = (1.0, 60.0)  # the first pause before a replacement that exits soon, the most
BACKLOG = 2048  # uvicorn's
ACCEPTS_AT_ONCE = 64  # then the workers' messages are read again

# On each worker's channel (a Unix socket pair of packets). The parent sends CONNECTION with one
# descriptor, and NO_MORE once it will send none (it stops, or the worker said STOPPING). The
# worker sends READY once it serves; REPORT, with how many connections it has received and
# how many it holds open, whenever that changes (at each close, at the latest a tick later:
# a state, not an event, so that a lost message or a connection uvicorn handed to another
# protocol leaves no count wrong for long); STOPPING once it begins to stop.
CONNECTION, NO_MORE, READY, REPORT, STOPPING = b"n", b"x", b"r", b"c", b"s"
_COUNTS = struct.Struct("!QQ")
PAUSE_SECONDS = 0.1  # after an error accepting (out of descriptors, say), before the next
DRAIN_SECONDS = 1.0  # a stopping worker waits this long at most for the parent's NO_MORE
_GONE = (errno.EPIPE, errno.ECONNRESET, errno.ECONNREFUSED, errno.ENOTCONN)


def uvicorn_options(host: str, port: int, log_level: str) -> dict[str, Any]:
    """How bbsgm runs uvicorn, in one process or in each worker (app/cli.py, ``_worker``)."""
    return {
        "app": "app.main:app_factory",
        "factory": True,
        "host": host,
        "port": port,
        "proxy_headers": True,
        "log_level": log_level,
    }


def supported() -> bool:
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds")


def listening_socket(host: str, port: int) -> socket.socket:
    """The command's socket, listening at ``host:port`` (``::``: IPv4 too, as the system's
    default has it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


class _Channel:
    """The parent's end of one worker's channel, and what the parent knows of the worker."""

    def __init__(self, end: socket.socket) -> None:
        self.end = end
        self.ready = False  # it serves
        self.sent = 0  # connections handed to it
        self.held = 0  # of those, the ones in flight or open: its last REPORT and the sent since

    def tell(self, message: bytes) -> None:
        with contextlib.suppress(OSError):
            self.end.send(message)


_WAKE = "wake"  # the selector's key for the signals' wake-up socket


class Dispatcher:
    """In the parent: accepts connections and hands each to the ready worker holding fewest.

    Connections are accepted once every worker has been ready (or ``open_after`` seconds have
    passed with one ready); from then on, while any is."""

    def __init__(
        self, listener: socket.socket, workers: int, open_after: float = STARTING_SECONDS
    ) -> None:
        listener.setblocking(False)
        self.listener = listener
        self.workers = workers
        self.selector = selectors.DefaultSelector()
        self.channels: list[_Channel] = []
        self.accepting = False
        self.paused_until = 0.0  # handing over or accepting failed: not before this
        self.pending: list[socket.socket] = []  # accepted, no worker could take it yet
        self.opened = False
        self.open_by = time.monotonic() + open_after
        self.wake, self._waker = socket.socketpair()  # signals write to the second
        for end in (self.wake, self._waker):
            end.setblocking(False)
        self.selector.register(self.wake, selectors.EVENT_READ, _WAKE)

    def wakeup_fd(self) -> int:
        """For ``signal.set_wakeup_fd``: a signal ends ``wait`` at once."""
        return self._waker.fileno()

    def channel(self) -> tuple[socket.socket, socket.socket]:
        """A new worker's channel: the parent's end, and the worker's, to give it."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setblocking(False)
        channel = _Channel(ours)
        self.channels.append(channel)
        self.selector.register(ours, selectors.EVENT_READ, channel)
        return ours, theirs

    def drop(self, end: socket.socket) -> None:
        """The worker whose channel ``end`` was has exited: its connections went with it."""
        for channel in [c for c in self.channels if c.end is end]:
            self._forget(channel)

    def wait(self, seconds: float) -> None:
        """Does the parent's work for ``seconds``, or until a signal."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            now = time.monotonic()
            if not self.opened and now >= self.open_by and any(c.ready for c in self.channels):
                self.opened = True
                self._listen(True)
            if self.paused_until and now >= self.paused_until:
                self.paused_until = 0.0
                self._resume()
            if self.paused_until:
                left = min(left, self.paused_until - now)
            events = self.selector.select(left)
            # The workers' words first: a close they report counts before new connections.
            events.sort(key=lambda event: event[0].data is None)
            for key, _events in events:
                if key.data is None:
                    self._accept()
                elif key.data == _WAKE:
                    with contextlib.suppress(OSError):
                        while self.wake.recv(64):
                            pass
                    return
                else:
                    self._read(key.data)

    def close(self) -> None:
        """Stops accepting. The connections already waiting are handed over first (a worker
        serves them as it stops), then each worker is told that no more will come."""
        self.paused_until = 0.0
        if self._hand_pending() and self._serving():
            self._accept(everything=True)
        for connection in self.pending:  # nobody can take them
            connection.close()
        self.pending = []
        self._listen(False)
        self.listener.close()
        for channel in self.channels:
            channel.tell(NO_MORE)

    def close_channels(self) -> None:
        for channel in list(self.channels):
            self._forget(channel)
        self.selector.close()
        self.wake.close()
        self._waker.close()

    def _forget(self, channel: _Channel) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(channel.end)
        channel.end.close()
        self.channels.remove(channel)
        self._listen(self._serving())

    def _serving(self) -> bool:
        """Connections are accepted: the workers have started and one is ready now."""
        return self.opened and any(c.ready for c in self.channels)

    def _listen(self, on: bool) -> None:
        on = on and not self.paused_until and self.listener.fileno() >= 0
        if on and not self.accepting:
            self.selector.register(self.listener, selectors.EVENT_READ, None)
        elif not on and self.accepting:
            self.selector.unregister(self.listener)
        self.accepting = on

    def _pause(self) -> None:
        self._listen(False)
        self.paused_until = time.monotonic() + PAUSE_SECONDS

    def _hand_pending(self) -> bool:
        """The connections no worker could take so far handed over, as far as they can be;
        whether none is left."""
        while self.pending and self._hand(self.pending[0]):
            self.pending.pop(0).close()
        return not self.pending

    def _resume(self) -> None:
        if self._hand_pending():
            self._listen(self._serving())
        else:
            self._pause()

    def _read(self, channel: _Channel) -> None:
        while True:
            try:
                message = channel.end.recv(64)
            except BlockingIOError:
                return
            except OSError:
                message = b""
            if not message:  # the worker has exited; the watch loop starts another
                with contextlib.suppress(KeyError, ValueError):
                    self.selector.unregister(channel.end)
                channel.ready = False
                self._listen(self._serving())
                return
            kind, rest = message[:1], message[1:]
            if kind == REPORT and len(rest) == _COUNTS.size:
                received, held = _COUNTS.unpack(rest)
                channel.held = held + channel.sent - received
            elif kind == STOPPING:
                channel.ready = False
                channel.tell(NO_MORE)  # after every connection it was handed
                self._listen(self._serving())
            elif kind == READY:
                channel.ready = True
                ready = sum(1 for c in self.channels if c.ready)
                self.opened = self.opened or ready >= self.workers
                self._listen(self._serving())
                print(f"bbsgm: a worker is serving ({ready} of {self.workers})", flush=True)

    def _accept(self, everything: bool = False) -> None:
        for _ in range(BACKLOG if everything else ACCEPTS_AT_ONCE):
            if not self._serving():  # the last ready worker has gone: clients wait for one
                self._listen(False)
                return
            try:
                connection, _address = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as error:
                if error.errno in (errno.ECONNABORTED, errno.EPROTO):
                    continue  # the client gave up while it waited
                self._pause()  # out of descriptors, say: the others wait in the backlog
                return
            if self._hand(connection):
                connection.close()  # the worker has its own
            else:  # every worker's channel is full (stuck workers): it waits here a moment
                self.pending.append(connection)
                self._pause()
                return

    def _hand(self, connection: socket.socket) -> bool:
        for channel in sorted((c for c in self.channels if c.ready), key=lambda c: c.held):
            try:
                socket.send_fds(channel.end, [CONNECTION], [connection.fileno()])
            except BlockingIOError:
                continue  # its channel is full (the worker is stuck): the next
            except OSError as error:
                if error.errno in _GONE:
                    channel.ready = False  # it has exited; its channel says so soon
                continue
            channel.sent += 1
            channel.held += 1
            return True
        return False


class _HandedServer(uvicorn.Server):
    """A uvicorn server whose connections come from the parent over ``channel``."""

    def __init__(self, config: uvicorn.Config, channel: socket.socket) -> None:
        super().__init__(config)
        channel.setblocking(False)
        self.channel = channel
        self.connecting: set[asyncio.Task[None]] = set()
        self.received = 0  # connections taken from the channel and made (or failed, or dropped)
        self.reported = (-1, -1)
        self.drained: asyncio.Event | None = None  # set: the parent said NO_MORE, or is gone
        self.last_received = 0.0

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # the lifespan, and no socket of its own
        config = self.config
        base: type[asyncio.Protocol] = config.http_protocol_class
        server = self

        def connection_made(protocol: asyncio.Protocol, transport: asyncio.BaseTransport) -> None:
            base.connection_made(protocol, transport)
            server.received += 1  # with its entry in server_state.connections: never twice

        def connection_lost(protocol: asyncio.Protocol, exc: Exception | None) -> None:
            try:
                base.connection_lost(protocol, exc)
            finally:
                server._report()

        # uvicorn's protocol, as uvicorn's startup makes it, reporting as its connection
        # closes (a connection upgraded to a WebSocket is reported at the next tick).
        methods = {"connection_made": connection_made, "connection_lost": connection_lost}
        counted = type("Counted", (base,), methods)
        self.handed_protocol = functools.partial(
            counted,
            config=config,
            server_state=self.server_state,
            app_state=self.lifespan.state,
        )
        self.drained = asyncio.Event()
        asyncio.get_running_loop().add_reader(self.channel.fileno(), self._receive)
        self._tell(READY)

    async def on_tick(self, counter: int) -> bool:
        self._report()
        return await super().on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # The connections the parent handed over before it heard of the stop are served too:
        # read until its NO_MORE, and give the last ones' requests a moment to arrive.
        self._tell(STOPPING)
        if self.drained is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.drained.wait(), DRAIN_SECONDS)
        with contextlib.suppress(OSError, ValueError):
            asyncio.get_running_loop().remove_reader(self.channel.fileno())
        if self.connecting:
            await asyncio.wait(set(self.connecting))
        if (late := self.last_received + PAUSE_SECONDS - time.monotonic()) > 0:
            await asyncio.sleep(late)
        await super().shutdown(sockets=sockets)

    def _receive(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                message, fds, _flags, _address = socket.recv_fds(self.channel, 16, 4)
            except BlockingIOError:
                return
            except OSError:
                message, fds = b"", []
            for fd in fds:
                task = loop.create_task(self._connect(socket.socket(fileno=fd)))
                self.connecting.add(task)
                task.add_done_callback(self.connecting.discard)
                self.last_received = time.monotonic()
            if message == CONNECTION and not fds:  # out of descriptors: the kernel dropped it
                self.received += 1
                self._report()
            if (message == NO_MORE or not message) and self.drained is not None:
                self.drained.set()
            if not message:  # the parent is gone: stop as SIGTERM would
                loop.remove_reader(self.channel.fileno())
                self.should_exit = True
                return

    async def _connect(self, connection: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                self.handed_protocol, connection
            )
        except OSError:  # the client had gone already (connection_made counts the others)
            connection.close()
            self.received += 1
        self._report()

    def _report(self) -> None:
        counts = (self.received, len(self.server_state.connections))
        if counts != self.reported and self._tell(REPORT + _COUNTS.pack(*counts)):
            self.reported = counts

    def _tell(self, message: bytes) -> bool:
        try:
            self.channel.send(message)
        except OSError:  # a full channel (the next tick says it again) or no parent
            return False
        return True


def _watch_parent(parent: int) -> None:
    """In a worker: stop (SIGTERM, as the parent would) once the parent is gone — killed
    without the chance to stop its workers."""
    while os.getppid() == parent:
        time.sleep(1)
    os.kill(os.getpid(), signal.SIGTERM)


def _worker(channel: socket.socket, host: str, port: int, log_level: str, parent: int) -> None:
    # Ctrl-C reaches the terminal's whole process group. uvicorn takes SIGINT while it serves
    # (and, finished, raises it again: with Python's handler a KeyboardInterrupt, and the
    # worker would exit 1 after a clean stop); ignored otherwise, the parent's SIGTERM stops it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    config = uvicorn.Config(**uvicorn_options(host, port, log_level))
    _HandedServer(config, channel).run()


def serve(
    host: str,
    port: int,
    workers: int,
    log_level: str,
    starting_seconds: float = STARTING_SECONDS,
    stop_seconds: float = STOP_SECONDS,
) -> int:
    """Runs ``workers`` server processes until SIGINT or SIGTERM; the exit status."""
    try:
        listener = listening_socket(host, port)
    except OSError as error:
        why = "is in use" if error.errno == errno.EADDRINUSE else f"refused: {error.strerror}"
        print(f"bbsgm: {host}:{port} {why}", file=sys.stderr)
        return 1
    port = listener.getsockname()[1]  # port 0: the one the system chose, for the log
    dispatcher = Dispatcher(listener, workers)
    context = multiprocessing.get_context("spawn")
    stopping = False
    forced = False  # a second SIGINT or SIGTERM: the workers are killed, not waited for

    def start() -> tuple[BaseProcess, float, socket.socket]:
        ours, theirs = dispatcher.channel()
        try:
            process = context.Process(
                target=_worker, args=(theirs, host, port, log_level, os.getpid()), daemon=False
            )
            process.start()
        finally:
            theirs.close()  # the worker has its own
        return process, time.monotonic(), ours

    def stop(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping, forced
        forced = stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    previous_wakeup = -1
    with contextlib.suppress(ValueError):  # not the main thread: a signal ends a wait later
        previous_wakeup = signal.set_wakeup_fd(dispatcher.wakeup_fd(), warn_on_full_buffer=False)
    began = time.monotonic()
    running: list[tuple[BaseProcess, float, socket.socket]] = []
    reported: list[BaseProcess] = []  # exits already said
    pause = RESTART_PAUSES[0]
    status = 0
    try:
        running = [start() for _ in range(workers)]
        while not stopping:
            dispatcher.wait(WATCH_SECONDS)
            for index, (process, started, channel) in enumerate(running):
                if process.is_alive() or stopping:
                    continue
                dispatcher.drop(channel)
                if time.monotonic() - began < starting_seconds:
                    reported.append(process)
                    print(
                        f"bbsgm: a worker exited while starting ({process.exitcode}); stopping",
                        file=sys.stderr,
                    )
                    stopping, status = True, 1
                    break
                if time.monotonic() - started < STARTING_SECONDS:  # its replacement too: wait
                    print(f"bbsgm: a worker exited again; the next in {pause:.0f} s")
                    deadline = time.monotonic() + pause
                    while not stopping and time.monotonic() < deadline:
                        dispatcher.wait(min(WATCH_SECONDS, deadline - time.monotonic()))
                    pause = min(pause * 2, RESTART_PAUSES[1])
                else:
                    pause = RESTART_PAUSES[0]
                if stopping:
                    break
                print(f"bbsgm: a worker exited ({process.exitcode}); starting another")
                running[index] = start()
    finally:
        stopping = True  # from here a signal forces the stop
        dispatcher.close()  # the waiting ones handed over, then no more: a client now is refused
        for process, _started, _channel in running:
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn finishes the requests it has
        deadline = time.monotonic() + stop_seconds
        waiting = [process for process, _started, _channel in running]
        while waiting and not forced and time.monotonic() < deadline:
            waiting[0].join(min(WATCH_SECONDS, max(0.0, deadline - time.monotonic())))
            waiting = [process for process in waiting if process.is_alive()]
        killed = []
        for process in waiting:
            process.kill()
            process.join()
            if process.exitcode == -signal.SIGKILL:
                killed.append(process)
                why = "on a second signal" if forced else f"after {stop_seconds:g} s"
                print(f"bbsgm: a worker still running was killed {why}", file=sys.stderr)
        failed = [p for p, _s, _c in running if p.exitcode not in (0, -signal.SIGTERM)]
        for process in failed:
            if process not in killed and process not in reported:
                print(f"bbsgm: a worker stopped with {process.exitcode}", file=sys.stderr)
        if failed:
            status = 1  # requests may have been lost: say so to whatever stopped the command
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(previous_wakeup)
        dispatcher.close_channels()
    return status
