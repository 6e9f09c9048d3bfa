"""Issue #43: a thread that reads like a good GM's; refusals that teach. Whole games of every
kind by random legal play through the real post path (tests/support/replies.py), and posts at
chosen points of the scripted games (tests/support/fuzz_states.py)."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import Game, Move, Post, User
from app.games import find_game
from app.games.kit.howto import rules_path
from app.gm import reply as answers
from app.gm import service as gm
from app.gm.lines import classify_line, meant_line
from app.gm.submission import LineError
from app.gm.text import render_board_summary
from tests.conftest import repo_root, unique_name
from tests.support.fuzz_states import PLAYERS, Table, script
from tests.support.labels import labels_in, scan
from tests.support.replies import (
    KINDS,
    LINE_PX,
    Played,
    estimated_height,
    play_game,
    shown_lines,
)

SECRET = "issue43-secret"
CHAT = repo_root() / "tests" / "data" / "chat"


@pytest.fixture(scope="module")
def games(database: Database) -> Iterator[dict[str, Played]]:
    """One whole game of every kind, committed (its posts are read, never changed)."""
    played = {}
    tag = unique_name("g")[:6]
    for kind in KINDS:
        with database.session() as session:
            played[kind] = play_game(session, kind, tag)
            session.commit()
    yield played


def snapshot(session: Session, game: Game) -> tuple[Any, int, int]:
    session.refresh(game)
    moves = session.scalar(select(func.count()).select_from(Move).where(Move.game_id == game.id))
    return game.state, game.version, moves or 0


def table_at(session: Session, kind: str, label: str) -> Table:
    """A game of ``kind`` on the board, moved to the scripted stop ``label``."""
    names = [unique_name("p")[:10] for _ in range(PLAYERS[kind])]
    played = script(kind, names)
    master = accounts.register(session, unique_name("m")[:10], "password123")
    players = [accounts.register(session, name, "password123") for name in names]
    table = Table(session, played, master, players, SECRET)
    table.advance(played.stop(label))
    return table


def answer(session: Session, table: Table, user: User, body: str) -> Post | None:
    _mine, replies = gm.submit_post(session, table.game.thread_id, user, body, SECRET)
    return replies[0] if replies else None


# --- a thread that reads like a good GM's -------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_the_bot_buries_the_thread_no_more_median_6_lines_a_quarter_over_12_220_px(
    games: dict[str, Played], kind: str
) -> None:
    """Targets over whole games: median bot reply ≤ 6 lines, replies over 12 lines ≤ a
    quarter, ≤ 220 px a post at 390 px (the median; the board picture apart)."""
    lines = [body.count("\n") + 1 for body in games[kind].replies]
    assert statistics.median(lines) <= 6, lines
    assert sum(n > 12 for n in lines) <= len(lines) / 4, lines
    assert statistics.median(estimated_height(b) for b in games[kind].replies) <= 220


@pytest.mark.parametrize("kind", KINDS)
def test_a_post_takes_no_more_than_220_px_at_390_px_on_average_over_a_whole_game(
    games: dict[str, Played], kind: str
) -> None:
    """≤ 220 px a post at 390 px, the mean over the whole game (the board picture apart): the
    round's board, posted when the round turns, must not stay long enough to lift the mean."""
    heights = [estimated_height(body) for body in games[kind].replies]
    assert statistics.mean(heights) <= 220, sorted(heights)[-5:]


# A phone's screen at the width the heights are measured for (390 × 844, as bench/replies.py).
PHONE_SCREEN_PX = 844
# Where the closing post's parts begin after the board (app/gm/reply.py's closing_lines).
CLOSING = ("\n\n【最終結果】", "\n\n乱数の種", "\n\n【エピローグ】")


def boards_in(played: Played) -> list[str]:
    """The board part of every reply that carries the board: from its heading to the end of
    the reply or to the closing post's result, seed and epilogue."""
    impl = find_game(played.kind)
    assert impl is not None
    heading = f"\n\n【{impl.title_ja}】"
    boards = []
    for body in played.replies:
        if heading not in body:
            continue
        board = body.split(heading, 1)[1]
        ends = [board.index(mark) for mark in CLOSING if mark in board]
        boards.append(board[: min(ends)] if ends else board)
    return boards


@pytest.mark.parametrize("kind", KINDS)
def test_round_board_in_the_thread_fits_a_phone_screen(games: dict[str, Played], kind: str) -> None:
    """The board a reply carries when the week, round or phase turns is compact: it takes at
    most half a phone screen at 390 px, so the move it answers stays in view; the long lists
    (every area, every stock) are on the game page."""
    boards = boards_in(games[kind])
    assert boards, kind
    tallest = max(boards, key=shown_lines)
    assert shown_lines(tallest) * LINE_PX <= PHONE_SCREEN_PX / 2, tallest


@pytest.mark.parametrize("kind", ["eitsuku", "populous"])
def test_a_round_board_that_leaves_the_long_lists_out_points_to_the_game_page(
    games: dict[str, Played], kind: str
) -> None:
    """えいつく's stocks and decks, ポピュラス's map and generations: left to the game page,
    which every round board names in one line."""
    page = f"/games/{games[kind].game_id}"
    boards = boards_in(games[kind])
    assert boards and all(page in board for board in boards), boards


@pytest.mark.parametrize("kind", KINDS)
def test_the_final_board_in_the_thread_is_short_and_points_to_the_game_page(
    games: dict[str, Played], kind: str
) -> None:
    """The closing post gives the result; the last board beside it takes at most a quarter of
    a phone screen and says where the whole last position is."""
    final = boards_in(games[kind])[-1]
    assert f"/games/{games[kind].game_id}" in final, final
    assert shown_lines(final) * LINE_PX <= PHONE_SCREEN_PX / 4, final


@pytest.mark.parametrize("kind", KINDS)
def test_the_board_summary_comes_when_the_round_week_or_phase_changes_not_every_turn(
    games: dict[str, Played], kind: str
) -> None:
    """The board (and its picture) in a reply only when the round, week or phase changes:
    a small share of the replies, never the turn-by-turn reprint of before."""
    played = games[kind]
    assert 1 <= played.pictures <= len(played.replies) / 4, (played.pictures, len(played.replies))


def test_the_board_moves_with_the_week_round_or_phase_only() -> None:
    """board_moved: えいつく's week, エリューシス's round, ポピュラス/IM@S's phase and round,
    カードゲーム's pair of turns; a turn or a judgment within them is no change."""
    impl = find_game("eitsuku")
    assert impl is not None
    week1 = {"week": 1, "over": False, "players": [1]}
    assert not answers.board_moved(impl, week1, {**week1, "players": [2]})
    assert answers.board_moved(impl, week1, {**week1, "week": 2})
    assert answers.board_moved(impl, week1, {**week1, "over": True})
    idolwp = find_game("idolwp")
    assert idolwp is not None
    play = {"phase": "play", "round": 1, "turn": 0, "over": False}
    assert not answers.board_moved(idolwp, play, {**play, "turn": 1})
    assert answers.board_moved(idolwp, {**play, "phase": "draft"}, play)
    cards = find_game("cardbattle")
    assert cards is not None
    turn1 = {"phase": "attack", "turn": 1, "over": False}
    assert not answers.board_moved(cards, turn1, {**turn1, "turn": 2, "phase": "window"})
    assert answers.board_moved(cards, turn1, {**turn1, "turn": 3})


@pytest.mark.parametrize("word", ["BOARD", "盤面", "board"])
@pytest.mark.parametrize("kind", KINDS)
def test_board_or_盤面_is_answered_with_the_board_and_its_picture_by_anyone_changing_nothing(
    session: Session, kind: str, word: str
) -> None:
    table = table_at(session, kind, LOOKS[kind][0])
    before = snapshot(session, table.game)
    onlooker = accounts.register(session, unique_name("o")[:10], "password123")
    reply = answer(session, table, onlooker, word)
    assert reply is not None and reply.reply_ok, reply and reply.body
    impl = find_game(kind)
    assert impl is not None
    title = f"【{impl.title_ja}】"
    assert title in reply.body and reply.board_at is not None
    state, _version, moves = snapshot(session, table.game)
    assert (state, moves) == (before[0], before[2])  # the game's version counts answered posts


@pytest.mark.parametrize("kind", KINDS)
def test_board_or_盤面_answers_the_full_board_not_the_compact_one_of_a_round(
    session: Session, kind: str
) -> None:
    """BOARD / 盤面 is asked for the whole board: its answer carries the full summary (every
    stock, area and card), the round's compact board is for the turn of a round only."""
    table = table_at(session, kind, LOOKS[kind][0])
    reply = answer(session, table, table.players[0], "盤面")
    assert reply is not None and reply.reply_ok, reply and reply.body
    impl = find_game(kind)
    assert impl is not None
    session.refresh(table.game)
    assert table.game.state is not None
    view = impl.view(table.game.state, None)
    assert render_board_summary(impl, view) in reply.body
    compact = render_board_summary(impl, view, compact=True, game_page="/games/0")
    assert shown_lines(compact) < shown_lines(render_board_summary(impl, view)), compact


def test_board_before_the_start_says_there_is_none_yet(session: Session) -> None:
    table = table_at(session, "eitsuku", "募集中")
    reply = answer(session, table, table.players[0], "盤面")
    assert reply is not None and not reply.reply_ok and "まだ始まっていません" in reply.body


@pytest.mark.parametrize("kind", KINDS)
def test_long_lists_go_to_the_game_page_not_the_thread(games: dict[str, Played], kind: str) -> None:
    """IM@S idols' ability texts, エリューシス's seed and rule hashes: not reprinted."""
    replies = games[kind].replies
    if kind == "idolwp":
        assert not any("タイミング: ゲーム開始時" in body for body in replies)
        named = [line for body in replies for line in body.split("\n") if "残りのアイドル" in line]
        assert named and all(line.startswith("残りのアイドル: ") for line in named), named
    hashes = [body for body in replies if "SHA-256" in body]
    # Posted where they commit: the seed's at START (the closing post reveals the seed, not its
    # digest again), a rule's when its round starts and ends (the scripted エリューシス has 2).
    assert len(hashes) <= 1 + (4 if kind == "eleusis" else 0), hashes


@pytest.mark.parametrize("kind", KINDS)
def test_whose_turn_is_said_once_not_as_次の手番_and_again_as_手番待ち(
    games: dict[str, Played], kind: str
) -> None:
    """A move whose own event names the next player (「次の手番: 花子さん。」) is answered
    without a 手番待ち line for the same player beneath it."""
    twice = []
    for body in games[kind].replies:
        told = re.findall(r"次の手番: (\S+?)さん", body)
        waiting = re.findall(r"^手番待ち: (.+)$", body, flags=re.M)
        if told and waiting and waiting[-1] == told[-1]:
            twice.append(body)
    assert twice == [], twice[:2]


@pytest.mark.parametrize("kind", KINDS)
def test_one_word_for_waiting(games: dict[str, Played], kind: str) -> None:
    """手番待ち everywhere: never 行動待ち beside it, never a raw verb 「CHOOSE 待ち」."""
    text = "\n".join(games[kind].replies)
    assert "行動待ち" not in text and "CHOOSE 待ち" not in text
    for path in (repo_root() / "templates" / "games").rglob("*.j2"):
        assert "行動待ち" not in path.read_text() and "CHOOSE 待ち" not in path.read_text()


# --- no maintainers' labels ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["(I: 役者は主演・助演)", "(R 2−2「6任意」、I: 前)", "マニーを1枚得ました(R 4.3)",
             "後攻の太郎の勝ち(R)", "非公開の書き込み(sealed)で", "(交互、R 4.3)", "R 4.3: A と B",
             "太郎の勝ち(R 敗北条件が優先)", "2人で遊びます。R プレイヤー対プレイヤー"],
)  # fmt: skip
def test_the_label_patterns_catch_the_issue_s_examples(text: str) -> None:
    assert labels_in(text)


def test_the_label_patterns_leave_commands_and_cards_alone() -> None:
    for text in ["(RULE)", "(DOUBLE)", "S7、♥Q、D10、ハート10", "（DECK）", "ATTACK 1>2"]:
        assert not labels_in(text), text


def test_no_maintainers_labels_in_app_templates_or_content_files() -> None:
    """Every string players may read (app/ string literals with Japanese, templates, content
    files): no (R …), (I: …), (D), (sealed)."""
    assert scan(Path(repo_root())) == []


@pytest.mark.parametrize("kind", KINDS)
def test_no_maintainers_labels_in_a_whole_game_s_replies(
    games: dict[str, Played], kind: str
) -> None:
    hits = [label for body in games[kind].replies for label in labels_in(body)]
    assert hits == []


# --- every line that looks like a move is answered ----------------------------------------

LOOKS = {
    "eitsuku": ("第1週の途中", "すかうと やくしゃ", "SCOUT 役者"),
    "eleusis": ("第1ラウンドのプレイ中", "だす せいこう スペード8", "PLAY ○ ♠8"),
    "populous": ("第1ラウンド", "エリア選択 1 2", "AREA 1 2"),
    "idolwp": ("指名中", "しめい 春香", "PICK 春香"),
    "cardbattle": ("攻撃待ち", "こうげき", "ATTACK"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_line_that_looks_like_a_move_is_answered_with_what_was_meant_and_the_legal_lines(
    session: Session, kind: str
) -> None:
    label, line, meant = LOOKS[kind]
    table = table_at(session, kind, label)
    before = snapshot(session, table.game)
    impl = find_game(kind)
    assert impl is not None
    assert meant_line(impl, line) == meant
    state = table.game.state
    assert state is not None
    seat = next(s for s in impl.waiting_for(state) if impl.legal_split(state, s)[0])
    reply = answer(session, table, table.players[seat], line)
    assert reply is not None and not reply.reply_ok
    assert f"{meant} のつもりでしたか" in reply.body
    # The lines legal now, or (a hand's plays name its cards) where the poster finds them.
    shown = f"今できる命令はゲームページで: /games/{table.game.id}"
    assert "今できる命令:\n・" in reply.body or shown in reply.body
    assert snapshot(session, table.game) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_30_line_chat_corpus_stays_talk(session: Session, kind: str) -> None:
    """Ordinary chat is never answered: each line of tests/data/chat/<kind>.txt, posted in a
    game in play, is stored as talk with no reply."""
    chat = (CHAT / f"{kind}.txt").read_text(encoding="utf-8").splitlines()
    assert len(chat) >= 30
    impl = find_game(kind)
    assert impl is not None
    assert [line for line in chat if classify_line(impl, line) != "talk"] == []
    table = table_at(session, kind, LOOKS[kind][0])
    for line in chat:
        mine, replies = gm.submit_post(
            session, table.game.thread_id, table.players[0], line, SECRET
        )
        assert replies == [] and mine.kind == "talk", line


# --- refusals that teach -----------------------------------------------------------------


def test_a_refusal_lists_at_most_8_legal_lines_then_the_rest_on_the_game_page() -> None:
    legal = [f"AREA {n} {n + 1}" for n in range(15)]
    error = LineError(1, None, "今は置けません。", "AREA 1 9")
    text = answers.failure_text(">>5", error, legal, game_id=42, kind="populous")
    listed = [line for line in text.split("\n") if line.startswith("・")]
    assert listed == [f"・{line}" for line in legal[:8]]
    assert "…ほか 7 件はゲームページで: /games/42" in text
    assert f"遊び方: {rules_path('populous')}" in text


def test_a_refusal_with_few_legal_lines_lists_them_all() -> None:
    error = LineError(1, None, "まだです。", "END")
    text = answers.failure_text("", error, ["DRAW", "END"], game_id=1, kind="eitsuku")
    assert "・DRAW\n・END" in text and "ほか" not in text


def test_the_word_at_fault_is_marked_in_the_line_not_by_a_caret_under_it() -> None:
    """A caret under the column sat under the wrong character in a proportional font."""
    assert answers.marked("SET 主演 役者7", 8) == "SET 主演 ▶役者7◀"
    assert answers.marked("PLAY ○ ♠8 ♠Z", 11) == "PLAY ○ ♠8 ▶♠Z◀"
    assert answers.marked("END", None) == "END"


def test_two_lines_that_should_have_been_one_are_answered_with_the_one_line_form(
    session: Session,
) -> None:
    """PLAY ○ ♠4 + PLAY ○ ♥10 on two lines: the second is refused, naming PLAY ○ ♠4 ♥10. The
    first play was judged by the secret rule, so it stays applied (docs/security.md: a line
    that is judged is final) and the refusal of the second comes on a reply of its own."""
    table = table_at(session, "eleusis", "第1ラウンドのプレイ中")
    state = table.game.state
    assert state is not None
    seat = state["turn"]
    first, second = state["players"][seat]["hand"][:2]
    body = f"PLAY ○ {first}\nPLAY ○ {second}"
    _mine, replies = gm.submit_post(
        session, table.game.thread_id, table.players[seat], body, SECRET
    )
    assert [r.reply_ok for r in replies] == [True, False], [r.body for r in replies]
    refused = replies[-1]
    assert f"1行にまとめて書いてください: PLAY ○ {first} {second}" in refused.body
    assert f"遊び方: {rules_path('eleusis')}" in refused.body


def test_a_refused_play_names_the_cards_without_telling_the_thread_the_hand(
    session: Session,
) -> None:
    """Which of ♠8 ♠9 is missing would tell everyone a card of a secret hand: the refusal
    names the cards played and sends the player to their own hand (docs/gm.md)."""
    table = table_at(session, "eleusis", "第1ラウンドのプレイ中")
    state = table.game.state
    assert state is not None
    seat = state["turn"]
    hand = state["players"][seat]["hand"]
    absent = next(f"♠{n}" for n in ["A", *range(2, 11), "J", "Q", "K"] if f"♠{n}" not in hand)
    reply = answer(session, table, table.players[seat], f"PLAY ○ {hand[0]} {absent}")
    assert reply is not None and not reply.reply_ok
    assert f"{hand[0]} {absent} のうち手札にないカードがあります" in reply.body
    assert "あなたの手元" in reply.body


def test_an_event_that_names_whom_the_game_waits_for_spares_the_手番待ち_line() -> None:
    """Whose turn is said once: by a "turn" event's seat, or by any event's ``waiting`` list
    (a sealed step's 「選びました(待っている人: 次郎、花子)」); a private event says nothing
    to the thread, so it spares nothing."""
    from app.games.base import event, private_event
    from app.gm.working import told_waiting

    assert told_waiting([event("turn", "次の手番: 花子さん。", seat=2)]) == {2}
    picked = event("pick", "太郎が選びました(待っている人: 次郎、花子)。", waiting=[1, 2])
    assert told_waiting([picked]) == {1, 2}
    assert told_waiting([event("pick", "太郎が選びました。")]) == set()
    assert told_waiting([private_event("turn", "あなたの番", 1)]) == set()


@pytest.mark.parametrize("kind", KINDS)
def test_a_game_started_now_keeps_its_kinds_current_wording_and_verifies_word_for_word(
    games: dict[str, Played], kind: str, database: Database
) -> None:
    """START records the wording the replies are written in (Game.wording); the export names
    it, and ``verify`` compares the replies with the replayed texts word for word."""
    from app.archive import records
    from app.archive.verify import WORDING, verify

    impl = find_game(kind)
    assert impl is not None
    with database.session() as session:
        game = session.get(Game, games[kind].game_id)
        assert game is not None and game.wording == impl.wording
        record = records.parse_record(records.export_game(session, game))
    assert record.wording == impl.wording
    report = verify(record)
    assert WORDING not in {c.name for c in report.checks}
    assert report.ok, report.mismatches[:5]
