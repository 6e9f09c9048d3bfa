"""Moderation over HTTP: preview, あぼーん, the moderation log, sealed endpoint refusals."""

from __future__ import annotations

import httpx

from tests.conftest import ApiUser, api_user
from tests.test_gm_http import new_game


def started_game(client: httpx.Client) -> tuple[ApiUser, list[ApiUser], dict[str, int]]:
    master = api_user(client)
    players = [api_user(client), api_user(client)]
    ids = new_game(master, players)
    assert (
        master.post(f"/api/threads/{ids['thread_id']}/posts", {"body": "START"}).status_code == 201
    )
    return master, players, ids


def test_preview_answers_like_a_post_and_stores_nothing(client: httpx.Client) -> None:
    _master, players, ids = started_game(client)
    before = client.get(f"/api/threads/{ids['thread_id']}").json()["thread"]["post_count"]
    version = client.get(f"/api/games/{ids['id']}").json()["version"]
    reply = players[0].post(f"/api/games/{ids['id']}/preview", {"body": "SET 主演 役者7"})
    assert reply.status_code == 200
    answer = reply.json()["replies"][0]
    assert answer["ok"] is False and answer["error"]["line"] == 1
    after = client.get(f"/api/threads/{ids['thread_id']}").json()["thread"]["post_count"]
    assert after == before
    assert client.get(f"/api/games/{ids['id']}").json()["version"] == version


def test_an_accepted_preview_lists_its_lines_without_their_outcome(client: httpx.Client) -> None:
    """docs/gm.md, Preview: an accepted line is answered with the line, not its result (a
    draw, a judgment, the seed at the end could be fished for with free previews)."""
    master, _players, ids = started_game(client)
    version = client.get(f"/api/games/{ids['id']}").json()["version"]
    reply = master.post(f"/api/games/{ids['id']}/preview", {"body": "よろしく\nPAUSE"})
    assert reply.status_code == 200
    answer = reply.json()["replies"][0]
    assert answer["ok"] is True and answer["error"] is None
    assert "2行目: PAUSE" in answer["body"] and "投稿したときに決まる" in answer["body"]
    assert client.get(f"/api/games/{ids['id']}").json()["version"] == version
    assert client.get(f"/api/games/{ids['id']}").json()["status"] == "active"


def test_gm_hides_a_post_players_cannot(client: httpx.Client) -> None:
    master, players, ids = started_game(client)
    thread = ids["thread_id"]
    number = (
        players[0]
        .post(f"/api/threads/{thread}/posts", {"body": "ひみつの悪口"})
        .json()["post"]["number"]
    )
    denied = players[1].post(f"/api/threads/{thread}/posts/{number}/hide", {})
    assert denied.status_code == 403
    hidden = master.post(f"/api/threads/{thread}/posts/{number}/hide", {})
    assert hidden.status_code == 200 and hidden.json()["body"] == "あぼーん"
    posts = client.get(f"/api/threads/{thread}", params={"limit": 1000}).json()["posts"]
    shown = next(p for p in posts if p["number"] == number)
    assert shown["body"] == "あぼーん" and shown["hidden"] is True
    assert "ひみつの悪口" not in client.get(f"/threads/{thread}").text
    log = client.get(f"/api/games/{ids['id']}/log").json()
    assert [e["action"] for e in log][-1] == "HIDE"
    assert master.post(f"/api/threads/{thread}/posts/{number}/hide", {}).status_code == 422
    huge = master.post(f"/api/threads/{thread}/posts/99999999999/hide", {})
    assert 400 <= huge.status_code < 500 and huge.json()["detail"]


def test_sealed_endpoint_refuses_strangers_and_empty_bodies(client: httpx.Client) -> None:
    _master, players, ids = started_game(client)
    stranger = api_user(client)
    assert stranger.post(f"/api/games/{ids['id']}/sealed", {"body": "END"}).status_code == 403
    assert (
        players[0].post(f"/api/games/{ids['id']}/sealed", {"body": "ただの話"}).status_code == 422
    )
    assert client.post(f"/api/games/{ids['id']}/sealed", json={"body": "END"}).status_code == 401


def test_moderation_log_page_lists_gm_actions(client: httpx.Client) -> None:
    master, players, ids = started_game(client)
    master.post(f"/api/threads/{ids['thread_id']}/posts", {"body": f"KICK {players[1].name}"})
    page = client.get(f"/games/{ids['id']}/log")
    assert page.status_code == 200
    assert "KICK" in page.text and "START" in page.text and players[1].name in page.text
