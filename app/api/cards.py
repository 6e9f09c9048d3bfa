"""JSON routes of the card registry (docs/cards.md; ../shared/rules/cardbattle.md, "What outside
clients rely on"): the approved pool and each card's history. Read-only: cards are proposed and
judged by posting in the registry thread (POST /api/threads/{registry_thread_id}/posts)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel

from app.api.schemas import ERROR_RESPONSES
from app.db.models import CardVersion
from app.games.cardbattle.cards import HELD_LIMITS, ability_text, card_line
from app.gm import cards, collections
from app.web.deps import ReadSession

router = APIRouter(prefix="/api/cards", responses=ERROR_RESPONSES)
Cost = Annotated[int | None, Query(ge=0, le=1_000_000)]


class AbilityOut(BaseModel):
    effect: str
    amount: int
    timing: str | None
    text: str  # as the registry's grammar reads it: 登場時 ダメージ 100


class CardOut(BaseModel):
    name: str
    kind: Literal["normal", "magic"]
    cost: int
    attack: int
    durability: int
    abilities: list[AbilityOut]
    version: int
    text: str
    line: str  # the card in one line, as the bot prints it
    author: str

    @classmethod
    def of(cls, row: CardVersion) -> CardOut:
        spec = cards.card_spec(row)
        return cls(
            name=spec.name,
            kind=spec.kind,
            cost=spec.cost,
            attack=spec.attack,
            durability=spec.durability,
            abilities=[
                AbilityOut(effect=a.effect, amount=a.amount, timing=a.timing, text=ability_text(a))
                for a in spec.abilities
            ],
            version=spec.version,
            text=spec.text,
            line=card_line(spec),
            author=row.author_name,
        )


class CardList(BaseModel):
    cards: list[CardOut]
    registry_thread_id: int | None


class CardVersionOut(CardOut):
    status: Literal["proposed", "approved", "rejected"]
    created_at: datetime
    post_number: int | None  # the registry post that proposed it (None: the starter pool)
    decided_by: str | None
    decided_at: datetime | None
    decided_post_number: int | None
    reason: str | None

    @classmethod
    def of_version(cls, row: CardVersion) -> CardVersionOut:
        status = row.status if row.status in cards.STATUSES else "proposed"
        return cls(
            **CardOut.of(row).model_dump(),
            status=status,
            created_at=row.created_at,
            post_number=row.post_number,
            decided_by=row.decided_by,
            decided_at=row.decided_at,
            decided_post_number=row.decided_post_number,
            reason=row.reason,
        )


class CardGameOut(BaseModel):
    id: int
    title: str
    status: str
    version: int | None  # the card's version in that game's pool


class CardHistory(BaseModel):
    name: str
    versions: list[CardVersionOut]
    current: int | None  # the version in the pool (None: never approved)
    games: list[CardGameOut]
    registry_thread_id: int | None


@router.get("", response_model=CardList)
def card_list(
    session: ReadSession,
    kind: Literal["normal", "magic"] | None = None,
    min_cost: Cost = None,
    max_cost: Cost = None,
) -> CardList:
    """The pool: the newest approved version of every card, normal cards first, each by cost;
    and the thread where cards are proposed (`CARD NEW …`) and judged (`APPROVE` / `REJECT`)."""
    rows = cards.pool_entries(session, kind=kind, min_cost=min_cost, max_cost=max_cost)
    return CardList(
        cards=[CardOut.of(row) for row in rows],
        registry_thread_id=cards.registry_thread_id(session),
    )


class HeldOut(BaseModel):
    name: str
    kind: Literal["normal", "magic"]
    how: Literal["starter", "own", "given"]
    given_by: str
    obtained_at: datetime | None  # None: a starter card not written yet (no need came)
    post_number: int | None  # the registry post that gave it


class CollectionOut(BaseModel):
    user: str
    cards: list[HeldOut]
    limits: dict[str, int]  # {"normal": 9, "magic": 3}


@router.get("/collections/{user:path}", response_model=CollectionOut)
def card_collection(
    user: Annotated[str, Path(max_length=200)], session: ReadSession
) -> CollectionOut:
    """The cards an account holds (docs/cards.md "Collections"), in the order it got them:
    the starter cards, its own approved cards, the cards officials gave it. 404 for a name no
    account has."""
    account, held = collections.held_by(session, user)
    return CollectionOut(
        user=account.name,
        cards=[
            HeldOut(
                name=h.name,
                kind=h.kind,
                how=h.how,
                given_by=h.given_by,
                obtained_at=h.obtained_at,
                post_number=h.post_number,
            )
            for h in held
        ],
        limits=dict(HELD_LIMITS),
    )


@router.get("/{name}", response_model=CardHistory)
def card_history(name: Annotated[str, Path(max_length=200)], session: ReadSession) -> CardHistory:
    """Every version of one card (proposed, approved, rejected), and the games it was played
    in with the version each game had."""
    rows = cards.history(session, name)
    approved = [row.version for row in rows if row.status == "approved"]
    return CardHistory(
        name=rows[-1].name,
        versions=[CardVersionOut.of_version(row) for row in rows],
        current=approved[-1] if approved else None,
        games=[
            CardGameOut(id=p.game.id, title=p.game.title, status=p.game.status, version=p.version)
            for p in cards.played_in(session, name)
        ],
        registry_thread_id=cards.registry_thread_id(session),
    )
