"""レス番 stay 1, 2, 3 … with no gaps and no duplicates under concurrent posting — within one
server and across several worker processes sharing only the database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from app.config import Settings
from tests.conftest import ApiUser, _free_port, api_user

POSTERS = 8
POSTS_EACH = 6


def hammer(base_url: str, users: list[ApiUser], thread_id: int) -> list[int]:
    def run(user: ApiUser) -> list[int]:
        numbers = []
        # A fresh connection per request, so a multi-worker server spreads them over processes.
        limits = httpx.Limits(max_keepalive_connections=0)
        with httpx.Client(base_url=base_url, timeout=60, limits=limits) as c:
            for i in range(POSTS_EACH):
                reply = c.post(
                    f"/api/threads/{thread_id}/posts", json={"body": f"{i}"}, headers=user.headers
                )
                assert reply.status_code == 201, reply.text
                numbers.append(reply.json()["post"]["number"])
        return numbers

    with ThreadPoolExecutor(max_workers=len(users)) as pool:
        return [n for chunk in pool.map(run, users) for n in chunk]


def assert_gapless(client: httpx.Client, thread_id: int, numbers: list[int]) -> None:
    expected = list(range(2, 2 + POSTERS * POSTS_EACH))
    assert sorted(numbers) == expected
    posts = client.get(f"/api/threads/{thread_id}", params={"limit": 1000}).json()
    assert [p["number"] for p in posts["posts"]] == [1, *expected]
    assert posts["thread"]["post_count"] == 1 + POSTERS * POSTS_EACH


def test_concurrent_posts_get_unique_gapless_numbers(client: httpx.Client) -> None:
    users = [api_user(client) for _ in range(POSTERS)]
    thread_id = (
        users[0].post("/api/boards/chat/threads", {"title": "並行", "body": "1"}).json()["id"]
    )
    numbers = hammer(str(client.base_url), users, thread_id)
    assert_gapless(client, thread_id, numbers)


@pytest.fixture
def two_workers(settings: Settings, database: object, tmp_path: object) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "BBSGM_DATABASE_URL": settings.database_url,
        "BBSGM_SECRET_KEY": settings.resolved_secret_key(),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "app.cli",
            "serve",
            "--port",
            str(port),
            "--workers",
            "2",
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/api/boards", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                # Ended first: reading a running server's output would wait for it forever.
                proc.terminate()
                out = proc.communicate(timeout=20)[0].decode()
                raise RuntimeError(f"bbsgm serve --workers 2 did not start:\n{out}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_several_workers_share_only_the_database(two_workers: str) -> None:
    with httpx.Client(base_url=two_workers, timeout=60) as client:
        users = [api_user(client) for _ in range(POSTERS)]
        created = users[0].post("/api/boards/chat/threads", {"title": "複数ワーカー", "body": "1"})
        thread_id = created.json()["id"]
        numbers = hammer(two_workers, users, thread_id)
        assert_gapless(client, thread_id, numbers)
