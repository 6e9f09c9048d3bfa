"""The JSON API for accounts and forum, exactly as ../shared/API.md (HTTP over loopback)."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import ApiUser, api_user, unique_name


def test_register_201_with_id_and_name(client: httpx.Client) -> None:
    name = unique_name()
    reply = client.post("/api/register", json={"name": name, "password": "password123"})
    assert reply.status_code == 201
    body = reply.json()
    assert body["name"] == name and isinstance(body["id"], int)


def test_register_taken_name_409(client: httpx.Client, alice: ApiUser) -> None:
    reply = client.post("/api/register", json={"name": alice.name, "password": "password123"})
    assert reply.status_code == 409
    assert "使われています" in reply.json()["detail"]


@pytest.mark.parametrize(
    "payload",
    [
        {"name": "", "password": "password123"},
        {"name": "ok", "password": "short"},
        {"name": "a b", "password": "password123"},
        {"password": "password123"},
        {},
    ],
)
def test_register_invalid_422(client: httpx.Client, payload: dict[str, str]) -> None:
    reply = client.post("/api/register", json=payload)
    assert reply.status_code == 422
    assert "detail" in reply.json()


def test_login_200_token_and_401_wrong(client: httpx.Client, alice: ApiUser) -> None:
    ok = client.post("/api/login", json={"name": alice.name, "password": "password123"})
    assert ok.status_code == 200 and ok.json()["token"]
    bad = client.post("/api/login", json={"name": alice.name, "password": "nope-nope"})
    assert bad.status_code == 401 and bad.json()["detail"]


def test_logout_revokes_the_token_it_was_sent_with(client: httpx.Client) -> None:
    user = api_user(client)
    other = client.post("/api/login", json={"name": user.name, "password": "password123"}).json()[
        "token"
    ]
    assert client.post("/api/logout", headers=user.headers).status_code == 204
    assert user.get("/api/me").status_code == 401
    still = client.get("/api/me", headers={"Authorization": f"Bearer {other}"})
    assert still.status_code == 200 and still.json()["name"] == user.name


def test_boards_list_shape(client: httpx.Client) -> None:
    boards = client.get("/api/boards").json()
    by_slug = {b["slug"]: b for b in boards}
    assert {"lobby", "chat"} <= set(by_slug)
    assert set(by_slug["lobby"]) >= {"slug", "title", "thread_count"}
    assert by_slug["lobby"]["title"] == "ロビー"


def test_create_thread_and_read_it_back(client: httpx.Client, alice: ApiUser) -> None:
    created = alice.post("/api/boards/chat/threads", {"title": "はじめまして", "body": "よろしく"})
    assert created.status_code == 201
    thread_id = created.json()["id"]
    listed = client.get("/api/boards/chat/threads").json()["threads"]
    row = next(t for t in listed if t["id"] == thread_id)
    assert set(row) >= {"id", "title", "post_count", "last_post_at", "game_id"}
    assert row["post_count"] == 1 and row["game_id"] is None
    got = client.get(f"/api/threads/{thread_id}").json()
    assert got["thread"]["title"] == "はじめまして"
    post = got["posts"][0]
    assert post["number"] == 1 and post["author"] == alice.name and post["body"] == "よろしく"
    assert post["kind"] == "talk" and post["created_at"]


def test_posting_numbers_and_after_limit(
    client: httpx.Client, alice: ApiUser, bob: ApiUser
) -> None:
    thread_id = alice.post("/api/boards/chat/threads", {"title": "t", "body": "1"}).json()["id"]
    for i in range(2, 6):
        poster = bob if i % 2 else alice
        reply = poster.post(f"/api/threads/{thread_id}/posts", {"body": f"{i}"})
        assert reply.status_code == 201
        assert reply.json()["post"]["number"] == i
        assert reply.json()["replies"] == []  # no command lines, no bot reply
    page = client.get(f"/api/threads/{thread_id}", params={"after": 2, "limit": 2}).json()
    assert [p["number"] for p in page["posts"]] == [3, 4]
    assert [p["body"] for p in page["posts"]] == ["3", "4"]


def test_thread_list_ordered_by_last_post(client: httpx.Client, alice: ApiUser) -> None:
    first = alice.post("/api/boards/lobby/threads", {"title": "a", "body": "a"}).json()["id"]
    second = alice.post("/api/boards/lobby/threads", {"title": "b", "body": "b"}).json()["id"]
    alice.post(f"/api/threads/{first}/posts", {"body": "age"})
    ids = [t["id"] for t in client.get("/api/boards/lobby/threads").json()["threads"]]
    assert ids.index(first) < ids.index(second)


def test_posting_without_token_401(client: httpx.Client, alice: ApiUser) -> None:
    thread_id = alice.post("/api/boards/chat/threads", {"title": "t", "body": "b"}).json()["id"]
    reply = client.post(f"/api/threads/{thread_id}/posts", json={"body": "x"})
    assert reply.status_code == 401
    wrong = client.post(
        f"/api/threads/{thread_id}/posts",
        json={"body": "x"},
        headers={"Authorization": "Bearer not-a-token"},
    )
    assert wrong.status_code == 401
    assert client.get(f"/api/threads/{thread_id}").json()["thread"]["post_count"] == 1


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({"body": ""}, 422),
        ({"body": "   "}, 422),
        ({"body": "x" * 10_001}, 422),
        ({}, 422),
        ({"body": 5}, 422),
    ],
)
def test_bad_post_body_4xx_nothing_stored(
    client: httpx.Client, alice: ApiUser, payload: dict[str, object], status: int
) -> None:
    thread_id = alice.post("/api/boards/chat/threads", {"title": "t", "body": "b"}).json()["id"]
    reply = alice.post(f"/api/threads/{thread_id}/posts", payload)
    assert reply.status_code == status
    assert reply.json()["detail"]
    assert client.get(f"/api/threads/{thread_id}").json()["thread"]["post_count"] == 1


@pytest.mark.parametrize(
    "payload",
    [{"title": "", "body": "b"}, {"title": "t" * 101, "body": "b"}, {"title": "t", "body": ""}],
)
def test_bad_thread_input_422(alice: ApiUser, payload: dict[str, str]) -> None:
    assert alice.post("/api/boards/chat/threads", payload).status_code == 422


def test_unknown_board_and_thread_404(client: httpx.Client, alice: ApiUser) -> None:
    assert client.get("/api/boards/nope/threads").status_code == 404
    assert alice.post("/api/boards/nope/threads", {"title": "t", "body": "b"}).status_code == 404
    assert client.get("/api/threads/999999999").status_code == 404
    assert client.get("/api/threads/99999999999999999999").status_code == 404
    assert alice.post("/api/threads/999999999/posts", {"body": "x"}).status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "content"),
    [
        ("POST", "/api/register", b"{not json"),
        ("POST", "/api/login", b"\xff\xfe"),
        ("GET", "/api/threads/abc", None),
        ("GET", "/api/threads/1?after=-1", None),
        ("GET", "/api/threads/1?limit=0", None),
        ("GET", "/api/boards/chat/threads?page=0", None),
        ("GET", "/api/boards/chat/threads?page=x", None),
    ],
)
def test_malformed_requests_are_4xx_never_500(
    client: httpx.Client, method: str, path: str, content: bytes | None
) -> None:
    reply = client.request(
        method, path, content=content, headers={"Content-Type": "application/json"}
    )
    assert 400 <= reply.status_code < 500, reply.text
    assert "detail" in reply.json()


def test_openapi_schema_lists_the_contract(client: httpx.Client) -> None:
    paths = client.get("/api/openapi.json").json()["paths"]
    for path in (
        "/api/register",
        "/api/login",
        "/api/boards",
        "/api/boards/{slug}/threads",
        "/api/threads/{thread_id}",
        "/api/threads/{thread_id}/posts",
    ):
        assert path in paths


def test_full_width_body_kept_as_typed(client: httpx.Client) -> None:
    user = api_user(client)
    thread_id = user.post(
        "/api/boards/chat/threads", {"title": "t", "body": "ＳＥＴ　主演"}
    ).json()["id"]
    assert client.get(f"/api/threads/{thread_id}").json()["posts"][0]["body"] == "ＳＥＴ　主演"
