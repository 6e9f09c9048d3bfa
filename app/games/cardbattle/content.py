"""掲示板進行カードゲーム's starter pool: house content (docs/rules/cardbattle.md, "House
content"), the cards every player may build decks from before anyone registers one — among
them 舞踏子, ホープ and MAKI, the players' own cards of the source's version. The file is
``app/games/cardbattle/content/cards.toml`` (``[[cards]]`` tables of `CardSpec`), validated at
start-up with the file and line of a bad entry. The card registry (app/gm/cards.py) copies it into
the database as approved version 1 of each card; after that the registry is the pool.
"""

from __future__ import annotations

import functools

from pydantic import BaseModel, ConfigDict, Field

from app.games.cardbattle.cards import HELD_LIMITS, MAX_COST, CardSpec
from app.games.kit.content import EntryError, content_dir, load_content, require_unique

__all__ = ["starter_cards", "starter_copy", "starter_pool"]


class StarterCards(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cards: list[CardSpec]


def _check(pool: StarterCards) -> None:
    require_unique(pool.cards, "name", "cards")
    normal = [card for card in pool.cards if card.kind == "normal"]
    magic = [card for card in pool.cards if card.kind == "magic"]
    if len(normal) < 24 or len(magic) < 12:
        raise EntryError(("cards",), "at least 24 normal and 12 magic cards")
    names = {card.name for card in pool.cards}
    missing = {"舞踏子", "ホープ", "MAKI"} - names
    if missing:
        raise EntryError(("cards",), f"the source's players' cards are missing: {sorted(missing)}")
    # A deck over the initial cost (R 初期コスト 1000) is refused when sealed (docs/rules/
    # cardbattle.md), so a pool whose three cheapest normal cards cost more starts no game.
    cheapest = sum(sorted(card.cost for card in normal)[:3])
    if cheapest > MAX_COST:
        raise EntryError(
            ("cards",),
            f"no deck of 3 normal cards fits {MAX_COST} (the cheapest costs {cheapest})",
        )


@functools.cache
def starter_pool() -> tuple[CardSpec, ...]:
    """The starter cards (raises kit.content.ContentError naming the file and line)."""
    loaded = load_content(content_dir("cardbattle") / "cards.toml", StarterCards, _check)
    return tuple(loaded.cards)


def _combination(card: CardSpec) -> tuple[object, ...]:
    """What makes a card the same card to play: its kind, numbers and abilities (in any order);
    not its name, text or version."""
    abilities = sorted((a.effect, a.amount, a.timing or "") for a in card.abilities)
    return (card.kind, card.cost, card.attack, card.durability, tuple(abilities))


@functools.cache
def _starter_combinations() -> dict[tuple[object, ...], str]:
    return {_combination(card): card.name for card in starter_pool()}


def starter_copy(card: CardSpec) -> str | None:
    """R 「初期配布されるカードと異なるステータスの組み合わせを持つカードを作成する行為」: a card
    made (CARD NEW) or rewritten (CARD PROMOTE, a カード作成行為 too) must differ from every
    starter card in its stats or abilities. The refusal to post when it does not, else None."""
    twin = _starter_combinations().get(_combination(card))
    if twin is None:
        return None
    return (
        f"初期カード「{twin}」とコスト・攻撃力・耐久力・能力がすべて同じです。"
        "カードを作るときは、初期カードと違う組み合わせにしてください。"
    )


class StarterHand(BaseModel):
    """``content/starter.toml``: the cards a new account's collection holds (R 「初期所持の通常
    カード」; docs/cards.md "Collections")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cards: list[str] = Field(min_length=1)


def _check_hand(hand: StarterHand) -> None:
    by_name = {card.name: card for card in starter_pool()}
    if len(set(hand.cards)) != len(hand.cards):
        raise EntryError(("cards",), "a card is listed twice (a collection holds a card once)")
    unknown = [name for name in hand.cards if name not in by_name]
    if unknown:
        raise EntryError(("cards",), f"not cards of cards.toml: {unknown}")
    for kind, limit in HELD_LIMITS.items():
        count = sum(1 for name in hand.cards if by_name[name].kind == kind)
        if count > limit:
            raise EntryError(("cards",), f"{count} {kind} cards: a collection holds {limit}")
    costs = sorted(by_name[name].cost for name in hand.cards if by_name[name].kind == "normal")
    if len(costs) < 3 or sum(costs[:3]) > MAX_COST:
        raise EntryError(("cards",), f"no deck of 3 normal cards within {MAX_COST}")


@functools.cache
def starter_cards() -> tuple[CardSpec, ...]:
    """The starter cards of a collection, as the starter pool has them (raises
    kit.content.ContentError naming the file and line)."""
    hand = load_content(content_dir("cardbattle") / "starter.toml", StarterHand, _check_hand)
    by_name = {card.name: card for card in starter_pool()}
    return tuple(by_name[name] for name in hand.cards)
