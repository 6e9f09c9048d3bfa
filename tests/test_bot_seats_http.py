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
from app.games.base import Rng
from app.gm.reply import BOT_NAME
from tests.conftest import TEST_SECRET, ApiUser
from tests.support.load_support import fast_users, session_cookie
from tests.test_authz_matrix import page_token


def plays_every_seat(kind: str) -> bool:
    """Whether the kind's own bot (``Game.bot_lines``) has a line for every seat at the first
    turn of each seat's role: 新新エリューシス's parent must seal a rule of its own making,
    which the dropped-seat play (the hook's default) cannot; its bot does."""
    impl = find_game(kind)
    assert impl is not None
    if kind != "eleusis":
        return True
    names = [f"p{n}" for n in range(impl.min_players)]
    state = impl.setup(names, impl.Options().model_dump(mode="json"), Rng("probe", 0))
    return all(impl.bot_lines(state, seat) for seat in impl.waiting_for(state))


KINDS = [
    pytest.param(
        impl.kind,
        marks=pytest.mark.skipif(
            not plays_every_seat(impl.kind), reason="this kind's bot cannot play every seat yet"
        ),
    )
    for impl in all_games()
]
# The GM's own lines /legal lists beside the game's: not moves of the game.
GM_LINES = {"PAUSE", "RESUME", "UNDO", "ABORT", "BOT", "START", "LEAVE", "JOIN"}
MAX_STEPS = 600
SEALED_SHOWN = "（封印）"
NONCE = "bot-seats-nonce"
# Free text the person writes where /legal lists nothing (Game.examples, shown on the game page
# as a pattern): 新新エリューシス's parent seals a rule of their own.
# Not test_authz_matrix's RULE: a finished game's rule is public, and the matrix looks for its
# own rule in listings.
FREE_TEXT = {"eleusis": "RULE card.color != prev.color"}


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
    # The title never holds the kind's key: listings must show no raw key (test_tables_http).
    impl = find_game(kind)
    assert impl is not None
    title = f"ボット卓 {impl.title_ja}"
    wanted = {"kind": kind, "title": title, "options": {}, "bots": bots, **extra}
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
        if not thread and not sealed and game["kind"] in FREE_TEXT:
            sealed = [FREE_TEXT[game["kind"]]]  # what the game page shows as a pattern
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


def test_api_games_bots_out_of_range_or_not_a_number_is_refused(
    client: httpx.Client, database: Database
) -> None:
    (gm,) = fast_users(database, 1, client, "botapi")
    for bad, said in ((3, "ボットの数は0〜2で指定してください。"), ("two", "整数"), (True, "整数")):
        made = gm.post(
            "/api/games", {"kind": "cardbattle", "title": "卓", "options": {}, "bots": bad}
        )
        assert made.status_code == 422, made.text
        assert said in str(made.json()["detail"]), made.text
    made = gm.post("/api/games", {"kind": "cardbattle", "title": "卓", "options": {}, "bots": 2})
    assert made.status_code == 201
    shown = gm.get(f"/api/games/{made.json()['id']}").json()
    assert shown["bots"] == 2 and shown["rated_with_bots"] is False
    assert [p["bot"] for p in shown["players"]] == [True, True]
    assert shown["view"]["players"] == [
        {"seat": 1, "name": "ボット1", "bot": True},
        {"seat": 2, "name": "ボット2", "bot": True},
    ]


def test_new_game_form_seats_bots_and_the_game_page_says_so(
    client: httpx.Client, database: Database
) -> None:
    (gm,) = fast_users(database, 1, client, "botweb")
    cookie = session_cookie(database, gm.name)
    headers = {"cookie": f"bbsgm_csrf={NONCE}; bbsgm_session={cookie}"}
    form = client.get("/games/new", headers=headers)
    assert 'name="bots"' in form.text and "ボットの数" in form.text
    assert 'name="rated_with_bots"' in form.text
    token = page_token(TEST_SECRET, NONCE)
    refused = client.post(
        "/games",
        data={"csrf_token": token, "kind": "idolwp", "title": "卓", "bots": "x"},
        headers=headers,
    )
    assert (
        refused.status_code == 422 and "ボットの数は0以上の整数で書いてください。" in refused.text
    )
    made = client.post(
        "/games",
        data={"csrf_token": token, "kind": "idolwp", "title": "ボット卓", "bots": "2"},
        headers=headers,
    )
    assert made.status_code == 303, made.text
    gid = int(made.headers["location"].rsplit("/", 1)[1])
    game = gm.get(f"/api/games/{gid}").json()
    assert [(p["name"], p["bot"]) for p in game["players"]] == [
        ("ボット1", True),
        ("ボット2", True),
    ]
    page = client.get(f"/games/{gid}").text
    assert "このゲームにはボットが2人参加しています。" in page
    assert "レーティングには数えません" in page
    listing = client.get("/archive", params={"status": "recruiting"}).text
    row = listing.split(f'data-game="{gid}"', 1)[1].split("</tr>", 1)[0]
    assert "ボットあり" in row
    english = client.get(f"/games/{gid}", params={"lang": "en"}).text
    assert "2 bots play in this game." in english


def draft_begun(gm: ApiUser, player: ApiUser, game: dict[str, Any]) -> None:
    """ポピュラス with two bots: ``player`` (the GM too, if it is them) JOINs, the GM STARTs,
    and the player picks a race while one is asked of them: the bots' sealed PICKs follow."""
    gid, tid = game["id"], game["thread_id"]
    assert say(player, tid, "JOIN")["replies"][0]["ok"]
    assert say(gm, tid, "START")["replies"][0]["ok"]
    for _ in range(3):
        lines = player.get(f"/api/games/{gid}/legal").json()["commands"]
        if lines and lines[0].startswith("RACE"):
            assert say(player, tid, lines[0])["replies"][0]["ok"]


def test_a_bots_sealed_lines_are_seen_by_nobody_but_the_gm(
    client: httpx.Client, database: Database
) -> None:
    """ポピュラス's draft: every PICK is sealed. The bots' picks are stored as their seats'
    sealed commands; the player, a stranger and anyone anonymous find none of them in the
    thread, the moves, the sealed list, the log, the views or the pages — the GM reads them, as
    every sealed command."""
    gm, player, stranger = fast_users(database, 3, client, "botseal")
    game = bot_game(gm, "populous", 2)
    gid, tid = game["id"], game["thread_id"]
    draft_begun(gm, player, game)
    picks = [
        row["body"]
        for row in gm.get(f"/api/games/{gid}/sealed").json()
        if row["author"] in ("ボット1", "ボット2")
    ]
    assert len(picks) == 2 and all(p.startswith("PICK ") for p in picks), picks
    anonymous = ApiUser(client, "", "")
    anonymous.headers = {}
    for who in (player, stranger, anonymous):
        answers = [
            client.get(f"/api/threads/{tid}", params={"limit": 1000}, headers=who.headers).text,
            client.get(f"/api/games/{gid}/moves", headers=who.headers).text,
            client.get(f"/api/games/{gid}/sealed", headers=who.headers).text,
            client.get(f"/api/games/{gid}/log", headers=who.headers).text,
            client.get(f"/api/games/{gid}/view", headers=who.headers).text,
            client.get(f"/api/games/{gid}", headers=who.headers).text,
            client.get(f"/games/{gid}").text,
            client.get(f"/threads/{tid}").text,
        ]
        for pick in picks:
            assert not any(pick in text for text in answers), (who.name, pick)
    moves = player.get(f"/api/games/{gid}/moves").json()
    bot_moves = [m for m in moves if m["actor"] in ("ボット1", "ボット2")]
    assert bot_moves and {
        m["command"] for m in bot_moves if m["command"].startswith(("PICK", SEALED_SHOWN))
    } == {SEALED_SHOWN}
