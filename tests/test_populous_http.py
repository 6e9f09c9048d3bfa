"""ポピュラス 草案21 end to end over HTTP: a 3-player game made from the API, races chosen in
the thread, the draft and the cube split sent sealed, then twelve rounds played by posting
lines (several steps of a turn in one post now and then) to the final scoring; the bot answers
each step with what it did and what may be written next, the picture follows, the epilogue
reveals every hand and skill."""

from __future__ import annotations

import random
from typing import Any

import httpx

from tests.conftest import ApiUser, api_user

BREAKDOWN = ("play", "workers", "towns", "generations", "skills")


def _post(user: ApiUser, thread_id: int, body: str) -> dict[str, Any]:
    answer = user.post(f"/api/threads/{thread_id}/posts", {"body": body})
    assert answer.status_code == 201, answer.text
    reply: dict[str, Any] = answer.json()["replies"][0]
    return reply


def _seal(user: ApiUser, game_id: int, body: str) -> None:
    answer = user.post(f"/api/games/{game_id}/sealed", {"body": body})
    assert answer.status_code in (200, 201), answer.text


def test_three_players_play_populous_to_the_final_scoring_by_post(
    client: httpx.Client,
) -> None:
    master = api_user(client)
    players = {user.name: user for user in (api_user(client) for _ in range(3))}
    made = master.post("/api/games", {"kind": "populous", "title": "創世卓", "options": {}})
    assert made.status_code == 201, made.text
    gid, tid = made.json()["id"], made.json()["thread_id"]
    for user in players.values():
        assert _post(user, tid, "参加")["ok"]
    started = _post(master, tid, "開始")
    assert started["ok"], started
    assert "RACE" in started["body"] or "種族" in started["body"]

    chooser = random.Random("http-populous")
    seen_hints = 0
    several_steps = 0
    for _ in range(3000):
        game = client.get(f"/api/games/{gid}").json()
        if game["status"] == "finished":
            break
        view = game["view"]
        for player in view["players"]:
            for value in player["resources"].values():
                assert 0 <= value <= 6, player
        waiting = view["waiting_for"]
        assert waiting, view
        user = players[chooser.choice(waiting)]
        legal = user.get(f"/api/games/{gid}/legal").json()
        if view["phase"] in ("draft", "cubes"):
            assert legal["commands"] == [] and legal["sealed"], legal
            _seal(user, gid, chooser.choice(legal["sealed"]))
            continue
        lines = [line for line in legal["commands"] if line != "END"] or legal["commands"]
        line = chooser.choice(lines)
        body = line
        if line.startswith("AREA") and chooser.random() < 0.3:
            body = f"{line}\nEND"  # the area, then the rest of the turn by default
            several_steps += 1
        reply = _post(user, tid, body)
        assert reply["ok"], (body, reply["body"])
        if "次:" in reply["body"]:
            seen_hints += 1
    else:
        raise AssertionError("the game did not end in 3000 posts")

    final = client.get(f"/api/games/{gid}").json()
    assert final["view"]["round"] == 12
    ranking = final["result"]["ranking"]
    assert sorted(entry["name"] for entry in ranking) == sorted(players)
    for entry in ranking:
        assert set(entry["breakdown"]) == set(BREAKDOWN)
        assert entry["score"] == sum(entry["breakdown"][key] for key in BREAKDOWN)
    assert seen_hints > 0 and several_steps > 0
    count = client.get(f"/api/threads/{tid}", params={"limit": 1}).json()["thread"]["post_count"]
    thread = client.get(f"/api/threads/{tid}", params={"after": count - 10}).json()
    bodies = "\n".join(post["body"] for post in thread["posts"] if post["body"])
    assert "種明かし" in bodies and "伏せたままのスキル" in bodies
    moves = len(client.get(f"/api/games/{gid}/moves").json())
    picture = client.get(f"/api/games/{gid}/board.svg", params={"at": moves // 2})
    assert picture.status_code == 200 and picture.text.startswith("<svg")
    assert "24a" in picture.text or "12a" in picture.text


def test_a_bad_line_gets_its_column_reason_and_the_legal_lines(client: httpx.Client) -> None:
    master = api_user(client)
    players = [api_user(client) for _ in range(3)]
    made = master.post("/api/games", {"kind": "ポピュラス", "title": "誤記卓"})
    assert made.status_code == 201, made.text
    gid, tid = made.json()["id"], made.json()["thread_id"]
    for user in players:
        assert _post(user, tid, "JOIN")["ok"]
    assert _post(master, tid, "START")["ok"]
    view = client.get(f"/api/games/{gid}").json()["view"]
    chooser = next(u for u in players if u.name == view["waiting_for"][0])
    refused = _post(chooser, tid, "RACE エルフ")
    assert not refused["ok"]
    assert "エルフ" in refused["body"] and "RACE" in refused["body"]
    typo = _post(chooser, tid, "AREA F3")
    assert not typo["ok"]
    assert typo["error"]["column"] == len("AREA F3") + 1 and "F2" in typo["body"]
    after = client.get(f"/api/games/{gid}").json()["view"]
    assert after == view
