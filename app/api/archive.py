"""JSON routes of the archive: search, and verification of finished games (docs/archive.md).

The archive list itself is ``GET /api/games`` (app/api/games.py) and the export is
``GET /api/games/{id}/export``; both are produced by app.archive.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel

from app.api.schemas import ERROR_RESPONSES
from app.archive import records, verify
from app.archive.search import MAX_QUERY_CHARS, search
from app.gm import service as gm
from app.web.deps import DatabaseDep, ReadSession, SettingsDep

router = APIRouter(prefix="/api", responses=ERROR_RESPONSES)


class ThreadHitOut(BaseModel):
    thread_id: int
    title_html: str  # escaped, hits in <mark>
    board: str
    post_count: int
    url: str


class PostHitOut(BaseModel):
    thread_id: int
    thread_title: str
    board: str
    number: int
    author: str
    created_at: str
    snippet_html: str  # escaped, hits in <mark>
    url: str  # /threads/{id}#N (?page=P when N is not on the first page)


class SearchOut(BaseModel):
    query: str
    mode: str  # "index", "scan" (short words only: the newest `window` posts), "empty"
    window: int | None
    total: int  # at most 1000
    more: bool  # more than `total` posts match
    page: int
    pages: int
    threads: list[ThreadHitOut]
    posts: list[PostHitOut]


class CheckOut(BaseModel):
    name: str
    ok: bool | None  # null: could not be checked (message says why)
    message: str


class ReportOut(BaseModel):
    ok: bool
    moves_replayed: int
    checks: list[CheckOut]
    mismatches: list[str]
    mismatch_count: int


@router.get("/search", response_model=SearchOut)
def search_posts(
    database: DatabaseDep,
    settings: SettingsDep,
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS)] = "",
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> dict[str, Any]:
    """Thread titles and visible posts containing every word of ``q`` (Japanese: any run of
    characters; words of 1–2 characters scan only the newest posts, see ``mode``)."""
    with database.read_session() as session:  # only reads: on SQLite, no write lock
        return search(session, q, page=page, posts_per_page=settings.posts_per_page).to_json()


@router.post("/verify", response_model=ReportOut)
def verify_record(record: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
    """Verify an export document (``GET /api/games/{id}/export`` of a finished game): the seed's
    hash, every move replayed from the seed, the final view and the result."""
    return verify.verify(records.parse_record(record)).to_json()


@router.get("/games/{game_id}/verify", response_model=ReportOut)
def verify_stored(game_id: int, session: ReadSession) -> dict[str, Any]:
    """The same verification for a game stored here, from its own export."""
    return verify.verify_game(session, gm.get_game(session, game_id)).to_json()
