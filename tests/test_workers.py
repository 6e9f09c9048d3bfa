"""``bbsgm serve --workers N`` (app/workers.py): the command accepts every connection and hands
it to the worker holding the fewest; a worker that dies is replaced; SIGTERM stops them all."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from app import workers
from tests.conftest import TEST_SECRET, _free_port

pytestmark = pytest.mark.skipif(not workers.supported(), reason="Linux only")


def _sockets(port: int) -> Iterator[tuple[str, str, int]]:
    """The TCP sockets on local ``port``: each one's state (01: established, 0A: listening),
    inode and remote port."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                yield fields[3], fields[9], int(fields[2].rsplit(":", 1)[1], 16)


def _socket_inodes(pid: int) -> Iterator[str]:
    """The inodes of the sockets process ``pid`` holds."""
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            yield target[8:-1]


class Served:
    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process = process
        self.url = f"http://127.0.0.1:{port}"
        self.port = port
        self.log = log

    def workers(self) -> set[int]:
        """The supervisor's worker processes (not multiprocessing's resource tracker)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        found = set()
        for pid in children.read_text().split():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"resource_tracker" not in command:
                found.add(int(pid))
        return found

    def connections_by_process(self, state: str | None = "01") -> dict[int, int]:
        """How many sockets on the port in ``state`` each worker holds (01: established
        connections, 0A: listening; None: every connection, closing ones too)."""
        inodes = {
            inode
            for found, inode, _remote in _sockets(self.port)
            if (found != "0A" if state is None else found == state)
        }
        return {
            pid: sum(1 for inode in _socket_inodes(pid) if inode in inodes)
            for pid in self.workers()
        }

    def holders(self, clients: list[socket.socket]) -> dict[int, list[socket.socket]]:
        """Which worker holds the other end of each of ``clients``."""
        by_port = {client.getsockname()[1]: client for client in clients}
        by_inode = {
            inode: by_port[remote]
            for state, inode, remote in _sockets(self.port)
            if state == "01" and remote in by_port
        }
        held: dict[int, list[socket.socket]] = {}
        for pid in self.workers():
            for inode in _socket_inodes(pid):
                if inode in by_inode:
                    held.setdefault(pid, []).append(by_inode[inode])
        return held

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/api/boards", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"not serving: {self.log.read_text()[-3000:]}")


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    """The environment of a served command: its own SQLite file, the tests' key, ``settings``
    (``BBSGM_*``)."""
    return {
        **os.environ,
        "BBSGM_DATABASE_URL": f"sqlite:///{tmp_path / 'workers.db'}",
        "BBSGM_SECRET_KEY": TEST_SECRET,
        **{f"BBSGM_{name.upper()}": value for name, value in settings.items()},
    }


def _serve(tmp_path: Path, *command: str) -> Iterator[Served]:
    port = _free_port()
    env = _env(tmp_path, tick_seconds="0", deliver_seconds="0")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, *command, "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    served = Served(process, port, log)
    try:
        served.wait_ready()
        yield served
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[Served]:
    # The command accepts no connection before both workers serve: answered, both are up.
    for served in _serve(tmp_path, "-m", "app.cli", "serve", "--workers", "2"):
        # The readiness check's own connection counts for its worker until that worker's
        # report of its close is read (a split of 5 / 7 in CI): the tests start once it is.
        deadline = time.monotonic() + 10
        while any(served.connections_by_process(None).values()):
            assert time.monotonic() < deadline, served.connections_by_process(None)
            time.sleep(0.05)
        time.sleep(2)  # as _close: the parent reads the report
        yield served


def test_only_the_command_listens_and_the_workers_are_handed_connections(
    two_workers: Served,
) -> None:
    """One listening socket on the port, the parent's; no worker listens (with a socket each,
    the kernel's hash chose the worker)."""
    listening = {inode for state, inode, _ in _sockets(two_workers.port) if state == "0A"}
    assert len(listening) == 1
    assert listening <= set(_socket_inodes(two_workers.process.pid))
    assert not any(two_workers.connections_by_process("0A").values())


def _hold(served: Served, count: int) -> list[socket.socket]:
    """``count`` connections opened together; returned once the workers hold each of them
    (found by the client's port: a count of the workers' sockets also counted a closing one
    of an earlier burst, which could go away meanwhile and leave the count short)."""
    connections = [
        socket.create_connection(("127.0.0.1", served.port), timeout=10) for _ in range(count)
    ]
    deadline = time.monotonic() + 10
    while (held := sum(map(len, served.holders(connections).values()))) < count:
        assert time.monotonic() < deadline, (held, served.connections_by_process(None))
        time.sleep(0.05)
    return connections


def _close(served: Served, connections: list[socket.socket]) -> None:
    """Closes ``connections`` and returns once the workers have closed their ends too, and
    the parent has had the time to read their reports (sent just after, and again at the
    worker's next tick)."""
    before = sum(served.connections_by_process(None).values())
    for connection in connections:
        connection.close()
    deadline = time.monotonic() + 10
    while sum(served.connections_by_process(None).values()) > before - len(connections):
        assert time.monotonic() < deadline, served.connections_by_process(None)
        time.sleep(0.05)
    time.sleep(2)  # a loaded machine may hold either process back a while


def test_clients_that_connect_together_are_split_evenly_between_the_workers(
    two_workers: Served,
) -> None:
    """24 clients connect at the same moment and keep their connections: each worker holds 12,
    every time. With a listening socket each, the kernel's hash split them 12/12 one time in
    six; with uvicorn's one shared socket, one worker often accepted them all."""
    assert len(two_workers.workers()) == 2
    for _burst in range(3):
        connections = _hold(two_workers, 24)
        try:
            held = two_workers.holders(connections).values()
            assert sorted(map(len, held)) == [12, 12]
        finally:
            _close(two_workers, connections)


def test_a_new_connection_goes_to_the_worker_holding_the_fewest(two_workers: Served) -> None:
    """Of 12 connections each worker holds 6; four of one worker's close, so it holds 2 against
    6: the next four connections all go to it (taking turns, or the kernel's hash, would give
    it two or so)."""
    connections = _hold(two_workers, 12)
    try:
        by_worker = two_workers.holders(connections)
        assert sorted(len(held) for held in by_worker.values()) == [6, 6]
        emptied, other = sorted(by_worker)
        _close(two_workers, by_worker[emptied][:4])
        connections = by_worker[emptied][4:] + by_worker[other]
        connections += _hold(two_workers, 4)
        assert two_workers.connections_by_process() == {emptied: 6, other: 6}
    finally:
        for connection in connections:
            connection.close()


def test_a_worker_that_dies_is_replaced_and_sigterm_stops_them_all(tmp_path: Path) -> None:
    command = (
        "-c",
        "import sys; from app import cli, workers; cli.main(['migrate']); "
        "sys.exit(workers.serve('127.0.0.1', int(sys.argv[2]), 2, 'warning', starting_seconds=0))",
    )
    for served in _serve(tmp_path, *command):
        first = served.workers()
        assert len(first) == 2
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            now = served.workers()
            if victim not in now and len(now) == 2:
                break
            time.sleep(0.1)
        assert victim not in served.workers() and len(served.workers()) == 2
        served.wait_ready()
        for _ in range(8):
            assert httpx.get(served.url + "/api/boards", timeout=10).status_code == 200
        everyone = served.workers()
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(60) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in everyone)


def _serve_stopping_within(tmp_path: Path, stop_seconds: float) -> Iterator[Served]:
    command = (
        "-c",
        "import sys; from app import cli, workers; cli.main(['migrate']); "
        "sys.exit(workers.serve('127.0.0.1', int(sys.argv[2]), 2, 'warning', "
        f"stop_seconds={stop_seconds}))",
    )
    yield from _serve(tmp_path, *command)


def test_a_second_sigterm_kills_the_workers_at_once_and_the_command_fails(
    tmp_path: Path,
) -> None:
    """A worker that does not stop (here: stopped by SIGSTOP, so its SIGTERM waits) would hold
    the command for its minute; a second SIGTERM kills it now, and the status says the stop was
    not clean."""
    for served in _serve_stopping_within(tmp_path, 60):
        everyone = served.workers()
        assert len(everyone) == 2
        os.kill(min(everyone), signal.SIGSTOP)
        served.process.send_signal(signal.SIGTERM)
        time.sleep(2)
        assert served.process.poll() is None  # waiting for the stopped worker
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(20) == 1
        assert not any(Path(f"/proc/{pid}").exists() for pid in everyone)
        assert b"killed on a second signal" in served.log.read_bytes()


def test_ctrl_c_stops_the_workers_cleanly_and_the_command_exits_0(tmp_path: Path) -> None:
    """Ctrl-C signals the terminal's whole process group, the workers too: each finishes as on
    the parent's SIGTERM, and none exits 1 (a KeyboardInterrupt after uvicorn's clean stop)."""
    for served in _serve_stopping_within(tmp_path, 60):
        everyone = served.workers()
        assert len(everyone) == 2
        assert httpx.get(served.url + "/api/boards", timeout=10).status_code == 200
        os.killpg(served.process.pid, signal.SIGINT)
        assert served.process.wait(60) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in everyone)
        assert b"a worker stopped with" not in served.log.read_bytes()


def test_a_worker_still_running_after_the_stop_time_is_killed_and_the_command_fails(
    tmp_path: Path,
) -> None:
    for served in _serve_stopping_within(tmp_path, 1):
        everyone = served.workers()
        os.kill(min(everyone), signal.SIGSTOP)
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(30) == 1
        assert not any(Path(f"/proc/{pid}").exists() for pid in everyone)
        assert b"killed after 1 s" in served.log.read_bytes()


def test_a_worker_that_cannot_start_stops_the_command(tmp_path: Path) -> None:
    """The settings are wrong: the workers exit while starting, the command fails."""
    port = _free_port()
    env = _env(tmp_path, threads_per_page="0")
    finished = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from app import workers; "
            f"sys.exit(workers.serve('127.0.0.1', {port}, 2, 'warning'))",
        ],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert finished.returncode == 1
    assert b"a worker exited while starting" in finished.stderr


def test_the_workers_stop_when_their_parent_is_killed(two_workers: Served) -> None:
    """Killed without the chance to stop them, the parent leaves no worker holding the address
    (each watches its parent and stops itself)."""
    orphans = two_workers.workers()
    os.kill(two_workers.process.pid, signal.SIGKILL)
    two_workers.process.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in orphans):
        time.sleep(0.1)
    assert not any(Path(f"/proc/{pid}").exists() for pid in orphans)


def test_a_second_server_on_the_same_address_is_refused(two_workers: Served) -> None:
    """The second cannot listen where the first does: it says so and fails; the first
    serves on."""
    port = two_workers.port
    finished = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from app import workers; "
            f"sys.exit(workers.serve('127.0.0.1', {port}, 2, 'warning'))",
        ],
        capture_output=True,
        timeout=60,
    )
    assert finished.returncode == 1
    assert b"is in use" in finished.stderr
    assert httpx.get(two_workers.url + "/api/boards", timeout=10).status_code == 200


# The dispatcher in this process, each worker played by the test on its end of the channel.


def _messages(worker: socket.socket) -> tuple[list[socket.socket], list[bytes]]:
    """The connections handed to a worker so far, and the parent's other words to it."""
    handed: list[socket.socket] = []
    said: list[bytes] = []
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(worker, 16, 4)
        except BlockingIOError:
            return handed, said
        if fds:
            assert message == workers.CONNECTION and len(fds) == 1
            handed.append(socket.socket(fileno=fds[0]))
        else:
            said.append(message)


def _received(worker: socket.socket) -> list[socket.socket]:
    handed, _said = _messages(worker)
    for connection in handed:
        connection.close()
    return handed


class Played:
    """A dispatcher and the workers' ends of its channels, played by the test."""

    def __init__(self, open_after: float = 30.0) -> None:
        listener = workers.listening_socket("127.0.0.1", 0)
        self.dispatcher = workers.Dispatcher(listener, 2, open_after=open_after)
        self.ours: list[socket.socket] = []
        self.ends: list[socket.socket] = []
        self.clients: list[socket.socket] = []

    def worker(self, ready: bool = True) -> socket.socket:
        ours, end = self.dispatcher.channel()
        end.setblocking(False)
        if ready:
            end.send(workers.READY)
        self.ours.append(ours)
        self.ends.append(end)
        return end

    def connect(self, count: int = 1, wait: bool = True) -> list[socket.socket]:
        address = self.dispatcher.listener.getsockname()
        made = [socket.create_connection(address, timeout=10) for _ in range(count)]
        self.clients += made
        if wait:
            self.dispatcher.wait(0.3)
        return made

    def close(self) -> None:
        self.dispatcher.close()
        self.dispatcher.close_channels()
        for sock in self.ends + self.clients:
            sock.close()


@pytest.fixture
def played() -> Iterator[Played]:
    made = Played()
    try:
        yield made
    finally:
        made.close()


def test_no_connection_is_handed_over_before_every_worker_serves(played: Played) -> None:
    """The first worker up would otherwise get every client that came early."""
    first, second = played.worker(), played.worker(ready=False)
    (client,) = played.connect()
    assert _received(first) == [] and _received(second) == []
    second.send(workers.READY)
    played.dispatcher.wait(0.3)
    handed, _ = _messages(first)
    others, _ = _messages(second)
    assert [c.getpeername() for c in handed + others] == [client.getsockname()]
    for connection in handed + others:
        connection.close()


def test_one_worker_that_never_starts_does_not_keep_the_other_from_serving() -> None:
    """Past the start's time, one ready worker is enough."""
    played = Played(open_after=0.2)
    try:
        ready, _never = played.worker(), played.worker(ready=False)
        played.dispatcher.wait(0.3)
        played.connect()
        assert len(_received(ready)) == 1
    finally:
        played.close()


def test_a_worker_that_has_exited_gets_no_connection_and_one_that_comes_back_does(
    played: Played,
) -> None:
    first, second = played.worker(), played.worker()
    played.dispatcher.wait(0.2)
    first.close()  # the first worker exits
    played.connect(3)
    assert len(_received(second)) == 3
    second.close()  # and the second: connections wait for a worker, they are not dropped
    for ours in played.ours:
        played.dispatcher.drop(ours)
    (waiting,) = played.connect()
    again = played.worker()
    played.dispatcher.wait(0.3)
    handed, _ = _messages(again)
    assert [c.getpeername() for c in handed] == [waiting.getsockname()]
    handed[0].close()


def test_a_worker_that_stops_on_its_own_is_handed_no_more_connections(played: Played) -> None:
    """It says so as it begins to stop (SIGTERM sent to it alone, say): the clients that come
    meanwhile go to the others, and the parent tells it that nothing more will come, after
    whatever it had sent already (which the worker then serves before it stops)."""
    stopping, other = played.worker(), played.worker()
    played.dispatcher.wait(0.2)
    stopping.send(workers.STOPPING)
    played.connect(4)
    handed, said = _messages(stopping)
    assert handed == [] and said == [workers.NO_MORE]
    assert len(_received(other)) == 4


def _report(end: socket.socket, received: int, held: int) -> None:
    end.send(workers.REPORT + struct.pack("!QQ", received, held))


def test_a_worker_s_report_of_what_it_holds_steers_the_next_connections(played: Played) -> None:
    """Four connections go two and two; one worker reports both of its closed: the next two
    go to it. A report counts the connections it had not received yet as held."""
    first, second = played.worker(), played.worker()
    played.dispatcher.wait(0.2)
    played.connect(4)
    assert len(_received(first)) == 2 and len(_received(second)) == 2
    _report(first, 2, 0)
    played.connect(2)
    assert len(_received(first)) == 2 and _received(second) == []
    _report(first, 4, 1)  # first: one open
    _report(second, 0, 0)  # written before it had read either: both still count, 2 > 1
    played.connect(1)
    assert len(_received(first)) == 1 and _received(second) == []


# A worker in this process (uvicorn on a thread, a tiny app), the test playing the parent.


async def _tiny_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        start = {"type": "http.response.start", "status": 200}
        await send({**start, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})
    elif scope["type"] == "websocket":
        await send({"type": "websocket.close"})  # refused: uvicorn answers 403


class Worker:
    def __init__(self) -> None:
        self.parent, end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.parent.settimeout(10)
        config = uvicorn.Config(_tiny_app, lifespan="off", log_level="warning")
        self.server = workers._HandedServer(config, end)
        self.end = end
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        assert self.parent.recv(64) == workers.READY
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.clients: list[socket.socket] = []

    def hand(self) -> socket.socket:
        client = socket.create_connection(self.listener.getsockname(), timeout=10)
        accepted, _address = self.listener.accept()
        socket.send_fds(self.parent, [workers.CONNECTION], [accepted.fileno()])
        accepted.close()
        self.clients.append(client)
        return client

    def reports_until(self, received: int, held: int) -> None:
        """The worker's reports are read until it says ``received``, ``held``."""
        deadline = time.monotonic() + 10
        counts = None
        while counts != (received, held):
            assert time.monotonic() < deadline, counts
            message = self.parent.recv(64)
            if message[:1] == workers.REPORT:
                counts = struct.unpack("!QQ", message[1:])

    def stop(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(OSError):
            self.parent.send(workers.NO_MORE)
        self.thread.join(10)
        for sock in [self.parent, self.end, self.listener, *self.clients]:
            sock.close()


def _ask(client: socket.socket, *headers: str) -> bytes:
    client.sendall("\r\n".join(["GET / HTTP/1.1", "Host: x", *headers, "", ""]).encode())
    return client.recv(4096)


UPGRADE = (
    "Connection: Upgrade",
    "Upgrade: websocket",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
)


def test_a_worker_reports_the_connections_it_holds_a_websocket_upgrade_too() -> None:
    """A connection upgraded to a WebSocket (any request may ask) leaves uvicorn's HTTP
    protocol, whose close the worker hears of; its close is reported all the same (by the
    tick), or the parent would count it held for ever."""
    worker = Worker()
    try:
        plain = worker.hand()
        worker.reports_until(1, 1)
        assert _ask(plain).startswith(b"HTTP/1.1 200")
        plain.close()
        worker.reports_until(1, 0)
        upgraded = worker.hand()
        assert _ask(upgraded, *UPGRADE).startswith(b"HTTP/1.1 403")
        upgraded.close()
        worker.reports_until(2, 0)
    finally:
        worker.stop()


def test_a_connection_handed_over_as_a_worker_stops_is_served() -> None:
    """The parent handed it over before it read the worker's STOPPING: the worker reads its
    channel until the parent's NO_MORE, and answers the request."""
    worker = Worker()
    try:
        worker.server.should_exit = True
        while worker.parent.recv(64) != workers.STOPPING:
            pass
        late = worker.hand()
        late.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        worker.parent.send(workers.NO_MORE)
        assert late.recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        worker.stop()


def test_on_stop_the_connections_waiting_to_be_accepted_are_handed_over(played: Played) -> None:
    """SIGTERM: the clients already connected but not yet accepted are handed over (closing
    the socket would reset them), and then each worker is told that nothing more will come."""
    first, second = played.worker(), played.worker()
    played.dispatcher.wait(0.2)
    clients = played.connect(3, wait=False)
    played.dispatcher.close()
    handed, said = _messages(first)
    others, said_too = _messages(second)
    assert sorted(c.getpeername() for c in handed + others) == sorted(
        c.getsockname() for c in clients
    )
    assert said == said_too == [workers.NO_MORE]
    for connection in handed + others:
        connection.close()
