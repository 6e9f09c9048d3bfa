"""The board as a picture over HTTP (issue: the game kit, "Pictures"): `board.svg` for every
kind and every replay step, the viewer's own picture, the picture beside the bot's board
summary in the thread; and `/legal`'s split between the thread and the sealed endpoint."""

from __future__ import annotations

import re
from typing import Any
from xml.etree import ElementTree

import httpx
import pytest

from app.games import GAMES
from tests.conftest import ApiUser, api_user
from tests.support.load_support import started_eitsuku
from tests.test_authz_matrix import eleusis_game

SVG = "{http://www.w3.org/2000/svg}"
CARD = re.compile(r"<title>([♠♥♦♣](?:10|[2-9AJQK]))</title>")


def end_week(seat: ApiUser, game: dict[str, Any]) -> None:
    """The seat's CHOOSE lines first when a starting die showed 6, then END."""
    for _ in range(6):
        lines = seat.get(f"/api/games/{game['id']}/legal").json()["commands"]
        line = "END" if "END" in lines and not lines[0].startswith("CHOOSE") else lines[0]
        reply = seat.post(f"/api/threads/{game['thread_id']}/posts", {"body": line}).json()
        assert reply["replies"][0]["ok"], reply
        if line == "END":
            return
    pytest.fail("END never became legal")


def started_game(master: ApiUser, seats: list[ApiUser], kind: str) -> dict[str, Any]:
    """A game of ``kind`` (default options) that every seat joined and the GM started."""
    made = master.post("/api/games", {"kind": kind, "title": "絵の卓", "options": {}})
    assert made.status_code == 201, made.text
    game: dict[str, Any] = made.json()
    for seat in seats:
        joined = seat.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"}).json()
        assert joined["replies"][0]["ok"], joined
    started = master.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"}).json()
    assert started["replies"][0]["ok"], started
    return game


def play_legal_lines(game: dict[str, Any], seats: list[ApiUser], moves: int) -> int:
    """Up to ``moves`` moves: in turn, each seat that may move plays the first line `/legal`
    offers it, in the thread or sealed as offered; the number played."""
    played = 0
    while played < moves:
        before = played
        for seat in seats:
            legal = seat.get(f"/api/games/{game['id']}/legal").json()
            if legal["commands"]:
                posted = {"body": legal["commands"][0]}
                reply = seat.post(f"/api/threads/{game['thread_id']}/posts", posted).json()
                assert reply["replies"][0]["ok"], reply
            elif legal["sealed"]:
                posted = {"body": legal["sealed"][0]}
                reply = seat.post(f"/api/games/{game['id']}/sealed", posted).json()
                assert reply["sealed"]["ok"], reply
            else:
                continue
            played += 1
            if played == moves:
                break
        if played == before:
            break
    return played


def parse_svg(reply: httpx.Response) -> ElementTree.Element:
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"].startswith("image/svg+xml")
    assert "sandbox" in reply.headers["content-security-policy"]
    root = ElementTree.fromstring(reply.text)
    assert root.tag == f"{SVG}svg" and root.get("viewBox")
    return root


def hand_cards(picture: str) -> list[str]:
    """The cards drawn after the picture's hand heading (app/games/eleusis/svg.py)."""
    if "あなたの手札" not in picture:
        return []
    return CARD.findall(picture[picture.index("あなたの手札") :])


def test_board_svg_for_a_recruiting_game_lists_the_seats(client: httpx.Client) -> None:
    master, player = api_user(client), api_user(client)
    title = '<script>alert("卓")</script>&'
    game = master.post("/api/games", {"kind": "eitsuku", "title": title, "options": {}}).json()
    player.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
    reply = client.get(f"/api/games/{game['id']}/board.svg")
    root = parse_svg(reply)
    texts = ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]
    assert title in "".join(texts) and f"1. {player.name}" in texts
    assert "<script" not in reply.text
    assert client.get(f"/api/games/{game['id']}/board.svg", params={"at": 1}).status_code == 422


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_board_svg_every_kind_now_and_at_every_step(client: httpx.Client, kind: str) -> None:
    master = api_user(client)
    seats = [api_user(client) for _ in range(GAMES[kind].min_players)]
    if kind == "eleusis":  # the parent's secret rule is free text, which /legal never offers
        game = eleusis_game(master, seats, "絵の卓")
    else:
        game = started_game(master, seats, kind)
    assert play_legal_lines(game, seats, 4) == 4
    gid = game["id"]
    moves = len(client.get(f"/api/games/{gid}/moves").json())
    assert moves >= 4
    now = client.get(f"/api/games/{gid}/board.svg")
    parse_svg(now)
    pictures = [
        client.get(f"/api/games/{gid}/board.svg", params={"at": at}) for at in range(moves + 1)
    ]
    for picture in pictures:
        parse_svg(picture)
    assert pictures[-1].text == now.text  # at = every move is now
    assert client.get(f"/api/games/{gid}/board.svg", params={"at": moves + 1}).status_code == 422
    again = client.get(
        f"/api/games/{gid}/board.svg", headers={"if-none-match": now.headers["etag"]}
    )
    assert again.status_code == 304


def test_own_picture_shows_the_viewers_hand_and_the_public_one_none(client: httpx.Client) -> None:
    master = api_user(client)
    parent, child, *others = [api_user(client) for _ in range(4)]
    game = eleusis_game(master, [parent, child, *others], "手札の卓")
    gid = game["id"]
    hand = sorted(child.get(f"/api/games/{gid}/view").json()["hand"])
    own = child.get(f"/api/games/{gid}/board.svg", params={"as": "me"})
    parse_svg(own)
    assert sorted(hand_cards(own.text)) == hand
    public = client.get(f"/api/games/{gid}/board.svg")
    assert hand_cards(public.text) == [] and "あなたの手札" not in public.text
    # Another child's own picture holds their hand, not this one's.
    theirs = others[0].get(f"/api/games/{gid}/board.svg", params={"as": "me"}).text
    assert sorted(hand_cards(theirs)) != hand
    assert client.get(f"/api/games/{gid}/board.svg", params={"as": "me"}).status_code == 401
    stranger = api_user(client)
    assert stranger.get(f"/api/games/{gid}/board.svg", params={"as": "me"}).status_code == 403
    assert client.get(f"/api/games/{gid}/board.svg", params={"as": "you"}).status_code == 422


def test_a_bot_reply_showing_the_board_carries_its_picture(client: httpx.Client) -> None:
    """The reply that shows the board summary says after how many moves, and the thread page
    shows that picture beside it."""
    master = api_user(client)
    seats = [api_user(client) for _ in range(2)]
    game = started_eitsuku(master, seats, "絵のあるスレ")
    for seat in seats:
        end_week(seat, game)
    moves = len(client.get(f"/api/games/{game['id']}/moves").json())
    page = client.get(f"/threads/{game['thread_id']}").text
    shown = [int(at) for at in re.findall(r"board\.svg\?at=(\d+)", page)]
    assert shown and shown[0] == 0  # START's reply: the dealt board
    assert shown[-1] == moves  # the week ended with the last END: the board after it
    assert shown == sorted(shown)
    for at in set(shown):
        parse_svg(client.get(f"/api/games/{game['id']}/board.svg", params={"at": at}))


def test_the_game_page_shows_the_picture_and_sealed_buttons_apart(client: httpx.Client) -> None:
    master = api_user(client)
    seats = [api_user(client) for _ in range(4)]
    game = eleusis_game(master, seats, "封印のボタン", seal_rule=False)
    gid = game["id"]
    page = client.get(f"/games/{gid}").text
    assert f"/api/games/{gid}/board.svg?v=" in page
    legal = seats[0].get(f"/api/games/{gid}/legal").json()
    # The parent's rule is free text sent sealed: offered neither for the thread nor as a
    # sealed line (API.md), and the thread gets no RULE line that posting would refuse.
    assert legal == {"commands": [], "sealed": []}


def prophet_judging(client: httpx.Client) -> tuple[dict[str, Any], list[ApiUser]]:
    """An eleusis game where a prophet must judge a play in secret."""
    master = api_user(client)
    seats = [api_user(client) for _ in range(4)]
    game = eleusis_game(master, seats, "預言の卓")
    gid, tid = game["id"], game["thread_id"]
    for _ in range(30):
        view = master.get(f"/api/games/{gid}/view").json()
        turn = view["turn_seat"]
        if view["phase"] == "judge":
            return game, seats
        prophet = next(
            (s for s in seats if "PROPHET" in s.get(f"/api/games/{gid}/legal").json()["commands"]),
            None,
        )
        if prophet is not None:
            prophet.post(f"/api/threads/{tid}/posts", {"body": "PROPHET"})
            continue
        lines = seats[turn].get(f"/api/games/{gid}/legal").json()["commands"]
        play = next(line for line in lines if line.startswith("PLAY"))
        seats[turn].post(f"/api/threads/{tid}/posts", {"body": play})
    pytest.fail("no prophet judgment reached")


def test_secret_judgments_are_offered_as_sealed_lines_only(client: httpx.Client) -> None:
    game, seats = prophet_judging(client)
    gid = game["id"]
    view = seats[0].get(f"/api/games/{gid}/view").json()
    assert view["phase"] == "judge" and view["pending"]["secret"]
    judge = next(s for s in seats if seats.index(s) in view["waiting_seats"])
    legal = judge.get(f"/api/games/{gid}/legal").json()
    assert legal["sealed"] and all(line.startswith("JUDGE") for line in legal["sealed"])
    assert not any(line.startswith("JUDGE") for line in legal["commands"])
    answered = judge.post(f"/api/games/{gid}/sealed", {"body": legal["sealed"][0]}).json()
    assert answered["sealed"]["ok"], answered


def test_a_refusal_in_the_thread_names_no_card_of_the_hand(client: httpx.Client) -> None:
    """A misspelt verb from the child on turn is answered with the lines legal now — in the
    thread, so without the PLAY lines that list the child's hand."""
    master = api_user(client)
    seats = [api_user(client) for _ in range(4)]
    game = eleusis_game(master, seats, "綴りの卓")
    gid, tid = game["id"], game["thread_id"]
    turn = master.get(f"/api/games/{gid}/view").json()["turn_seat"]
    child = seats[turn]
    hand = child.get(f"/api/games/{gid}/view").json()["hand"]
    reply = child.post(f"/api/threads/{tid}/posts", {"body": "PLAYY ○ ♠7"}).json()["replies"][0]
    assert not reply["ok"] and "もしかして" in reply["body"]
    line_cards = set(re.findall(r"[♠♥♦♣](?:10|[2-9AJQK])", reply["body"])) - {"♠7"}
    assert not line_cards & set(hand), reply["body"]
    offered = reply["body"].split("今できる命令:")[1] if "今できる命令:" in reply["body"] else ""
    assert "PLAY" not in offered


def test_feeds_link_the_picture_of_a_reply_that_shows_the_board(client: httpx.Client) -> None:
    master = api_user(client)
    seats = [api_user(client) for _ in range(2)]
    game = started_eitsuku(master, seats, "フィードの絵")
    feed = client.get(f"/threads/{game['thread_id']}/feed.atom").text
    assert "盤面の図: " in feed and f"/api/games/{game['id']}/board.svg?at=0" in feed
