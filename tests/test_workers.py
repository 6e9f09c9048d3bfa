"""``bbsgm serve --workers N`` (app/workers.py): the command accepts every connection and hands
it to the worker holding the fewest; a worker that dies is replaced; SIGTERM stops them all."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app import workers
from tests.conftest import TEST_SECRET, _free_port

pytestmark = pytest.mark.skipif(not workers.supported(), reason="Linux only")


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

    def connections_by_process(self, state: str = "01") -> dict[int, int]:
        """How many sockets on the port in ``state`` each worker holds (01: established
        connections, 0A: listening)."""
        inodes: set[str] = set()
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                if local_port == self.port and fields[3] == state:
                    inodes.add(fields[9])
        held: dict[int, int] = {}
        for pid in self.workers():
            fds = Path(f"/proc/{pid}/fd")
            count = 0
            for fd in fds.iterdir():
                try:
                    target = os.readlink(fd)
                except OSError:
                    continue
                if target.startswith("socket:[") and target[8:-1] in inodes:
                    count += 1
            held[pid] = count
        return held

    def holders(self, clients: list[socket.socket]) -> dict[int, list[socket.socket]]:
        """Which worker holds the other end of each of ``clients``."""
        by_port = {client.getsockname()[1]: client for client in clients}
        by_inode: dict[str, socket.socket] = {}
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if local_port == self.port and fields[3] == "01" and remote_port in by_port:
                    by_inode[fields[9]] = by_port[remote_port]
        held: dict[int, list[socket.socket]] = {}
        for pid in self.workers():
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:[") and target[8:-1] in by_inode:
                        held.setdefault(pid, []).append(by_inode[target[8:-1]])
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
    yield from _serve(tmp_path, "-m", "app.cli", "serve", "--workers", "2")


def _listening(port: int) -> set[str]:
    """The inodes of the sockets listening on ``port``."""
    return {
        line.split()[9]
        for table in ("/proc/net/tcp", "/proc/net/tcp6")
        for line in Path(table).read_text().splitlines()[1:]
        if int(line.split()[1].rsplit(":", 1)[1], 16) == port and line.split()[3] == "0A"
    }


def test_only_the_command_listens_and_the_workers_are_handed_connections(
    two_workers: Served,
) -> None:
    """One listening socket on the port, the parent's; no worker listens (with a socket each,
    the kernel's hash chose the worker)."""
    listening = _listening(two_workers.port)
    assert len(listening) == 1
    parent = Path(f"/proc/{two_workers.process.pid}/fd")
    held = {os.readlink(fd) for fd in parent.iterdir()}
    assert {f"socket:[{inode}]" for inode in listening} <= held
    assert not any(two_workers.connections_by_process("0A").values())


def _hold(served: Served, count: int) -> list[socket.socket]:
    """``count`` connections opened together; returned once the workers hold them all."""
    before = sum(served.connections_by_process().values())
    connections = [
        socket.create_connection(("127.0.0.1", served.port), timeout=10) for _ in range(count)
    ]
    deadline = time.monotonic() + 10
    while sum(served.connections_by_process().values()) < before + count:
        assert time.monotonic() < deadline, served.connections_by_process()
        time.sleep(0.05)
    return connections


def _close(served: Served, connections: list[socket.socket]) -> None:
    """Closes ``connections`` and returns once the workers have closed theirs and the parent
    has had the time to read that they did."""
    before = sum(served.connections_by_process().values())
    for connection in connections:
        connection.close()
    deadline = time.monotonic() + 10
    while sum(served.connections_by_process().values()) > before - len(connections):
        assert time.monotonic() < deadline, served.connections_by_process()
        time.sleep(0.05)
    time.sleep(0.5)  # the worker's word reaches the parent just after its socket is closed


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
            assert sorted(two_workers.connections_by_process().values()) == [12, 12]
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


def _received(worker: socket.socket) -> list[socket.socket]:
    """The connections handed to a worker so far."""
    handed: list[socket.socket] = []
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(worker, 16, 4)
        except BlockingIOError:
            return handed
        assert message == workers.CONNECTION and len(fds) == 1
        handed.append(socket.socket(fileno=fds[0]))


@pytest.fixture
def dispatcher() -> Iterator[workers.Dispatcher]:
    served = workers.Dispatcher(workers.listening_socket("127.0.0.1", 0), 2)
    try:
        yield served
    finally:
        served.close()
        served.close_channels()


def _connect(dispatcher: workers.Dispatcher) -> socket.socket:
    return socket.create_connection(dispatcher.listener.getsockname(), timeout=10)


def test_no_connection_is_handed_over_before_every_worker_serves(
    dispatcher: workers.Dispatcher,
) -> None:
    """The first worker up would otherwise get every client that came early."""
    ends = [dispatcher.channel()[1] for _ in range(2)]
    for end in ends:
        end.setblocking(False)
    ends[0].send(workers.READY)
    client = _connect(dispatcher)
    dispatcher.wait(0.3)
    assert _received(ends[0]) == [] and _received(ends[1]) == []
    ends[1].send(workers.READY)
    dispatcher.wait(0.3)
    handed = _received(ends[0]) + _received(ends[1])
    assert len(handed) == 1
    assert handed[0].getpeername() == client.getsockname()


def test_a_worker_that_has_exited_gets_no_connection_and_one_that_comes_back_does(
    dispatcher: workers.Dispatcher,
) -> None:
    channels = [dispatcher.channel() for _ in range(2)]
    ends = [end for _ours, end in channels]
    for end in ends:
        end.setblocking(False)
        end.send(workers.READY)
    dispatcher.wait(0.2)
    ends[0].close()  # the first worker exits
    clients = [_connect(dispatcher) for _ in range(3)]
    dispatcher.wait(0.3)
    assert len(_received(ends[1])) == 3
    ends[1].close()  # and the second: connections wait for a worker, they are not dropped
    dispatcher.drop(channels[0][0])
    dispatcher.drop(channels[1][0])
    waiting = _connect(dispatcher)
    dispatcher.wait(0.3)
    again = dispatcher.channel()[1]
    again.setblocking(False)
    again.send(workers.READY)
    dispatcher.wait(0.3)
    handed = _received(again)
    assert [c.getpeername() for c in handed] == [waiting.getsockname()]
    for client in [*clients, waiting]:
        client.close()


def test_a_worker_that_stops_on_its_own_is_handed_no_more_connections(
    dispatcher: workers.Dispatcher,
) -> None:
    """It says so as it begins to stop (SIGTERM sent to it alone, say): the clients that come
    meanwhile go to the others, not into a worker that will close them unanswered."""
    ends = [dispatcher.channel()[1] for _ in range(2)]
    for end in ends:
        end.setblocking(False)
        end.send(workers.READY)
    dispatcher.wait(0.2)
    ends[0].send(workers.STOPPING)
    clients = [_connect(dispatcher) for _ in range(4)]
    dispatcher.wait(0.3)
    assert _received(ends[0]) == []
    assert len(_received(ends[1])) == 4
    for client in clients:
        client.close()
