"""A game's record as one versioned JSON document (docs/export.md): the document's schema,
reading one, and writing one from a stored game.

Before the end an export has no seed, sealed moves read ``（封印）`` and sealed command bodies
are left out; from the end (finished or aborted) everything is in it. ``verify`` (app.archive.
verify) and ``import`` (app.archive.importer) read the same document.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.archive.fold import MoveLine, Step, steps
from app.db.models import Adjustment, Game, Move, Post, SealedCommand, utcnow
from app.errors import Invalid
from app.forum import service as forum
from app.forum.moderation import HIDDEN_BODY
from app.games import find_game
from app.games.base import CommandSyntaxError, RuleError
from app.games.base import Game as GameImpl
from app.gm import secrecy
from app.gm import service as gm
from app.gm.reply import seed_hash

FORMAT = "bbsgm-game"
VERSION = 1
SEALED = secrecy.SEALED
OVER = secrecy.OVER
MAX_RECORD_BYTES = 20_000_000


# --- the document ------------------------------------------------------------------------


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# Times are UTC; one written without an offset is taken as UTC.
When = Annotated[datetime, AfterValidator(_utc)]


class PlayerRecord(_Record):
    seat: int = Field(ge=1, le=1000)
    name: str = Field(min_length=1, max_length=32)
    kicked: bool = False
    bot: bool = False  # a bot's seat (docs/bots.md); records written before bots have none


class PostRecord(_Record):
    number: int = Field(ge=1, le=10_000_000)
    # The name the post showed, trip included (`名前 ◆XXXXXXXXXXXX`: posts.author_name).
    author: str = Field(min_length=1, max_length=64)
    daily_id: str = Field(default="", max_length=16)
    kind: str = Field(default="talk", min_length=1, max_length=16)
    created_at: When
    body: str = Field(max_length=forum.MAX_BODY_CHARS)
    hidden: bool = False
    reply_to: int | None = Field(default=None, ge=1, le=10_000_000)


class ThreadRecord(_Record):
    id: int | None = None
    board: str = Field(default="", max_length=64)
    title: str = Field(min_length=1, max_length=forum.MAX_TITLE_CHARS)
    posts: list[PostRecord] = Field(default_factory=list, max_length=1_000_000)


class MoveRecord(_Record):
    seq: int = Field(ge=1, le=2**31 - 1)
    post_number: int | None = Field(default=None, ge=1, le=10_000_000)
    actor: str = Field(max_length=32)
    seat: int | None = Field(default=None, ge=1, le=1000)
    command: str = Field(min_length=1, max_length=2000)
    sealed: bool = False
    sealed_ref: int | None = None
    undone: bool = False
    by_bot: bool = False
    created_at: When
    events: list[str] | None = None


class SealedRecord(_Record):
    ref: int
    author: str = Field(min_length=1, max_length=32)
    body: str = Field(max_length=forum.MAX_BODY_CHARS)
    ok: bool = True
    created_at: When


class AdjustmentRecord(_Record):
    seat: int = Field(ge=1, le=1000)
    name: str = Field(default="", max_length=32)
    delta: int = Field(ge=-1_000_000, le=1_000_000)
    reason: str = Field(default="", max_length=2000)
    post_number: int | None = None
    created_at: When


class GameRecord(_Record):
    """Version 1 of the export document (docs/export.md)."""

    format: Literal["bbsgm-game"]
    version: Literal[1]
    exported_at: When | None = None
    id: int | None = None
    kind: str = Field(max_length=64)
    title: str = Field(min_length=1, max_length=forum.MAX_TITLE_CHARS)
    status: Literal["recruiting", "active", "finished", "aborted"]
    gm: str | None = Field(default=None, max_length=32)
    options: dict[str, Any] = Field(default_factory=dict)
    platform_options: dict[str, Any] = Field(default_factory=dict)
    players: list[PlayerRecord] = Field(default_factory=list, max_length=1000)
    players_at_start: list[str] | None = Field(default=None, max_length=1000)
    # The wording of its kind's replies the game started with (Game.wording); None: written
    # before wordings were kept, read as 1 (app/archive/verify.in_current_wording).
    wording: int | None = Field(default=None, ge=1, le=1000)
    seed: str | None = Field(default=None, min_length=1, max_length=64)
    seed_hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    created_at: When | None = None
    started_at: When | None = None
    finished_at: When | None = None
    moves: list[MoveRecord] = Field(default_factory=list, max_length=1_000_000)
    sealed_commands: list[SealedRecord] = Field(default_factory=list, max_length=1_000_000)
    adjustments: list[AdjustmentRecord] = Field(default_factory=list, max_length=100_000)
    thread: ThreadRecord | None = None
    final_view: dict[str, Any] | None = None
    result: dict[str, Any] | None = None


def parse_record(data: Any) -> GameRecord:
    """An export document from parsed JSON; Invalid (422) with the first problems named."""
    if not isinstance(data, dict):
        raise Invalid(
            "記録が JSON のオブジェクトではありません（bbsgm-game の書き出しが必要です）。"
        )
    if data.get("format") != FORMAT:
        raise Invalid(f"format が {FORMAT!r} ではありません（bbsgm の書き出した記録ではない）。")
    if data.get("version") != VERSION:
        raise Invalid(
            f"version {data.get('version')!r} の記録は読めません（読めるのは {VERSION}）。"
        )
    if _has_nul(data):
        raise Invalid("記録に使えない文字（NUL）が含まれています。")
    try:
        record = GameRecord.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise Invalid(f"記録の形式が正しくありません: {problems}") from None
    return with_edition(record)


def with_edition(record: GameRecord) -> GameRecord:
    """A record of a kind whose rules have editions (Game.edition) that names none was written
    before editions existed: its game was made under edition 1, and replays by it."""
    impl = find_game(record.kind)
    if impl is None or impl.edition <= 1 or "edition" in record.options:
        return record
    return record.model_copy(update={"options": {**record.options, "edition": 1}})


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def load_record(raw: bytes | str) -> GameRecord:
    if len(raw) > MAX_RECORD_BYTES:
        raise Invalid(f"記録が大きすぎます（{MAX_RECORD_BYTES // 1_000_000} MB まで）。")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise Invalid(f"JSON として読めません: {exc}") from None
    return parse_record(data)


# --- replaying a record ------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    """What the data looks like after a trip through JSON (tuples become lists, …)."""
    return json.loads(json.dumps(value, ensure_ascii=False, sort_keys=True))


def applied(moves: list[MoveRecord]) -> list[MoveRecord]:
    return sorted((m for m in moves if not m.undone), key=lambda m: m.seq)


def move_lines(moves: list[MoveRecord]) -> list[MoveLine]:
    return [
        MoveLine(m.seq, None if m.seat is None else m.seat - 1, m.command, m.sealed)
        for m in applied(moves)
    ]


# --- export --------------------------------------------------------------------------------


def _stored_lines(moves: list[Move]) -> list[MoveLine]:
    return [MoveLine(m.seq, m.actor_seat, m.command, m.sealed) for m in moves if not m.undone]


def replay_stored(game: Game, impl: GameImpl, moves: list[Move]) -> list[Step]:
    """Every step of a stored game, from its seed (the server may use the seed at any time)."""
    if game.started_at is None:
        return []
    players = game.players_at_start or [p.name for p in game.players]
    return list(steps(impl, game.seed, game.options, players, _stored_lines(moves)))


def export_game(session: Session, game: Game) -> dict[str, Any]:
    """The record of ``game`` (docs/export.md). Before the end: no seed, sealed moves as
    ``（封印）``, no sealed command bodies, and the final view is the public one."""
    impl = gm.game_impl(game.kind)
    over = game.status in OVER
    reader = secrecy.public_reader(game)  # an export is for anyone
    moves = gm.moves_of(session, game)
    events: dict[int, list[str]] = {}
    try:
        events = {step.move.seq: step.public for step in replay_stored(game, impl, moves)}
    except (RuleError, CommandSyntaxError, KeyError, ValueError, TypeError):
        events = {}  # a log that no longer replays: the export says nothing about outcomes
    sealed_rows = list(
        session.scalars(
            select(SealedCommand).where(SealedCommand.game_id == game.id).order_by(SealedCommand.id)
        )
    )
    refs = {row.id: ref for ref, row in enumerate(sealed_rows, start=1)}
    posts = list(
        session.scalars(select(Post).where(Post.thread_id == game.thread_id).order_by(Post.number))
    )
    adjustments = list(
        session.scalars(
            select(Adjustment).where(Adjustment.game_id == game.id).order_by(Adjustment.id)
        )
    )
    names = game.players_at_start or [p.name for p in game.players]
    final_view: dict[str, Any] | None = None
    if game.state is not None:
        final_view = impl.view(game.state, "gm" if over else None)
    record = GameRecord(
        format=FORMAT,
        version=VERSION,
        exported_at=utcnow(),
        id=game.id,
        kind=game.kind,
        title=game.title,
        status=game.status,
        gm=game.gm.name if game.gm is not None else None,
        options=dict(game.options),
        platform_options={
            "mute_spectators": game.mute_spectators,
            "deadline_hours": game.deadline_hours,
        },
        players=[
            PlayerRecord(seat=p.seat + 1, name=p.name, kicked=p.kicked, bot=p.bot)
            for p in game.players
        ],
        players_at_start=game.players_at_start,
        wording=game.wording,
        seed=game.seed if over else None,
        seed_hash=seed_hash(game.seed),
        created_at=game.created_at,
        started_at=game.started_at,
        finished_at=game.finished_at,
        moves=[
            MoveRecord(
                seq=m.seq,
                post_number=m.post_number,
                actor=m.actor_name if m.actor_seat is not None else "GM",
                seat=None if m.actor_seat is None else m.actor_seat + 1,
                command=reader.shown(m),
                sealed=m.sealed,
                sealed_ref=refs.get(m.sealed_id) if over and m.sealed_id is not None else None,
                undone=m.undone,
                by_bot=m.by_bot,
                created_at=m.created_at,
                events=None if m.undone else events.get(m.seq),
            )
            for m in moves
        ],
        sealed_commands=[
            SealedRecord(
                ref=refs[row.id],
                author=row.author_name,
                body=row.body,
                ok=row.ok,
                created_at=row.created_at,
            )
            for row in sealed_rows
        ]
        if over
        else [],
        adjustments=[
            AdjustmentRecord(
                seat=a.seat + 1,
                name=names[a.seat] if 0 <= a.seat < len(names) else "",
                delta=a.delta,
                reason=a.reason,
                post_number=a.post_number,
                created_at=a.created_at,
            )
            for a in adjustments
        ],
        thread=ThreadRecord(
            id=game.thread_id,
            board=game.thread.board.slug,
            title=game.thread.title,
            posts=[
                PostRecord(
                    number=p.number,
                    author=p.author_name,
                    daily_id=p.daily_id,
                    kind=p.kind,
                    created_at=p.created_at,
                    body=HIDDEN_BODY if p.hidden_at is not None else p.body,
                    hidden=p.hidden_at is not None,
                    reply_to=p.reply_to,
                )
                for p in posts
            ],
        ),
        final_view=final_view,
        result=game.result,
    )
    data: dict[str, Any] = record.model_dump(mode="json")
    return data
