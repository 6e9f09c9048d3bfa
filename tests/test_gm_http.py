"""End to end over HTTP: a whole 3-player えいつく game played by scripts against the API, and
the games part of the API contract."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import ApiUser, api_user

PREFERENCE = ("CHOOSE", "RELEASE", "SET", "SCOUT 役者", "SCOUT", "DRAW", "END")


def pick(commands: list[str]) -> str:
    for prefix in PREFERENCE:
        for line in commands:
            if line.startswith(prefix):
                return line
    raise AssertionError(f"nothing to play among {commands}")


def new_game(master: ApiUser, players: list[ApiUser]) -> dict[str, int]:
    created = master.post("/api/games", {"kind": "eitsuku", "title": "スクリプト卓", "options": {}})
    assert created.status_code == 201, created.text
    game = created.json()
    assert game["status"] == "recruiting" and game["kind"] == "eitsuku"
    for player in players:
        reply = player.post(f"/api/threads/{game['thread_id']}/posts", {"body": "参加\nよろしく"})
        assert reply.status_code == 201 and reply.json()["replies"][0]["ok"], reply.text
    return {"id": game["id"], "thread_id": game["thread_id"]}


def test_kinds_lists_eitsuku(client: httpx.Client) -> None:
    kinds = {k["kind"]: k for k in client.get("/api/games/kinds").json()}
    assert kinds["eitsuku"]["title"] == "えいつく"
    assert set(kinds["eitsuku"]) >= {"kind", "title", "min_players", "max_players"}


def play_to_the_end(
    client: httpx.Client, players: list[ApiUser], game_id: int, thread_id: int
) -> None:
    """Each seat posts one of its legal lines in turn until the game is over."""
    posts = 0
    while client.get(f"/api/games/{game_id}").json()["status"] == "active":
        progressed = False
        for player in players:
            commands = player.get(f"/api/games/{game_id}/legal").json()["commands"]
            if not commands:
                continue
            line = pick(commands)
            reply = player.post(f"/api/threads/{thread_id}/posts", {"body": line})
            assert reply.status_code == 201
            answer = reply.json()["replies"][0]
            assert answer["ok"], answer["body"]
            assert answer["error"] is None
            progressed = True
            posts += 1
        assert progressed and posts < 2000


def test_undo_after_the_end_is_refused_once_the_seed_is_public(client: httpx.Client) -> None:
    """The closing post publishes the seed, the epilogue and every sealed line: from them and
    the move log every hand and every next draw could be rebuilt, so a finished game is never
    reopened — the GM's UNDO there is refused and changes nothing."""
    master = api_user(client)
    players = [api_user(client) for _ in range(3)]
    ids = new_game(master, players)
    game_id, thread_id = ids["id"], ids["thread_id"]
    master.post(f"/api/threads/{thread_id}/posts", {"body": "START"})
    play_to_the_end(client, players, game_id, thread_id)
    finished = client.get(f"/api/games/{game_id}").json()
    assert finished["status"] == "finished"
    undo = master.post(f"/api/threads/{thread_id}/posts", {"body": "UNDO"}).json()
    answer = undo["replies"][0]
    assert answer["ok"] is False and "終了したゲーム" in answer["error"]["message"]
    assert client.get(f"/api/games/{game_id}").json() == finished


def test_whole_game_by_script(client: httpx.Client) -> None:
    master = api_user(client)
    players = [api_user(client) for _ in range(3)]
    ids = new_game(master, players)
    game_id, thread_id = ids["id"], ids["thread_id"]
    start = master.post(f"/api/threads/{thread_id}/posts", {"body": "START"}).json()
    assert start["replies"][0]["ok"] and "第1週" in start["replies"][0]["body"]
    assert start["replies"][0]["kind"] == "gm"

    play_to_the_end(client, players, game_id, thread_id)
    game = client.get(f"/api/games/{game_id}").json()
    assert game["status"] == "finished"
    assert game["view"]["week"] <= 12
    ranking = game["result"]["ranking"]
    assert sorted(r["name"] for r in ranking) == sorted(p.name for p in players)
    for entry in ranking:
        assert set(entry["breakdown"]) >= {"base", "release", "events", "total"}
        if entry["score"] is not None:
            assert entry["score"] == entry["breakdown"]["total"]
    assert [r["rank"] for r in ranking] == sorted(r["rank"] for r in ranking)

    moves = client.get(f"/api/games/{game_id}/moves").json()
    assert [m["seq"] for m in moves] == list(range(1, len(moves) + 1))
    assert {m["actor"] for m in moves} <= {p.name for p in players}
    final = client.get(f"/api/games/{game_id}/replay", params={"at": len(moves)}).json()
    assert final["view"] == game["view"]
    first = client.get(f"/api/games/{game_id}/replay", params={"at": 0}).json()
    assert first["view"]["week"] == 1

    export = client.get(f"/api/games/{game_id}/export").json()
    assert export["seed"] and export["result"] == game["result"]
    assert len(export["moves"]) == len(moves)

    thread = client.get(f"/api/threads/{thread_id}", params={"limit": 1000}).json()
    assert thread["thread"]["game_id"] == game_id
    assert "最終結果" in thread["posts"][-1]["body"]


def test_archive_filters(client: httpx.Client) -> None:
    master = api_user(client)
    ids = new_game(master, [api_user(client), api_user(client)])
    listed = client.get("/api/games", params={"status": "recruiting", "kind": "eitsuku"}).json()
    assert ids["id"] in [g["id"] for g in listed["games"]]
    finished = client.get("/api/games", params={"status": "finished"}).json()
    assert ids["id"] not in [g["id"] for g in finished["games"]]
    assert client.get("/api/games", params={"status": "bogus"}).status_code == 422


def test_bad_game_requests_are_4xx(client: httpx.Client) -> None:
    user = api_user(client)
    assert user.post("/api/games", {"kind": "chess", "title": "x"}).status_code == 404
    assert user.post("/api/games", {"kind": "eitsuku", "title": ""}).status_code == 422
    assert client.post("/api/games", json={"kind": "eitsuku", "title": "x"}).status_code == 401
    assert client.get("/api/games/999999").status_code == 404
    assert client.get("/api/games/abc").status_code == 422


def test_commands_in_a_finished_or_unstarted_game_get_a_reason(client: httpx.Client) -> None:
    master = api_user(client)
    player = api_user(client)
    ids = new_game(master, [player])
    reply = player.post(f"/api/threads/{ids['thread_id']}/posts", {"body": "DRAW"}).json()
    assert reply["post"]["kind"] == "command"
    answer = reply["replies"][0]
    assert answer["ok"] is False and answer["error"]["line"] == 1
    assert "始まっていません" in answer["error"]["message"]
    not_started = client.get(f"/api/games/{ids['id']}/replay", params={"at": 0})
    assert not_started.status_code == 422


@pytest.mark.parametrize(
    ("body", "line", "needle"),
    [
        ("FLY 主演", None, None),
        ("SET 主演 役者9", 1, "1〜6"),
        ("talk\nSCOUT ドラゴン", 2, None),
        ("よし\nSCUOT 役者", 2, "もしかして SCOUT"),
        ("End of story", None, None),
    ],
)
def test_unknown_or_malformed_lines(
    client: httpx.Client, body: str, line: int | None, needle: str | None
) -> None:
    master = api_user(client)
    players = [api_user(client), api_user(client)]
    ids = new_game(master, players)
    master.post(f"/api/threads/{ids['thread_id']}/posts", {"body": "START"})
    version = client.get(f"/api/games/{ids['id']}").json()["version"]
    reply = players[0].post(f"/api/threads/{ids['thread_id']}/posts", {"body": body}).json()
    if line is None:  # not a known verb: talk, no reply
        assert reply["replies"] == []
    else:
        error = reply["replies"][0]["error"]
        assert error["line"] == line and error["column"] is not None
        if needle:
            assert needle in error["message"]
    assert client.get(f"/api/games/{ids['id']}").json()["version"] == version
