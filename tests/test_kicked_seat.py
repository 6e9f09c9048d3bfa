"""A seat the GM KICKed and nobody has taken over yet is played by the bot; the user who sat in
it is no longer a player: over HTTP their game view, their own picture (board.svg?as=me), the
game page's own section, the thread's game panel and the live panel fragment show them only what
a stranger sees, and their sealed commands are refused like any outsider's. Once the GM
REPLACEs the seat, its newcomer gets the seat's view (and the kicked user still does not).

Played on 新新エリューシス (a child's hand is secret) and 掲示板進行カードゲーム (a sealed deck
and its magic are secret until revealed)."""

from __future__ import annotations

import re
from typing import Any

import httpx

from app.db.engine import Database
from tests.conftest import TEST_SECRET, ApiUser
from tests.support.load_support import fast_users, session_cookie
from tests.test_authz_matrix import eleusis_game, page_token

OWN_SECTION = 'id="own"'
OWN_PICTURE = "as=me"
HAND_BLOCK = 'class="eleusis-hand"'
OUTSIDER = "封印コマンドを送れるのは、このゲームのプレイヤーと GM だけです。"
NONCE = "kicked-seat-nonce"


def say(user: ApiUser, game: dict[str, Any], line: str) -> dict[str, Any]:
    answer = user.post(f"/api/threads/{game['thread_id']}/posts", {"body": line}).json()
    reply: dict[str, Any] = answer["replies"][0]
    return reply


def page(client: httpx.Client, database: Database, user: ApiUser, url: str) -> str:
    cookie = session_cookie(database, user.name)
    client.cookies.clear()
    text = client.get(url, headers={"cookie": f"bbsgm_session={cookie}"}).text
    client.cookies.clear()
    return text


def game_page_without_own_sealed(
    client: httpx.Client, database: Database, user: ApiUser, game_id: int
) -> str:
    """The game page up to the list of the user's own sealed commands (what they wrote, theirs
    to reread whether or not they still sit at the table)."""
    return page(client, database, user, f"/games/{game_id}").split('class="sealed-list"')[0]


def sealed_form(
    client: httpx.Client, database: Database, user: ApiUser, game: dict[str, Any], body: str
) -> httpx.Response:
    """The game page's sealed form, sent from ``user``'s browser with a valid CSRF token."""
    cookie = session_cookie(database, user.name)
    client.cookies.clear()
    reply = client.post(
        f"/games/{game['id']}/sealed",
        data={"body": body, "csrf_token": page_token(TEST_SECRET, NONCE)},
        headers={"cookie": f"bbsgm_csrf={NONCE}; bbsgm_session={cookie}"},
    )
    client.cookies.clear()
    return reply


def assert_sees_only_the_public_view(
    client: httpx.Client,
    database: Database,
    game: dict[str, Any],
    kicked: ApiUser,
    stranger: ApiUser,
    sealed_line: str,
) -> None:
    gid, tid = game["id"], game["thread_id"]
    view = kicked.get(f"/api/games/{gid}/view")
    assert view.status_code == 200
    assert view.json() == stranger.get(f"/api/games/{gid}/view").json()
    assert "seat" not in view.json()
    picture = kicked.get(f"/api/games/{gid}/board.svg", params={"as": "me"})
    assert picture.status_code == 403, picture.text[:300]
    assert "自分の視点はありません" in picture.json()["detail"]
    game_page = page(client, database, kicked, f"/games/{gid}")
    for marker in (OWN_SECTION, HAND_BLOCK, OWN_PICTURE, f'action="/games/{gid}/sealed"'):
        assert marker not in game_page, marker
    for url in (f"/games/{gid}/panel", f"/threads/{tid}"):
        text = page(client, database, kicked, url)
        assert OWN_PICTURE not in text and HAND_BLOCK not in text, url
    refused = kicked.post(f"/api/games/{gid}/sealed", {"body": sealed_line})
    assert refused.status_code == 403 and refused.json()["detail"] == OUTSIDER, refused.text
    form = sealed_form(client, database, kicked, game, sealed_line)
    assert form.status_code == 403 and OUTSIDER in form.text
    assert kicked.get(f"/api/games/{gid}/legal").json()["commands"] == []


def test_a_kicked_eleusis_child_no_longer_sees_their_hand(
    client: httpx.Client, database: Database
) -> None:
    gm, parent, child, c2, c3, stranger, newcomer = fast_users(database, 7, client, "kick")
    game = eleusis_game(gm, [parent, child, c2, c3], "追放")
    gid = game["id"]
    before = child.get(f"/api/games/{gid}/view").json()
    assert before["seat"] == 1 and before["hand"]  # the control: a child's own hand
    assert OWN_SECTION in page(client, database, child, f"/games/{gid}")
    assert child.get(f"/api/games/{gid}/board.svg", params={"as": "me"}).status_code == 200

    kicked = say(gm, game, f"KICK {child.name}")
    assert kicked["ok"], kicked
    assert_sees_only_the_public_view(client, database, game, child, stranger, "HINT x")
    assert parent.get(f"/api/games/{gid}/view").json()["seat"] == 0  # the others keep theirs

    replaced = say(gm, game, f"REPLACE {child.name} {newcomer.name}")
    assert replaced["ok"], replaced
    mine = newcomer.get(f"/api/games/{gid}/view").json()
    gm_view = gm.get(f"/api/games/{gid}/view").json()
    assert mine["seat"] == 1 and mine["hand"] == gm_view["players"][1]["hand"]
    assert newcomer.get(f"/api/games/{gid}/board.svg", params={"as": "me"}).status_code == 200
    own_page = page(client, database, newcomer, f"/games/{gid}")
    assert OWN_SECTION in own_page and HAND_BLOCK in own_page
    assert_sees_only_the_public_view(client, database, game, child, stranger, "HINT x")


def test_a_kicked_cardbattle_player_no_longer_sees_their_sealed_deck(
    client: httpx.Client, database: Database
) -> None:
    gm, first, second, stranger, newcomer = fast_users(database, 5, client, "kcb")
    made = gm.post("/api/games", {"kind": "cardbattle", "title": "追放", "options": {}})
    assert made.status_code == 201, made.text
    game = made.json()
    gid = game["id"]
    for user in (first, second):
        assert say(user, game, "JOIN")["ok"]
    assert say(gm, game, "START")["ok"]
    deck = "DECK 歩兵 見習い騎士 弓兵 MAGIC 火花"
    sealed = first.post(f"/api/games/{gid}/sealed", {"body": deck}).json()
    assert sealed["sealed"]["ok"], sealed
    before = first.get(f"/api/games/{gid}/view").json()
    assert "sealed_deck" in before["players"][0] and "magic" in before["players"][0]
    magic = re.compile("火花")
    assert magic.search(game_page_without_own_sealed(client, database, first, gid))

    kicked = say(gm, game, f"KICK {first.name}")
    assert kicked["ok"], kicked
    assert_sees_only_the_public_view(client, database, game, first, stranger, deck)
    view = first.get(f"/api/games/{gid}/view").json()
    assert all("sealed_deck" not in p and "magic" not in p for p in view["players"])
    assert not magic.search(game_page_without_own_sealed(client, database, first, gid))

    replaced = say(gm, game, f"REPLACE {first.name} {newcomer.name}")
    assert replaced["ok"], replaced
    mine = newcomer.get(f"/api/games/{gid}/view").json()
    assert mine["seat"] == 0 and "sealed_deck" in mine["players"][0]
    assert newcomer.get(f"/api/games/{gid}/board.svg", params={"as": "me"}).status_code == 200
    assert_sees_only_the_public_view(client, database, game, first, stranger, deck)
