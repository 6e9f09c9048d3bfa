"""Pages of the card registry (docs/cards.md): the card list with its filters, and one card's
history and the games it was played in. Cards are proposed in the registry thread, a forum
thread like any other (its link is on both pages)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request, Response

from app.db.models import CardVersion
from app.errors import Invalid, ServiceError
from app.gm import cards
from app.i18n import N_
from app.web.common import render
from app.web.deps import PageUser, ReadSession, SettingsDep

router = APIRouter(include_in_schema=False)

KIND_LABELS = {"normal": N_("通常"), "magic": N_("魔法")}
STATUS_LABELS = {"proposed": N_("承認待ち"), "approved": N_("承認済み"), "rejected": N_("却下")}
Filter = Annotated[str, Query(max_length=40)]


def _cost(text: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    if not text.isascii() or not text.isdigit() or len(text) > 7:
        raise Invalid(
            N_("コストは 0 以上の整数で書いてください（「%(text)s」は読めません）。")
            % {"text": text},
            field="cost",
        )
    return int(text)


@router.get("/cards")
def card_list_page(
    request: Request,
    session: ReadSession,
    user: PageUser,
    kind: Filter = "",
    min_cost: Filter = "",
    max_cost: Filter = "",
) -> Response:
    filters = {"kind": kind, "min_cost": min_cost, "max_cost": max_cost}
    error, code = None, 200
    rows: list[CardVersion] = []
    try:
        rows = cards.pool_entries(
            session, kind=kind or None, min_cost=_cost(min_cost), max_cost=_cost(max_cost)
        )
    except ServiceError as exc:
        error, code = exc.message, exc.status
    thread_id = cards.registry_thread_id(session)
    specs = {row.id: cards.card_spec(row) for row in rows}
    return render(
        request,
        "cards/list.html",
        user,
        code,
        rows=rows,
        specs=specs,
        filters=filters,
        query=urlencode({k: v for k, v in filters.items() if v}),
        kinds=KIND_LABELS,
        registry_thread_id=thread_id,
        error=error,
    )


@router.get("/cards/{name}")
def card_page(
    request: Request,
    name: Annotated[str, Path(max_length=200)],
    session: ReadSession,
    settings: SettingsDep,
    user: PageUser,
) -> Response:
    versions = cards.history(session, name)
    games = cards.played_in(session, name)
    approved = [row.version for row in versions if row.status == "approved"]
    specs = {row.id: cards.card_spec(row) for row in versions}
    thread_id = cards.registry_thread_id(session)
    return render(
        request,
        "cards/card.html",
        user,
        card_name=versions[-1].name,
        versions=versions,
        specs=specs,
        current=approved[-1] if approved else None,
        games=games,
        kinds=KIND_LABELS,
        statuses=STATUS_LABELS,
        registry_thread_id=thread_id,
        posts_per_page=settings.posts_per_page,
    )
