"""``GET /api/me/turns``: the games awaiting the caller now (../shared/API.md "Players",
docs/api.md "Your turns"). Read by each seat's ``waiting_since`` (app/gm/turns.awaiting):
two queries whatever the number of games."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel

from app.api.schemas import ERROR_RESPONSES
from app.gm import turns
from app.web.deps import ApiUser, ReadSession

router = APIRouter(responses=ERROR_RESPONSES)


class WaitingOut(BaseModel):
    # 手番待ち (one seat) or 未提出 (several asked at once: those not moved yet).
    word: str
    names: list[str]


class TurnOut(BaseModel):
    id: int
    kind: str
    title: str
    thread_id: int
    # The turn in words (第2週, 魔法の宣言); "" when the game names none.
    turn: str
    # The kind's title as GET /api/kinds gives it: Japanese, and English beside it (the API
    # is not translated, docs/i18n.md).
    kind_title: str
    kind_title_en: str
    waiting: WaitingOut
    # 「未提出: A、B」 / 「手番待ち: A」, as the game page's status line says it.
    waiting_text: str
    since: datetime
    deadline_at: datetime | None
    thread_url: str
    game_url: str


class TurnsOut(BaseModel):
    games: list[TurnOut]


@router.get("/me/turns", response_model=TurnsOut)
def my_turns(session: ReadSession, user: ApiUser) -> TurnsOut:
    """The games awaiting the caller now, the longest-waiting first."""
    tables = turns.awaiting(session, user.id)
    return TurnsOut(
        games=[
            TurnOut(
                id=t.game.id,
                kind=t.game.kind,
                title=t.game.title,
                thread_id=t.game.thread_id,
                turn=t.turn,
                kind_title=t.impl.title_ja if t.impl is not None else t.game.kind,
                kind_title_en=t.impl.title_en if t.impl is not None else t.game.kind,
                waiting=WaitingOut(word=t.waiting.word, names=list(t.waiting.names)),
                waiting_text=t.waiting.text(),
                since=t.since,
                deadline_at=t.game.deadline_at,
                thread_url=f"/threads/{t.game.thread_id}",
                game_url=f"/games/{t.game.id}",
            )
            for t in tables
            if t.since is not None
        ]
    )
