"""``bbsgm serve --workers N`` (app/workers.py): each worker listens on its own socket, so the
kernel spreads new connections over all of them; a worker that dies is replaced; SIGTERM stops
them all."""

from __future__ import annotations

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

pytestmark = pytest.mark.skipif(not workers.supported(), reason="needs SO_REUSEPORT")


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
    for served in _serve(tmp_path, "-m", "app.cli", "serve", "--workers", "2"):
        # A worker listens once its app has started; the first may answer before the second.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            sum(1 for held in served.connections_by_process("0A").values() if held) < 2
        ):
            time.sleep(0.05)
        yield served


def test_each_worker_listens_on_a_socket_of_its_own(two_workers: Served) -> None:
    """Two listening sockets on the port, one in each worker (uvicorn's workers share one)."""
    listening = {pid: n for pid, n in two_workers.connections_by_process("0A").items() if n}
    assert len(listening) == 2 and all(count == 1 for count in listening.values()), listening
    inodes = set()
    for pid in listening:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                inodes.add(os.readlink(fd))
            except OSError:
                continue
    shared = [
        line.split()[9]
        for table in ("/proc/net/tcp", "/proc/net/tcp6")
        for line in Path(table).read_text().splitlines()[1:]
        if int(line.split()[1].rsplit(":", 1)[1], 16) == two_workers.port
        and line.split()[3] == "0A"
    ]
    assert len(set(shared)) == 2 and all(f"socket:[{inode}]" in inodes for inode in shared)


def test_the_connections_of_clients_that_connect_together_go_to_every_worker(
    two_workers: Served,
) -> None:
    """24 clients connect at the same moment and keep their connections: both workers hold
    some (each connection lands on one of the two sockets by the kernel's hash; all 24 on one
    worker has a chance of 2 in 2**24). With uvicorn's one shared socket, the worker whose
    event loop woke first accepted all of them."""
    assert len(two_workers.workers()) == 2
    for _burst in range(3):  # with one shared socket, each burst went to one worker or another
        connections = [
            socket.create_connection(("127.0.0.1", two_workers.port), timeout=10) for _ in range(24)
        ]
        try:
            deadline = time.monotonic() + 10
            held = two_workers.connections_by_process()
            while sum(held.values()) < 24 and time.monotonic() < deadline:
                time.sleep(0.05)
                held = two_workers.connections_by_process()
            assert sum(held.values()) == 24
            assert all(count > 0 for count in held.values()), held
        finally:
            for connection in connections:
                connection.close()
        while sum(two_workers.connections_by_process().values()) and time.monotonic() < deadline:
            time.sleep(0.05)  # the workers saw them closed


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
    """Both would bind with SO_REUSEPORT and split the connections: the second refuses."""
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
