"""新新エリューシス end to end over HTTP: a parent, four children and a prophet; the bot judges a
sealed formal rule; and no public page or API answer shows a hand, the rule or a sealed judgment
before the game reveals them (GM moderation issue: the secrecy scan)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from tests.conftest import ApiUser, api_user

RULE = "card.parity != prev.parity"  # not one of the example rules the bot suggests
NOTE = "預言メモ-ひみつ-7731"  # a private note inside a sealed command


RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13}


def odd(card: str) -> bool:
    rank = card[1:]
    return (RANKS[rank] if rank in RANKS else int(rank)) % 2 == 1


def correct_play(legal: list[str], last: str) -> str | None:
    """A one-card PLAY whose declaration is right under RULE (parity must change)."""
    for line in legal:
        parts = line.split()
        if parts[0] != "PLAY" or len(parts) != 3:
            continue
        succeeds = odd(parts[2]) != odd(last)
        if (parts[1] == "○") == succeeds:
            return line
    return None


def public_texts(client: httpx.Client, game: dict[str, Any], outsider: ApiUser) -> list[str]:
    gid, tid = game["id"], game["thread_id"]
    pages = [
        client.get("/").text,
        client.get("/games").text,
        client.get(f"/games/{gid}").text,
        client.get(f"/games/{gid}/log").text,
        client.get(f"/threads/{tid}").text,
        client.get("/boards/eleusis").text,
        client.get("/boards/eleusis/feed.atom").text,
        client.get(f"/threads/{tid}/feed.atom").text,
        client.get(f"/api/games/{gid}").text,
        client.get(f"/api/games/{gid}/moves").text,
        client.get(f"/api/games/{gid}/export").text,
        client.get(f"/api/games/{gid}/sealed").text,
        client.get(f"/api/threads/{tid}", params={"limit": 1000}).text,
        outsider.get(f"/api/games/{gid}/view").text,
        outsider.get(f"/api/games/{gid}/moves").text,
        outsider.get(f"/api/games/{gid}/sealed").text,
        outsider.client.get(f"/games/{gid}").text,
    ]
    moves = client.get(f"/api/games/{gid}/moves").json()
    for at in range(len(moves) + 1):
        pages.append(client.get(f"/api/games/{gid}/replay", params={"at": at}).text)
    return pages


def test_parent_four_children_and_a_prophet(client: httpx.Client) -> None:
    master = api_user(client)
    parent, *children = [api_user(client) for _ in range(5)]
    game = master.post(
        "/api/games", {"kind": "eleusis", "title": "帰納卓", "options": {"rounds": 1}}
    ).json()
    tid, gid = game["thread_id"], game["id"]
    for user in [parent, *children]:
        reply = user.post(f"/api/threads/{tid}/posts", {"body": "参加"}).json()
        assert reply["replies"][0]["ok"], reply
    assert master.post(f"/api/threads/{tid}/posts", {"body": "START"}).json()["replies"][0]["ok"]

    public_rule = parent.post(f"/api/threads/{tid}/posts", {"body": "RULE card.rank > 3"})
    assert not public_rule.json()["replies"][0]["ok"]  # a rule must come sealed
    sealed = parent.post(f"/api/games/{gid}/sealed", {"body": f"RULE {RULE}"}).json()
    assert sealed["sealed"]["ok"], sealed
    assert RULE not in json.dumps(sealed["replies"], ensure_ascii=False)
    rule_hash = client.get(f"/api/games/{gid}").json()["view"]["rule_hash"]
    assert re.fullmatch(r"[0-9a-f]{64}", rule_hash)

    prophet: ApiUser | None = None
    for _ in range(60):
        view = client.get(f"/api/games/{gid}").json()["view"]
        if view["played"] >= 14 and prophet is not None:
            break
        acted = False
        for child in children:
            offered = child.get(f"/api/games/{gid}/legal").json()
            legal = offered["commands"]
            if "PROPHET" in legal and prophet is None:
                prophet = child
                assert child.post(f"/api/threads/{tid}/posts", {"body": "預言者"}).json()[
                    "replies"
                ][0]["ok"]
                acted = True
                continue
            # A prophet's secret judgment is offered for /sealed, never for the thread.
            assert not [line for line in legal if line.startswith("JUDGE")], legal
            judge = [line for line in offered["sealed"] if line.startswith("JUDGE")]
            if judge:
                declared = client.get(f"/api/games/{gid}").json()["view"]["pending"]
                assert declared is not None
                line = f"JUDGE {declared['declaration']}\n{NOTE}"
                answer = child.post(f"/api/games/{gid}/sealed", {"body": line}).json()
                assert answer["sealed"]["ok"], answer
                acted = True
                continue
            line = correct_play(legal, view["line"][-1]["card"])
            if line is not None:
                answer = child.post(f"/api/threads/{tid}/posts", {"body": line}).json()
                assert answer["replies"][0]["ok"], answer["replies"][0]["body"]
                acted = True
                break
        assert acted, "nobody could move"
    assert prophet is not None

    # Secrecy scan while the round runs.
    outsider = children[0] if children[0] is not prophet else children[1]
    own_view = outsider.get(f"/api/games/{gid}/view").json()
    assert own_view["hand"], "a child sees their own hand"
    for page in public_texts(client, game, outsider):
        assert RULE not in page
        assert NOTE not in page
        assert '"rule":' not in page.replace(" ", "") or '"rule":null' in page.replace(" ", "")
    public = client.get(f"/api/games/{gid}").json()["view"]
    assert all("hand" not in player for player in public["players"])
    assert "hand" not in public
    other_view = outsider.get(f"/api/games/{gid}/view").json()
    assert all("hand" not in p for p in other_view["players"])
    assert parent.get(f"/api/games/{gid}/view").json()["rule"]["text"] == RULE

    # The GM ends the round by agreement; the game (one round) is over and everything shows.
    ended = master.post(f"/api/threads/{tid}/posts", {"body": "ENDROUND"}).json()["replies"][0]
    assert ended["ok"], ended["body"]
    final = client.get(f"/api/games/{gid}").json()
    assert final["status"] == "finished"
    ranking = final["result"]["ranking"]
    assert len(ranking) == 5 and all("total" in r["breakdown"] for r in ranking)
    thread = client.get(f"/api/threads/{tid}", params={"limit": 1000}).json()["posts"]
    epilogue = "\n".join(p["body"] for p in thread if p["kind"] == "gm")
    assert RULE in epilogue and NOTE in epilogue and "エピローグ" in epilogue
    export = client.get(f"/api/games/{gid}/export").json()
    assert export["seed"] and all(m["command"] != "（封印）" for m in export["moves"])


def test_a_game_ends_although_its_sealed_commands_are_longer_than_a_post(
    client: httpx.Client,
) -> None:
    """The closing post quotes every sealed command (docs/gm.md): a parent's rule sealed with
    9,000 characters of notes made it longer than a post may be, and the GM's ABORT was
    refused (422), so the game could not end. Now each is quoted up to 300 characters and
    the game page lists them whole."""
    master = api_user(client)
    parent, *children = [api_user(client) for _ in range(4)]
    game = master.post("/api/games", {"kind": "eleusis", "title": "長い封印"}).json()
    tid, gid = game["thread_id"], game["id"]
    for user in [parent, *children]:
        assert user.post(f"/api/threads/{tid}/posts", {"body": "参加"}).status_code == 201
    assert master.post(f"/api/threads/{tid}/posts", {"body": "START"}).json()["replies"][0]["ok"]
    notes = "\n".join(f"覚え書き{i:03d} " + "あ" * 80 for i in range(100))
    sealed = parent.post(f"/api/games/{gid}/sealed", {"body": f"RULE {RULE}\n{notes}"}).json()
    assert sealed["sealed"]["ok"], sealed
    ended = master.post(f"/api/threads/{tid}/posts", {"body": "ABORT"})
    assert ended.status_code == 201, ended.text
    closing = ended.json()["replies"][0]
    assert closing["ok"], closing["body"]
    assert len(closing["body"]) <= 10_000
    assert f"封印 {parent.name}" in closing["body"] and f"/games/{gid}" in closing["body"]
    assert "覚え書き099" not in closing["body"]
    assert client.get(f"/api/games/{gid}").json()["status"] == "aborted"
    page = client.get(f"/games/{gid}").text
    assert "覚え書き099" in page  # the whole sealed command, now public
