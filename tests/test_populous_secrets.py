"""ポピュラス 草案21's secrets over every surface (the authorization matrix's rule for a new
game): a player's hand, face-down skills, the card under a face-down card, the draft pack and
the sealed cube split leave only through that player's own view (and the GM's) — never through
another player's or an outsider's JSON view, `/legal`, the picture (public or `as=me`), the
game page, the thread, the move log or the feeds.

One game is played over HTTP into its first rounds (races in the thread, the draft and the
cubes sealed, a face-down card placed by a sealed FACEDOWN … CARD), then each surface is asked
by each role and searched for what that role must not see."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import User
from tests.conftest import ApiUser, api_user

Secrets = dict[str, set[str]]  # what -> the words that would betray it


def _session_cookie(database: Database, name: str) -> str:
    with database.session() as session:
        user = session.scalar(select(User).where(User.name == name))
        assert user is not None
        token = accounts.issue_token(session, user, "session")
        session.commit()
        return token


def _post(user: ApiUser, thread_id: int, body: str) -> dict[str, Any]:
    reply: dict[str, Any] = user.post(f"/api/threads/{thread_id}/posts", {"body": body}).json()
    assert reply["replies"][0]["ok"], (body, reply)
    return reply


def _seal(user: ApiUser, game_id: int, body: str) -> None:
    answer = user.post(f"/api/games/{game_id}/sealed", {"body": body})
    assert answer.status_code in (200, 201), answer.text


def _view(client: httpx.Client, game_id: int, user: ApiUser | None = None) -> dict[str, Any]:
    """The public game (``{"view": …}``), or with a user their private view in the same shape."""
    if user is None:
        found: dict[str, Any] = client.get(f"/api/games/{game_id}").json()
        return found
    return {"view": user.get(f"/api/games/{game_id}/view").json()}


@pytest.fixture
def table(client: httpx.Client, database: Database) -> dict[str, Any]:
    master = api_user(client)
    players = [api_user(client) for _ in range(3)]
    made = master.post("/api/games", {"kind": "populous", "title": "秘密の卓"}).json()
    gid, tid = made["id"], made["thread_id"]
    for user in players:
        _post(user, tid, "JOIN")
    _post(master, tid, "START")
    by_name = {user.name: user for user in players}
    while (view := _view(client, gid)["view"])["phase"] == "race":
        user = by_name[view["waiting_for"][0]]
        _post(user, tid, user.get(f"/api/games/{gid}/legal").json()["commands"][0])
    # The draft: everyone seals a pick; the packs (and the picks) are secrets.
    packs_mid_draft = {
        user.name: {skill["name"] for skill in _view(client, gid, user)["view"]["draft"]["pack"]}
        for user in players
    }
    draft_views = {
        role: (_view(client, gid, user) if user else _view(client, gid))
        for role, user in (("outsider", None), ("p0", players[0]), ("gm", master))
    }
    while _view(client, gid)["view"]["phase"] == "draft":
        for user in players:
            sealed = user.get(f"/api/games/{gid}/legal").json()["sealed"]
            if sealed:
                _seal(user, gid, sealed[0])
    for user in players:
        _seal(user, gid, "CUBES 情熱 2 食料 3 信仰 2")
    # Two turns; the first player places a card face down by a sealed FACEDOWN … CARD.
    facedown = False
    for _ in range(40):
        view = _view(client, gid)["view"]
        if view["round"] > 1 and facedown:
            break
        user = by_name[view["waiting_for"][0]]
        legal = user.get(f"/api/games/{gid}/legal").json()
        cards = [line for line in legal["sealed"] if " CARD " in line and "NEWGEN" not in line]
        if cards and not facedown:
            _seal(user, gid, cards[0])
            facedown = True
            continue
        lines = [line for line in legal["commands"] if line != "END"] or legal["commands"]
        _post(user, tid, lines[0])
    assert facedown
    return {
        "gid": gid,
        "tid": tid,
        "master": master,
        "players": players,
        "packs": packs_mid_draft,
        "draft_views": draft_views,
        "cookies": {u.name: _session_cookie(database, u.name) for u in [master, *players]},
    }


def _face_down_skills(view: dict[str, Any], seat: int) -> set[str]:
    own = view["players"][seat]
    return {skill["name"] for skill in own["skills"] if not skill["revealed"]}


def _json_leaks(data: Any, seat_of_viewer: int | None) -> list[str]:
    """Hands, skill lists and the cards under face-down cards in the entries of others."""
    found = []
    if isinstance(data, dict):
        players = data.get("players")
        if isinstance(players, list) and players and isinstance(players[0], dict):
            for seat, entry in enumerate(players):
                if seat == seat_of_viewer or not isinstance(entry, dict):
                    continue
                for key in ("hand", "skills"):
                    if key in entry:
                        found.append(f"{key} of seat {seat}")
                for gen in entry.get("generations", []):
                    for card in gen:
                        if card.get("down") and "kind" in card:
                            found.append(f"face-down card of seat {seat}")
        for value in data.values():
            found.extend(_json_leaks(value, seat_of_viewer))
    elif isinstance(data, list):
        for value in data:
            found.extend(_json_leaks(value, seat_of_viewer))
    return found


def test_populous_secrets_leave_only_through_their_owners_view(
    client: httpx.Client, table: dict[str, Any]
) -> None:
    gid, tid = table["gid"], table["tid"]
    master, players = table["master"], table["players"]
    gm_view = _view(client, gid, master)["view"]
    # Each player's face-down skills (all 7 start face down; names are unique words).
    face_down = {seat: _face_down_skills(gm_view, seat) for seat in range(3)}
    assert all(len(names) == 7 for names in face_down.values())
    surfaces = [
        f"/api/games/{gid}",
        f"/api/games/{gid}/view",
        f"/api/games/{gid}/replay?at=30",
        f"/api/games/{gid}/export",
        f"/api/games/{gid}/legal",
        f"/api/games/{gid}/moves",
        f"/api/games/{gid}/board.svg",
        f"/api/games/{gid}/board.svg?as=me",
        f"/api/threads/{tid}",
        f"/games/{gid}",
        f"/threads/{tid}",
    ]
    roles: list[tuple[str, ApiUser | None, int | None]] = [
        ("outsider", None, None),
        *((f"seat {seat}", user, seat) for seat, user in enumerate(players)),
    ]
    for role, user, seat in roles:
        cookies = {"bbsgm_session": table["cookies"][user.name]} if user else {}
        headers = user.headers if user else {}
        for path in surfaces:
            if ("as=me" in path or path.endswith("/view")) and user is None:
                continue
            if path.startswith("/api"):
                answer = client.get(path, headers=headers)
            else:
                with httpx.Client(base_url=client.base_url, cookies=cookies) as browser:
                    answer = browser.get(path)
            assert answer.status_code == 200, (role, path, answer.status_code)
            text = answer.text
            if seat is not None and path in (f"/games/{gid}", f"/api/games/{gid}/view"):
                # The owner's own surfaces do show them: the search below can find a leak.
                assert all(name in text for name in face_down[seat]), (role, path)
            for other, names in face_down.items():
                if other == seat:
                    continue
                shown = sorted(name for name in names if name in text)
                assert not shown, f"{role} sees seat {other}'s face-down skills {shown} at {path}"
            if "json" in answer.headers.get("content-type", ""):
                leaks = _json_leaks(json.loads(text), seat)
                assert not leaks, (role, path, leaks)
    # Each player does see their own hand and skills; the GM sees all.
    for seat, user in enumerate(players):
        own = _view(client, gid, user)["view"]["players"][seat]
        assert own["hand"] and _face_down_skills({"players": {seat: own}}, seat) == face_down[seat]
    assert all("hand" in entry for entry in gm_view["players"])


def test_the_draft_packs_are_secret_while_drafting(table: dict[str, Any]) -> None:
    packs: dict[str, set[str]] = table["packs"]
    views = table["draft_views"]
    first = table["players"][0].name
    for role, answer in views.items():
        text = json.dumps(answer, ensure_ascii=False)
        for name, pack in packs.items():
            if role == "p0" and name == first:
                assert all(skill in text for skill in pack)
                continue
            shown = sorted(skill for skill in pack if re.search(re.escape(skill), text))
            assert not shown, f"{role} sees {name}'s draft pack {shown}"
