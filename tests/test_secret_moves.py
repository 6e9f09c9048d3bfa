"""Issue #40, one definition of a secret move (app/gm/secrecy.py, docs/security.md "Secret
moves"): a move the rules sealed is secret whoever sent it. The bot's sealed lines for a
KICKed seat and for a seat past its deadline (ポピュラス `PICK <skill>`: a face-down skill for the
whole game) read （封印） to everyone but the seat's player and the GM on every surface that shows
moves — the moves API, the log page, the replay page, the export, webhook payloads — exactly as
a player's own sealed PICK does; the seat's player (and the GM) still read it."""

from __future__ import annotations

import html
from datetime import timedelta
from typing import Any

import httpx
import pytest

from app.config import Settings
from app.db.engine import Database
from app.db.models import utcnow
from app.notify.delivery import deliver_due
from tests.conftest import ApiUser, api_user
from tests.support.secret_moves import populous_with_bot_picks, post
from tests.test_delivery import Receiver
from tests.test_populous_secrets import _session_cookie


@pytest.fixture
def receiver() -> Any:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def draft(
    client: httpx.Client, database: Database, settings: Settings, receiver: Receiver
) -> dict[str, Any]:
    """A ポピュラス game in its draft: seat 3 KICKed (the bot picks for it), seat 2 late (the
    bot picks at the deadline), seat 1 picks by a sealed command of its own; seats 1 and 2
    have webhooks."""
    master = api_user(client)
    players = [api_user(client) for _ in range(3)]
    for user in players[:2]:
        assert user.post("/api/me/webhooks", {"url": receiver.url}).status_code == 201
    game = populous_with_bot_picks(
        client, database, settings.resolved_secret_key(), master, players, "封印の卓"
    )
    deliver_due(database, settings, now=utcnow() + timedelta(hours=26))
    first, late, kicked = players
    gid, tid, picks = game.game_id, game.thread_id, game.picks
    cookies = {u.name: _session_cookie(database, u.name) for u in [master, *players]}
    return {
        "gid": gid,
        "tid": tid,
        "master": master,
        "first": first,
        "late": late,
        "kicked": kicked,
        "stranger": api_user(client),
        "picks": picks,
        "cookies": cookies,
        "hooks": receiver,
    }


def _moves_text(client: httpx.Client, gid: int, user: ApiUser | None) -> str:
    moves = (user.get if user else client.get)(f"/api/games/{gid}/moves").json()
    return "\n".join(m["command"] for m in moves)


def _page(client: httpx.Client, url: str, cookie: str | None) -> str:
    client.cookies.clear()
    reply = client.get(url, headers={"cookie": f"bbsgm_session={cookie}"} if cookie else {})
    assert reply.status_code == 200, (url, reply.status_code)
    return html.unescape(reply.text)


def _seen(text: str, lines: list[str]) -> bool:
    return any(line in text for line in lines)


def test_a_kicked_and_a_late_seats_bot_picks_are_sealed_on_the_moves_api(
    client: httpx.Client, draft: dict[str, Any]
) -> None:
    gid, picks = draft["gid"], draft["picks"]
    readers = {
        "anonymous": None,
        "stranger": draft["stranger"],
        "first": draft["first"],
        "late": draft["late"],
        "kicked": draft["kicked"],
        "gm": draft["master"],
    }
    shown = {role: _moves_text(client, gid, user) for role, user in readers.items()}
    assert "（封印）" in shown["anonymous"]
    # The late seat's PICK: its player and the GM only.
    assert {r for r, t in shown.items() if _seen(t, picks[1])} == {"late", "gm"}
    # The kicked seat is nobody's: the GM only (its old player reads it as a stranger).
    assert {r for r, t in shown.items() if _seen(t, picks[2])} == {"gm"}
    # A player's own sealed PICK, as before.
    assert {r for r, t in shown.items() if _seen(t, picks[0])} == {"first", "gm"}


def test_the_bots_picks_are_sealed_on_the_log_and_replay_pages(
    client: httpx.Client, draft: dict[str, Any]
) -> None:
    gid, picks, cookies = draft["gid"], draft["picks"], draft["cookies"]
    roles = {
        "anonymous": None,
        "first": cookies[draft["first"].name],
        "late": cookies[draft["late"].name],
        "kicked": cookies[draft["kicked"].name],
        "gm": cookies[draft["master"].name],
    }
    for url in (f"/games/{gid}/log", f"/games/{gid}/replay"):
        pages = {role: _page(client, url, cookie) for role, cookie in roles.items()}
        assert "（封印）" in pages["anonymous"], url
        assert {r for r, t in pages.items() if _seen(t, picks[1])} == {"late", "gm"}, url
        assert {r for r, t in pages.items() if _seen(t, picks[2])} == {"gm"}, url


def test_the_bots_picks_are_sealed_in_the_export_and_webhook_payloads(
    client: httpx.Client, draft: dict[str, Any]
) -> None:
    gid, picks = draft["gid"], draft["picks"]
    record = client.get(f"/api/games/{gid}/export").json()
    bot_moves = [m for m in record["moves"] if m["by_bot"] and m["sealed"]]
    assert bot_moves and all(m["command"] == "（封印）" for m in bot_moves)
    bodies = draft["hooks"].bodies
    recent = [b["content"] for b in bodies if "最近の手:" in b["content"]]
    assert recent, "a webhook named the recent moves"
    assert any("（封印）" in text for text in recent)
    everyone = picks[0] + picks[1] + picks[2]
    assert not [text for text in recent if _seen(text, everyone)]


def test_every_pick_is_read_by_all_once_the_game_is_over(
    client: httpx.Client, draft: dict[str, Any]
) -> None:
    """The epilogue publishes every sealed line: from the end nobody reads （封印）."""
    post(draft["master"], draft["tid"], "ABORT")
    text = _moves_text(client, draft["gid"], None)
    assert "（封印）" not in text
    assert all(line in text for seat in range(3) for line in draft["picks"][seat])


def test_cardbattle_decks_sealed_by_a_player_and_by_the_bot_for_a_kicked_seat(
    client: httpx.Client,
) -> None:
    """掲示板進行カードゲーム's DECK is sealed until both are in: the player's own, and the one
    the bot builds for a KICKed seat, read （封印） to everyone but the seat's player and the GM."""
    master, first, second, stranger = (api_user(client) for _ in range(4))
    made = master.post("/api/games", {"kind": "cardbattle", "title": "封印の山"}).json()
    for user in (first, second):
        post(user, made["thread_id"], "JOIN")
    post(master, made["thread_id"], "START")
    deck = "DECK 歩兵 見習い騎士 弓兵 MAGIC 火花"
    sealed = first.post(f"/api/games/{made['id']}/sealed", {"body": deck}).json()
    assert sealed["sealed"]["ok"], sealed
    post(master, made["thread_id"], f"KICK {second.name}")
    moves = master.get(f"/api/games/{made['id']}/moves").json()
    decks = {m["actor"]: m["command"] for m in moves if m["command"].startswith("DECK")}
    assert set(decks) == {first.name, second.name}, moves  # the bot built the kicked seat's
    shown = {
        role: _moves_text(client, made["id"], user)
        for role, user in (("anonymous", None), ("stranger", stranger), ("first", first))
    }
    assert decks[first.name] in shown["first"] and decks[second.name] not in shown["first"]
    assert not _seen(shown["anonymous"] + shown["stranger"], list(decks.values()))
