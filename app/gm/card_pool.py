"""The card registry's pool, read (docs/cards.md): each card's newest approved version, the
lists' filters, a card's every version. Re-exported by app/gm/cards.py."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import CardVersion
from app.errors import Invalid, NotFound
from app.games.cardbattle.cards import CardSpec
from app.games.cardbattle.registry import name_key

__all__ = ["KINDS", "card_spec", "history", "pool", "pool_entries", "pool_options"]

KINDS = ("normal", "magic")


# --- reading -----------------------------------------------------------------------------------


def card_spec(row: CardVersion) -> CardSpec:
    """A stored version as the card model every part shares."""
    return CardSpec.model_validate(
        {
            "name": row.name,
            "kind": row.kind,
            "cost": row.cost,
            "attack": row.attack,
            "durability": row.durability,
            "abilities": row.abilities,
            "version": row.version,
            "text": row.text,
        }
    )


def _pool_rows(session: Session) -> list[CardVersion]:
    rows = session.scalars(
        select(CardVersion)
        .where(CardVersion.status == "approved")
        .order_by(CardVersion.name_key, CardVersion.version)
    )
    newest: dict[str, CardVersion] = {}
    for row in rows:
        newest[row.name_key] = row  # ordered by version: the last one is the newest
    return sorted(
        newest.values(),
        key=lambda r: (KINDS.index(r.kind) if r.kind in KINDS else 9, r.cost, r.name),
    )


def pool(session: Session) -> dict[str, CardSpec]:
    """The pool: the newest approved version of each card (normal cards first, then magic,
    each by cost and name)."""
    return {row.name: card_spec(row) for row in _pool_rows(session)}


def pool_options(session: Session) -> dict[str, dict[str, Any]]:
    """The pool as a game's ``options["pool"]``: name -> the card as JSON, version included."""
    return {name: spec.model_dump(mode="json") for name, spec in pool(session).items()}


def pool_entries(
    session: Session,
    *,
    kind: str | None = None,
    min_cost: int | None = None,
    max_cost: int | None = None,
) -> list[CardVersion]:
    """The pool's rows, filtered for the lists (kind: normal / magic; cost bounds inclusive)."""
    if kind is not None and kind not in KINDS:
        raise Invalid(f"kind は {', '.join(KINDS)} のどれかです。", field="kind")
    return [
        row
        for row in _pool_rows(session)
        if (kind is None or row.kind == kind)
        and (min_cost is None or row.cost >= min_cost)
        and (max_cost is None or row.cost <= max_cost)
    ]


def history(session: Session, name: str) -> list[CardVersion]:
    """Every version of the card called ``name`` (any case or width), oldest first; raises
    NotFound when the registry has none."""
    if "\x00" in name:  # PostgreSQL takes no NUL in text; no card is named so
        raise NotFound(f"カード「{name.replace(chr(0), '')}」はありません。")
    rows = list(
        session.scalars(
            select(CardVersion)
            .where(CardVersion.name_key == name_key(name))
            .order_by(CardVersion.version)
        )
    )
    if not rows:
        raise NotFound(f"カード「{name}」はありません。")
    return rows
