"""``bbsgm import``: a finished or aborted game and its thread re-created from an export.

The record is verified first (app.archive.verify: hash, replay, final view, result); after the
rows are written the new game is exported again and must give back the same moves, final view
and result. Nothing is linked to local accounts: players, GM and posters stay names (a name
here may belong to someone else), so an imported game has no GM who could UNDO or ADJUST it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.archive.fold import initial_state
from app.archive.records import (
    GameRecord,
    export_game,
    jsonable,
    load_record,
    parse_record,
)
from app.archive.verify import Report, verify
from app.db.models import (
    Adjustment,
    Game,
    GamePlayer,
    ModerationEntry,
    Move,
    Post,
    SealedCommand,
    Thread,
    utcnow,
)
from app.errors import Invalid
from app.forum import service as forum
from app.forum.moderation import HIDDEN_BODY
from app.games import find_game
from app.games.base import CommandSyntaxError
from app.games.base import Game as GameImpl
from app.gm import service as gm

__all__ = ["ImportRefused", "Imported", "import_game", "load_record"]


class ImportRefused(Invalid):
    """The record does not verify: nothing was imported."""

    def __init__(self, report: Report) -> None:
        failed = report.failed() + report.mismatches[:3]
        super().__init__("記録の検証に失敗したので取り込みません: " + " / ".join(failed))
        self.report = report


def _parsed_json(command: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type(command).__name__}
    if is_dataclass(command) and not isinstance(command, type):
        data.update(asdict(command))
    jsonable: dict[str, Any] = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    return jsonable


def _check_structure(record: GameRecord, impl: GameImpl) -> None:
    if record.thread is None or not record.thread.posts:
        raise Invalid("記録にスレッドの書き込み（thread.posts）がありません。")
    numbers = [p.number for p in record.thread.posts]
    if sorted(numbers) != list(range(1, len(numbers) + 1)):
        raise Invalid("スレッドの書き込み番号が 1 から順に並んでいません。")
    for post in record.thread.posts:
        if not post.hidden and (not post.body.strip() or "\x00" in post.body):
            raise Invalid(f"{post.number}番の書き込みの本文が空か、使えない文字があります。")
    names = record.players_at_start or []
    if record.players_at_start is not None and not (
        impl.min_players <= len(names) <= impl.max_players
    ):
        raise Invalid(f"{impl.title_ja} は{impl.min_players}〜{impl.max_players}人のゲームです。")
    if any(not 1 <= len(name) <= 32 for name in names):
        raise Invalid("players_at_start の名前は1〜32文字です。")
    refs = {s.ref for s in record.sealed_commands}
    for move in record.moves:
        if move.post_number is not None and move.post_number > len(numbers):
            raise Invalid(f"手番号 {move.seq} の書き込み >>{move.post_number} がありません。")
        if move.seat is not None and move.seat > len(names):
            raise Invalid(f"手番号 {move.seq} の席 {move.seat} がありません。")
        if move.sealed_ref is not None and move.sealed_ref not in refs:
            raise Invalid(f"手番号 {move.seq} の封印 {move.sealed_ref} がありません。")
    if len({m.seq for m in record.moves}) != len(record.moves):
        raise Invalid("同じ手番号の手が二つあります。")
    for adjustment in record.adjustments:
        if adjustment.seat > len(names):
            raise Invalid(f"調整の席 {adjustment.seat} がありません。")


@dataclass
class Imported:
    game: Game
    report: Report


def import_game(session: Session, record: GameRecord) -> Imported:
    """Re-create a finished or aborted game and its thread from its record, verified by replay
    first and compared again afterwards. Nothing is linked to local accounts (names are kept
    as text); the caller commits."""
    impl = find_game(record.kind)
    if impl is None:
        raise Invalid(f"「{record.kind}」というゲームはありません。")
    _check_structure(record, impl)  # the shape first: its messages say what is missing
    report = verify(record)
    if not report.ok:
        raise ImportRefused(report)
    assert record.thread is not None and record.seed is not None
    gm.ensure_game_boards(session)
    board = forum.get_board(session, impl.kind)
    posts = sorted(record.thread.posts, key=lambda p: p.number)
    now = utcnow()
    created = record.created_at or posts[0].created_at
    thread = Thread(
        board_id=board.id,
        title=forum.clean_title(record.thread.title),
        author_id=None,
        created_at=posts[0].created_at,
        last_post_at=posts[-1].created_at,
        post_count=len(posts),
    )
    session.add(thread)
    board.thread_count += 1
    session.flush()
    stored_posts: dict[int, Post] = {}
    for p in posts:
        row = Post(
            thread_id=thread.id,
            number=p.number,
            author_id=None,
            author_name=p.author,
            daily_id=p.daily_id,
            body=HIDDEN_BODY if p.hidden else forum.clean_body(p.body),
            kind=p.kind,
            created_at=p.created_at,
            reply_to=p.reply_to,
            reply_ok=None,
            hidden_at=now if p.hidden else None,
            hidden_by="import" if p.hidden else None,
        )
        session.add(row)
        stored_posts[p.number] = row
    session.flush()
    state = report.state
    if state is None and record.players_at_start is not None:
        state = initial_state(impl, record.seed, record.options, record.players_at_start)
    platform = record.platform_options
    deadline = platform.get("deadline_hours")
    game = Game(
        kind=impl.kind,
        title=forum.clean_title(record.title),
        status=record.status,
        thread_id=thread.id,
        gm_id=None,
        seed=record.seed,
        options=dict(record.options),
        state=state,
        result=record.result,
        version=1,
        paused=False,
        mute_spectators=platform.get("mute_spectators") is True,
        deadline_hours=deadline if isinstance(deadline, int) and 0 < deadline < 10_000 else None,
        deadline_at=None,
        turn_key=impl.turn_key(state) if state is not None else None,
        players_at_start=record.players_at_start,
        wording=record.wording if record.started_at is not None else None,
        created_at=created,
        started_at=record.started_at,
        finished_at=record.finished_at or posts[-1].created_at,
    )
    session.add(game)
    session.flush()
    for player in sorted(record.players, key=lambda p: p.seat):
        session.add(
            GamePlayer(
                game_id=game.id,
                seat=player.seat - 1,
                user_id=None,
                name=player.name,
                kicked=player.kicked,
                bot=player.bot,
                joined_at=created,
            )
        )
    sealed_ids: dict[int, int] = {}
    for sealed in record.sealed_commands:
        sealed_row = SealedCommand(
            game_id=game.id,
            user_id=None,
            author_name=sealed.author,
            body=sealed.body,
            reply="",
            ok=sealed.ok,
            created_at=sealed.created_at,
        )
        session.add(sealed_row)
        session.flush()
        sealed_ids[sealed.ref] = sealed_row.id
    game.last_seq = max((move.seq for move in record.moves), default=0)
    for move in sorted(record.moves, key=lambda m: m.seq):
        try:
            parsed = _parsed_json(impl.parse(move.command))
        except CommandSyntaxError:
            parsed = {}
        post = stored_posts.get(move.post_number) if move.post_number is not None else None
        session.add(
            Move(
                game_id=game.id,
                seq=move.seq,
                post_id=post.id if post is not None else None,
                post_number=move.post_number,
                actor_seat=None if move.seat is None else move.seat - 1,
                actor_name=move.actor if move.seat is not None else "GM",
                command=move.command,
                parsed=parsed,
                undone=move.undone,
                sealed_id=sealed_ids.get(move.sealed_ref) if move.sealed_ref is not None else None,
                by_bot=move.by_bot,
                sealed=move.sealed,
                created_at=move.created_at,
            )
        )
    for adjustment in record.adjustments:
        session.add(
            Adjustment(
                game_id=game.id,
                seat=adjustment.seat - 1,
                delta=adjustment.delta,
                reason=adjustment.reason,
                post_number=adjustment.post_number,
                created_at=adjustment.created_at,
            )
        )
    source = f"記録 id {record.id}" if record.id is not None else "記録"
    session.add(
        ModerationEntry(
            game_id=game.id,
            thread_id=thread.id,
            actor_name="import",
            action="IMPORT",
            detail=f"{source}から取り込み（元の GM: {record.gm or '—'}）",
            created_at=now,
        )
    )
    session.flush()
    session.refresh(game)
    _compare_import(session, game, record)
    return Imported(game, report)


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    """An export without what differs between servers (ids, export time)."""
    keep = dict(data)
    for key in ("id", "exported_at", "gm"):
        keep.pop(key, None)
    if isinstance(keep.get("thread"), dict):
        keep["thread"] = {k: v for k, v in keep["thread"].items() if k != "id"}
    return keep


def _seq(move: Any) -> int:
    return int(move.seq)


_MOVE_FIELDS = ("seq", "post_number", "seat", "command", "sealed", "undone", "by_bot")


def _compare_import(session: Session, game: Game, record: GameRecord) -> None:
    """The imported game, exported again, must be the record it came from."""
    again = parse_record(export_game(session, game))
    checks = {
        "moves": (
            [m.model_dump(include=set(_MOVE_FIELDS)) for m in again.moves],
            [m.model_dump(include=set(_MOVE_FIELDS)) for m in sorted(record.moves, key=_seq)],
        ),
        "final_view": (again.final_view, record.final_view),
        "result": (again.result, record.result),
        "players_at_start": (again.players_at_start, record.players_at_start),
        "seed": (again.seed, record.seed),
    }
    for key, (mine, theirs) in checks.items():
        if jsonable(mine) != jsonable(theirs):
            raise Invalid(f"取り込んだゲームを書き出し直すと {key} が元の記録と違います。")
