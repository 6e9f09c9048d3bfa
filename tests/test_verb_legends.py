"""Issue #43: the game panel's buttons say what they do. ポピュラス showed 41 buttons such as
``AREA 1 F2`` with no word of what they meant: each verb's buttons are now headed by the verb's
one-line help, the same text its 遊び方 page gives (app/games/howtos.py ``verb_legends``)."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from app.db.engine import Database
from app.games import find_game
from app.games.base import Actor
from app.games.howtos import HOWTOS, verb_legends
from tests.conftest import LiveServer
from tests.support.fuzz_states import PLAYERS, script
from tests.support.load_support import fast_users, session_cookie, started_eitsuku

KINDS = sorted(HOWTOS)


@pytest.mark.parametrize("kind", KINDS)
def test_every_verb_a_legal_line_can_start_with_has_its_help(kind: str) -> None:
    """At every scripted stop of a whole game, for every seat and the GM, the first word of
    every legal line (posted or sealed) has a one-line help to head its buttons."""
    impl = find_game(kind)
    assert impl is not None
    legends = verb_legends(kind)
    played = script(kind, [f"p{i}" for i in range(PLAYERS[kind])])
    missing: set[str] = set()
    for stop in played.stops:
        if stop.state is None:
            continue
        actors: list[Actor] = [*range(PLAYERS[kind]), "gm"]
        for actor in actors:
            thread, sealed = impl.legal_split(stop.state, actor)
            for line in [*thread, *sealed]:
                if line.split(" ")[0] not in legends:
                    missing.add(line)
    assert not missing, sorted(missing)[:10]


def test_the_legends_are_the_howto_pages_help_in_players_words() -> None:
    """The help is the 遊び方 page's, short, with no maintainers' labels."""
    area = verb_legends("populous")["AREA"]
    assert area.startswith("エリア選択: ") and "(R" not in area and "（R" not in area
    assert verb_legends("eitsuku")["BOARD"].startswith("盤面をその場で見せます")
    assert verb_legends("nosuchkind") == {}


def test_the_game_panel_heads_each_verbs_buttons_with_what_it_does(
    live_server: LiveServer, database: Database
) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        gm, first, second = fast_users(database, 3, web, prefix="legend")
        game = started_eitsuku(gm, [first, second], "凡例")
        mover = next(
            user
            for user in (first, second)
            if user.get(f"/api/games/{game['id']}/legal").json()["commands"]
        )
        lines = mover.get(f"/api/games/{game['id']}/legal").json()["commands"]
        web.cookies.set("bbsgm_session", session_cookie(database, mover.name))
        page = web.get(f"/games/{game['id']}").text
    legal = page.split('<div class="legal">', 1)[1].split("</ul>", 1)[0]
    legends = verb_legends("eitsuku")
    items = re.findall(r"<li[^>]*>(.*?)</li>", legal, flags=re.S)
    heads = [html.unescape(re.sub(r"<[^>]+>", "", item)) for item in items if "<b>" in item]
    verbs = list(dict.fromkeys(line.split(" ")[0] for line in lines))
    # One heading a verb, in the order of its buttons, each before its verb's first button.
    assert heads == [f"{verb} {legends[verb]}" for verb in verbs], heads
    for verb in verbs:
        head = legal.index(f"<b>{verb}</b>")
        first = next(line for line in lines if line.split(" ")[0] == verb)
        first_button = legal.index(f'data-line="{html.escape(first)}"')
        assert head < first_button, verb
