"""GM moderation and asynchronous play (issue: deadlines, sealed commands, undo, preview)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.archive.checks import run_checks
from app.db.engine import Database
from app.db.models import Game, ModerationEntry, Notification, Post, User
from app.errors import Forbidden
from app.forum import moderation
from app.gm import deadlines, replay
from app.gm import service as gm
from tests.conftest import unique_name
from tests.test_gm_pipeline import SECRET, seed_without_choice

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def make_user(session: Session) -> User:
    return accounts.register(session, unique_name(), "password123")


def new_table(session: Session, players: int = 3, **options: Any) -> dict[str, Any]:
    master = make_user(session)
    seated = [make_user(session) for _ in range(players)]
    game = gm.create_game(
        session,
        master,
        "eitsuku",
        "卓",
        dict(options),
        SECRET,
        seed=seed_without_choice([u.name for u in seated]),
    )
    for user in seated:
        gm.submit_post(session, game.thread_id, user, "JOIN", SECRET, now=T0)
    _, replies = gm.submit_post(session, game.thread_id, master, "START", SECRET, now=T0)
    assert replies[0].reply_ok, replies[0].body
    return {"gm": master, "players": seated, "game": game}


@pytest.fixture
def table(session: Session) -> dict[str, Any]:
    return new_table(session)


def say(session: Session, game: Game, user: User, body: str, now: datetime = T0) -> Post:
    _, replies = gm.submit_post(session, game.thread_id, user, body, SECRET, now=now)
    assert replies, "expected a reply from the bot"
    return replies[0]


@pytest.mark.parametrize(
    "line",
    [
        "UNDO",
        "AS {p} END",
        "KICK {p}",
        "REPLACE {p} {p}",
        "PAUSE",
        "RESUME",
        "ABORT",
        "DEADLINE 24",
        "ADJUST {p} +3 理由",
    ],
)
def test_gm_commands_by_a_non_gm_are_refused(
    session: Session, table: dict[str, Any], line: str
) -> None:
    game = table["game"]
    player = table["players"][0]
    version = game.version
    reply = say(session, game, player, line.format(p=table["players"][1].name))
    assert not reply.reply_ok and "GM だけ" in reply.body
    assert game.version == version


def test_kick_lets_the_bot_play_the_seat(session: Session, table: dict[str, Any]) -> None:
    """A kicked player with no replacement is played by the bot: the game's own play for a
    dropped seat (Game.autoplay, from that seat's view), which works on its film and ends
    each week."""
    game = table["game"]
    kicked = table["players"][2]
    reply = say(session, game, table["gm"], f"KICK {kicked.name}")
    assert reply.reply_ok, reply.body
    assert "ボット: 追放された席" in reply.body  # the game waited for the seat: played at once
    assert "第2週" not in reply.body
    say(session, game, table["players"][0], "END")
    last = say(session, game, table["players"][1], "END")
    assert last.reply_ok and "ボット: 追放された席" in last.body
    assert game.state is not None and game.state["week"] == 2
    bot_moves = [m for m in gm.moves_of(session, game) if m.by_bot]
    assert {m.actor_seat for m in bot_moves} == {2}
    # Week 1 at KICK and week 2 at its start, each worked on (a scout, a buy or a role set —
    # not only END) and ended.
    assert [m.command for m in bot_moves].count("END") == 2
    assert any(m.command.split()[0] in ("SCOUT", "BUY", "SET", "CHOOSE") for m in bot_moves)
    refused = say(session, game, kicked, "END")
    assert not refused.reply_ok and "追放" in refused.body


def test_replace_hands_the_seat_over_and_replay_still_matches(
    session: Session, table: dict[str, Any]
) -> None:
    game = table["game"]
    old = table["players"][0]
    newcomer = make_user(session)
    reply = say(session, game, table["gm"], f"REPLACE {old.name} {newcomer.name}")
    assert reply.reply_ok, reply.body
    assert gm.seat_of(game, newcomer) == 0 and gm.seat_of(game, old) is None
    assert say(session, game, newcomer, "DRAW\nEND").reply_ok
    assert not say(session, game, old, "END").reply_ok
    assert replay.replay(session, game) == game.state
    assert run_checks(session) == []


def test_replace_gives_a_kicked_player_their_own_seat_back(
    session: Session, table: dict[str, Any]
) -> None:
    """docs/gm.md, REPLACE: the player the GM KICKed can be given that same seat back; they play
    it again (the bot no longer does) and replay still matches."""
    game = table["game"]
    first = table["players"][0]
    assert say(session, game, table["gm"], f"KICK {first.name}").reply_ok
    assert gm.seat_of(game, first) is None
    back = say(session, game, table["gm"], f"REPLACE {first.name} {first.name}")
    assert back.reply_ok, back.body
    assert f"{first.name} さんを席に戻しました" in back.body
    logged = session.scalars(
        select(ModerationEntry.detail).where(
            ModerationEntry.game_id == game.id, ModerationEntry.action == "REPLACE"
        )
    ).all()
    assert logged == [f"{first.name}（席に復帰）"]
    assert gm.seat_of(game, first) == 0
    bot_moves = sum(m.by_bot for m in gm.moves_of(session, game))
    for other in table["players"][1:]:
        assert say(session, game, other, "END").reply_ok
    assert game.state is not None and game.state["week"] == 2
    assert sum(m.by_bot for m in gm.moves_of(session, game)) == bot_moves  # week 2 waits for them
    assert say(session, game, first, "END").reply_ok
    assert replay.replay(session, game) == game.state
    assert run_checks(session) == []


def test_replace_tells_the_newcomer_when_the_game_waits_for_their_seat(
    session: Session, table: dict[str, Any]
) -> None:
    """A seat handed over while the game waits for it: its new player is told "your turn"
    (as a seat newly waited for); the others, already told this week, are not told again."""
    game = table["game"]
    old = table["players"][0]
    newcomer = make_user(session)

    def turns(user: User) -> list[str]:
        return list(
            session.scalars(
                select(Notification.text).where(
                    Notification.game_id == game.id,
                    Notification.user_id == user.id,
                    Notification.kind == "your_turn",
                )
            )
        )

    others = {user.id: turns(user) for user in table["players"][1:]}
    assert others and all(others.values())  # told at START
    assert say(session, game, table["gm"], f"REPLACE {old.name} {newcomer.name}").reply_ok
    told = turns(newcomer)
    assert len(told) == 1 and "あなたの手番です" in told[0]
    assert {user.id: turns(user) for user in table["players"][1:]} == others


def test_replace_refuses_a_player_their_own_seat_while_they_still_hold_it(
    session: Session, table: dict[str, Any]
) -> None:
    game = table["game"]
    first = table["players"][0]
    version = game.version
    reply = say(session, game, table["gm"], f"REPLACE {first.name} {first.name}")
    assert not reply.reply_ok and "もうこのゲームの席についています" in reply.body
    assert game.version == version


def test_replace_refuses_a_second_seat_and_a_kicked_seat_to_another_player(
    session: Session, table: dict[str, Any]
) -> None:
    """A user keeps at most one seat, a kicked one included (their seat is the first found),
    and a kicked seat goes back only to its own player."""
    game = table["game"]
    first, second = table["players"][:2]
    assert say(session, game, table["gm"], f"KICK {first.name}").reply_ok
    version = game.version
    for seat, newcomer in ((second, first), (first, second)):
        reply = say(session, game, table["gm"], f"REPLACE {seat.name} {newcomer.name}")
        assert not reply.reply_ok and "もうこのゲームの席についています" in reply.body
    assert game.version == version
    assert gm.seat_of(game, second) == 1 and gm.seat_of(game, first) is None


def test_replace_with_unknown_user_refused(session: Session, table: dict[str, Any]) -> None:
    reply = say(
        session, table["game"], table["gm"], f"REPLACE {table['players'][0].name} {unique_name()}"
    )
    assert not reply.reply_ok and "利用者はいません" in reply.body


@pytest.mark.parametrize("hours", [0, 673, 100000])
def test_absurd_deadline_refused(session: Session, table: dict[str, Any], hours: int) -> None:
    reply = say(session, table["game"], table["gm"], f"DEADLINE {hours}")
    assert not reply.reply_ok and "672" in reply.body
    assert table["game"].deadline_at is None


def test_deadline_sets_and_resets_with_the_turn(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    assert say(session, game, table["gm"], "DEADLINE 24").reply_ok
    assert game.deadline_at == T0 + timedelta(hours=24)
    later = T0 + timedelta(hours=5)
    for player in table["players"]:
        say(session, game, player, "END", now=later)
    assert game.deadline_at == later + timedelta(hours=24)  # the week moved: a new deadline


def test_absent_pushes_the_deadline_three_times_at_most(
    session: Session, table: dict[str, Any]
) -> None:
    game = table["game"]
    player = table["players"][0]
    refused = say(session, game, player, "ABSENT 12")
    assert not refused.reply_ok and "期限が設定されていません" in refused.body
    say(session, game, table["gm"], "DEADLINE 24")
    for used in range(1, 4):
        reply = say(session, game, player, "不在 12")
        assert reply.reply_ok and f"{used}/3回目" in reply.body
        assert game.deadline_at == T0 + timedelta(hours=24 + 12 * used)
    fourth = say(session, game, player, "ABSENT 12")
    assert not fourth.reply_ok and "3回まで" in fourth.body


def test_pause_resume_abort_are_logged(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    for line in ("PAUSE", "RESUME", f"KICK {table['players'][2].name}", "ABORT"):
        assert say(session, game, table["gm"], line).reply_ok
    actions = [e.action for e in moderation.log_for(session, game)]
    assert actions == ["START", "PAUSE", "RESUME", "KICK", "ABORT"]
    assert all(e.actor_name == table["gm"].name for e in moderation.log_for(session, game))


def play_to_end(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    order = ("CHOOSE", "RELEASE", "SET", "SCOUT 役者", "DRAW", "END")
    for _ in range(2000):
        if game.status != "active":
            return
        for player in table["players"]:
            legal = gm.legal_lines(game, player)
            line = next((c for p in order for c in legal if c.startswith(p)), None)
            if line is not None:
                assert say(session, game, player, line).reply_ok
    raise AssertionError("the game did not end")


def test_adjust_appears_in_the_breakdown_and_reranks(
    session: Session, table: dict[str, Any]
) -> None:
    game = table["game"]
    play_to_end(session, table)
    assert game.status == "finished" and game.result is not None
    before = {e["name"]: e for e in game.result["ranking"]}
    last = max(game.result["ranking"], key=lambda e: e["rank"])
    reply = say(session, game, table["gm"], f"ADJUST {last['name']} +500 特別賞")
    assert reply.reply_ok, reply.body
    after = {e["name"]: e for e in game.result["ranking"]}
    adjusted = after[last["name"]]
    assert adjusted["breakdown"]["gm"] == 500
    if before[last["name"]]["score"] is not None:
        assert adjusted["score"] == before[last["name"]]["score"] + 500
        assert adjusted["rank"] == 1
    assert "GM 調整" in reply.body


def test_undo_marks_moves_undone_and_rebuilds(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    before = game.state
    say(session, game, table["players"][0], "BUY 小\nEND")
    assert say(session, game, table["gm"], "UNDO").reply_ok
    assert game.state == before  # no card came back to a deck: nothing to shuffle
    assert [m.undone for m in gm.moves_of(session, game)] == [True, True]
    assert say(session, game, table["players"][0], "END").reply_ok
    assert replay.replay(session, game) == game.state


def deck_order(game: Game) -> dict[str, list[str]]:
    assert game.state is not None
    return {deck: list(cards) for deck, cards in game.state["decks"].items()}


def test_undo_of_a_scout_shuffles_the_deck_the_card_went_back_to(
    session: Session, table: dict[str, Any]
) -> None:
    """docs/gm.md, UNDO: the SCOUT's reply named the card UNDO puts back on top of the closed
    deck, so the bot shuffles that deck at once, as a recorded GM move naming no card."""
    game = table["game"]
    decks = deck_order(game)
    scouted = say(session, game, table["players"][0], "SCOUT 役者")
    assert scouted.reply_ok, scouted.body
    card = decks["役者"][-1]  # the top: the end of the list
    assert f"{card} をスカウトしました" in scouted.body
    undo = say(session, game, table["gm"], "UNDO")
    assert undo.reply_ok, undo.body
    assert "SHUFFLE 役者（ボット: UNDO の後始末） → GM が役者の山を切り直しました。" in undo.body
    after = deck_order(game)
    assert sorted(after["役者"]) == sorted(decks["役者"]) and after["役者"] != decks["役者"]
    assert {d: c for d, c in after.items() if d != "役者"} == {
        d: c for d, c in decks.items() if d != "役者"
    }
    moves = gm.moves_of(session, game)
    assert [(m.command, m.undone, m.by_bot, m.actor_seat) for m in moves] == [
        ("SCOUT 役者", True, False, 0),
        ("SHUFFLE 役者", False, True, None),
    ]
    assert replay.replay(session, game) == game.state
    assert run_checks(session) == []
    # Nobody's legal lines offer it; a player may not give it.
    impl = gm.game_impl("eitsuku")
    assert game.state is not None
    for actor in [0, 1, 2, "gm"]:
        assert not any(line.startswith("SHUFFLE") for line in impl.legal(game.state, actor))
    refused = say(session, game, table["players"][1], "切り直し 役者")
    assert not refused.reply_ok and "GM の命令です" in refused.body


def test_a_second_undo_takes_back_the_post_before_and_keeps_the_shuffle(
    session: Session, table: dict[str, Any]
) -> None:
    """Taking back the bot's shuffle would restore the order the undone reply told: a second
    UNDO passes over it and takes back the post before, and the shuffle stays in the log."""
    game = table["game"]
    first = say(session, game, table["players"][1], "SCOUT 脚本家")
    assert first.reply_ok, first.body
    assert say(session, game, table["players"][0], "SCOUT 役者").reply_ok
    assert say(session, game, table["gm"], "UNDO").reply_ok
    shuffled = deck_order(game)
    again = say(session, game, table["gm"], "UNDO")
    assert again.reply_ok, again.body
    assert f">>{first.number - 1} の1手を取り消しました" in again.body
    assert "GM が脚本家の山を切り直しました。" in again.body
    moves = gm.moves_of(session, game)
    assert [(m.command, m.undone, m.by_bot) for m in moves] == [
        ("SCOUT 脚本家", True, False),
        ("SCOUT 役者", True, False),
        ("SHUFFLE 役者", False, True),
        ("SHUFFLE 脚本家", False, True),
    ]
    assert deck_order(game)["役者"] == shuffled["役者"]  # the kept shuffle replays as it was
    assert replay.replay(session, game) == game.state
    assert run_checks(session) == []
    nothing = say(session, game, table["gm"], "UNDO")  # only the bot's shuffles are left
    assert not nothing.reply_ok and "取り消せる手がありません" in nothing.body


def test_undo_shuffles_in_a_paused_game_and_the_gm_may_shuffle_by_hand(
    session: Session, table: dict[str, Any]
) -> None:
    game = table["game"]
    assert say(session, game, table["players"][0], "DRAW").reply_ok
    assert say(session, game, table["gm"], "PAUSE").reply_ok
    undo = say(session, game, table["gm"], "UNDO")
    assert undo.reply_ok and "GM がイベントの山を切り直しました。" in undo.body, undo.body
    assert say(session, game, table["gm"], "RESUME").reply_ok
    decks = deck_order(game)
    by_hand = say(session, game, table["gm"], "切り直し 演出")
    assert by_hand.reply_ok and "GM が演出家の山を切り直しました。" in by_hand.body, by_hand.body
    assert sorted(deck_order(game)["演出家"]) == sorted(decks["演出家"])
    last = gm.moves_of(session, game)[-1]
    assert (last.command, last.by_bot, last.actor_seat) == ("SHUFFLE 演出家", False, None)
    assert replay.replay(session, game) == game.state
    # The GM's own SHUFFLE is a post like any other: UNDO takes it back.
    assert say(session, game, table["gm"], "UNDO").reply_ok
    assert deck_order(game) == decks
    assert replay.replay(session, game) == game.state


def test_sealed_command_from_a_non_player_refused(session: Session, table: dict[str, Any]) -> None:
    with pytest.raises(Forbidden):
        gm.submit_sealed(session, table["game"].id, make_user(session), "END", SECRET)


def test_eitsuku_has_nothing_to_seal(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    version = game.version
    row, public = gm.submit_sealed(session, game.id, table["players"][0], "END", SECRET)
    assert not row.ok and "封印する命令がない" in row.reply
    assert public is None and game.version == version


def test_preview_stores_nothing(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    count, version = game.thread.post_count, game.version
    with session.begin_nested() as nested:
        _, replies = gm.preview(session, game.thread_id, table["players"][0], "DRAW", SECRET)
        assert replies[0].reply_ok and "DRAW" in replies[0].body
        nested.rollback()
    session.refresh(game)
    session.refresh(game.thread)
    assert (game.thread.post_count, game.version) == (count, version)


def test_hide_post_abon_by_gm_not_by_players(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    _, _ = gm.submit_post(session, game.thread_id, table["players"][0], "荒らし", SECRET)
    number = game.thread.post_count
    with pytest.raises(Forbidden):
        moderation.set_hidden(session, game.thread_id, number, table["players"][1], True)
    hidden = moderation.set_hidden(session, game.thread_id, number, table["gm"], True)
    assert moderation.shown_body(hidden, None) == "あぼーん"
    assert moderation.shown_body(hidden, table["players"][1]) == "あぼーん"
    admin = make_user(session)
    admin.is_admin = True
    assert moderation.shown_body(hidden, admin) == "荒らし"
    entry = session.scalars(select(ModerationEntry).where(ModerationEntry.action == "HIDE")).all()
    assert any(e.post_number == number for e in entry)


def test_mute_spectators_refuses_their_talk(session: Session) -> None:
    table = new_table(session, mute_spectators=True)
    game = table["game"]
    with pytest.raises(Forbidden):
        gm.submit_post(session, game.thread_id, make_user(session), "がんばれ", SECRET)
    mine, _ = gm.submit_post(session, game.thread_id, table["players"][0], "ありがとう", SECRET)
    assert mine.kind == "talk"


# --- deadlines (committed data: tick opens its own transactions) -----------------------------


def committed_table(database: Database, deadline: int) -> int:
    with database.session() as session:
        table = new_table(session, deadline_hours=deadline)
        session.commit()
        return table["game"].id


def test_tick_plays_defaults_for_late_players_once(database: Database) -> None:
    game_id = committed_table(database, 24)
    with database.session() as session:
        game = session.get(Game, game_id)
        assert game is not None and game.deadline_at == T0 + timedelta(hours=24)
        first = game.players[0]
        user = session.get(User, first.user_id)
        assert user is not None
        gm.submit_post(session, game.thread_id, user, "DRAW\nEND", SECRET, now=T0)
        session.commit()
    assert game_id not in deadlines.tick(database, SECRET, now=T0 + timedelta(hours=23))
    late = T0 + timedelta(hours=25)
    assert game_id in deadlines.tick(database, SECRET, now=late)
    assert game_id not in deadlines.tick(database, SECRET, now=late)  # applied once
    with database.session() as session:
        game = session.get(Game, game_id)
        assert game is not None and game.state is not None
        assert game.state["week"] == 2
        assert game.deadline_at == late + timedelta(hours=24)
        notice = session.scalars(
            select(Post).where(Post.thread_id == game.thread_id).order_by(Post.number.desc())
        ).first()
        assert notice is not None and notice.body.startswith("⏰ 期限切れ")
        late_names = [p.name for p in game.players[1:]]
        assert all(name in notice.body.split("\n")[0] for name in late_names)
        assert game.players[0].name not in notice.body.split("\n")[0]
        bot = [m for m in gm.moves_of(session, game) if m.by_bot]
        assert sorted(m.actor_seat for m in bot) == [1, 2]
        assert replay.replay(session, game) == game.state


def test_concurrent_ticks_apply_each_deadline_once(database: Database) -> None:
    game_id = committed_table(database, 1)
    late = T0 + timedelta(hours=2)
    results: list[list[int]] = []

    def run() -> None:
        results.append(deadlines.tick(database, SECRET, now=late))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(ids.count(game_id) for ids in results) == 1
    with database.session() as session:
        game = session.get(Game, game_id)
        assert game is not None and game.state is not None and game.state["week"] == 2
        assert len([m for m in gm.moves_of(session, game) if m.by_bot]) == 3


def test_populous_deadline_defaults_race_draft_cubes_and_end(database: Database) -> None:
    """ポピュラス past its deadlines (docs/rules/populous.md, Defaults): the bot takes the first
    race left, then the first skill of each late pack (sealed, as the player's pick would be),
    情熱2 食料3 信仰2, and END for a late turn; a player who chose in time keeps their choice,
    and the game replays from its log to the same state."""
    with database.session() as session:
        master = make_user(session)
        seated = [make_user(session) for _ in range(3)]
        game = gm.create_game(session, master, "populous", "卓", {"deadline_hours": 24}, SECRET)
        for user in seated:
            gm.submit_post(session, game.thread_id, user, "JOIN", SECRET, now=T0)
        _, replies = gm.submit_post(session, game.thread_id, master, "START", SECRET, now=T0)
        assert replies[0].reply_ok, replies[0].body
        session.commit()
        game_id, first_user = game.id, seated[0].id
    now, kept, defaulted, phases, turn = T0, "", "", [], None
    for _ in range(20):
        with database.session() as session:
            game = session.get(Game, game_id)
            assert game is not None and game.state is not None
            state = game.state
            phases.append(state["phase"])
            if state["phase"] == "play":
                if turn is not None:
                    break
                turn = state["turn"]
            if state["phase"] == "draft" and not kept:  # seat 0 picks in time, once
                mine = session.get(User, first_user)
                assert mine is not None
                kept = state["draft"]["packs"][0][1]
                defaulted = state["draft"]["packs"][1][0]  # the bot's pick for seat 1
                row, _ = gm.submit_sealed(session, game_id, mine, f"PICK {kept}", SECRET, now=now)
                assert row.ok, row.reply
                session.commit()
        now += timedelta(hours=25)
        assert game_id in deadlines.tick(database, SECRET, now=now)
    assert {"race", "draft", "cubes", "play"} <= set(phases)
    with database.session() as session:
        game = session.get(Game, game_id)
        assert game is not None and game.state is not None
        state = game.state
        assert state["turn"] != turn  # the late turn ended by the bot
        bot = [m for m in gm.moves_of(session, game) if m.by_bot]
        assert [m.command.split()[0] for m in bot].count("RACE") == 3
        assert [m.command for m in bot].count("CUBES 情熱 2 食料 3 信仰 2") == 3
        assert bot[-1].command == "END" and bot[-1].actor_seat == turn
        picks = [m for m in bot if m.command.startswith("PICK")]
        assert picks and all(m.sealed for m in picks)
        assert {m.actor_seat for m in picks[:2]} == {1, 2}  # seat 0 picked in time
        assert kept in state["players"][0]["skills"]
        assert defaulted in state["players"][1]["skills"]
        assert replay.replay(session, game) == game.state
