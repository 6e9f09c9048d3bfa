"""A GM who plays reads as their seat (app/gm/legal.reads_as_gm, docs/security.md): the person
who makes a table with bots is its GM and sits at it; while the game runs, the bots' sealed
lines and hands are theirs no more than any player's — in the sealed list, the moves, the
log, the views and the pages. A GM who does not play still reads everything, and everyone
does once the game is over."""

from __future__ import annotations

import httpx
from sqlalchemy import select

from app.db.engine import Database
from app.db.models import SealedCommand
from tests.support.load_support import fast_users, session_cookie
from tests.test_bot_seats_http import SEALED_SHOWN, bot_game, draft_begun, say


def _bot_picks(database: Database, game_id: int) -> list[str]:
    """The bots' sealed PICKs, read straight from the database."""
    with database.read_session() as session:
        rows = session.execute(
            select(SealedCommand.body).where(
                SealedCommand.game_id == game_id, SealedCommand.author_name.like("ボット%")
            )
        )
        return [body for (body,) in rows]


def test_a_gm_who_holds_a_seat_reads_the_bots_sealed_lines_only_once_the_game_is_over(
    client: httpx.Client, database: Database
) -> None:
    (gm,) = fast_users(database, 1, client, "seatgm")
    game = bot_game(gm, "populous", 2)
    gid, tid = game["id"], game["thread_id"]
    draft_begun(gm, gm, game)
    picks = _bot_picks(database, gid)
    assert len(picks) == 2 and all(p.startswith("PICK ") for p in picks), picks
    answers = {
        "sealed": gm.get(f"/api/games/{gid}/sealed").text,
        "moves": gm.get(f"/api/games/{gid}/moves").text,
        "log": gm.get(f"/api/games/{gid}/log").text,
        "view": gm.get(f"/api/games/{gid}/view").text,
        "thread": gm.get(f"/api/threads/{tid}", params={"limit": 1000}).text,
    }
    for where, text in answers.items():
        assert not any(pick in text for pick in picks), where
    page = httpx.get(
        f"{client.base_url}/games/{gid}",
        cookies={"bbsgm_session": session_cookie(database, gm.name)},
    ).text
    assert "あなたの手元" in page and "GM の視点" not in page
    bot_moves = [m for m in gm.get(f"/api/games/{gid}/moves").json() if m["actor"] != gm.name]
    assert SEALED_SHOWN in {m["command"] for m in bot_moves}
    assert say(gm, tid, "ABORT")["replies"][0]["ok"]
    over = gm.get(f"/api/games/{gid}/sealed").text
    assert all(pick in over for pick in picks)


def test_a_gm_who_does_not_play_reads_the_bots_sealed_lines_while_the_game_runs(
    client: httpx.Client, database: Database
) -> None:
    gm, player = fast_users(database, 2, client, "watchgm")
    game = bot_game(gm, "populous", 2)
    gid = game["id"]
    draft_begun(gm, player, game)
    picks = _bot_picks(database, gid)
    assert len(picks) == 2
    sealed = gm.get(f"/api/games/{gid}/sealed").text
    assert all(pick in sealed for pick in picks)


def test_the_gms_tools_are_shown_apart_from_the_moves_so_abort_is_not_one_tap_from_a_move(
    client: httpx.Client, database: Database
) -> None:
    """The walk of a first evening: PAUSE, UNDO and ABORT sat among the move buttons. The
    game page lists them in a block of their own (GM の操作), never in 今できる命令."""
    (gm,) = fast_users(database, 1, client, "toolgm")
    game = bot_game(gm, "eitsuku", 2)
    joined = say(gm, game["thread_id"], "JOIN")
    assert joined["replies"][0]["ok"]
    assert say(gm, game["thread_id"], "START")["replies"][0]["ok"]
    page = httpx.get(
        f"{client.base_url}/games/{game['id']}",
        cookies={"bbsgm_session": session_cookie(database, gm.name)},
    ).text
    blocks = {
        head: page.split(f'<div class="{head}">', 1)[1].split("</div>", 1)[0]
        for head in ("legal", "legal legal-gm")
        if f'<div class="{head}">' in page
    }
    tools = blocks["legal legal-gm"]
    assert all(f'data-line="{tool}"' in tools for tool in ("PAUSE", "UNDO", "ABORT")), tools
    assert "legal" in blocks, "the seated GM has moves to make"
    assert not any(f'data-line="{tool}"' in blocks["legal"] for tool in ("PAUSE", "UNDO", "ABORT"))
