"""Bots in seats over real HTTP (issue #39, docs/bots.md): one person alone makes a game of every
kind with ``"bots": N``, sits at it, STARTs it and plays it to its end through the post path,
their lines taken from ``/api/games/{id}/legal`` (sealed ones through ``/sealed``). The bots play
within the request that hands them the turn: every time the person asks, the game waits for
them (or is over). In the thread the bots' lines are posts authored by ボットN, each answered by
the GM; a sealed bot line is never in the thread, ``/moves`` or ``/sealed`` for anyone but the
GM (until the end)."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from app.db.engine import Database
from app.games import all_games, find_game
from app.gm.reply import BOT_NAME
from tests.conftest import ApiUser
from tests.support.load_support import fast_users

KINDS = [impl.kind for impl in all_games()]
# The GM's own lines /legal lists beside the game's: not moves of the game.
GM_LINES = {"PAUSE", "RESUME", "UNDO", "ABORT", "BOT", "START", "LEAVE", "JOIN"}
MAX_STEPS = 600
SEALED_SHOWN = "（封印）"


def say(user: ApiUser, thread_id: int, body: str) -> dict[str, Any]:
    answer = user.post(f"/api/threads/{thread_id}/posts", {"body": body})
    assert answer.status_code == 201, answer.text
    result: dict[str, Any] = answer.json()
    return result


def thread_posts(client: httpx.Client, thread_id: int) -> list[dict[str, Any]]:
    posts: list[dict[str, Any]] = []
    while True:
        after = posts[-1]["number"] if posts else 0
        got = client.get(f"/api/threads/{thread_id}", params={"after": after, "limit": 1000})
        assert got.status_code == 200, got.text
        batch = got.json()["posts"]
        if not batch:
            return posts
        posts.extend(batch)


def bot_game(gm: ApiUser, kind: str, bots: int, **extra: Any) -> dict[str, Any]:
    wanted = {"kind": kind, "title": f"ボット卓 {kind}", "options": {}, "bots": bots, **extra}
    made = gm.post("/api/games", wanted)
    assert made.status_code == 201, made.text
    game: dict[str, Any] = made.json()
    return game


def play_alone(gm: ApiUser, game: dict[str, Any], seed: int) -> int:
    """The person's moves, chosen by a seeded draw from what /legal lists, until the game is
    over; returns how many the person made. Whenever the person asks, the game is over or
    has something for them to do: it never waits on a bot."""
    gid, tid = game["id"], game["thread_id"]
    draw = random.Random(seed)
    for step in range(MAX_STEPS):
        state = gm.get(f"/api/games/{gid}").json()
        if state["status"] != "active":
            assert state["status"] == "finished", state
            return step
        legal = gm.get(f"/api/games/{gid}/legal").json()
        thread = [line for line in legal["commands"] if line not in GM_LINES]
        sealed = list(legal["sealed"])
        assert thread or sealed, f"step {step}: the person has nothing to do: {legal}"
        if thread and (not sealed or draw.random() < 0.5):
            answer = say(gm, tid, draw.choice(thread))
            assert answer["replies"][0]["ok"], answer
        else:
            answer = gm.post(f"/api/games/{gid}/sealed", {"body": draw.choice(sealed)}).json()
            assert answer["sealed"]["ok"], answer
    raise AssertionError(f"not over after {MAX_STEPS} moves of the person")


@pytest.mark.parametrize("kind", KINDS)
def test_one_person_plays_a_whole_game_of_every_kind_against_bots(
    client: httpx.Client, database: Database, kind: str
) -> None:
    impl = find_game(kind)
    assert impl is not None
    (gm,) = fast_users(database, 1, client, f"solo{kind[:3]}")
    bots = max(impl.min_players, 2) - 1
    game = bot_game(gm, kind, bots)
    gid, tid = game["id"], game["thread_id"]
    players = gm.get(f"/api/games/{gid}").json()["players"]
    names = [f"ボット{n}" for n in range(1, bots + 1)]
    assert players == [{"seat": n, "name": names[n - 1], "bot": True} for n in range(1, bots + 1)]
    assert say(gm, tid, "JOIN")["replies"][0]["ok"]
    started = say(gm, tid, "START")
    assert started["replies"][0]["ok"], started
    moves = play_alone(gm, game, seed=39)
    assert moves > 0
    final = gm.get(f"/api/games/{gid}").json()
    assert final["status"] == "finished" and final["result"] is not None
    assert [p["bot"] for p in final["players"]] == [True] * bots + [False]

    posts = thread_posts(client, tid)
    by_number = {p["number"]: p for p in posts}
    bot_posts = [p for p in posts if p["author"] in names]
    assert bot_posts, "the bots' lines are posts of their own"
    for post in bot_posts:
        answer = by_number.get(post["number"] + 1)
        assert answer is not None and answer["author"] == BOT_NAME, post
        assert answer["reply_to"] == post["number"], answer
    moved = {m["actor"] for m in gm.get(f"/api/games/{gid}/moves").json()}
    assert set(names) <= moved, moved  # every bot made moves of its own seat
