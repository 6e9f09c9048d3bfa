"""掲示板進行カードゲーム's cards: the model every part shares — the starter pool's data file,
the card registry (app/gm/cards.py, where players propose cards by post), a game's card pool
(snapshotted into the game's options when it is created) and the rules.

A card (R ステータス): a normal card has cost, attack, durability and special abilities; a magic
card has cost and special abilities. Abilities come from a fixed vocabulary (D, docs/rules/
cardbattle.md "Abilities"): an effect, an amount, and for a normal card the timing at which it
fires. Each is written the way the registry's grammar reads it and the bot prints it:
``登場時 ダメージ 100`` — timing, effect, amount.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "EFFECTS",
    "EFFECT_JA",
    "HELD_LIMITS",
    "TIMINGS",
    "TIMING_JA",
    "Ability",
    "CardSpec",
    "Effect",
    "Timing",
    "ability_text",
    "card_line",
]

MAX_COST = 1000  # R 初期コスト 1000: no single card can cost more
MAX_ATTACK = 999
MAX_DURABILITY = 999
MAX_AMOUNT = 999
# A collection holds at most this many cards of each kind (R 通常カード 「f:規定枚数 ← 9」,
# マジックカード 「f:規定枚数 ← 3枚以下」; docs/cards.md "Collections").
HELD_LIMITS: dict[str, int] = {"normal": 9, "magic": 3}

Timing = Literal["entry", "attack", "destroyed", "turn_start"]
Effect = Literal[
    "damage",
    "damage_all",
    "heal",
    "shield",
    "attack_up",
    "remove",
    "revive",
    "cost",
]
TIMINGS: tuple[Timing, ...] = ("entry", "attack", "destroyed", "turn_start")
EFFECTS: tuple[Effect, ...] = (
    "damage",
    "damage_all",
    "heal",
    "shield",
    "attack_up",
    "remove",
    "revive",
    "cost",
)
# How players write them (the registry's grammar takes these and the English names).
TIMING_JA: dict[str, str] = {
    "entry": "登場時",
    "attack": "攻撃時",
    "destroyed": "破壊時",
    "turn_start": "手番開始時",
}
EFFECT_JA: dict[str, str] = {
    "damage": "ダメージ",  # the opposing card with the lowest durability left loses n
    "damage_all": "全体ダメージ",  # every opposing card in action loses n
    "heal": "回復",  # own card in action that lost the most regains n (up to its durability)
    # this card (a magic: own card with the lowest durability left) takes n less from attacks
    # until n is used up (docs/rules/cardbattle.md; ability damage does not wear it down)
    "shield": "防御",
    "attack_up": "攻撃強化",  # this card's attack +n (a magic: own card with the highest attack)
    "remove": "除外",  # the opposing card in action with the highest attack is removed
    "revive": "復活",  # own first destroyed card back in action with n durability
    "cost": "コスト",  # own total cost changes by n (negative: lower)
}
# Effects whose amount means nothing.
NO_AMOUNT: frozenset[str] = frozenset({"remove"})


class Ability(BaseModel):
    """One special ability: what it does, how much, and (normal cards) when it fires."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    effect: Effect
    amount: int = Field(default=0, ge=-MAX_AMOUNT, le=MAX_AMOUNT)
    timing: Timing | None = None  # None for a magic card's ability: it fires when declared

    @model_validator(mode="after")
    def _amount_makes_sense(self) -> Ability:
        if self.effect in NO_AMOUNT and self.amount:
            raise ValueError(f"{self.effect} takes no amount")
        if self.effect not in NO_AMOUNT and self.effect != "cost" and self.amount <= 0:
            raise ValueError(f"{self.effect} needs an amount above 0")
        if self.effect == "cost" and self.amount == 0:
            raise ValueError("cost needs an amount other than 0")
        return self


class CardSpec(BaseModel):
    """A card as one version of it stands (the registry keeps every version)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=16, pattern=r"^\S+$")
    kind: Literal["normal", "magic"]
    cost: int = Field(ge=0, le=MAX_COST)
    attack: int = Field(default=0, ge=0, le=MAX_ATTACK)
    durability: int = Field(default=0, ge=0, le=MAX_DURABILITY)
    abilities: tuple[Ability, ...] = ()
    version: int = Field(default=1, ge=1)
    text: str = ""  # flavour, as its author wrote it

    @model_validator(mode="after")
    def _shape(self) -> CardSpec:
        if self.kind == "normal":
            if self.durability < 1:
                raise ValueError("a normal card has durability 1 or more")
            if any(ability.timing is None for ability in self.abilities):
                raise ValueError("a normal card's ability says when it fires (登場時 …)")
        else:
            if self.attack or self.durability:
                raise ValueError("a magic card has no attack or durability (its ステータス)")
            if not self.abilities:
                raise ValueError("a magic card has a special ability (its マジックカード text)")
            if any(ability.timing is not None for ability in self.abilities):
                raise ValueError("a magic card's ability fires when it is declared: no timing")
        if len(self.abilities) > 4:
            raise ValueError("at most 4 abilities")
        return self


def ability_text(ability: Ability) -> str:
    """``登場時 ダメージ 100`` — as the registry's grammar reads it."""
    parts = [TIMING_JA[ability.timing]] if ability.timing is not None else []
    parts.append(EFFECT_JA[ability.effect])
    if ability.effect not in NO_AMOUNT:
        parts.append(str(ability.amount))
    return " ".join(parts)


def card_line(card: CardSpec) -> str:
    """One line describing the card, for replies and lists."""
    if card.kind == "normal":
        head = f"{card.name} コスト{card.cost} 攻撃{card.attack} 耐久{card.durability}"
    else:
        head = f"{card.name}(魔法) コスト{card.cost}"
    if card.abilities:
        head += " 能力: " + " / ".join(ability_text(ability) for ability in card.abilities)
    return head
