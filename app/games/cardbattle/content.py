"""掲示板進行カードゲーム's starter pool: house content (docs/rules/cardbattle.md, "House
content"), the cards every player may build decks from before anyone registers one — among
them 舞踏子, ホープ and MAKI, the players' own cards of the source's version. The file is
``app/games/cardbattle/content/cards.toml`` (``[[cards]]`` tables of `CardSpec`), validated at
start-up with the file and line of a bad entry. The card registry (app/gm/cards.py) copies it into
the database as approved version 1 of each card; after that the registry is the pool.
"""

from __future__ import annotations

import functools

from pydantic import BaseModel, ConfigDict

from app.games.cardbattle.cards import MAX_COST, CardSpec
from app.games.kit.content import EntryError, content_dir, load_content, require_unique

__all__ = ["starter_copy", "starter_pool"]


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
