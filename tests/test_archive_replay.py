"""The replay (docs/archive.md, "Replay"): the frame after move N is the state after N moves,
seen as everything / the public / one player, beside the post that made the move."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.archive import frames
from app.db.models import Move, Post, SealedCommand
from app.errors import Forbidden, Invalid
from app.gm import platform, replay
from app.gm import service as gm
from tests.test_archive_helpers import Played, new_table, play, post


@pytest.fixture
def finished(session: Session) -> Played:
    return play(session)


def test_every_frame_is_the_state_after_that_many_moves(session: Session, finished: Played) -> None:
    game = finished.game
    impl = gm.game_impl(game.kind)
    total = max(finished.states)
    assert sorted(finished.states) == list(range(total + 1))
    for n, state in finished.states.items():
        assert replay.replay(session, game, upto=n) == state
        shown = frames.frame(session, game, None, n, "all")
        assert (shown.at, shown.total) == (n, total)
        assert shown.view == impl.view(state, "gm"), n
    last = frames.frame(session, game, None, None, None)
    assert last.at == total and last.viewer == "all"
    assert last.view == impl.view(game.state or {}, "gm")


def test_after_the_end_any_players_view_can_be_chosen(session: Session, finished: Played) -> None:
    game = finished.game
    impl = gm.game_impl(game.kind)
    n = max(finished.states) // 2
    shown = frames.frame(session, game, None, n, "public")
    assert shown.view == impl.view(finished.states[n], None)
    keys = [key for key, _label in shown.viewpoints]
    assert keys == ["all", "public", "1", "2"]
    for seat in (1, 2):
        seen = frames.frame(session, game, None, n, str(seat))
        assert seen.view == impl.view(finished.states[n], seat - 1)
    with pytest.raises(Invalid):
        frames.frame(session, game, None, n, "3")


def test_the_frame_shows_the_post_that_made_the_move(session: Session, finished: Played) -> None:
    game = finished.game
    moves = list(session.scalars(select(Move).where(Move.game_id == game.id).order_by(Move.seq)))
    for n in (1, len(moves) // 2, len(moves)):
        made = moves[n - 1]
        shown = frames.frame(session, game, None, n, None)
        assert shown.move is not None and shown.move.text == made.command
        assert shown.post is not None and shown.post.id == made.post_id
        assert f'<mark class="replay-line">{made.command}' in str(shown.post_html)
    start = frames.frame(session, game, None, 0, None)
    assert start.move is None and start.post is None


def test_an_as_line_is_highlighted_as_the_players_move(session: Session) -> None:
    played = play(session, stop_after=1)
    game = played.game
    name = played.players[1].name
    line = next(x for x in gm.legal_lines(game, played.players[1]))
    post(session, game, played.master, f"代理の一手です\nAS {name} {line}")
    shown = frames.frame(session, game, None, None, None)
    body = str(shown.post_html)
    assert body.startswith("代理の一手です<br>") and '<mark class="replay-line">AS ' in body


def test_a_running_game_replays_only_public_views(session: Session) -> None:
    played = play(session, stop_after=4)
    game = played.game
    shown = frames.frame(session, game, None, 2, None)
    assert shown.viewer == "public" and shown.viewpoints == [("public", "公開情報")]
    assert shown.view == gm.game_impl(game.kind).view(played.states[2], None)
    with pytest.raises(Forbidden):
        frames.frame(session, game, None, 2, "all")
    with pytest.raises(Forbidden):
        frames.frame(session, game, None, 2, "1")


@pytest.mark.parametrize("at", [-1, 5, 10**9])
def test_moves_out_of_range_are_invalid(session: Session, at: int) -> None:
    played = play(session, stop_after=4)
    with pytest.raises(Invalid):
        frames.frame(session, played.game, None, at, None)


def test_undone_moves_are_not_frames(session: Session) -> None:
    played = play(session, stop_after=3)
    game = played.game
    before = frames.frame(session, game, None, None, None)
    post(session, game, played.master, "UNDO")
    after = frames.frame(session, game, None, None, None)
    impl = gm.game_impl(game.kind)
    kept = before.total - 1
    # After an UNDO that gave a deck back a card the thread saw drawn, the bot shuffles it: its
    # own recorded move (docs/gm.md, UNDO), a frame like any other.
    shuffles = [m for m in replay.applied_moves(session, game) if platform.made_after_undo(m)]
    assert after.total == kept + len(shuffles)
    assert after.view == frames.frame(session, game, None, after.total, None).view
    assert after.view == impl.view(game.state, None)
    assert frames.frame(session, game, None, kept, None).view == impl.view(
        played.states[kept], None
    )


def test_a_game_that_never_started_has_no_frames(session: Session) -> None:
    table = new_table(session)
    shown = frames.frame(session, table.game, None, None, None)
    assert (shown.total, shown.view, shown.started) == (0, None, False)
    posts = session.scalars(select(Post).where(Post.thread_id == table.game.thread_id)).all()
    assert posts  # the thread is there; only the replay is empty


def test_sealed_moves_stay_hidden_while_the_game_runs(session: Session) -> None:
    """The move list shows a sealed move as （封印） to everyone but its author and the GM
    until the end. (えいつく has no sealed commands, so the move is marked by hand; the frame
    at 0 does not need to replay it.)"""
    played = play(session, stop_after=3)
    game = played.game
    author = played.players[0]
    first = session.scalars(select(Move).where(Move.game_id == game.id, Move.seq == 1)).one()
    row = SealedCommand(
        game_id=game.id, user_id=author.id, author_name=author.name, body=first.command, ok=True
    )
    session.add(row)
    session.flush()
    first.sealed_id, first.sealed = row.id, True
    session.flush()
    assert frames.frame(session, game, None, 0, None).rows[0].text == "（封印）"
    assert frames.frame(session, game, played.players[1], 0, None).rows[0].text == "（封印）"
    assert frames.frame(session, game, author, 0, None).rows[0].text == first.command
    assert frames.frame(session, game, played.master, 0, None).rows[0].text == first.command
    post(session, game, played.master, "ABORT")
    assert frames.frame(session, game, None, 0, None).rows[0].text == first.command
