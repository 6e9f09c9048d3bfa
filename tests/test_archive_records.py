"""The game record (docs/export.md): export, import, and the provably fair verification."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.archive import frames, records
from app.archive.importer import ImportRefused, import_game
from app.archive.verify import verify, verify_game
from app.config import Settings, get_settings
from app.db.engine import Database
from app.db.models import Game, Move, Post, SealedCommand
from app.errors import Invalid
from app.gm import service as gm
from app.gm.results import final_result
from tests.test_archive_helpers import Played, new_table, play, post

FINISHED_KEYS = {
    "format",
    "version",
    "kind",
    "title",
    "status",
    "options",
    "players",
    "players_at_start",
    "seed",
    "seed_hash",
    "moves",
    "sealed_commands",
    "adjustments",
    "thread",
    "final_view",
    "result",
    "created_at",
    "started_at",
    "finished_at",
}


@pytest.fixture
def finished(session: Session) -> Played:
    return play(session)


def exported(session: Session, game: Game) -> dict[str, Any]:
    data = records.export_game(session, game)
    # What a download is: JSON text, read back.
    parsed: dict[str, Any] = json.loads(json.dumps(data, ensure_ascii=False))
    return parsed


def checks(report: Any) -> dict[str, bool | None]:
    return {c.name: c.ok for c in report.checks}


# --- export ---------------------------------------------------------------------------------


def test_export_of_a_finished_game_is_one_versioned_document(
    session: Session, finished: Played
) -> None:
    game = finished.game
    data = exported(session, game)
    assert set(data) >= FINISHED_KEYS
    assert (data["format"], data["version"]) == ("bbsgm-game", 1)
    assert data["kind"] == "eitsuku" and data["status"] == "finished"
    assert data["seed"] == game.seed
    assert data["seed_hash"] == hashlib.sha256(game.seed.encode()).hexdigest()
    assert data["result"] == game.result and data["result"]["ranking"]
    assert data["final_view"] == gm.game_impl("eitsuku").view(game.state or {}, "gm")
    moves = list(session.scalars(select(Move).where(Move.game_id == game.id).order_by(Move.seq)))
    assert [m["seq"] for m in data["moves"]] == [m.seq for m in moves]
    for mine, row in zip(data["moves"], moves, strict=True):
        assert mine["command"] == row.command and mine["post_number"] == row.post_number
        assert mine["created_at"].startswith(row.created_at.strftime("%Y-%m-%dT%H:%M:%S"))
        assert isinstance(mine["events"], list)
    posts = data["thread"]["posts"]
    assert [p["number"] for p in posts] == list(range(1, game.thread.post_count + 1))
    assert data["players_at_start"] == [u.name for u in finished.players]


def test_export_hides_the_seed_and_sealed_text_until_the_end(session: Session) -> None:
    played = play(session, stop_after=3)
    game = played.game
    first = session.scalars(select(Move).where(Move.game_id == game.id, Move.seq == 1)).one()
    secret_line = first.command
    sealed = SealedCommand(
        game_id=game.id, user_id=None, author_name="x", body=secret_line, ok=True, reply=""
    )
    session.add(sealed)
    session.flush()
    first.sealed_id, first.sealed = sealed.id, True
    session.flush()
    data = exported(session, game)
    assert data["status"] == "active"
    assert data["seed"] is None and data["seed"] != game.seed
    assert game.seed not in json.dumps(data)
    assert data["moves"][0]["command"] == "（封印）" and data["moves"][0]["sealed"] is True
    assert data["sealed_commands"] == []
    assert data["final_view"] == gm.public_view(game)
    post(session, game, played.master, "ABORT")
    over = exported(session, game)
    assert over["seed"] == game.seed
    assert over["moves"][0]["command"] == secret_line
    assert [s["body"] for s in over["sealed_commands"]] == [secret_line]
    assert over["moves"][0]["sealed_ref"] == over["sealed_commands"][0]["ref"]


def test_hidden_posts_are_exported_as_aboon(session: Session, finished: Played) -> None:
    from app.forum.moderation import set_hidden

    game = finished.game
    set_hidden(session, game.thread_id, 2, finished.master, True)
    data = exported(session, game)
    second = data["thread"]["posts"][1]
    assert second["hidden"] is True and second["body"] == "あぼーん"
    assert "よろしくお願いします" not in json.dumps(second, ensure_ascii=False)


# --- verify ---------------------------------------------------------------------------------


def test_a_finished_game_verifies(session: Session, finished: Played) -> None:
    report = verify_game(session, finished.game)
    assert report.ok, report.lines()
    assert checks(report) == {
        "種のハッシュ": True,
        "開始時に公開されたハッシュ": True,
        "再生": True,
        "最終盤面": True,
        "結果": True,
        "ボットの書き込み": True,
    }
    assert report.moves_replayed == max(finished.states)


def test_verify_catches_a_changed_move(session: Session, finished: Played) -> None:
    data = exported(session, finished.game)
    target = next(m for m in data["moves"] if m["command"].startswith("SET"))
    target["command"] = "END" if target["command"] != "END" else "DRAW"
    report = verify(records.parse_record(data))
    assert not report.ok
    assert checks(report)["再生"] is False


def test_verify_catches_a_changed_seed(session: Session, finished: Played) -> None:
    data = exported(session, finished.game)
    data["seed"] = "0" * 64
    report = verify(records.parse_record(data))
    assert not report.ok
    assert checks(report)["種のハッシュ"] is False


def test_verify_catches_a_changed_seed_with_a_matching_hash(
    session: Session, finished: Played
) -> None:
    """A forger who also rewrites seed_hash is caught by the hash the bot posted at START, and
    by the replay itself (other dice, other decks)."""
    data = exported(session, finished.game)
    data["seed"] = "f" * 64
    data["seed_hash"] = hashlib.sha256(data["seed"].encode()).hexdigest()
    report = verify(records.parse_record(data))
    assert not report.ok
    assert checks(report)["開始時に公開されたハッシュ"] is False
    assert checks(report)["種のハッシュ"] is True
    assert checks(report).get("再生") is False or checks(report).get("最終盤面") is False
    # Without the thread (no published hash to compare), the replay alone still catches it.
    data["thread"] = None
    alone = verify(records.parse_record(data))
    assert not alone.ok and checks(alone)["開始時に公開されたハッシュ"] is None


def test_verify_catches_a_changed_result_or_view(session: Session, finished: Played) -> None:
    data = exported(session, finished.game)
    changed = copy.deepcopy(data)
    changed["result"]["ranking"][0]["rank"] = 99
    assert checks(verify(records.parse_record(changed)))["結果"] is False
    changed = copy.deepcopy(data)
    changed["final_view"]["week"] = 1
    assert checks(verify(records.parse_record(changed)))["最終盤面"] is False


def test_verify_catches_a_changed_die(session: Session, finished: Played) -> None:
    data = exported(session, finished.game)
    target = next(m for m in data["moves"] if m["events"])
    target["events"] = ["ダイス 6"]
    report = verify(records.parse_record(data))
    assert not report.ok and report.mismatches
    assert f"手番号 {target['seq']}" in report.mismatches[0]


def test_verify_compares_what_the_bot_announced(session: Session, finished: Played) -> None:
    """The bot's reply to a move carries its public outcome; a record whose thread says
    otherwise does not verify, even when its ``events`` agree with the replay."""
    data = exported(session, finished.game)
    move = next(m for m in data["moves"] if m["events"] and m["post_number"])
    outcome = " ".join(move["events"])
    reply = next(
        p
        for p in data["thread"]["posts"]
        if p["kind"] == "gm" and p["reply_to"] == move["post_number"] and outcome in p["body"]
    )
    reply["body"] = reply["body"].replace(outcome, "（書き換えた出目）")
    report = verify(records.parse_record(data))
    assert not report.ok
    assert any(f">>{move['post_number']}" in line for line in report.mismatches)


def test_an_unfinished_game_cannot_be_verified(session: Session) -> None:
    played = play(session, stop_after=2)
    report = verify_game(session, played.game)
    assert not report.ok and checks(report) == {"乱数の種": False}


def test_gm_adjustments_are_part_of_the_verified_result(session: Session, finished: Played) -> None:
    game = finished.game
    name = finished.players[1].name
    post(session, game, finished.master, f"ADJUST {name} +7 検証のための調整")
    assert game.result == final_result(session, game, gm.game_impl(game.kind))
    data = exported(session, game)
    assert data["adjustments"][0]["delta"] == 7
    entry = next(e for e in data["result"]["ranking"] if e["name"] == name)
    assert entry["breakdown"]["gm"] == 7
    assert verify(records.parse_record(data)).ok
    data["adjustments"][0]["delta"] = 8
    assert checks(verify(records.parse_record(data)))["結果"] is False


@pytest.mark.parametrize(
    ("document", "needle"),
    [
        ([1, 2], "オブジェクト"),
        ({"format": "other"}, "format"),
        ({"format": "bbsgm-game", "version": 99}, "version"),
        ({"format": "bbsgm-game", "version": 1, "kind": "eitsuku"}, "形式"),
        ({"format": "bbsgm-game", "version": 1, "title": "a\x00"}, "NUL"),
    ],
)
def test_malformed_records_are_invalid(document: Any, needle: str) -> None:
    with pytest.raises(Invalid) as caught:
        records.parse_record(document)
    assert needle in caught.value.message


def test_unreadable_json_is_invalid() -> None:
    with pytest.raises(Invalid, match="JSON"):
        records.load_record(b"{not json")
    with pytest.raises(Invalid, match="JSON"):
        records.load_record(b"\xff\xfe")


# --- import ---------------------------------------------------------------------------------


def test_export_import_replays_identically(session: Session, finished: Played) -> None:
    original = finished.game
    data = exported(session, original)
    imported = import_game(session, records.parse_record(data)).game
    assert imported.id != original.id and imported.thread_id != original.thread_id
    assert imported.status == "finished" and imported.gm_id is None
    assert imported.result == original.result and imported.state == original.state
    again = records.export_game(session, imported)
    assert records_equal(again, data)
    total = max(finished.states)
    for n in range(total + 1):
        mine = frames.frame(session, imported, None, n, "all")
        theirs = frames.frame(session, original, None, n, "all")
        assert mine.view == theirs.view, n
        assert (mine.move.text if mine.move else None) == (
            theirs.move.text if theirs.move else None
        )
    posts = list(
        session.scalars(select(Post).where(Post.thread_id == imported.thread_id).order_by(Post.id))
    )
    assert [(p.number, p.author_name, p.body) for p in posts] == [
        (p["number"], p["author"], p["body"]) for p in data["thread"]["posts"]
    ]
    from app.archive.checks import run_checks

    assert not [p for p in run_checks(session) if f"game {imported.id}:" in p]


def records_equal(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Equal but for what differs between servers (ids, export time, the GM account)."""

    def strip(data: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in data.items() if k not in ("id", "exported_at", "gm")}
        kept["thread"] = {k: v for k, v in data["thread"].items() if k != "id"}
        return json.loads(json.dumps(kept, sort_keys=True))  # type: ignore[no-any-return]

    return strip(mine) == strip(theirs)


def test_import_of_a_game_aborted_before_start(session: Session) -> None:
    table = new_table(session)
    post(session, table.game, table.master, "ABORT")
    data = exported(session, table.game)
    assert data["players_at_start"] is None and data["seed"]
    imported = import_game(session, records.parse_record(data)).game
    assert imported.status == "aborted" and imported.state is None
    assert imported.thread.post_count == table.game.thread.post_count


def test_import_refuses_a_tampered_record_and_stores_nothing(
    session: Session, finished: Played
) -> None:
    data = exported(session, finished.game)
    data["seed"] = "0" * 64
    games_before = len(list(session.scalars(select(Game.id))))
    with pytest.raises(ImportRefused) as caught:
        import_game(session, records.parse_record(data))
    assert "種のハッシュ" in caught.value.message
    assert len(list(session.scalars(select(Game.id)))) == games_before


def test_import_refuses_gaps_in_post_numbers(session: Session, finished: Played) -> None:
    data = exported(session, finished.game)
    data["thread"]["posts"] = [p for p in data["thread"]["posts"] if p["number"] != 3]
    with pytest.raises(Invalid, match="書き込み番号"):
        import_game(session, records.parse_record(data))


def test_import_refuses_an_unfinished_game(session: Session) -> None:
    played = play(session, stop_after=2)
    with pytest.raises(ImportRefused):
        import_game(session, records.parse_record(exported(session, played.game)))


# --- the command line -----------------------------------------------------------------------


@pytest.fixture
def cli_database(settings: Settings, database: Database, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`bbsgm` reads the environment: point it at the test database."""
    monkeypatch.setenv("BBSGM_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("BBSGM_SECRET_KEY", settings.secret_key or "x")
    get_settings.cache_clear()
    yield database
    get_settings.cache_clear()


def test_cli_verify_and_import(
    cli_database: Database, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main

    with cli_database.session() as session:
        played = play(session)
        data = records.export_game(session, played.game)
        session.commit()
    good = tmp_path / "game.json"
    good.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert main(["verify", str(good)]) == 0
    assert "すべて一致" in capsys.readouterr().out

    tampered = tmp_path / "tampered.json"
    changed = copy.deepcopy(data)
    changed["seed"] = "1" * 64
    tampered.write_text(json.dumps(changed), encoding="utf-8")
    assert main(["verify", str(tampered)]) == 1
    assert "[NG] 種のハッシュ" in capsys.readouterr().out

    assert main(["import", str(good)]) == 0
    out = capsys.readouterr().out
    game_id = int(out.split("game ", 1)[1].split(" ", 1)[0])
    assert main(["verify", "--game", str(game_id)]) == 0
    with cli_database.session() as session:
        imported = session.get(Game, game_id)
        assert imported is not None and imported.title == played.game.title
        assert records_equal(records.export_game(session, imported), data)

    assert main(["import", str(tampered)]) == 1
    assert "検証に失敗" in capsys.readouterr().err
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00not json")
    assert main(["import", str(garbage)]) == 1
    assert "JSON" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "missing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert main(["verify"]) == 2


def test_a_record_from_before_editions_verifies_by_the_edition_it_was_played_under(
    session: Session,
) -> None:
    """A えいつく record written before its rules had editions names none: it was played under
    edition 1 (starting cards out of the piles) and verifies by it; read as edition 2 it would
    not (docs/rules/eitsuku.md, "Editions")."""
    from tests.test_archive_helpers import new_table, pick

    played = new_table(session, 2, "旧版の卓")
    game = played.game
    game.options = {"edition": 1}  # as 0013_eitsuku_edition marks a game stored before
    session.flush()
    post(session, game, played.master, "START")
    while game.status == "active":
        for user in played.players:
            lines = gm.legal_lines(game, user)
            if lines:
                post(session, game, user, pick(lines))
    data = exported(session, game)
    assert data["options"] == {"edition": 1}
    before_editions = {**data, "options": {}}
    record = records.parse_record(before_editions)
    assert record.options == {"edition": 1}
    assert verify(record).ok
    assert not verify(records.parse_record({**data, "options": {"edition": 2}})).ok
