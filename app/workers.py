"""``bbsgm serve --workers N``: N server processes, each listening on its own socket bound to
the same address with ``SO_REUSEPORT``, so that the kernel spreads new connections over them.

uvicorn's own workers share one listening socket, and an event loop woken by it accepts every
connection waiting there at once (asyncio accepts up to the backlog in one go): clients that
connect together — a browser's keep-alive connections, a script's pool, the benchmark's
clients — often all landed on one worker, which then did all the work of its connections
alone, one Python at a time, while the other waited (docs/benchmarks.md, round 18). With a
socket each, the kernel hashes every new connection to one of them.

The parent process only starts the workers and watches them: a worker that exits is started
again, unless it did so in the first ``STARTING_SECONDS`` of the command (then the others are
stopped and the command fails: a worker that cannot start — the database unreachable, the
settings wrong — will not start the next time either); SIGINT or SIGTERM stops them all, each
finishing its requests as uvicorn does, for up to ``STOP_SECONDS``; a second SIGINT or
SIGTERM meanwhile kills them at once. The command exits 0 when every worker stopped by itself
(uvicorn, done, raises the signal it caught again: a clean worker exits by SIGTERM), 1 when
one had to be killed, or had exited otherwise and was not yet replaced (a process manager or a
deploy script sees that the stop lost requests). Ctrl-C in a terminal signals the workers too;
they leave it to the parent's SIGTERM. Where the system has no ``SO_REUSEPORT``, uvicorn's own
workers are used.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import sys
import threading
import time
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

STARTING_SECONDS = 30.0  # a worker that exits this soon after the command's start failed to
STOP_SECONDS = 30.0  # after SIGTERM, how long a worker may take to finish its requests
WATCH_SECONDS = 0.5
RESTART_PAUSES = (1.0, 60.0)  # the first pause before a replacement that exits soon, the most


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
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` that other sockets of this user may bind too; not
    listening yet (uvicorn makes it listen)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host.strip("[]"), port))
    except BaseException:
        sock.close()
        raise
    return sock


def _answering(host: str, port: int) -> bool:
    """Something accepts connections at ``host:port`` (``0.0.0.0`` and ``::`` asked on
    loopback)."""
    target = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host.strip("[]"))
    try:
        with socket.create_connection((target, port), timeout=1):
            return True
    except OSError:
        return False


def _watch_parent(parent: int) -> None:
    """In a worker: stop (SIGTERM, as the parent would) once the parent is gone — killed
    without the chance to stop its workers, which would otherwise keep the address."""
    while os.getppid() == parent:
        time.sleep(1)
    os.kill(os.getpid(), signal.SIGTERM)


def _worker(host: str, port: int, log_level: str, parent: int) -> None:
    # Ctrl-C reaches the terminal's whole process group. uvicorn takes SIGINT while it serves
    # (and, finished, raises it again: with Python's handler a KeyboardInterrupt, and the
    # worker would exit 1 after a clean stop); ignored otherwise, the parent's SIGTERM stops it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import uvicorn

    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    sock = listening_socket(host, port)
    config = uvicorn.Config(**uvicorn_options(host, port, log_level))
    uvicorn.Server(config).run(sockets=[sock])


def serve(
    host: str,
    port: int,
    workers: int,
    log_level: str,
    starting_seconds: float = STARTING_SECONDS,
    stop_seconds: float = STOP_SECONDS,
) -> int:
    """Runs ``workers`` server processes until SIGINT or SIGTERM; the exit status."""
    if port and _answering(host, port):
        print(f"bbsgm: {host}:{port} is in use", file=sys.stderr)
        return 1
    # Held, bound and not listening, while the workers run: a port in use fails here, once,
    # before any worker starts (and port 0 becomes one port for all the workers).
    reserved = listening_socket(host, port)
    port = reserved.getsockname()[1]
    context = multiprocessing.get_context("spawn")
    stopping = False
    forced = False  # a second SIGINT or SIGTERM: the workers are killed, not waited for

    def start() -> tuple[BaseProcess, float]:
        process = context.Process(
            target=_worker, args=(host, port, log_level, os.getpid()), daemon=False
        )
        process.start()
        return process, time.monotonic()

    def stop(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping, forced
        forced = stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    began = time.monotonic()
    running: list[tuple[BaseProcess, float]] = []
    reported: list[BaseProcess] = []  # exits already said
    pause = RESTART_PAUSES[0]
    status = 0
    try:
        running = [start() for _ in range(workers)]
        while not stopping:
            time.sleep(WATCH_SECONDS)
            for index, (process, started) in enumerate(running):
                if process.is_alive() or stopping:
                    continue
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
                        time.sleep(WATCH_SECONDS)
                    pause = min(pause * 2, RESTART_PAUSES[1])
                else:
                    pause = RESTART_PAUSES[0]
                if stopping:
                    break
                print(f"bbsgm: a worker exited ({process.exitcode}); starting another")
                running[index] = start()
    finally:
        stopping = True  # from here a signal forces the stop
        for process, _started in running:
            if process.is_alive():
                process.terminate()  # SIGTERM: uvicorn finishes the requests it has
        deadline = time.monotonic() + stop_seconds
        waiting = [process for process, _started in running]
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
        failed = [p for p, _ in running if p.exitcode not in (0, -signal.SIGTERM)]
        for process in failed:
            if process not in killed and process not in reported:
                print(f"bbsgm: a worker stopped with {process.exitcode}", file=sys.stderr)
        if failed:
            status = 1  # requests may have been lost: say so to whatever stopped the command
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        with contextlib.suppress(OSError):
            reserved.close()
    return status
