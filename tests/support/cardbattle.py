"""Card specs for the カードゲーム tests, written as the rules' tests write them."""

from __future__ import annotations

from app.games.cardbattle.cards import Ability, CardSpec


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
