"""えいつく: the GM UNDOes a SCOUT from a closed role deck. The scouted card goes back on top
of its deck (the state is rebuilt from the kept moves and the seed), so whoever can name it
would know the next card of that deck. Neither the GM's UNDO reply nor any public surface made
or changed by the UNDO — the thread (API, page, Atom feed, 2ch-style dat), the game's public
view, page, picture, moves, replay and its progress log — may name that card.

The undone SCOUT's own reply said what was drawn before anyone knew it would be undone; it
stays in the thread (posts are never rewritten), marked 取り消し済み. So the bot shuffles the
deck right after the UNDO, as a recorded move (docs/gm.md, UNDO; Game.undo_lines): what the
reply named is no longer the deck's next card (test_the_undone_scout_reply_names_the_top).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from app.db.engine import Database
from app.db.models import Game
from app.gm import replay
from tests.conftest import ApiUser, LiveServer
from tests.support.load_support import fast_users, started_eitsuku

SCOUTED = re.compile(r"(\S+)の山から (\S+) をスカウトしました")


@dataclass
class Undone:
    game: dict[str, Any]
    gm: ApiUser
    deck: str
    card: str
    sentence: str  # the undone SCOUT reply's sentence naming the card
    scout_reply: str
    undo_reply: str
    before: dict[str, str]  # each public surface just before the SCOUT
    after: dict[str, str]  # and just after the UNDO
    view_before: dict[str, Any]
    view_after: dict[str, Any]
    top: str  # the deck's top card after the UNDO, read from the database
    deck_before: list[str]  # the deck's order just before the SCOUT (the end is the top)
    deck_after: list[str]  # and just after the UNDO


def surfaces(web: httpx.Client, game: dict[str, Any]) -> dict[str, str]:
    """Every public answer about the game and its thread, for an anonymous reader."""
    gid, tid = game["id"], game["thread_id"]
    urls = [
        f"/api/games/{gid}",
        f"/api/games/{gid}/moves",
        f"/api/games/{gid}/log",
        f"/api/games/{gid}/board.svg",
        f"/api/threads/{tid}?limit=1000",
        f"/games/{gid}",
        f"/games/{gid}/log",
        f"/games/{gid}/replay",
        f"/games/{gid}/panel",
        f"/threads/{tid}",
        f"/threads/{tid}/feed.atom",
        f"/eitsuku/dat/{tid}.dat",
    ]
    found: dict[str, str] = {}
    for url in urls:
        reply = web.get(url)
        assert reply.status_code == 200, (url, reply.status_code)
        text = reply.text
        if "json" in reply.headers.get("content-type", ""):
            text = json.dumps(reply.json(), ensure_ascii=False)  # no \\u escapes of names
        found[url] = text
    return found


@pytest.fixture(scope="module")
def undone(live_server: LiveServer, database: Database) -> Iterator[Undone]:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        gm, player, other = fast_users(database, 3, web, prefix="uscout")
        # Role cards come 2–3 of a kind, and the UNDO reply's board shows every stock: a SCOUT
        # of a card someone already holds (a twin) would be named there rightly. So the SCOUT
        # is of a deck whose top no public surface names yet (another game if there is none).
        scout = None
        for _ in range(20):
            game = started_eitsuku(gm, [player, other], "取り消し")
            posts = f"/api/threads/{game['thread_id']}/posts"
            for _ in range(8):  # the set-up dice may have left cards to CHOOSE first
                legal: list[str] = player.get(f"/api/games/{game['id']}/legal").json()["commands"]
                choose = [line for line in legal if line.startswith("CHOOSE")]
                if not choose:
                    break
                assert player.post(posts, {"body": choose[0]}).json()["replies"][0]["ok"]
            before = surfaces(web, game)
            view_before = web.get(f"/api/games/{game['id']}").json()["view"]
            with database.session() as session:
                row = session.get(Game, game["id"])
                assert row is not None and row.state is not None
                decks_before = {deck: list(cards) for deck, cards in row.state["decks"].items()}
            named = "\n".join(before.values())
            scout = next(
                (
                    line
                    for line in legal
                    if line.startswith("SCOUT") and decks_before[line.split()[1]][-1] not in named
                ),
                None,
            )
            if scout is not None:
                break
        assert scout is not None, "every deck's top was already named in 20 games"
        scouted = player.post(posts, {"body": scout}).json()["replies"][0]
        assert scouted["ok"], scouted
        drawn = SCOUTED.search(scouted["body"])
        assert drawn is not None, scouted["body"]
        undo = gm.post(posts, {"body": "UNDO"}).json()["replies"][0]
        assert undo["ok"] and "取り消しました" in undo["body"], undo
        after = surfaces(web, game)
        view_after = web.get(f"/api/games/{game['id']}").json()["view"]
        with database.session() as session:
            row = session.get(Game, game["id"])
            assert row is not None and row.state is not None
            deck_after = list(row.state["decks"][drawn.group(1)])
            top = deck_after[-1]  # the end of the list is the top
            assert replay.replay(session, row) == row.state  # the shuffle replays from the log
        yield Undone(
            game=game,
            gm=gm,
            deck=drawn.group(1),
            card=drawn.group(2),
            sentence=drawn.group(0),
            scout_reply=scouted["body"],
            undo_reply=undo["body"],
            before=before,
            after=after,
            view_before=view_before,
            view_after=view_after,
            top=top,
            deck_before=decks_before[drawn.group(1)],
            deck_after=deck_after,
        )


def test_the_scouted_card_goes_back_into_its_deck(undone: Undone) -> None:
    """What the tests below guard: the UNDO put the scouted card back, on top of its deck (it
    was the top before the SCOUT), before the bot shuffled that deck."""
    assert undone.deck_before[-1] == undone.card
    assert sorted(undone.deck_after) == sorted(undone.deck_before)
    assert undone.view_after == undone.view_before  # the public view is the one before SCOUT


def test_the_undo_reply_does_not_name_the_card(undone: Undone) -> None:
    assert undone.card not in undone.undo_reply, undone.undo_reply


def test_no_public_surface_names_the_card_but_the_undone_scout_reply(undone: Undone) -> None:
    """Every public surface names the card as often as before the SCOUT (the card was in the
    deck then: nowhere), once the undone reply's own sentence is left out."""
    tid = undone.game["thread_id"]
    for url in (f"/threads/{tid}", f"/threads/{tid}/feed.atom", f"/eitsuku/dat/{tid}.dat"):
        assert undone.sentence in undone.after[url], url  # what is left out is really there
    problems = []
    for url, text in undone.after.items():
        mentions = text.replace(undone.sentence, "").count(undone.card)
        if mentions != undone.before[url].count(undone.card):
            at = text.replace(undone.sentence, "").find(undone.card)
            problems.append(f"{url}: {mentions}× …{text[max(0, at - 120) : at + 40]}…")
    assert not problems, "\n".join(problems)


def test_the_undone_scout_reply_names_the_top(undone: Undone) -> None:
    """The thread as a reader has it after the UNDO must not tell the deck's next card: the
    undone reply named the top of the order before the SCOUT, and the bot shuffled the deck
    after the UNDO, saying so without naming a card. (The shuffle may still put a card of
    that name on top, by chance and not by what anyone read: role cards come 2–3 of a kind,
    so the test compares the order, not the top's name.)"""
    thread = undone.after[f"/api/threads/{undone.game['thread_id']}?limit=1000"]
    deck = undone.deck
    shuffled = f"SHUFFLE {deck}（ボット: UNDO の後始末） → GM が{deck}の山を切り直しました。"
    assert shuffled in undone.undo_reply and shuffled in thread, undone.undo_reply
    assert undone.deck_after != undone.deck_before  # 1 in 10⁵ or less to be equal by chance
    assert f"SHUFFLE {undone.deck}" in undone.after[f"/api/games/{undone.game['id']}/moves"]
