"""Pages of the archive (docs/archive.md): the list of ended games, search, the replay page,
verification, and read-only 2ch-style files for dedicated BBS browsers.

This router is registered last: ``/{board}/subject.txt`` and ``/{board}/dat/{key}.dat`` match
only those file names, and never a reserved first segment (api, static, games, …).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from email.utils import formatdate, parsedate_to_datetime
from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile
from fastapi.responses import RedirectResponse
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app.archive import dat, listing
from app.archive.fold import MoveLine, steps
from app.archive.frames import frame
from app.archive.records import MAX_RECORD_BYTES, OVER, export_game, load_record
from app.archive.search import MAX_QUERY_CHARS, search
from app.archive.verify import Report, verify, verify_game
from app.config import Settings
from app.db.models import Board, Game, Post, utcnow
from app.errors import Invalid, NotFound, ServiceError
from app.forum import service as forum
from app.games import all_games
from app.games.base import CommandSyntaxError, RuleError
from app.gm import service as gm
from app.i18n import N_
from app.web import deps, http_cache, thread_cache
from app.web.common import CSRF_MESSAGE, render
from app.web.deps import PageUser, ReadSession, SettingsDep
from app.web.messages import game_title

router = APIRouter(include_in_schema=False)

Text = Annotated[str, Query(max_length=200)]
# First path segments that belong to the site, never to a board's 2ch-style files.
RESERVED = frozenset(
    {
        "api",
        "static",
        "games",
        "threads",
        "boards",
        "login",
        "logout",
        "register",
        "archive",
        "search",
        "test",
        "favicon.ico",
        "lang",
        "feeds",
        "notifications",
        "me",
        "bbsmenu.html",
        "bbsmenu.json",
    }
)
_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_RANGE = re.compile(r"bytes=(\d{1,12})-(\d{0,12})")


# --- the archive list -----------------------------------------------------------------------


@router.get("/archive")
def archive_page(
    request: Request,
    session: ReadSession,
    settings: SettingsDep,
    user: PageUser,
    status: Annotated[str, Query(max_length=64)] = listing.ENDED,
    kind: Text = "",
    player: Text = "",
    q: Text = "",
    since: Annotated[str, Query(alias="from", max_length=40)] = "",
    until: Annotated[str, Query(alias="to", max_length=40)] = "",
    sort: Annotated[str, Query(max_length=16)] = "ended",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    filters = {
        "status": status,
        "kind": kind,
        "player": player,
        "q": q,
        "from": since,
        "to": until,
        "sort": sort,
    }
    error, code = None, 200
    rows: list[listing.Row] = []
    current = forum.page_of(0, settings.threads_per_page, 1)
    try:
        start, stop = listing.date_range(since, until)
        games, current = gm.list_games(
            session,
            status=status or None,
            kind=kind or None,
            player=player or None,
            q=q or None,
            page=page,
            per_page=settings.threads_per_page,
            since=start,
            until=stop,
            sort=sort,
        )
        rows = listing.rows(session, games)
    except ServiceError as exc:
        error, code = exc.message, exc.status
    return render(
        request,
        "archive/list.html",
        user,
        code,
        rows=rows,
        page=current,
        filters=filters,
        query=urlencode({k: v for k, v in filters.items() if v}),
        kinds=all_games(),
        kind_titles={g.kind: game_title(g) for g in all_games()},
        sorts=listing.SORTS,
        statuses=listing.STATUS_CHOICES,
        error=error,
    )


# --- search ----------------------------------------------------------------------------------


@router.get("/search")
def search_page(
    request: Request,
    session: ReadSession,
    settings: SettingsDep,
    user: PageUser,
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS * 2)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    error, code, result = None, 200, None
    try:
        # The request's reading session: on SQLite no write lock (a search reads the posts
        # beyond the index with LIKE, as many as the indexer has not reached).
        result = search(session, q, page=page, posts_per_page=settings.posts_per_page)
    except ServiceError as exc:
        error, code = exc.message, exc.status
    return render(
        request,
        "archive/search.html",
        user,
        code,
        q=q,
        result=result,
        error=error,
        query=urlencode({"q": q}),
    )


# --- replay ------------------------------------------------------------------------------------


@router.get("/games/{game_id}/replay")
def replay_page(
    request: Request,
    game_id: int,
    session: ReadSession,
    settings: SettingsDep,
    user: PageUser,
    at: Annotated[int | None, Query(ge=0, le=10_000_000)] = None,
    viewer: Annotated[str | None, Query(max_length=16)] = None,
) -> Response:
    game = gm.get_game(session, game_id)
    shown = frame(session, game, user, at, viewer, settings.posts_per_page)
    replies: list[Post] = []
    events: list[str] = []
    if shown.move is not None:
        events = move_events(session, game, shown.at)
        if shown.post is not None:
            replies = list(
                session.scalars(
                    select(Post)
                    .where(Post.thread_id == game.thread_id, Post.reply_to == shown.post.number)
                    .where(Post.hidden_at.is_(None))
                    .order_by(Post.number)
                )
            )
    return render(
        request,
        "archive/replay.html",
        user,
        frame=shown,
        game=game,
        replies=replies,
        events=events,
        posts_per_page=settings.posts_per_page,
    )


def move_events(session: Session, game: Game, at: int) -> list[str]:
    """What the ``at``-th applied move did, in the public words of its events (the export's
    ``moves[].events``); none when the log no longer replays. Folds the first ``at`` moves
    only, as the frame itself does."""
    if game.started_at is None:
        return []
    impl = gm.game_impl(game.kind)
    moves = [m for m in gm.moves_of(session, game) if not m.undone][:at]
    lines = [MoveLine(m.seq, m.actor_seat, m.command, m.sealed) for m in moves]
    players = game.players_at_start or [p.name for p in game.players]
    public: list[str] = []
    try:
        for step in steps(impl, game.seed, game.options, players, lines):
            public = step.public
    except (RuleError, CommandSyntaxError, KeyError, ValueError, TypeError):
        return []
    return list(public)


# --- a readable transcript -------------------------------------------------------------------


@router.get("/games/{game_id}/transcript.txt")
def transcript(game_id: int, session: ReadSession) -> Response:
    """The game's record as plain text (docs/export.md, "Transcript"): the same record as the
    JSON export, hidden parts hidden the same way, laid out to be read."""
    game = gm.get_game(session, game_id)
    record = export_game(session, game)
    return Response(transcript_text(record), media_type="text/plain; charset=utf-8")


def transcript_text(record: dict[str, object]) -> str:
    """The export document (docs/export.md) as lines of text, Japanese like the thread."""

    def items(key: str) -> list[dict[str, object]]:
        found = record.get(key)
        return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []

    out = [
        f"{record.get('title')} ({record.get('kind')}) — {record.get('status')}",
        f"GM: {record.get('gm') or '—'}",
        "プレイヤー: " + "、".join(f"{p.get('seat')}. {p.get('name')}" for p in items("players")),
        f"種のハッシュ: {record.get('seed_hash') or '—'}",
        f"種: {record.get('seed') or '（終局後に公開）'}",
        "",
        "== 棋譜 ==",
    ]
    for move in items("moves"):
        where = f" >>{move['post_number']}" if move.get("post_number") else ""
        undone = " （取り消し）" if move.get("undone") else ""
        out.append(f"{move.get('seq')}. {move.get('actor')}: {move.get('command')}{where}{undone}")
        events = move.get("events")
        for event in events if isinstance(events, list) else []:
            out.append(f"    {event}")
    thread = record.get("thread")
    posts = thread.get("posts") if isinstance(thread, dict) else None
    out += ["", "== スレッド =="]
    for post in posts if isinstance(posts, list) else []:
        if not isinstance(post, dict):
            continue
        out.append(f"{post.get('number')} {post.get('author')} {post.get('created_at')}")
        out += [f"  {line}" for line in str(post.get("body", "")).split("\n")]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# --- verification ------------------------------------------------------------------------------


@router.get("/games/{game_id}/verify")
def verify_stored_page(
    request: Request, game_id: int, session: ReadSession, user: PageUser
) -> Response:
    game = gm.get_game(session, game_id)
    report = verify_game(session, game) if game.status in OVER else None
    error = None
    if report is None:
        error = N_("終わったゲームだけを検証できます（種は終局後に公開）。")
    return render(
        request,
        "archive/verify.html",
        user,
        200 if report is not None else 409,
        game=game,
        report=report,
        error=error,
    )


@router.get("/archive/verify")
def verify_form(request: Request, user: PageUser) -> Response:
    return render(request, "archive/verify.html", user, game=None, report=None, error=None)


@router.post("/archive/verify")
async def verify_upload(
    request: Request,
    user: PageUser,
    record: Annotated[str, Form(max_length=MAX_RECORD_BYTES)] = "",
    file: Annotated[UploadFile | None, File()] = None,
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """An export document pasted or uploaded; verified on the server."""
    report: Report | None = None
    error, code = None, 200
    if not deps.csrf_ok(request, csrf_token):
        error, code = CSRF_MESSAGE, 403
    else:
        raw: bytes | str = record
        if file is not None and file.filename:
            raw = await file.read(MAX_RECORD_BYTES + 1)
        try:
            if not raw or not raw.strip():
                raise Invalid(
                    N_("検証する記録（エクスポートした JSON）を貼り付けるか選んでください。")
                )
            report = await run_in_threadpool(_verify_raw, raw)
        except ServiceError as exc:
            error, code = exc.message, exc.status
    return render(request, "archive/verify.html", user, code, game=None, report=report, error=error)


def _verify_raw(raw: bytes | str) -> Report:
    return verify(load_record(raw))


# --- 2ch-style files for dedicated browsers (registered last) -----------------------------------


def _board(session: Session, slug: str) -> Board:
    if slug in RESERVED or not _SLUG.fullmatch(slug):
        raise NotFound(N_("板「%(slug)s」はありません。") % {"slug": slug})
    return forum.get_board(session, slug)


def _second(moment: datetime) -> int:
    return int(moment.timestamp())


def shown_modified(latest: datetime, now: datetime) -> int:
    """The Last-Modified second sent for a file whose newest change was at ``latest``.

    HTTP dates have whole seconds, so a change later in the same second as a copy would be
    hidden from an If-Modified-Since of that second. While the newest change is in the current
    second, the second before it is sent: a copy is never dated later than the last second
    known complete, and an If-Modified-Since at or after the newest change's second proves
    the copy holds it (docs/senbura.md)."""
    return min(_second(latest), _second(now) - 1)


def _since(request: Request) -> int | None:
    """The If-Modified-Since second, or None (absent or unreadable)."""
    header = request.headers.get("if-modified-since")
    if not header or len(header) > 64:
        return None
    try:
        return _second(parsedate_to_datetime(header))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _sjis(
    request: Request,
    body: bytes,
    changed: datetime | None = None,
    body_digest: bytes | None = None,
    media_type: str = dat.CONTENT_TYPE,
) -> Response:
    """The bytes as Shift_JIS text with their ETag and Last-Modified (a 304 when the browser
    has them), honouring ``Range: bytes=N-`` (a browser's differential fetch of a dat)."""
    tag = http_cache.etag(body_digest if body_digest is not None else http_cache.digest(body))
    headers = {"Accept-Ranges": "bytes", "Cache-Control": http_cache.PUBLIC, "ETag": tag}
    modified = None
    if changed is not None:
        modified = shown_modified(changed, utcnow())
        headers["Last-Modified"] = formatdate(modified, usegmt=True)
    # If-None-Match, when sent, decides alone (RFC 9110 13.2.2); then If-Modified-Since.
    if "if-none-match" in request.headers:
        if http_cache.not_modified(request, tag):
            return Response(status_code=304, headers=headers)
    elif changed is not None:
        since = _since(request)
        if since is not None and since >= _second(changed):
            return Response(status_code=304, headers=headers)
    return Response(body, headers=headers, media_type=media_type)


def _range(request: Request) -> int | None:
    found = _RANGE.fullmatch(request.headers.get("range", "").strip())
    if found is None:
        return None
    return int(found.group(1))


def _dat_response(
    request: Request,
    body: bytes,
    body_digest: bytes,
    changed: datetime,
) -> Response:
    """The dat, whole or from the requested byte (``Range: bytes=N-``, 差分): 304 when the
    copy is current, 206 with the bytes after it, 416 past the end. An あぼーん (or its
    undoing) keeps every byte offset (``dat.same_length_abon``), so a copy from before it is
    still a beginning of the dat, its posts' text aside: the 206 never shifts."""
    start = _range(request)
    if start is None or start == 0:
        return _sjis(request, body, changed, body_digest)
    headers = {
        "Accept-Ranges": "bytes",
        "Cache-Control": http_cache.PUBLIC,
        "ETag": http_cache.etag(body_digest),
        "Last-Modified": formatdate(shown_modified(changed, utcnow()), usegmt=True),
    }
    # If-None-Match, when sent, decides alone; then If-Modified-Since (``shown_modified``).
    if "if-none-match" in request.headers:
        if http_cache.not_modified(request, headers["ETag"]):
            return Response(status_code=304, headers=headers)
    else:
        since = _since(request)
        if since is not None and since >= _second(changed):
            return Response(status_code=304, headers=headers)  # nothing since the copy
    if start > len(body):
        headers["Content-Range"] = f"bytes */{len(body)}"
        return Response(status_code=416, headers=headers, media_type=dat.CONTENT_TYPE)
    if start == len(body):
        return Response(status_code=304, headers=headers)  # the copy is the whole dat
    headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
    return Response(body[start:], status_code=206, headers=headers, media_type=dat.CONTENT_TYPE)


@router.get("/{board}/subject.txt")
def subject_txt(request: Request, board: str, session: ReadSession) -> Response:
    found = _board(session, board)
    changed = dat.board_changed_at(session, found)
    body = dat.subject(session, found)
    return _sjis(request, body, changed)


@router.get("/{board}/SETTING.TXT")
def setting_txt(request: Request, board: str, session: ReadSession) -> Response:
    found = _board(session, board)
    return _sjis(request, dat.setting(found))


@router.get("/{board}/head.txt")
def head_txt(request: Request, board: str, session: ReadSession) -> Response:
    """The board's ローカルルール (its description)."""
    found = _board(session, board)
    return _sjis(request, dat.head(found), media_type=dat.HTML_TYPE)


def site_base(request: Request, settings: Settings) -> str:
    """The site's address for absolute links (bbsmenu): BBSGM_BASE_URL, else as the request
    reached it — and, since a 専ブラ's Host carries no port, the port the server listens on
    when the Host has none."""
    if settings.base_url:
        return settings.base_url.rstrip("/")
    host = request.headers.get("host", "")
    server = request.scope.get("server")
    if host and ":" not in host.rsplit("]", 1)[-1] and server and server[1] not in (80, 443):
        host = f"{host}:{server[1]}"
    return f"{request.url.scheme}://{host or 'localhost'}"


@router.get("/bbsmenu.html")
def bbsmenu_html(request: Request, session: ReadSession, settings: SettingsDep) -> Response:
    """Every board, so a 専ブラ takes the whole site in one step."""
    boards = forum.list_boards(session)
    body = dat.bbsmenu(boards, site_base(request, settings))
    return _sjis(request, body, media_type=dat.HTML_TYPE)


@router.get("/bbsmenu.json")
def bbsmenu_json(request: Request, session: ReadSession, settings: SettingsDep) -> Response:
    boards = forum.list_boards(session)
    document = dat.bbsmenu_json(boards, site_base(request, settings))
    body = json.dumps(document, ensure_ascii=False).encode("utf-8")
    return http_cache.conditional(
        request,
        body,
        http_cache.etag(http_cache.digest(body)),
        media_type="application/json",
        cache_control=http_cache.PUBLIC,
    )


@router.get("/{board}/dat/{key}.dat")
def dat_file(request: Request, board: str, key: str, session: ReadSession) -> Response:
    found = _board(session, board)
    thread = dat.thread_by_key(session, found, key)
    # Names, dates, IDs and bodies never change; the title, new posts and あぼーん do
    # (app/web/thread_cache.py). Undone moves do not show in a dat.
    version = thread_cache.thread_version(session, thread, None)
    cache_key = ("dat", thread.id, thread.title, version.post_count, version.moderation)
    body, body_digest = thread_cache.cached_file(cache_key, lambda: dat.dat(session, thread))
    # Last-Modified: the last post, or the last あぼーん (or its undoing) if later.
    changed = dat.last_post_time(session, thread)
    rewritten = dat.last_rewrite(session, thread)
    if rewritten is not None and rewritten > changed:
        changed = rewritten
    return _dat_response(request, body, body_digest, changed)


@router.get("/test/read.cgi/{board}/{key}/")
@router.get("/test/read.cgi/{board}/{key}")
def read_cgi(board: str, key: str, session: ReadSession) -> RedirectResponse:
    """The 2ch thread URL a browser opens in a web browser: the thread page."""
    found = _board(session, board)
    thread = dat.thread_by_key(session, found, key)
    return RedirectResponse(f"/threads/{thread.id}", status_code=301)
