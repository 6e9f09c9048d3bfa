"""The game master pipeline (DESIGN "One post, one transaction"), service tier, with えいつく."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from sqlalchemy import event, func, select, text, update
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.archive.checks import run_checks
from app.db.models import Game, GamePlayer, Move, Post, User
from app.forum import service as forum
from app.games.base import Rng
from app.gm import replay, store, working
from app.gm import reply as answers
from app.gm import service as gm
from app.gm.legal import legal_for
from app.gm.lines import classify_line, misspelt_verb
from tests.conftest import unique_name

SECRET = "s"


def make_user(session: Session) -> User:
    return accounts.register(session, unique_name(), "password123")


def post(session: Session, game: Game, user: User, body: str) -> tuple[Post, Post | None]:
    mine, replies = gm.submit_post(session, game.thread_id, user, body, SECRET)
    return mine, replies[0] if replies else None


@pytest.fixture
def table(session: Session) -> dict[str, Any]:
    """A recruiting えいつく game with a GM and three players who have joined."""
    master = make_user(session)
    players = [make_user(session) for _ in range(3)]
    game = gm.create_game(session, master, "eitsuku", "卓", {}, SECRET)
    for player in players:
        post(session, game, player, "JOIN")
    return {"gm": master, "players": players, "game": game}


def seed_without_choice(names: list[str]) -> str:
    """A seed whose set-up die rolls no 6, so nobody owes a CHOOSE before their first move."""
    impl = gm.game_impl("eitsuku")
    for n in range(1000):
        state = impl.setup(names, {}, Rng(f"test-seed-{n}", 0))
        if not any(
            line.startswith("CHOOSE") for s in range(len(names)) for line in impl.legal(state, s)
        ):
            return f"test-seed-{n}"
    raise AssertionError("no seed without a 6 in 1000 tries")


@pytest.fixture
def started(session: Session, table: dict[str, Any]) -> dict[str, Any]:
    table["game"].seed = seed_without_choice([p.name for p in table["players"]])
    _, reply = post(session, table["game"], table["gm"], "START")
    assert reply is not None and reply.reply_ok
    return table


def state_snapshot(session: Session, game: Game) -> tuple[Any, int, int]:
    session.refresh(game)
    moves = session.scalar(select(func.count()).select_from(Move).where(Move.game_id == game.id))
    return game.state, game.version, moves or 0


def test_game_creation_opens_a_thread_on_the_kind_board(session: Session) -> None:
    master = make_user(session)
    game = gm.create_game(session, master, "えいつく", "はじめての卓", {}, SECRET)
    assert game.status == "recruiting" and game.gm_id == master.id and game.kind == "eitsuku"
    assert game.thread.board.slug == "eitsuku"
    assert game.thread.title == "はじめての卓"


def test_talk_only_post_gets_no_reply(session: Session, table: dict[str, Any]) -> None:
    mine, reply = post(session, table["game"], table["players"][0], "よろしくお願いします\n楽しみ")
    assert reply is None and mine.kind == "talk"


def test_join_takes_seats_in_join_order(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    session.refresh(game)
    assert [p.name for p in game.players] == [u.name for u in table["players"]]
    assert [p.seat for p in game.players] == [0, 1, 2]


def test_leave_frees_the_seat(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    _, reply = post(session, game, table["players"][0], "離脱")
    assert reply is not None and reply.reply_ok
    session.refresh(game)
    assert [p.name for p in game.players] == [u.name for u in table["players"][1:]]
    assert [p.seat for p in game.players] == [0, 1]


def test_start_by_non_gm_refused(session: Session, table: dict[str, Any]) -> None:
    _, reply = post(session, table["game"], table["players"][0], "START")
    assert reply is not None and not reply.reply_ok
    assert "GM だけ" in reply.body
    assert table["game"].status == "recruiting"


def test_start_with_too_few_players_refused(session: Session) -> None:
    master, alone = make_user(session), make_user(session)
    game = gm.create_game(session, master, "eitsuku", "卓", {}, SECRET)
    post(session, game, alone, "JOIN")
    _, reply = post(session, game, master, "開始")
    assert reply is not None and not reply.reply_ok
    assert "2人から" in reply.body
    assert reply.reply_error == {"line": 1, "column": None, "message": reply.reply_error["message"]}


def test_start_deals_and_shows_the_board(session: Session, started: dict[str, Any]) -> None:
    game = started["game"]
    session.refresh(game)
    assert game.status == "active" and game.state is not None and game.version >= 1
    assert game.started_at is not None


def test_join_after_start_refused(session: Session, started: dict[str, Any]) -> None:
    late = make_user(session)
    before = state_snapshot(session, started["game"])
    _, reply = post(session, started["game"], late, "JOIN")
    assert reply is not None and not reply.reply_ok and "募集は終わって" in reply.body
    assert state_snapshot(session, started["game"]) == before


def test_command_from_non_player_refused(session: Session, started: dict[str, Any]) -> None:
    stranger = make_user(session)
    before = state_snapshot(session, started["game"])
    _, reply = post(session, started["game"], stranger, "END")
    assert reply is not None and not reply.reply_ok and "プレイヤーではありません" in reply.body
    assert state_snapshot(session, started["game"]) == before


def test_game_command_before_start_refused(session: Session, table: dict[str, Any]) -> None:
    _, reply = post(session, table["game"], table["players"][0], "END")
    assert reply is not None and not reply.reply_ok and "まだ始まっていません" in reply.body


def test_syntax_error_reply_quotes_line_with_the_word_at_fault_marked(
    session: Session, started: dict[str, Any]
) -> None:
    game = started["game"]
    before = state_snapshot(session, game)
    mine, reply = post(session, game, started["players"][0], "こんにちは\nSET 主演 役者7")
    assert reply is not None and not reply.reply_ok
    assert reply.reply_error is not None
    assert reply.reply_error["line"] == 2 and reply.reply_error["column"] == 8
    lines = reply.body.split("\n")
    assert lines[0] == f">>{mine.number}"
    # Issue #43: a caret under the column lands under the wrong character in a proportional
    # font; the word at fault is marked in the line itself.
    assert "　SET 主演 ▶役者7◀" in lines
    assert "1〜6" in reply.body
    assert state_snapshot(session, game) == before
    assert mine.kind == "command"  # the post itself is kept


def listed(legal: list[str]) -> str:
    """The lines of a refusal that offer ``legal`` (answers.failure_text: at most 8)."""
    return "\n".join(["今できる命令:", *(f"・{line}" for line in legal[:8])])


def test_syntax_error_reply_lists_the_lines_legal_now(
    session: Session, started: dict[str, Any]
) -> None:
    """A syntax error is answered like a rule error: with the lines the poster may post now,
    the list a refusal read by the whole thread gets."""
    game, player = started["game"], started["players"][0]
    before = state_snapshot(session, game)
    _, reply = post(session, game, player, "SCOUT 役者\nSET 主演 役者7")
    assert reply is not None and not reply.reply_ok
    assert reply.reply_error is not None and reply.reply_error["line"] == 2
    legal = legal_for(game, gm.game_impl("eitsuku"), player, public=True)
    assert legal and "SCOUT 役者" in legal
    assert listed(legal) in reply.body
    assert reply.body.index("1〜6") < reply.body.index("今できる命令:")
    assert state_snapshot(session, game) == before


def test_syntax_error_while_recruiting_lists_what_the_poster_may_do(
    session: Session, table: dict[str, Any]
) -> None:
    _, reply = post(session, table["game"], table["players"][0], "JOIN 今すぐ")
    assert reply is not None and not reply.reply_ok
    assert "今できる命令:\n・LEAVE\n" in reply.body
    _, reply = post(session, table["game"], table["gm"], "START 今すぐ")
    assert reply is not None and not reply.reply_ok
    assert "今できる命令:\n・JOIN\n・START\n" in reply.body  # the GM may take a seat too


def test_syntax_error_in_eleusis_names_no_card_of_the_hand(session: Session) -> None:
    """The lines offered after a syntax error are the thread's: without the PLAY lines of the
    child on turn, which would show the hand to everyone."""
    master = make_user(session)
    seats = [make_user(session) for _ in range(4)]
    game = gm.create_game(session, master, "eleusis", "卓", {"rounds": 1}, SECRET)
    for seat in seats:
        post(session, game, seat, "JOIN")
    _, reply = post(session, game, master, "START")
    assert reply is not None and reply.reply_ok, reply.body
    parent = seats[0]
    row, _ = gm.submit_sealed(session, game.id, parent, "RULE card.rank > 0", SECRET)
    assert row.ok, row.reply
    session.refresh(game)
    assert game.state is not None
    impl = gm.game_impl("eleusis")
    turn = impl.waiting_for(game.state)[0]
    child, hand = seats[turn], game.state["players"][turn]["hand"]
    assert any(line.startswith("PLAY") for line in impl.legal(game.state, turn))
    _, reply = post(session, game, child, "PLAY ○ スペード14")
    assert reply is not None and not reply.reply_ok and "スペード14" in reply.body
    offered = reply.body.split("今できる命令:")[1] if "今できる命令:" in reply.body else ""
    assert "PLAY" not in offered
    assert not set(hand) & set(offered.split()), offered
    _, reply = post(session, game, master, "ENDROUND 今すぐ")
    assert reply is not None and not reply.reply_ok
    legal = legal_for(game, impl, master, public=True)
    assert "ENDROUND" in legal and listed(legal) in reply.body


def test_rule_error_is_all_or_nothing_and_lists_legal(
    session: Session, started: dict[str, Any]
) -> None:
    game = started["game"]
    before = state_snapshot(session, game)
    # BUY spends the week's scout action, so the SCOUT after it is refused; neither draws
    # (a DRAW would be kept: docs/security.md, a line that draws is final once applied).
    _, reply = post(session, game, started["players"][0], "BUY 小\nSCOUT 役者")
    assert reply is not None and not reply.reply_ok
    assert reply.reply_error is not None and reply.reply_error["line"] == 2
    assert "今できる命令" in reply.body
    assert state_snapshot(session, game) == before  # the BUY was not kept either


def test_full_width_command_is_the_same_command(session: Session, started: dict[str, Any]) -> None:
    game = started["game"]
    _, reply = post(session, game, started["players"][0], "ＳＣＯＵＴ　役者")
    assert reply is not None and reply.reply_ok, reply.body
    move = session.scalars(select(Move).where(Move.game_id == game.id)).one()
    assert move.command == "SCOUT 役者" and move.post_number is not None


def test_each_command_is_one_move_and_version_bumps(
    session: Session, started: dict[str, Any]
) -> None:
    game = started["game"]
    version = game.version
    _, reply = post(session, game, started["players"][1], "DRAW\nEND")
    assert reply is not None and reply.reply_ok, reply.body
    moves = gm.moves_of(session, game)
    assert [m.command for m in moves] == ["DRAW", "END"]
    assert [m.seq for m in moves] == [1, 2]
    assert game.version == version + 1


def test_week_end_shows_board_summary(session: Session, started: dict[str, Any]) -> None:
    game = started["game"]
    replies = [post(session, game, p, "END")[1] for p in started["players"]]
    assert all(r is not None and r.reply_ok for r in replies)
    assert replies[-1] is not None and "第2週" in replies[-1].body
    assert replies[0] is not None and "第2週" not in replies[0].body


def test_replay_equals_stored_state_and_check_is_clean(
    session: Session, started: dict[str, Any]
) -> None:
    game = started["game"]
    for player in started["players"]:
        post(session, game, player, "DRAW\nEND")
    assert replay.replay(session, game) == game.state
    assert run_checks(session) == []


def test_check_reports_a_tampered_state(session: Session, started: dict[str, Any]) -> None:
    game = started["game"]
    post(session, game, started["players"][0], "DRAW")
    assert game.state is not None
    game.state = {**game.state, "week": 11}
    session.flush()
    assert any(f"game {game.id}" in line for line in run_checks(session))


def test_move_numbers_continue_from_the_game_row_and_check_compares_them(
    session: Session, started: dict[str, Any]
) -> None:
    game = started["game"]
    post(session, game, started["players"][0], "DRAW")
    post(session, game, started["players"][1], "DRAW\nEND")
    assert [m.seq for m in gm.moves_of(session, game)] == [1, 2, 3]
    assert game.last_seq == 3
    assert run_checks(session) == []
    game.last_seq = 2  # as if a move had been written without its number
    session.flush()
    assert f"game {game.id}: last_seq 2 but the log ends at move 3" in run_checks(session)


def test_gm_as_plays_for_a_player(session: Session, started: dict[str, Any]) -> None:
    game = started["game"]
    name = started["players"][2].name
    _, reply = post(session, game, started["gm"], f"AS {name} END")
    assert reply is not None and reply.reply_ok, reply.body
    move = gm.moves_of(session, game)[-1]
    assert move.actor_seat == 2 and move.command == "END"


def test_undo_takes_back_the_last_post(session: Session, started: dict[str, Any]) -> None:
    game = started["game"]
    session.refresh(game)
    before = game.state
    post(session, game, started["players"][0], "DRAW\nEND")
    _, reply = post(session, game, started["gm"], "UNDO")
    assert reply is not None and reply.reply_ok, reply.body
    # The drawn event card is back in its deck, which the bot then shuffled (docs/gm.md, UNDO):
    # the game is the one before but for that deck's order.
    assert before is not None and game.state is not None
    assert {**game.state, "decks": None} == {**before, "decks": None}
    assert sorted(game.state["decks"]["イベント"]) == sorted(before["decks"]["イベント"])
    moves = gm.moves_of(session, game)
    assert [(m.command, m.undone, m.by_bot) for m in moves] == [
        ("DRAW", True, False),
        ("END", True, False),
        ("SHUFFLE イベント", False, True),
    ]
    assert replay.replay(session, game) == game.state


def test_undo_stands_alone_in_its_post(session: Session, started: dict[str, Any]) -> None:
    """docs/gm.md: UNDO cannot share a post with game commands — before them or after."""
    game = started["game"]
    post(session, game, started["players"][0], "DRAW")
    session.refresh(game)
    before = state_snapshot(session, game)
    name = started["players"][1].name
    for body in (f"UNDO\nAS {name} DRAW", f"AS {name} DRAW\nUNDO", "UNDO\nPAUSE"):
        _, reply = post(session, game, started["gm"], body)
        assert reply is not None and not reply.reply_ok, body
        assert "UNDO は1つの書き込みに単独で" in reply.body, reply.body
        assert state_snapshot(session, game) == before, body
    _, reply = post(session, game, started["gm"], "UNDO")
    assert reply is not None and reply.reply_ok, reply.body


def test_undo_with_nothing_to_undo_refused(session: Session, started: dict[str, Any]) -> None:
    _, reply = post(session, started["game"], started["gm"], "UNDO")
    assert reply is not None and not reply.reply_ok and "取り消せる手がありません" in reply.body


def test_abort_ends_the_game_and_refuses_later_commands(
    session: Session, started: dict[str, Any]
) -> None:
    game = started["game"]
    post(session, game, started["gm"], "ABORT")
    assert game.status == "aborted"
    _, reply = post(session, game, started["players"][0], "END")
    assert reply is not None and not reply.reply_ok and "終わっています" in reply.body


def test_pause_blocks_moves_until_resume(session: Session, started: dict[str, Any]) -> None:
    game = started["game"]
    post(session, game, started["gm"], "PAUSE")
    _, refused = post(session, game, started["players"][0], "END")
    assert refused is not None and not refused.reply_ok and "中断" in refused.body
    post(session, game, started["gm"], "RESUME")
    _, ok = post(session, game, started["players"][0], "END")
    assert ok is not None and ok.reply_ok


def test_legal_lines_per_role(session: Session, table: dict[str, Any]) -> None:
    game = table["game"]
    outsider = make_user(session)
    assert gm.legal_lines(game, outsider) == ["JOIN"]
    assert gm.legal_lines(game, table["players"][0]) == ["LEAVE"]
    assert "START" in gm.legal_lines(game, table["gm"])
    assert gm.legal_lines(game, None) == []


def test_pending_choose_must_come_first(session: Session, table: dict[str, Any]) -> None:
    """I: a 6 on the set-up die leaves a choice; CHOOSE comes before the week's other moves."""
    impl = gm.game_impl("eitsuku")
    names = [p.name for p in table["players"]]
    seed = next(
        f"six-{n}"
        for n in range(1000)
        if any(
            line.startswith("CHOOSE")
            for line in impl.legal(impl.setup(names, {}, Rng(f"six-{n}", 0)), 0)
        )
    )
    table["game"].seed = seed
    post(session, table["game"], table["gm"], "START")
    _, refused = post(session, table["game"], table["players"][0], "END")
    assert refused is not None and not refused.reply_ok and "CHOOSE" in refused.body
    _, ok = post(session, table["game"], table["players"][0], "選択 役者\nEND")
    assert ok is not None and ok.reply_ok, ok.body


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("END", "command"),
        ("end", "command"),
        ("ＥＮＤ", "command"),
        ("終了", "command"),
        ("SET 主演 役者7", "command"),
        ("END now", "command"),
        ("End of story", "talk"),
        ("start は明日ね", "talk"),
        ("SCUOT 役者", "misspelt"),
        ("HELLO みんな", "talk"),
        ("参加します", "command"),
        ("参加したいです", "talk"),
        ("", "talk"),
        ("  ", "talk"),
    ],
)
def test_which_lines_are_commands(line: str, kind: str) -> None:
    """A known verb first makes a command; lower-case English only if the whole line parses."""
    assert classify_line(gm.game_impl("eitsuku"), line) == kind


def test_seed_hash_at_start_and_seed_revealed_at_the_end(
    session: Session, started: dict[str, Any]
) -> None:
    import hashlib

    game = started["game"]
    posts = list(session.scalars(select(Post).where(Post.thread_id == game.thread_id)))
    digest = hashlib.sha256(game.seed.encode()).hexdigest()
    start_reply = next(p for p in posts if "ゲーム開始" in p.body)
    assert digest in start_reply.body and game.seed not in start_reply.body
    _, reply = post(session, game, started["gm"], "ABORT")
    assert reply is not None and game.seed in reply.body
    # Revealed once, to be checked against the START post's digest, which is not repeated.
    assert digest not in reply.body


# --- the bot's reply in the room of one post (docs/gm.md, Sealed commands) ----------------

_HEAD = [">>5", "太郎: 役者の山から 役者5 をスカウトしました。"]
_CLOSING = ["", "【最終結果】", "1位 太郎 12点", "", "乱数の種: abc"]


def test_a_reply_that_fits_is_kept_whole() -> None:
    board = ["", "盤面"]
    epilogue = [answers.EPILOGUE, "封印 花子: RULE x"]
    text = answers.fit_reply(_HEAD, board, [*_CLOSING, "", *epilogue])
    assert text == "\n".join([*_HEAD, *board, *_CLOSING, "", *epilogue])


def test_a_long_reply_gives_up_the_board_before_anything_else() -> None:
    board = ["", "盤" * forum.MAX_BODY_CHARS]
    epilogue = [answers.EPILOGUE, "封印 花子: RULE x"]
    text = answers.fit_reply(_HEAD, board, [*_CLOSING, "", *epilogue])
    assert len(text) <= forum.MAX_BODY_CHARS and "盤盤" not in text
    assert "盤面は長すぎるため省略" in text
    assert all(line in text for line in [*_HEAD, *_CLOSING, *epilogue])


def test_then_the_epilogue_but_never_the_outcomes_the_result_or_the_seed() -> None:
    sealed = [f"封印 花子 {i}: " + "あ" * 300 for i in range(60)]
    text = answers.fit_reply(_HEAD, ["", "盤面"], [*_CLOSING, "", answers.EPILOGUE, *sealed])
    assert len(text) <= forum.MAX_BODY_CHARS
    assert all(line in text for line in [*_HEAD, *_CLOSING])
    assert answers.EPILOGUE not in text and sealed[0] not in text
    assert "封印と秘密はゲームのページにあります" in text


def test_a_moves_events_are_one_a_line_and_refused_sealed_commands_are_marked(
    session: Session,
) -> None:
    """What players read: the bot lays a move's events out one a line; the closing post's
    epilogue marks a sealed command the game refused as refused (it never took effect)."""
    master = make_user(session)
    players = [make_user(session) for _ in range(3)]
    game = gm.create_game(session, master, "populous", "創世卓", {}, SECRET, seed="lines")
    for player in players:
        post(session, game, player, "JOIN")
    post(session, game, master, "START")
    session.refresh(game)
    chooser = players[game.state["turn"]]
    line = f"RACE {gm.game_impl('populous').legal(game.state, game.state['turn'])[0].split()[1]}"
    _, reply = post(session, game, chooser, line)
    assert reply is not None and reply.reply_ok, reply.body
    lines = reply.body.splitlines()
    first = next(i for i, text in enumerate(lines) if text.startswith(f"✔ {line} → "))
    assert "を選びました" in lines[first] and "次は" not in lines[first]
    assert lines[first + 1].startswith("次は"), lines
    while game.state["phase"] == "race":
        seat = game.state["turn"]
        pick = gm.game_impl("populous").legal(game.state, seat)[0]
        post(session, game, players[seat], pick)
        session.refresh(game)
    refused, _ = gm.submit_sealed(session, game.id, players[0], "PICK 存在しないスキル", SECRET)
    assert not refused.ok
    accepted_line = gm.game_impl("populous").sealed_legal(game.state, 1)[0]
    accepted, _ = gm.submit_sealed(session, game.id, players[1], accepted_line, SECRET)
    assert accepted.ok
    _, closing = post(session, game, master, "ABORT")
    assert closing is not None and closing.reply_ok, closing.body
    marked = [text for text in closing.body.splitlines() if text.startswith("封印 ")]
    assert len(marked) == 2, closing.body
    assert "（受け付けられなかった封印）" in marked[0] and "存在しないスキル" in marked[0]
    assert "（受け付けられなかった封印）" not in marked[1] and accepted_line in marked[1]


def test_the_final_ranking_is_said_once_with_its_breakdown(session: Session) -> None:
    """What players read: the closing post gives the final ranking once (【最終結果】, each
    score with its breakdown in words), not again in the board summary or the move's events."""
    from tests.support.fuzz_states import Table, script

    master = make_user(session)
    players = [make_user(session) for _ in range(3)]
    played = script("populous", [player.name for player in players])
    table = Table(session, played, master, players, SECRET)
    table.advance(played.stop("終了"))
    closing = session.scalars(
        select(Post).where(Post.thread_id == table.game.thread_id).order_by(Post.id.desc())
    ).first()
    assert closing is not None
    text = closing.body
    assert text.count("【最終結果】") == 1
    ranking = table.game.result["ranking"]
    for entry in ranking:
        said = [line for line in text.splitlines() if f"位 {entry['name']} " in line]
        assert len(said) == 1, text
        assert said[0].startswith(f"{entry['rank']}位 {entry['name']} {entry['score']}点（")
        assert f"ワーカー {entry['breakdown']['workers']}" in said[0]
        assert f"世代のマジョリティ {entry['breakdown']['generations']}" in said[0]
    assert "成績発表" not in text


@pytest.mark.parametrize("kind", ["cardbattle", "idolwp", "populous"])
def test_one_your_turn_notice_per_turn_not_one_per_step(session: Session, kind: str) -> None:
    """A seat is told "your turn" once a turn: not again while the game still waits for it and
    only an inner step moved on (掲示板進行カードゲーム's window asks both players; the other's
    answer moved the step, not the turn), nor by its own post in the same turn. Between two
    notices to the same player, either that player posted or a new turn in words began."""
    from app.db.models import Notification, SealedCommand
    from tests.support.fuzz_states import PLAYERS, Table, script

    master = make_user(session)
    players = [make_user(session) for _ in range(PLAYERS[kind])]
    played = script(kind, [player.name for player in players])
    table = Table(session, played, master, players, SECRET)
    table.advance(played.stops[-1])
    game = table.game
    told = session.scalars(
        select(Notification).where(
            Notification.game_id == game.id, Notification.kind == "your_turn"
        )
    ).all()
    acted = [
        (p.created_at, p.author_id)
        for p in session.scalars(select(Post).where(Post.thread_id == game.thread_id))
    ] + [
        (c.created_at, c.user_id)
        for c in session.scalars(select(SealedCommand).where(SealedCommand.game_id == game.id))
    ]
    assert told
    for player in players:
        notices = sorted((n.created_at, n.text) for n in told if n.user_id == player.id)
        for (before, said_before), (after, said_after) in itertools.pairwise(notices):
            posted = any(before <= when < after and who == player.id for when, who in acted)
            assert posted or said_after != said_before, (player.name, said_after)


@pytest.mark.parametrize(
    ("kind", "line", "verb"),
    [
        ("eitsuku", "SCUOT 役者", "SCOUT"),
        ("eitsuku", "SCUOT", "SCOUT"),
        # Not in capitals, or in Japanese: when the rest reads as the verb's arguments.
        ("eitsuku", "scuot 役者", "SCOUT"),
        ("eitsuku", "Scuot 役者", "SCOUT"),
        ("eitsuku", "スカウド 役者", "スカウト"),
        ("eitsuku", "ＳＣＵＯＴ　役者", "SCOUT"),
        ("eitsuku", "ドロ一 ", None),  # no arguments: a word on its own is talk
        ("eleusis", "plya ○ ♠7", "PLAY"),
        ("eleusis", "プレー ○ ♠7", "プレイ"),
        ("populous", "エリヤ 2 4", "エリア"),
    ],
)
def test_a_first_word_close_to_a_verb_is_a_misspelt_verb(
    kind: str, line: str, verb: str | None
) -> None:
    impl = gm.game_impl(kind)
    assert misspelt_verb(impl, line) == verb
    assert classify_line(impl, line) == ("talk" if verb is None else "misspelt")


# Ordinary chat that begins with a word like a verb (スカッと, 終わり, Sets, Hunt …): talk.
CHAT = [
    "スカッとした",
    "スカッと 役者が決まった",
    "終わりました",
    "終わり ました",
    "ありがとう",
    "ありがとう ございます",
    "よろしく お願いします",
    "スカウトって 何?",
    "スカウトしたい 役者",
    "交換 したい 人いる?",
    "追加 します",
    "開催 日時は?",
    "パスタ 食べたい",
    "参加し たいです",
    "代表 春香",
    "購入者 です",
    "デッカい 役者だ",
    "Sets are fun",
    "Hunt for the truth",
    "past the END",
    "stat 春香",
    "Moved on",
    "Plays well",
    "scout me",
    "Scores 3 4",
    "OK 役者",
    "HELLO みんな",
    "w",
    "。",
    "...",
]


@pytest.mark.parametrize("kind", ["eitsuku", "eleusis", "populous", "idolwp", "cardbattle"])
def test_ordinary_chat_is_not_answered_as_a_misspelling(kind: str) -> None:
    impl = gm.game_impl(kind)
    answered = {line: misspelt_verb(impl, line) for line in CHAT}
    assert {line: verb for line, verb in answered.items() if verb is not None} == {}
    assert [line for line in CHAT if classify_line(impl, line) != "talk"] == []


@pytest.mark.parametrize(
    ("line", "word", "verb"),
    [("scuot 役者", "scuot", "SCOUT"), ("スカウド 役者", "スカウド", "スカウト")],
)
def test_a_misspelt_verb_is_answered_with_the_line_the_verb_and_the_legal_lines(
    session: Session, started: dict[str, Any], line: str, word: str, verb: str
) -> None:
    game, player = started["game"], started["players"][0]
    before = state_snapshot(session, game)
    _, reply = post(session, game, player, f"よし\n{line}")
    assert reply is not None and not reply.reply_ok
    assert reply.reply_error is not None
    assert reply.reply_error["line"] == 2 and reply.reply_error["column"] == 1
    assert f"「{word}」という命令はありません。もしかして {verb} ですか？" in reply.body
    marked = line.replace(word, f"▶{word}◀", 1)  # the word at fault marked in the line
    assert f"　{marked}" in reply.body.split("\n")
    legal = legal_for(game, gm.game_impl("eitsuku"), player, public=True)
    assert listed(legal) in reply.body
    assert state_snapshot(session, game) == before


@pytest.mark.parametrize("read", ["lock_game", "read_seats"])
def test_the_game_and_its_seats_are_read_as_the_database_holds_them(
    session: Session, table: dict[str, Any], read: str
) -> None:
    """The locking read (and the thread page's read of the seats) sees the rows as they are,
    not as this session read them before: another transaction may have changed them."""
    game = table["game"]
    seat = game.players[0]
    session.execute(
        update(GamePlayer.__table__)  # as another transaction would: past this session's objects
        .where(GamePlayer.__table__.c.id == seat.id)
        .values(name="改名")
    )
    session.execute(update(Game.__table__).where(Game.__table__.c.id == game.id).values(version=41))
    assert seat.name != "改名"
    if read == "lock_game":
        locked = store.lock_game(session, thread_id=game.thread_id)
        assert locked is game and game.version == 41
    else:
        store.read_seats(session, game)
    assert game.players[0] is seat and seat.name == "改名"


def test_the_game_row_update_writes_indexed_columns_only_when_they_change(
    session: Session, table: dict[str, Any]
) -> None:
    """``save`` leaves the status and the deadline (the game row's indexed columns, whose
    index pages SQLite rewrites whenever they are in the SET clause) out of its UPDATE
    unless they change; what is stored is the same."""
    written: list[set[str]] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        found = re.match(r"UPDATE games SET (.*?) WHERE", statement, re.DOTALL)
        if found:
            written.append({part.split("=")[0].strip() for part in found.group(1).split(",")})

    engine = session.get_bind().engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        _play_the_row_updates(session, table, written)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    session.expire_all()
    stored = session.get(Game, table["game"].id)
    assert stored is not None and stored.status == "aborted" and stored.deadline_at is None


def _play_the_row_updates(session: Session, table: dict[str, Any], written: list[set[str]]) -> None:
    game, players = table["game"], table["players"]
    game.seed = seed_without_choice([p.name for p in players])
    post(session, game, table["gm"], "START")
    assert "status" in written[-1]  # recruiting -> active
    assert "deadline_at" not in written[-1]  # no deadlines: None before and after
    written.clear()
    impl = gm.game_impl("eitsuku")
    for _ in range(3):
        seat = next(s for s in range(3) if impl.legal(game.state, s))
        _, reply = post(session, game, players[seat], impl.legal(game.state, seat)[0])
        assert reply is not None and reply.reply_ok
    assert written and all(not {"status", "deadline_at"} & names for names in written)
    assert all({"state", "version"} <= names for names in written)
    _, reply = post(session, game, table["gm"], "DEADLINE 24")
    assert reply is not None and reply.reply_ok and "deadline_at" in written[-1]
    _, reply = post(session, game, table["gm"], "ABORT")
    assert reply is not None and reply.reply_ok and "status" in written[-1]


MOVE_COLUMNS = (
    "seq, post_id, post_number, actor_seat, actor_name, command, undone, sealed_id, by_bot, sealed"
)


def test_a_posts_moves_are_stored_as_the_session_would_store_them(
    session: Session, started: dict[str, Any]
) -> None:
    """A command post's moves, its own and the bot's for the kicked seats after it, are
    stored in order with the post's id and number, its time (aware, in UTC), the parsed
    command a JSON object, and no sealed command."""
    game, players, master = started["game"], started["players"], started["gm"]
    impl = gm.game_impl("eitsuku")
    for kicked in players[1:]:
        _, reply = post(session, game, master, f"KICK {kicked.name}")
        assert reply is not None and reply.reply_ok
    stored: list[tuple[Any, ...]] = []
    for _ in range(30):  # until the player's move ends their turn and the bot plays on
        line = impl.legal(game.state, 0)[0]
        mine, reply = post(session, game, players[0], line)
        assert reply is not None and reply.reply_ok
        session.flush()
        stored = [
            (*row[:6], bool(row[6]), row[7], bool(row[8]), bool(row[9]))  # SQLite: 0 and 1
            for row in session.execute(
                text(f"SELECT {MOVE_COLUMNS} FROM moves WHERE post_id = :p ORDER BY id"),
                {"p": mine.id},
            )
        ]
        if len(stored) >= 2:
            break
    assert len(stored) >= 2, "the bot played no kicked seat's turn after a post"
    first_seq = stored[0][0]
    assert stored == [
        (first_seq, mine.id, mine.number, 0, players[0].name, line, False, None, False, False),
        *(
            (first_seq + i, mine.id, mine.number, row[3], row[4], row[5], False, None, True, False)
            for i, row in enumerate(stored[1:], 1)
        ),
    ]
    names = [p.name for p in players]
    assert all(row[3] in (1, 2) and row[4] == names[row[3]] for row in stored[1:])
    assert reply is not None and all(row[5] in reply.body for row in stored)
    session.expire_all()
    moves = [m for m in gm.moves_of(session, game) if m.post_id == mine.id]
    assert [m.created_at for m in moves] == [mine.created_at] * len(stored)
    assert [m.parsed for m in moves] == [working.parsed_json(impl.parse(row[5])) for row in stored]
    if session.get_bind().dialect.name == "postgresql":
        kinds = session.scalars(
            text("SELECT json_typeof(parsed) FROM moves WHERE post_id = :p"), {"p": mine.id}
        ).all()
        assert set(kinds) == {"object"}


def test_the_picture_beside_an_undo_reply_shows_the_board_after_the_undo(
    session: Session, started: dict[str, Any]
) -> None:
    """A reply that shows the board is written after N applied moves (its picture's ?at=N,
    the board after the first N applied moves): for UNDO, N leaves out the move it took back,
    so the picture still shows that board once later moves are applied."""
    game, players, master = started["game"], started["players"], started["gm"]
    impl = gm.game_impl("eitsuku")

    def play_one() -> None:
        seat = next(s for s in range(3) if impl.legal(game.state, s))
        _, reply = post(session, game, players[seat], impl.legal(game.state, seat)[0])
        assert reply is not None and reply.reply_ok

    for _ in range(4):
        play_one()
    _, undo = post(session, game, master, "UNDO")
    assert undo is not None and undo.reply_ok and undo.board_at is not None
    after_undo = game.state
    session.flush()
    applied = len(replay.applied_moves(session, game))
    assert undo.board_at == applied
    play_one()
    assert replay.replay(session, game, undo.board_at) == after_undo != game.state


def test_the_bots_answer_counts_the_moves_written_before_it_and_no_undone_one(
    session: Session, started: dict[str, Any]
) -> None:
    """The answer to an accepted command post that shows the board is stored as the bot's
    post, its board_at (the picture's ?at=N) the game's applied moves once the post's own
    are written — an undone move not counted."""
    game, players = started["game"], started["players"]
    impl = gm.game_impl("eitsuku")

    def play_one() -> Post:
        seat = next(s for s in range(3) if impl.legal(game.state, s))
        _, reply = post(session, game, players[seat], impl.legal(game.state, seat)[0])
        assert reply is not None and reply.reply_ok
        return reply

    for _ in range(2):
        play_one()
    session.flush()
    undone = session.get(Move, replay.applied_moves(session, game)[-1].id)
    assert undone is not None
    undone.undone = True
    session.flush()
    for _ in range(60):  # until a post moves the turn on and its answer shows the board
        reply = play_one()
        if reply.board_at is not None:
            break
    assert reply.board_at is not None, "no answer showed the board"
    applied = replay.applied_moves(session, game)
    assert reply.board_at == len(applied) and undone.id not in {m.id for m in applied}
    assert reply in session and reply.author_name == answers.BOT_NAME and reply.kind == "gm"
    session.expire_all()
    stored = session.get(Post, reply.id)
    assert stored is not None and stored.board_at == len(applied) and stored.reply_ok


@pytest.mark.parametrize("where", ["parse", "execute"])
def test_a_line_the_bot_fails_on_is_kept_and_answered_never_an_error(
    session: Session, started: dict[str, Any], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Whatever a game's code raises for a line (here a ValueError, as populous's closing step
    once did) besides a refusal: the post is stored, the bot answers that it could not handle
    that line, and the game is as it was — the post path never answers 500 for it."""
    game, players = started["game"], started["players"]
    impl = gm.game_impl("eitsuku")
    seat = next(s for s in range(3) if impl.legal(game.state, s))
    line = impl.legal(game.state, seat)[0]
    session.refresh(game)
    before = state_snapshot(session, game)

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise ValueError("tuple.index(x): x not in tuple")

    monkeypatch.setattr(type(impl), where, broken)
    mine, reply = post(session, game, players[seat], f"よろしく\n{line}")
    monkeypatch.undo()
    assert mine.id is not None and mine.body == f"よろしく\n{line}"
    assert reply is not None and not reply.reply_ok
    assert "ボットがこの行を処理できませんでした" in reply.body
    assert reply.reply_error is not None and reply.reply_error["line"] == 2
    assert state_snapshot(session, game) == before
