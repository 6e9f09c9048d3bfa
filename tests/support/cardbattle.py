"""Card specs for the カードゲーム tests, written as the rules' tests write them; and
collections holding the cards a scripted game's players hold."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import CardHolding, User
from app.games.cardbattle.cards import Ability, CardSpec
from app.games.cardbattle.registry import name_key
from app.gm import collections


def normal(name: str, cost: int, attack: int, durability: int, *abilities: Ability) -> CardSpec:
    return CardSpec(
        name=name,
        kind="normal",
        cost=cost,
        attack=attack,
        durability=durability,
        abilities=abilities,
    )


def magic(name: str, cost: int, *abilities: Ability) -> CardSpec:
    return CardSpec(name=name, kind="magic", cost=cost, abilities=abilities)


def ability(effect: str, amount: int = 0, timing: str | None = None) -> Ability:
    return Ability.model_validate({"effect": effect, "amount": amount, "timing": timing})


def hold(session: Session, user: User, names: Iterable[str]) -> None:
    """``user``'s collection holds ``names`` (docs/cards.md "Collections"): the starter cards,
    and each other card as given by 公式 — as an official's GIVE would, without the thread."""
    collections.ensure_starter(session, user.id)
    have = set(session.scalars(select(CardHolding.name_key).where(CardHolding.user_id == user.id)))
    for name in names:
        if name_key(name) not in have:
            have.add(name_key(name))
            session.add(
                CardHolding(
                    user_id=user.id,
                    name=name,
                    name_key=name_key(name),
                    how="given",
                    given_by="公式",
                )
            )
    session.flush()
