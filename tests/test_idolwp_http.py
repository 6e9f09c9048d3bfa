"""IM@S x Workerplacement end to end over HTTP: a new game from the API, four players draft in
the thread, play every turn by posting lines to the end, and the bot's replies name whose turn
it is; the picture follows every step."""

from __future__ import annotations

import random
import re

import httpx

from tests.conftest import api_user


def test_four_players_play_a_whole_game_to_its_final_ranking_by_post(
    client: httpx.Client,
) -> None:
    master = api_user(client)
    players = {user.name: user for user in (api_user(client) for _ in range(4))}
    made = master.post("/api/games", {"kind": "idolwp", "title": "アイドル卓", "options": {}})
    assert made.status_code == 201, made.text
    game = made.json()
    gid, tid = game["id"], game["thread_id"]
    for user in players.values():
        assert user.post(f"/api/threads/{tid}/posts", {"body": "参加"}).json()["replies"][0]["ok"]
    started = master.post(f"/api/threads/{tid}/posts", {"body": "開始"}).json()
    assert started["replies"][0]["ok"], started
    assert (
        "アイドルを選ぶ" in started["replies"][0]["body"] or "PICK" in started["replies"][0]["body"]
    )
    chooser = random.Random("http-idolwp")
    posts = 0
    one_line_turns = 0
    while True:
        view = client.get(f"/api/games/{gid}").json()
        if view["status"] == "finished":
            break
        waiting = view["view"]["waiting_for"]
        assert len(waiting) == 1, view["view"]
        user = players[waiting[0]]
        legal = user.get(f"/api/games/{gid}/legal").json()
        assert legal["sealed"] == []  # nothing in this game is sealed
        lines = legal["commands"]
        assert lines, view["view"]
        moves = [line for line in lines if line.startswith("MOVE") and " MONEY" not in line]
        line = chooser.choice(lines)
        body = line
        types = {space["id"]: space["type"] for space in view["view"]["board"]["spaces"]}
        asking = [m for m in moves if types[m.split()[2]] in ("event", "training")]
        if asking and chooser.random() < 0.5:
            # A whole turn on one line where the space asks for more.
            body = chooser.choice(asking)
            body += " EVENT LV1" if types[body.split()[2]] == "event" else " TRAIN"
            one_line_turns += 1
        reply = user.post(f"/api/threads/{tid}/posts", {"body": body}).json()["replies"][0]
        posts += 1
        if not reply["ok"]:
            # A one-line turn may ask for what the space does not offer: refused with a reason
            # and the lines legal now, nothing changed; post a legal line instead.
            assert reply["error"]["message"], reply
            assert "今できる命令" in reply["body"] or "MOVE" in reply["body"]
            continue
        if "次の手番" in reply["body"]:
            assert re.search(r"次の手番: \S+さん", reply["body"])
        assert posts < 1500, "the game did not end"
    final = client.get(f"/api/games/{gid}").json()
    ranking = final["result"]["ranking"]
    assert sorted(entry["name"] for entry in ranking) == sorted(players)
    for entry in ranking:
        assert entry["score"] == entry["breakdown"]["events"] + entry["breakdown"]["abilities"]
    assert [step["round"] for step in final["view"]["results"]] == [1, 3, 6, 9]
    moves = len(client.get(f"/api/games/{gid}/moves").json())
    picture = client.get(f"/api/games/{gid}/board.svg", params={"at": moves // 2})
    assert picture.status_code == 200 and picture.text.startswith("<svg")
    thread = client.get(f"/threads/{tid}").text
    assert "board.svg?at=" in thread
    assert one_line_turns > 0
