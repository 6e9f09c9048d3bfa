"""JSON routes for games (../shared/API.md, "Games")."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts import ratelimit
from app.api.schemas import ERROR_RESPONSES, PostOut, PostResult, ReplyOut, ValidationIssue
from app.archive import listing, records
from app.db.models import Game, Post, SealedCommand, User
from app.errors import Invalid
from app.forum.moderation import log_for
from app.games import all_games
from app.games.kit.howto import rules_path
from app.gm import pictures, replay, secrecy
from app.gm import service as gm
from app.gm.options import PLATFORM_FIELDS, OptionField, OptionsInvalid, game_fields
from app.web import deps
from app.web.deps import ApiUser, OptionalApiUser, ReadSession, SettingsDep, WriteSession

router = APIRouter(prefix="/api/games", responses=ERROR_RESPONSES)
SEALED = "（封印）"


class OptionOut(BaseModel):
    """One option a new game of the kind takes (in `options` of POST /api/games)."""

    name: str
    label: str
    help: str
    type: str = Field(description="int, bool, text, choice, lines (name -> list of text), other")
    default: Any
    min: int | None
    max: int | None
    max_length: int | None
    choices: list[Any]
    platform: bool = Field(description="every kind has it (the site's, not the game's)")

    @classmethod
    def of(cls, option: OptionField, platform: bool) -> OptionOut:
        return cls(
            name=option.name,
            label=option.label,
            help=option.help,
            type=option.widget or "other",
            default=option.default,
            min=option.low,
            max=option.high,
            max_length=option.max_length,
            choices=list(option.values),
            platform=platform,
        )


class KindOut(BaseModel):
    kind: str
    title: str
    title_en: str
    min_players: int
    max_players: int
    options: list[OptionOut]
    # The path of the kind's 遊び方 page (HTML, app/web/howto_pages.py).
    rules_url: str


class NewGame(BaseModel):
    kind: str = Field(max_length=64)
    title: str = Field(max_length=10_000)
    # Any JSON here, so that a value other than an object is told in Japanese like every bad
    # option (app/gm/options.py), not by pydantic; documented as the object it must be.
    options: Any = Field(
        default_factory=dict,
        json_schema_extra={"type": "object"},
        description="The game's own options and the platform's (`deadline_hours`, "
        "`mute_spectators`); GET /api/games/kinds lists each kind's.",
    )
    # Any JSON, checked by the service (a Japanese message, field "bots"), as options are.
    bots: Any = Field(
        default=0,
        json_schema_extra={"type": "integer", "minimum": 0},
        description="Seats given to bots at once (ボット1, ボット2 …; docs/bots.md), at most "
        "the kind's max_players.",
    )
    rated_with_bots: bool = Field(
        default=False,
        description="Rate the game even with bots seated (by default a game with bots is not "
        "rated; docs/bots.md).",
    )


class OptionIssue(BaseModel):
    """One bad option: its key ("" for the options as a whole) and what it allows."""

    option: str
    message: str


class OptionsError(BaseModel):
    """422 for bad options: `detail` says them all in Japanese (as every bbsgm error does),
    `errors` one by one. A malformed request gets FastAPI's list in `detail` instead."""

    detail: str | list[ValidationIssue]
    errors: list[OptionIssue] = []


class CreatedGame(BaseModel):
    id: int
    kind: str
    status: str
    thread_id: int


class PlayerOut(BaseModel):
    seat: int
    name: str
    bot: bool = Field(default=False, description="a seat a bot plays (docs/bots.md)")


class GameOut(BaseModel):
    id: int
    kind: str
    title: str
    status: str
    paused: bool
    thread_id: int
    gm: str | None
    players: list[PlayerOut]
    version: int
    view: dict[str, Any]
    result: dict[str, Any] | None
    created_at: Any
    finished_at: Any
    bots: int = Field(default=0, description="seats bots were given (docs/bots.md)")
    rated_with_bots: bool = Field(
        default=False, description="rated even with bots: the GM's choice at creation"
    )

    @classmethod
    def of(cls, game: Game) -> GameOut:
        return cls(
            id=game.id,
            kind=game.kind,
            title=game.title,
            status=game.status,
            paused=game.paused,
            thread_id=game.thread_id,
            gm=game.gm.name if game.gm is not None else None,
            players=[PlayerOut(seat=p.seat + 1, name=p.name, bot=p.bot) for p in game.players],
            version=game.version,
            view=gm.public_view(game),
            result=game.result,
            created_at=game.created_at,
            finished_at=game.finished_at,
            bots=sum(1 for p in game.players if p.bot),
            rated_with_bots=game.rated_with_bots,
        )


class GameList(BaseModel):
    games: list[GameOut]
    page: int
    pages: int


class LegalOut(BaseModel):
    """Lines the caller may post in the thread now, and enumerable lines they may (or must)
    send through `/sealed` now; free text (a secret rule) is listed in neither."""

    commands: list[str]
    sealed: list[str]


class MoveOut(BaseModel):
    seq: int
    post_number: int | None
    actor: str
    command: str
    undone: bool


class SealedOut(BaseModel):
    id: int
    author: str
    body: str
    reply: str
    ok: bool
    error: dict[str, Any] | None
    created_at: datetime

    @classmethod
    def of(cls, row: SealedCommand) -> SealedOut:
        return cls(
            id=row.id,
            author=row.author_name,
            body=row.body,
            reply=row.reply,
            ok=row.ok,
            error=row.error,
            created_at=row.created_at,
        )


class SealedResult(BaseModel):
    sealed: SealedOut
    replies: list[ReplyOut]


class BodyIn(BaseModel):
    body: str = Field(max_length=1_000_000)


class LogEntryOut(BaseModel):
    actor: str
    action: str
    detail: str
    post_number: int | None
    created_at: datetime


class ReplayOut(BaseModel):
    at: int
    moves: int
    view: dict[str, Any]


def reply_out(post: Post) -> ReplyOut:
    return ReplyOut(**PostOut.of(post).model_dump(), ok=bool(post.reply_ok), error=post.reply_error)


@router.get("/kinds", response_model=list[KindOut])
def kinds() -> list[KindOut]:
    return [
        KindOut(
            kind=g.kind,
            title=g.title_ja,
            title_en=g.title_en,
            min_players=g.min_players,
            max_players=g.max_players,
            options=[OptionOut.of(option, False) for option in game_fields(g)]
            + [OptionOut.of(option, True) for option in PLATFORM_FIELDS],
            rules_url=rules_path(g.kind),
        )
        for g in all_games()
    ]


@router.post(
    "",
    status_code=201,
    response_model=CreatedGame,
    responses={422: {"model": OptionsError, "description": "Bad options, or bad input"}},
)
def create(
    body: NewGame, request: Request, session: WriteSession, user: ApiUser
) -> CreatedGame | JSONResponse:
    ratelimit.check_post(session, request, user)
    try:
        game = gm.create_game(
            session,
            user,
            body.kind,
            body.title,
            body.options,
            deps.secret_key(request),
            bots=_bots(body.bots),
            rated_with_bots=body.rated_with_bots,
        )
    except OptionsInvalid as exc:
        session.end_writes()
        issues = [OptionIssue(option=p.name, message=p.message) for p in exc.problems]
        answer = OptionsError(detail=exc.message, errors=issues)
        return JSONResponse(answer.model_dump(), status_code=exc.status)
    return CreatedGame(id=game.id, kind=game.kind, status=game.status, thread_id=game.thread_id)


def _bots(value: Any) -> int:
    """``"bots"`` as the number it must be (a whole number; the service checks its range)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise Invalid("bots はボットの数（0以上の整数）で指定してください。", field="bots")


@router.get("", response_model=GameList)
def archive(
    session: ReadSession,
    settings: SettingsDep,
    status: Annotated[str | None, Query(max_length=64)] = None,
    kind: Annotated[str | None, Query(max_length=64)] = None,
    player: Annotated[str | None, Query(max_length=64)] = None,
    q: Annotated[str | None, Query(max_length=200)] = None,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
    since: Annotated[str | None, Query(alias="from", max_length=40)] = None,
    until: Annotated[str | None, Query(alias="to", max_length=40)] = None,
    sort: Annotated[str, Query(max_length=16)] = "newest",
) -> Response:
    """The archive listing (docs/archive.md): ``Game`` plus started_at, moves, posts, winners."""
    start, stop = listing.date_range(since, until)
    games, current = gm.list_games(
        session,
        status=status,
        kind=kind,
        player=player,
        q=q,
        page=page,
        per_page=settings.threads_per_page,
        since=start,
        until=stop,
        sort=sort,
    )
    rows = listing.rows(session, games)
    body = {
        "games": [
            {**GameOut.of(row.game).model_dump(mode="json"), **listing.row_json(row)}
            for row in rows
        ],
        "page": current.number,
        "pages": current.count,
    }
    return JSONResponse(body)


@router.get("/{game_id}", response_model=GameOut)
def game(game_id: int, session: ReadSession) -> GameOut:
    return GameOut.of(gm.get_game(session, game_id))


@router.get("/{game_id}/view")
def view(game_id: int, session: ReadSession, user: OptionalApiUser) -> dict[str, Any]:
    return gm.private_view(gm.get_game(session, game_id), user)


@router.get("/{game_id}/legal", response_model=LegalOut)
def legal(game_id: int, session: ReadSession, user: OptionalApiUser) -> LegalOut:
    found = gm.get_game(session, game_id)
    commands, sealed = gm.legal_split(found, user)
    return LegalOut(commands=commands, sealed=sealed)


@router.get("/{game_id}/moves", response_model=list[MoveOut])
def moves(game_id: int, session: ReadSession, user: OptionalApiUser) -> list[MoveOut]:
    found = gm.get_game(session, game_id)
    reader = secrecy.reader(found, user)
    return [
        MoveOut(
            seq=m.seq,
            post_number=m.post_number,
            actor=m.actor_name if m.actor_seat is not None else "GM",
            command=reader.shown(m),
            undone=m.undone,
        )
        for m in gm.moves_of(session, found)
    ]


@router.post(
    "/{game_id}/sealed",
    status_code=201,
    response_model=SealedResult,
    dependencies=[Depends(deps.require_bearer_header)],
)
async def sealed(game_id: int, body: BodyIn, request: Request) -> SealedResult:
    """A sealed command: stored for its author and the GM, applied as the game says."""
    secret = deps.secret_key(request)

    def work(session: Session, user: User) -> SealedResult:
        row, public = ratelimit.counted_post(
            session,
            request,
            user,
            lambda: gm.submit_sealed(session, game_id, user, body.body, secret),
        )
        replies = [reply_out(public)] if public is not None else []
        return SealedResult(sealed=SealedOut.of(row), replies=replies)

    return await deps.signed_in_work(request, work)


@router.get("/{game_id}/sealed", response_model=list[SealedOut])
def sealed_list(game_id: int, session: ReadSession, user: OptionalApiUser) -> list[SealedOut]:
    found = gm.get_game(session, game_id)
    return [SealedOut.of(row) for row in gm.sealed_for(session, found, user)]


@router.post("/{game_id}/preview", response_model=PostResult)
def preview(
    game_id: int, body: BodyIn, request: Request, session: WriteSession, user: ApiUser
) -> PostResult:
    """The bot's answer to this body as a post in the game's thread, short of outcomes that
    would reveal hidden information (``gm.preview``); nothing is stored."""
    ratelimit.check_post(session, request, user)
    found = gm.get_game(session, game_id)
    try:
        post, replies = gm.preview(
            session, found.thread_id, user, body.body, deps.secret_key(request)
        )
        return post_result(post, replies)
    finally:
        session.end_writes()


@router.get("/{game_id}/log", response_model=list[LogEntryOut])
def moderation_log(game_id: int, session: ReadSession) -> list[LogEntryOut]:
    found = gm.get_game(session, game_id)
    return [
        LogEntryOut(
            actor=e.actor_name,
            action=e.action,
            detail=e.detail,
            post_number=e.post_number,
            created_at=e.created_at,
        )
        for e in log_for(session, found)
    ]


@router.get("/{game_id}/replay", response_model=ReplayOut)
def replay_at(
    game_id: int, session: ReadSession, at: Annotated[int, Query(ge=0, le=1_000_000)] = 0
) -> ReplayOut:
    found = gm.get_game(session, game_id)
    impl = gm.game_impl(found.kind)
    applied = len(replay.applied_moves(session, found))
    if found.started_at is None:
        raise Invalid("このゲームはまだ始まっていません。", field="at")
    if at > applied:
        raise Invalid(f"at は 0〜{applied} です（適用された手は{applied}手）。", field="at")
    state = replay.replay(session, found, upto=at)
    assert state is not None
    # After the end everything is revealed (the epilogue); before it, only the public view.
    view = impl.view(state, "gm") if found.status == "finished" else impl.view(state, None)
    return ReplayOut(at=at, moves=applied, view=view)


SVG_HEADERS = {
    # Opened on its own, the picture runs nothing and loads nothing (it needs neither).
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    "X-Content-Type-Options": "nosniff",
}


@router.get(
    "/{game_id}/board.svg",
    response_class=Response,
    responses={200: {"content": {"image/svg+xml": {"schema": {"type": "string"}}}}},
)
def board_svg(
    request: Request,
    game_id: int,
    session: ReadSession,
    at: Annotated[int | None, Query(ge=0, le=1_000_000)] = None,
    as_: Annotated[Literal["me"] | None, Query(alias="as")] = None,
) -> Response:
    """The public board as an SVG picture (after the first `at` applied moves; now without
    it). `as=me` (logged in: bearer token or the site's session) adds what only the caller
    sees, such as their hand."""
    found = gm.get_game(session, game_id)
    user = None
    if as_ == "me":
        user = deps.bearer_user(request, session) or deps.cookie_user(request, session)
    picture = pictures.board_picture(session, found, at=at, user=user, as_me=as_ == "me")
    body = picture.encode()
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    headers = {
        **SVG_HEADERS,
        "ETag": etag,
        "Cache-Control": "private, no-cache" if as_ == "me" else "no-cache",
    }
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="image/svg+xml; charset=utf-8", headers=headers)


@router.get("/{game_id}/export")
def export(game_id: int, session: ReadSession) -> dict[str, Any]:
    """The whole record, one versioned JSON document (docs/export.md)."""
    return records.export_game(session, gm.get_game(session, game_id))


def post_result(post: Post, replies: list[Post]) -> PostResult:
    return PostResult(post=PostOut.of(post), replies=[reply_out(r) for r in replies])
