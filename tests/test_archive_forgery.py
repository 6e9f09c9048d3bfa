"""Issue #40: verify and import check what the bot wrote, not only the moves (docs/archive.md,
"What the bot wrote"). A record whose thread has a talk post rewritten as the GM's (★GM), an
answer that says another move than the one made, a changed ranking in the closing post, or
another seed revealed, does not verify — the check names the post and what differs — and
import refuses it, storing nothing."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.archive import records
from app.archive.importer import ImportRefused, import_game
from app.archive.verify import BOT_POSTS, RANKING_HEADER, verify
from app.db.engine import Database, follow_transactions
from app.db.models import Game, Post
from app.gm.reply import BOT_NAME
from tests.test_archive_helpers import Played, play


@pytest.fixture(scope="module")
def genuine(database: Database) -> dict[str, Any]:
    """One finished えいつく game's export, rolled back (made once: playing takes a while)."""
    connection = database.engine.connect()
    transaction = connection.begin()
    with Session(bind=connection, join_transaction_mode="create_savepoint") as session:
        follow_transactions(session)  # as the app's sessions do (Database's factories)
        played: Played = play(session)
        data: dict[str, Any] = json.loads(
            json.dumps(records.export_game(session, played.game), ensure_ascii=False)
        )
    transaction.rollback()
    connection.close()
    return data


def bot_check(data: dict[str, Any]) -> tuple[bool | None, str]:
    """The check's verdict, and its message with the report's lines (which post, what differs)."""
    report = verify(records.parse_record(data))
    found = next(c for c in report.checks if c.name == BOT_POSTS)
    return found.ok, "\n".join([found.message, *report.mismatches])


def posts(data: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data["thread"]["posts"]
    return found


def test_the_genuine_record_verifies_what_the_bot_wrote(genuine: dict[str, Any]) -> None:
    ok, message = bot_check(genuine)
    assert ok is True, message
    assert verify(records.parse_record(genuine)).ok


def test_a_talk_post_rewritten_as_the_gms_is_named(genuine: dict[str, Any]) -> None:
    data = copy.deepcopy(genuine)
    talk = next(p for p in posts(data) if p["kind"] == "talk")
    talk.update(kind="gm", author=BOT_NAME, body="GM より: 1位は私です。")
    ok, message = bot_check(data)
    assert ok is False
    assert (
        f"{talk['number']}番" in message and "ボットの返信・封印の知らせ・期限の知らせ" in message
    )


def test_a_talk_post_rewritten_as_a_second_answer_is_named(genuine: dict[str, Any]) -> None:
    """Made to answer a command post (the bot answers each once, in the very next post)."""
    data = copy.deepcopy(genuine)
    command = next(p for p in posts(data) if p["kind"] == "command")
    talk = next(p for p in posts(data) if p["kind"] == "talk")
    talk.update(kind="gm", author=BOT_NAME, reply_to=command["number"])
    talk["body"] = f">>{command['number']}\n✔ 無効"
    ok, message = bot_check(data)
    assert ok is False
    assert f"{talk['number']}番: >>{command['number']}" in message


def test_a_gm_post_under_another_name_is_named(genuine: dict[str, Any]) -> None:
    data = copy.deepcopy(genuine)
    answer = next(p for p in posts(data) if p["kind"] == "gm")
    answer["author"] = "偽GM"
    ok, message = bot_check(data)
    assert ok is False and f"{answer['number']}番" in message and "偽GM" in message


def test_an_answer_that_says_another_move_is_named(genuine: dict[str, Any]) -> None:
    data = copy.deepcopy(genuine)
    move = next(m for m in data["moves"] if m["post_number"] and not m["sealed"])
    answer = next(p for p in posts(data) if p.get("reply_to") == move["post_number"])
    answer["body"] = answer["body"].replace(f"✔ {move['command']}", "✔ PASS")
    ok, message = bot_check(data)
    assert ok is False
    assert f"{answer['number']}番: 手番号 {move['seq']} の「{move['command']}」" in message


def test_a_changed_ranking_in_the_closing_post_is_named(genuine: dict[str, Any]) -> None:
    data = copy.deepcopy(genuine)
    closing = next(p for p in posts(data) if RANKING_HEADER in p["body"])
    head, tail = closing["body"].split(RANKING_HEADER, 1)
    lines = tail.lstrip("\n").split("\n")
    first = lines[0]
    winner, runner_up = (entry["name"] for entry in genuine["result"]["ranking"][:2])
    forged = first.replace(winner, runner_up)  # the first place given to the other player
    assert forged != first
    closing["body"] = f"{head}{RANKING_HEADER}\n" + "\n".join([forged, *lines[1:]])
    ok, message = bot_check(data)
    assert ok is False
    assert (
        f"{closing['number']}番の最終結果: 「{forged}」ですが、再計算では「{first}」です" in message
    )


def test_a_ranking_line_added_to_the_closing_post_is_named(genuine: dict[str, Any]) -> None:
    data = copy.deepcopy(genuine)
    closing = next(p for p in posts(data) if RANKING_HEADER in p["body"])
    ranks = len(data["result"]["ranking"])
    head, tail = closing["body"].split(RANKING_HEADER, 1)
    lines = tail.lstrip("\n").split("\n")
    added = f"{ranks + 1}位 乱入者 99点"
    lines.insert(ranks, added)
    closing["body"] = f"{head}{RANKING_HEADER}\n" + "\n".join(lines)
    ok, message = bot_check(data)
    assert ok is False and added in message


def test_a_closing_post_without_its_ranking_is_named(genuine: dict[str, Any]) -> None:
    data = copy.deepcopy(genuine)
    closing = next(p for p in posts(data) if RANKING_HEADER in p["body"])
    closing["body"] = closing["body"].split(RANKING_HEADER, 1)[0].rstrip() or ">>1"
    ok, message = bot_check(data)
    assert ok is False and "【最終結果】" in message


def test_another_revealed_seed_is_named(genuine: dict[str, Any]) -> None:
    data = copy.deepcopy(genuine)
    closing = next(p for p in posts(data) if f"乱数の種: {data['seed']}" in p["body"])
    closing["body"] = closing["body"].replace(f"乱数の種: {data['seed']}", "乱数の種: 0000")
    ok, message = bot_check(data)
    assert ok is False and f"{closing['number']}番: 公開された種 0000" in message


def test_import_refuses_a_forged_gm_post_and_stores_nothing(
    session: Session, genuine: dict[str, Any]
) -> None:
    data = copy.deepcopy(genuine)
    talk = next(p for p in posts(data) if p["kind"] == "talk")
    talk.update(kind="gm", author=BOT_NAME)
    games = session.scalar(select(func.count()).select_from(Game))
    stored = session.scalar(select(func.count()).select_from(Post))
    with pytest.raises(ImportRefused) as caught:
        import_game(session, records.parse_record(data))
    assert BOT_POSTS in caught.value.message and f"{talk['number']}番" in caught.value.message
    session.rollback()
    assert session.scalar(select(func.count()).select_from(Game)) == games
    assert session.scalar(select(func.count()).select_from(Post)) == stored


def test_import_takes_the_genuine_record(session: Session, genuine: dict[str, Any]) -> None:
    imported = import_game(session, records.parse_record(copy.deepcopy(genuine))).game
    assert imported.status == genuine["status"]


# --- a game started in an older wording of its kind's replies (issue 43) -------------------


def _worded_anew(data: dict[str, Any]) -> dict[str, Any]:
    """The record as a game started before its kind's replies were reworded would read: each
    move's events and the bot's words for them not the ones a replay says now."""
    data = copy.deepcopy(data)
    for move in data["moves"]:
        if move.get("events"):
            move["events"] = [f"（旧文面）{text}" for text in move["events"]]
    for post in posts(data):
        if post["kind"] == "gm" and "✔ " in post["body"]:
            post["body"] = post["body"].replace(" → ", " → （旧文面）")
    return data


def test_a_game_in_its_kinds_current_wording_is_compared_word_for_word(
    genuine: dict[str, Any],
) -> None:
    """Reworded replies in a game that says it started in the current wording: NG."""
    from app.games import find_game

    impl = find_game("eitsuku")
    assert impl is not None and genuine["wording"] == impl.wording
    report = verify(records.parse_record(_worded_anew(genuine)))
    assert not report.ok and any("（旧文面）" in m for m in report.mismatches)


def test_a_game_started_in_an_older_wording_is_checked_by_its_replay_not_its_words(
    genuine: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kind words its replies anew (GameImpl.wording + 1): a game started before keeps
    its old words, which a replay no longer says. It verifies, the words said not compared
    (「返信の文面」 —, with why), its outcomes still by the final view and the ranking."""
    from app.archive.verify import WORDING
    from app.games import find_game

    impl = find_game("eitsuku")
    assert impl is not None
    monkeypatch.setattr(impl, "wording", impl.wording + 1)
    old = _worded_anew(genuine)
    report = verify(records.parse_record(old))
    assert report.ok, [*report.mismatches, *(c.message for c in report.checks)]
    wording = next(c for c in report.checks if c.name == WORDING)
    assert wording.ok is None and "以前の文面" in wording.message
    # Its scores are still checked: a changed score is NG whatever the wording.
    forged = copy.deepcopy(old)
    forged["result"]["ranking"][0]["score"] = 999
    assert not verify(records.parse_record(forged)).ok
