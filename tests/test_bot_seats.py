"""Bots in seats, through the game master's services (issue #39, docs/bots.md): BOT / ボット [N]
(GM only, while recruiting, never beyond the seats the kind has), the names the site gives,
``bots`` at creation, KICK and REPLACE of a bot, a bot's turn played as soon as the game waits
for it — as a post of the bot's seat answered by the GM, its sealed lines sealed — and the
ratings, which leave games with bots out unless the GM chose otherwise."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.archive import records
from app.archive.importer import import_game
from app.db.models import Game, GamePlayer, Move, Post, RatedGame, Rating, SealedCommand, User
from app.errors import Invalid
from app.games import find_game
from app.gm import deadlines, lobby
from app.gm import service as gm
from app.gm.reply import BOT_NAME
from tests.test_archive_helpers import SECRET, make_user

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
NOT_MOVES = {"PAUSE", "RESUME", "UNDO", "ABORT", "BOT", "START", "LEAVE", "JOIN"}


def say(session: Session, game: Game, user: User, body: str) -> Post:
    _, replies = gm.submit_post(session, game.thread_id, user, body, SECRET, now=T0)
    assert replies, body
    return replies[0]


def seats(game: Game) -> list[tuple[str, bool, int | None]]:
    return [(p.name, p.bot, p.user_id) for p in sorted(game.players, key=lambda p: p.seat)]


def new_game(session: Session, kind: str = "idolwp", **kw: object) -> tuple[Game, User]:
    master = make_user(session, "gm")
    options = kw.pop("options", {})
    game = gm.create_game(session, master, kind, "ボット卓", options, SECRET, **kw)  # type: ignore[arg-type]
    return game, master


def posts_of(session: Session, game: Game) -> list[Post]:
    return list(
        session.scalars(select(Post).where(Post.thread_id == game.thread_id).order_by(Post.number))
    )


def play_out(session: Session, game: Game, people: list[User], seed: int = 1) -> None:
    """The people's moves, drawn from their legal lines, until the game is over; whenever one
    of them is asked, the game never waits on a bot alone."""
    draw = random.Random(seed)
    for _ in range(800):
        session.refresh(game)
        if game.status != "active":
            return
        impl = find_game(game.kind)
        assert impl is not None and game.state is not None
        waiting = impl.waiting_for(game.state)
        assert any(not game.players[s].bot for s in waiting), "the game waits on a bot"
        for person in people:
            thread, sealed = gm.legal_split(game, person)
            thread = [line for line in thread if line not in NOT_MOVES]
            if thread or sealed:
                break
        if thread and (not sealed or draw.random() < 0.5):
            assert say(session, game, person, draw.choice(thread)).reply_ok
        else:
            row, _ = gm.submit_sealed(session, game.id, person, draw.choice(sealed), SECRET, T0)
            assert row.ok, row.reply
    raise AssertionError("the game did not end")


# --- BOT / ボット ------------------------------------------------------------------------------


def test_bot_takes_the_next_seat_and_the_site_names_it(session: Session) -> None:
    game, master = new_game(session)
    player = make_user(session, "p")
    assert say(session, game, player, "JOIN").reply_ok
    reply = say(session, game, master, "BOT")
    assert reply.reply_ok, reply.body
    assert "ボット1" in reply.body
    assert say(session, game, master, "ボット 2").reply_ok
    assert seats(game) == [
        (player.name, False, player.id),
        ("ボット1", True, None),
        ("ボット2", True, None),
        ("ボット3", True, None),
    ]


def test_bot_names_stay_unique_in_the_game(session: Session) -> None:
    game, master = new_game(session, bots=2)
    assert [name for name, _bot, _user in seats(game)] == ["ボット1", "ボット2"]
    assert say(session, game, master, "KICK ボット1").reply_ok
    assert say(session, game, master, "BOT 2").reply_ok
    names = [name for name, _bot, _user in seats(game)]
    assert sorted(names) == ["ボット1", "ボット2", "ボット3"]


def test_bot_is_the_gms_command_only(session: Session) -> None:
    game, _master = new_game(session)
    player = make_user(session, "p")
    say(session, game, player, "JOIN")
    refused = say(session, game, player, "BOT")
    assert not refused.reply_ok and "BOT は GM だけが使える命令です。" in refused.body
    assert seats(game) == [(player.name, False, player.id)]


def test_bot_only_while_recruiting(session: Session) -> None:
    game, master = new_game(session, bots=1)
    player = make_user(session, "p")
    say(session, game, player, "JOIN")
    assert say(session, game, master, "START").reply_ok
    refused = say(session, game, master, "BOT")
    assert not refused.reply_ok and "募集中だけ" in refused.body
    assert len(game.players) == 2


def test_bot_refused_when_the_seats_are_full_or_the_number_is_out_of_range(
    session: Session,
) -> None:
    game, master = new_game(session, "cardbattle")  # two seats
    for line in ("BOT 3", "BOT 0", "BOT 99999"):
        refused = say(session, game, master, line)
        assert not refused.reply_ok and "ボットは1〜2体で指定してください" in refused.body, line
    assert game.players == []
    assert say(session, game, master, "BOT 2").reply_ok
    full = say(session, game, master, "BOT")
    assert not full.reply_ok and "満員です（2人まで）。" in full.body
    assert len(game.players) == 2


def test_bots_at_creation_are_bounded_by_the_kinds_seats(session: Session) -> None:
    master = make_user(session, "gm")
    for bad in (-1, 3):
        with pytest.raises(Invalid, match="ボットの数は0〜2で指定してください。"):
            gm.create_game(session, master, "cardbattle", "卓", {}, SECRET, bots=bad)
    game = gm.create_game(session, master, "cardbattle", "卓", {}, SECRET, bots=2)
    assert seats(game) == [("ボット1", True, None), ("ボット2", True, None)]
    assert "ボット1、ボット2" in posts_of(session, game)[0].body


def test_a_person_may_not_join_under_a_bots_name(session: Session) -> None:
    game, _master = new_game(session, bots=1)
    twin = make_user(session, "p")
    twin.name = "ボット1"
    session.flush()
    refused = say(session, game, twin, "JOIN")
    assert not refused.reply_ok and "という名前の席がもうあります" in refused.body
    assert len(game.players) == 1


# --- KICK / REPLACE ----------------------------------------------------------------------------


def test_kick_removes_a_bot_while_recruiting(session: Session) -> None:
    game, master = new_game(session, bots=2)
    assert say(session, game, master, "KICK ボット1").reply_ok
    assert seats(game) == [("ボット2", True, None)]


def test_replace_gives_a_bots_seat_to_a_person(session: Session) -> None:
    game, master = new_game(session, bots=2)
    person = make_user(session, "p")
    assert say(session, game, master, f"REPLACE ボット2 {person.name}").reply_ok
    assert seats(game) == [("ボット1", True, None), (person.name, False, person.id)]


def test_a_kicked_bot_is_played_as_a_kicked_seat_until_a_person_takes_it(
    session: Session,
) -> None:
    game, master = new_game(session, bots=1)
    player, newcomer = make_user(session, "p"), make_user(session, "n")
    say(session, game, player, "JOIN")
    assert say(session, game, master, "START").reply_ok
    assert say(session, game, master, "KICK ボット1").reply_ok
    kicked = next(p for p in game.players if p.name == "ボット1")
    assert kicked.kicked and kicked.bot  # still a seat a bot was given (ratings)
    since, last_post = game.last_seq, posts_of(session, game)[-1].number
    play_a_little(session, game, player, steps=6)
    query = select(Move).where(Move.game_id == game.id, Move.actor_seat == 0, Move.seq > since)
    moves = list(session.scalars(query))
    assert moves and all(m.by_bot for m in moves)  # the kicked seat's play, in the GM's answers
    later = [p for p in posts_of(session, game) if p.number > last_post]
    assert later and not any(p.author_name == "ボット1" for p in later)
    assert say(session, game, master, f"REPLACE ボット1 {newcomer.name}").reply_ok
    assert seats(game)[0] == (newcomer.name, False, newcomer.id)
    assert gm.seat_of(game, newcomer) == 0


def play_a_little(session: Session, game: Game, person: User, steps: int) -> None:
    draw = random.Random(5)
    for _ in range(steps):
        thread, _sealed = gm.legal_split(game, person)
        thread = [line for line in thread if line not in NOT_MOVES]
        if not thread:
            return
        assert say(session, game, person, draw.choice(thread)).reply_ok


# --- playing -----------------------------------------------------------------------------------


def test_a_bot_plays_its_turn_as_a_post_of_its_seat_answered_by_the_gm(
    session: Session,
) -> None:
    game, master = new_game(session, bots=2)
    person = make_user(session, "p")
    say(session, game, person, "JOIN")
    start = say(session, game, master, "START")
    impl = find_game(game.kind)
    assert impl is not None and game.state is not None
    assert start.reply_ok
    play_a_little(session, game, person, steps=4)
    posts = posts_of(session, game)
    by_number = {p.number: p for p in posts}
    mine = [p for p in posts if p.author_name in ("ボット1", "ボット2")]
    assert mine, "the bots moved"
    for post in mine:
        assert post.author_id is None and post.kind == "command"
        answer = by_number[post.number + 1]
        assert answer.author_name == BOT_NAME and answer.reply_to == post.number
        assert answer.reply_ok
    rows = session.scalars(select(Move).where(Move.game_id == game.id)).all()
    for post in mine:
        made = [m for m in rows if m.post_id == post.id]
        assert made and all(m.actor_name == post.author_name and not m.by_bot for m in made)
        assert [m.command for m in made] == post.body.split("\n")
    # The game waits for the person, not a bot, once the person's post is answered.
    assert all(not game.players[s].bot for s in impl.waiting_for(game.state))


def test_a_bots_sealed_lines_go_through_the_sealed_path(session: Session) -> None:
    game, master = new_game(session, "populous", bots=2)
    person = make_user(session, "p")
    say(session, game, person, "JOIN")
    assert say(session, game, master, "START").reply_ok
    for _ in range(3):  # RACE until the draft, where every PICK is sealed
        thread, _sealed = gm.legal_split(game, person)
        if thread:
            assert say(session, game, person, thread[0]).reply_ok
    rows = list(
        session.scalars(
            select(SealedCommand).where(
                SealedCommand.game_id == game.id, SealedCommand.user_id.is_(None)
            )
        )
    )
    assert rows, "the bots picked, sealed"
    assert {r.author_name for r in rows} <= {"ボット1", "ボット2"} and all(r.ok for r in rows)
    bodies = [p.body for p in posts_of(session, game)]
    for row in rows:
        assert row.body.startswith("PICK ")
        assert not any(row.body in body for body in bodies), row.body
    told = [b for b in bodies if "から封印コマンドが届きました。" in b and "ボット" in b]
    assert told and all("（封印）" in b for b in told)
    made = session.scalars(
        select(Move).where(Move.game_id == game.id, Move.sealed_id.in_([r.id for r in rows]))
    ).all()
    assert made and all(m.sealed and m.actor_seat in (0, 1) for m in made)
    # The person, no GM, reads none of the bots' sealed commands.
    assert gm.sealed_for(session, game, person) == []


# --- ratings -----------------------------------------------------------------------------------


@pytest.mark.parametrize("rated_with_bots", [False, True])
def test_games_with_bots_are_rated_only_when_the_gm_said_so(
    session: Session, rated_with_bots: bool
) -> None:
    game, master = new_game(session, bots=1, rated_with_bots=rated_with_bots)
    people = [make_user(session, "r"), make_user(session, "r")]
    for person in people:
        say(session, game, person, "JOIN")
    assert say(session, game, master, "START").reply_ok
    play_out(session, game, people)
    assert game.status == "finished"
    noted = session.get(RatedGame, game.id)
    assert noted is not None
    assert noted.excluded == (None if rated_with_bots else "bots")
    found = session.scalars(select(Rating).where(Rating.user_id.in_([p.id for p in people])))
    rated = {r.user_id for r in found}
    assert rated == ({p.id for p in people} if rated_with_bots else set())


def test_the_bot_column_marks_a_bots_seat_for_the_lobby_and_ratings(session: Session) -> None:
    game, _master = new_game(session, bots=1)
    (seat,) = game.players
    assert isinstance(seat, GamePlayer) and lobby.is_bot_seat(seat)
    seat.bot = False
    assert not lobby.is_bot_seat(seat)  # the column, not a guess from the missing account


def test_undo_after_a_bots_turn_takes_back_the_post_that_handed_it_the_turn(
    session: Session,
) -> None:
    game, master = new_game(session, bots=1)
    person = make_user(session, "p")
    say(session, game, person, "JOIN")
    assert say(session, game, master, "START").reply_ok
    draw = random.Random(3)
    for _ in range(20):
        before = game.state
        thread, _sealed = gm.legal_split(game, person)
        lines = [line for line in thread if line not in NOT_MOVES]
        mine = say(session, game, person, draw.choice(lines))
        assert mine.reply_ok
        if posts_of(session, game)[-1].author_name == BOT_NAME and any(
            p.author_name == "ボット1" and p.number > mine.number for p in posts_of(session, game)
        ):
            break
    else:
        raise AssertionError("no bot turn followed the person's post")
    undo = say(session, game, master, "UNDO")
    assert undo.reply_ok, undo.body
    assert f">>{mine.number - 1} の" in undo.body  # the person's post, the bot's after it
    assert game.state == before
    undone = session.scalars(select(Move).where(Move.game_id == game.id, Move.undone)).all()
    assert {m.actor_name for m in undone} == {person.name, "ボット1"}


def test_a_deadline_that_hands_the_turn_to_a_bot_lets_it_play_at_once(session: Session) -> None:
    """The person misses deadline after deadline; whenever their default moves hand the turn to
    the bot, it plays in that same tick, and the game waits for the person again."""
    game, master = new_game(session, bots=1, options={"deadline_hours": 1})
    person = make_user(session, "p")
    say(session, game, person, "JOIN")
    assert say(session, game, master, "START").reply_ok
    impl = find_game(game.kind)
    assert impl is not None
    bot_played = False
    for _ in range(12):
        assert game.state is not None and game.deadline_at is not None
        assert impl.waiting_for(game.state) == [1]  # the person's turn, never the bot's
        last = posts_of(session, game)[-1].number
        deadlines.expire(session, game, SECRET, game.deadline_at + timedelta(minutes=1))
        later = [p for p in posts_of(session, game) if p.number > last]
        assert later[0].author_name == BOT_NAME and "期限切れ" in later[0].body
        if any(p.author_name == "ボット1" for p in later[1:]):
            bot_played = True
            break
    assert bot_played, "no default move handed the turn to the bot"
    assert game.state is not None and impl.waiting_for(game.state) == [1]


def test_a_bot_game_exported_and_imported_keeps_its_bot_seats(session: Session) -> None:
    """docs/export.md, ``players[].bot``: an archived game with bots still says so once
    imported (its page, the archive and the ratings read the seat's flag)."""
    game, master = new_game(session, bots=1)
    people = [make_user(session, "x"), make_user(session, "x")]
    for person in people:
        say(session, game, person, "JOIN")
    assert say(session, game, master, "START").reply_ok
    play_out(session, game, people)
    data = records.export_game(session, game)
    assert [p["bot"] for p in data["players"]] == [p.bot for p in game.players]
    assert any(p["bot"] for p in data["players"])
    imported = import_game(session, records.parse_record(data)).game
    assert [p.bot for p in imported.players] == [p.bot for p in game.players]
