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
socket: ``SCM_RIGHTS``) to the ready worker that holds the fewest open connections; each
worker says when one of them closes. Handing one over costs the parent a few tens of
microseconds, once a connection, not once a request.

The parent does nothing else: it starts the workers and watches them. A worker that exits is
started again, unless it did so in the first ``STARTING_SECONDS`` of the command (then the
others are stopped and the command fails: a worker that cannot start — the database
unreachable, the settings wrong — will not start the next time either). No connection is
accepted before every worker has started (the first clients would all go to the first worker
up); after that, a restarted worker gets connections once it has started again. SIGINT or
SIGTERM stops accepting and stops the workers, each finishing its requests as uvicorn does,
for up to ``STOP_SECONDS``; a second SIGINT or SIGTERM meanwhile kills them at once. The
command exits 0 when every worker stopped by itself (uvicorn, done, raises the signal it caught
again: a clean worker exits by SIGTERM), 1 when one had to be killed, or had exited otherwise
and was not yet replaced (a process manager or a deploy script sees that the stop lost
requests). Ctrl-C in a terminal signals the workers too; they leave it to the parent's SIGTERM.
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

# On each worker's channel (a Unix socket pair of packets): the parent sends CONNECTION with
# one descriptor; the worker sends READY once it serves, CLOSED for each connection it closes,
# STOPPING once it stops (on its own: the parent's SIGTERM comes after it stopped accepting).
CONNECTION, READY, CLOSED, STOPPING = b"n", b"r", b"c", b"s"
PAUSE_SECONDS = 0.1  # after an error accepting (out of descriptors, say), before the next


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
    """The command's socket, listening at ``host:port``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)  # "::" takes IPv4 too, as with uvicorn
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
        self.held = 0  # connections handed to it and not closed yet


class Dispatcher:
    """In the parent: accepts connections and hands each to the ready worker holding fewest."""

    def __init__(self, listener: socket.socket, workers: int) -> None:
        listener.setblocking(False)
        self.listener = listener
        self.workers = workers
        self.selector = selectors.DefaultSelector()
        self.channels: list[_Channel] = []
        self.accepting = False
        self.paused_until = 0.0  # accepting failed: not before this
        self.opened = False  # every worker has been ready once: from then on, any ready one

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
        for channel in self.channels:
            if channel.end is end:
                self._forget(channel)

    def wait(self, seconds: float) -> None:
        """Does the parent's work for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.paused_until and time.monotonic() >= self.paused_until:
                self.paused_until = 0.0
                self._listen(self._serving())
            elif self.paused_until:
                left = min(left, self.paused_until - time.monotonic())
            for key, _events in self.selector.select(left):
                if key.data is None:
                    self._accept()
                else:
                    self._read(key.data)

    def close(self) -> None:
        """Stops accepting (a client connecting from now on is refused); the workers'
        channels are closed after the workers have stopped."""
        self._listen(False)
        self.listener.close()

    def close_channels(self) -> None:
        for channel in list(self.channels):
            self._forget(channel)
        self.selector.close()

    def _forget(self, channel: _Channel) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(channel.end)
        channel.end.close()
        self.channels.remove(channel)
        self._listen(self._serving())

    def _serving(self) -> bool:
        """Connections are accepted: every worker has been ready once and one is now."""
        return self.opened and any(c.ready for c in self.channels)

    def _listen(self, on: bool) -> None:
        on = on and not self.paused_until
        if on and not self.accepting and self.listener.fileno() >= 0:
            self.selector.register(self.listener, selectors.EVENT_READ, None)
        elif not on and self.accepting:
            self.selector.unregister(self.listener)
        self.accepting = on and self.listener.fileno() >= 0

    def _read(self, channel: _Channel) -> None:
        while True:
            try:
                message = channel.end.recv(16)
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
            if message == CLOSED:
                channel.held = max(0, channel.held - 1)
            elif message == STOPPING:
                channel.ready = False
                self._listen(self._serving())
            elif message == READY:
                channel.ready = True
                ready = sum(1 for c in self.channels if c.ready)
                self.opened = self.opened or ready >= self.workers
                self._listen(self.opened)
                print(f"bbsgm: a worker is serving ({ready} of {self.workers})", flush=True)

    def _accept(self) -> None:
        for _ in range(ACCEPTS_AT_ONCE):
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
                # Out of descriptors, say: the connections wait in the backlog a moment.
                self._listen(False)
                self.paused_until = time.monotonic() + PAUSE_SECONDS
                return
            with connection:
                self._hand(connection)

    def _hand(self, connection: socket.socket) -> None:
        for channel in sorted((c for c in self.channels if c.ready), key=lambda c: c.held):
            try:
                socket.send_fds(channel.end, [CONNECTION], [connection.fileno()])
            except BlockingIOError:
                continue  # its channel is full (the worker is stuck): the next
            except OSError:
                channel.ready = False  # it has exited; its channel says so soon
                continue
            channel.held += 1
            return
        # Nobody can take it: closed, as a server too busy to accept would.


class _HandedServer(uvicorn.Server):
    """A uvicorn server whose connections come from the parent over ``channel``."""

    def __init__(self, config: uvicorn.Config, channel: socket.socket) -> None:
        super().__init__(config)
        channel.setblocking(False)
        self.channel = channel
        self.connecting: set[asyncio.Task[None]] = set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # the lifespan, and no socket of its own
        config = self.config
        base: type[asyncio.Protocol] = config.http_protocol_class
        closed = self._closed

        def connection_lost(protocol: asyncio.Protocol, exc: Exception | None) -> None:
            try:
                base.connection_lost(protocol, exc)
            finally:
                closed()

        # uvicorn's protocol, as uvicorn's startup makes it, saying when its connection closes.
        counted = type("Counted", (base,), {"connection_lost": connection_lost})
        self.handed_protocol = functools.partial(
            counted,
            config=config,
            server_state=self.server_state,
            app_state=self.lifespan.state,
        )
        asyncio.get_running_loop().add_reader(self.channel.fileno(), self._receive)
        self._tell(READY)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._tell(STOPPING)
        with contextlib.suppress(OSError, ValueError):
            asyncio.get_running_loop().remove_reader(self.channel.fileno())
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
            if not message and not fds:  # the parent is gone: stop as SIGTERM would
                loop.remove_reader(self.channel.fileno())
                self.should_exit = True
                return
            for fd in fds:
                task = loop.create_task(self._connect(socket.socket(fileno=fd)))
                self.connecting.add(task)
                task.add_done_callback(self.connecting.discard)

    async def _connect(self, connection: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(
                self.handed_protocol, connection
            )
        except OSError:  # the client had gone already
            connection.close()
            self._closed()

    def _closed(self) -> None:
        self._tell(CLOSED)

    def _tell(self, message: bytes) -> None:
        with contextlib.suppress(OSError):  # a full channel or no parent: nothing to tell
            self.channel.send(message)


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
        dispatcher.close()  # no new connection: a client now is refused, not lost in a worker
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
        dispatcher.close_channels()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return status
