"""Piles of cards as JSON lists: build, shuffle, draw, deal, put back and discard.

Every card game keeps its draw piles, discard piles and hands in the state as lists of card ids,
and every one of them needs the same few moves on those lists; written once here, they behave
the same in every game (above all the reshuffle when a draw pile runs out, which is easy to get
subtly wrong: the drawn cards must not be shuffled back, and no card may be lost or doubled).

Conventions:

- A pile is a list read bottom to top: its **last** item is the top card, so ``pile.pop()``
  draws, as the existing games already do. A discard pile is a pile too (the last card
  discarded is on top).
- A hand is a list in no particular order.
- Functions mutate the lists they are given (the caller's working copy of the state) and
  return only what the caller has to report (the cards drawn).
- Cards may be any JSON value, though games use card ids (``"祝福"``, ``"役者3"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from app.games.base import Rng, RuleError
from app.games.kit.seats import others

__all__ = [
    "DeckExhausted",
    "deal",
    "discard",
    "draw",
    "expand",
    "make_deck",
    "others_hands",
    "put_on_bottom",
    "put_on_top",
    "refill",
    "remove_cards",
    "reshuffle",
]

C = TypeVar("C")


class DeckExhausted(RuleError):
    """A strict draw or a deal asked for more cards than the pile and the discards hold.

    A `RuleError`, so that a game whose rules forbid drawing from an empty deck can let it
    reach the player as a refusal; `wanted` and `available` say by how much it fell short.
    """

    def __init__(self, wanted: int, available: int) -> None:
        super().__init__(
            f"山札が足りません: {wanted}枚引く必要がありますが、"
            f"山札と捨て札を合わせても{available}枚しかありません。"
        )
        self.wanted = wanted
        self.available = available


def expand(counts: Mapping[C, int]) -> list[C]:
    """The cards of a deck given as card -> number of copies, in the mapping's order.

    Rulebooks list decks this way (「祝福、労働、奇跡、啓示、繁栄 各18枚」); keeping the
    mapping's order makes the unshuffled deck, and so every shuffle of it, reproducible.
    """
    cards: list[C] = []
    for card, number in counts.items():
        if number < 0:
            raise ValueError(f"negative number of copies for {card!r}: {number}")
        cards.extend([card] * number)
    return cards


def make_deck(cards: Iterable[C], rng: Rng) -> list[C]:
    """A new pile holding `cards`, shuffled with `rng` (the input is not touched)."""
    deck = list(cards)
    rng.shuffle(deck)
    return deck


def reshuffle(pile: list[C], discard: list[C], rng: Rng) -> None:
    """Shuffle the discard pile and put it under the draw pile; the discard pile is emptied.

    The cards still in the draw pile stay on top, in their order: players may know them, and
    the common rule is to reshuffle only what was discarded. `draw` calls this only once the
    pile is empty, where the two readings agree.
    """
    if pile is discard:
        raise ValueError("the draw pile and the discard pile are the same list")
    cards = list(discard)
    discard.clear()
    rng.shuffle(cards)
    pile[:0] = cards


def draw(
    pile: list[C],
    n: int,
    rng: Rng,
    discard: list[C] | None = None,
    *,
    strict: bool = False,
) -> list[C]:
    """Take `n` cards from the top of `pile`, in the order drawn.

    When the pile runs out and `discard` is given, the discard pile is shuffled (with `rng`)
    into the pile and the draw goes on; the cards drawn so far are not shuffled back. When both
    run out, the draw returns **fewer cards than asked** (possibly none): many rules say "draw
    what is left". With ``strict=True`` it raises `DeckExhausted` instead, before moving any
    card, so a refused draw leaves the piles as they were.

    A reshuffle happens exactly when ``n > len(pile)`` and the discard pile is not empty; a
    game that announces it can test that before calling.
    """
    if n < 0:
        raise ValueError(f"cannot draw a negative number of cards: {n}")
    if discard is pile:
        raise ValueError("the draw pile and the discard pile are the same list")
    available = len(pile) + (len(discard) if discard is not None else 0)
    if strict and available < n:
        raise DeckExhausted(n, available)
    drawn: list[C] = []
    while len(drawn) < n:
        if not pile:
            if not discard:
                break
            reshuffle(pile, discard, rng)
        drawn.append(pile.pop())
    return drawn


def refill(
    hand: list[C],
    pile: list[C],
    size: int,
    rng: Rng,
    discard: list[C] | None = None,
) -> list[C]:
    """Draw into `hand` until it holds `size` cards (or the cards run out); returns the drawn.

    The end-of-turn "refill to the hand size" of many games; a hand already at or over the
    size draws nothing (discarding down is a choice the rules give the player, not this).
    """
    drawn = draw(pile, max(0, size - len(hand)), rng, discard)
    hand.extend(drawn)
    return drawn


def deal(pile: list[C], hands: Sequence[list[C]], n: int) -> None:
    """Deal `n` cards to each hand, one card at a time round the table, from the top of `pile`.

    One at a time, as at a real table, so the hands are the same whether a game deals from a
    rigged pile in a test or from a shuffled one. `hands` are the players' hand lists in
    dealing order (usually starting left of the dealer) and are extended in place. There is no
    reshuffle when dealing: too few cards raises `DeckExhausted` and moves none.
    """
    if n < 0:
        raise ValueError(f"cannot deal a negative number of cards: {n}")
    wanted = n * len(hands)
    if wanted > len(pile):
        raise DeckExhausted(wanted, len(pile))
    for _ in range(n):
        for hand in hands:
            hand.append(pile.pop())


def put_on_top(pile: list[C], cards: Iterable[C]) -> None:
    """Put `cards` on top of `pile`, keeping their order: the last of `cards` becomes the top.

    `cards` read bottom to top like the pile itself, so ``put_on_top(pile, draw(pile, 3, rng))``
    does *not* restore the pile (the drawn list reads top first): reverse it for that.
    """
    pile.extend(cards)


def put_on_bottom(pile: list[C], cards: Iterable[C]) -> None:
    """Put `cards` under `pile`, keeping their order: the first of `cards` becomes the bottom."""
    pile[:0] = list(cards)


def remove_cards(source: list[C], cards: Iterable[C]) -> None:
    """Take `cards` out of `source` (a hand), one occurrence per card listed.

    All or nothing: when `source` lacks any of them (counting copies) it raises a `RuleError`
    naming the card (and the copies asked for, when more than one), and `source` is unchanged,
    so a refused command leaves no half-done move.
    """
    wanted = list(cards)
    remaining = list(source)
    for card in wanted:
        try:
            remaining.remove(card)
        except ValueError:
            # Name the copies asked for: "a を持っていません" to a player holding one a misleads.
            asked = wanted.count(card)
            copies = "" if asked == 1 else f"{asked}枚は"
            raise RuleError(f"{card} を{copies}持っていません。") from None
    source[:] = remaining


def discard(hand: list[C], discard_pile: list[C], cards: Iterable[C]) -> None:
    """Move `cards` from `hand` to the top of `discard_pile`, in the order given.

    Raises `RuleError` (and moves nothing) when the hand lacks one of them; see `remove_cards`.
    """
    wanted = list(cards)
    remove_cards(hand, wanted)
    discard_pile.extend(wanted)


def others_hands(players: Sequence[Mapping[str, Any]], viewer: object) -> list[list[Any]]:
    """What `Game.hidden` names of the hands: a copy of every player's ``hand`` but the
    seat `viewer`'s, leaving out hands of one card or none."""
    return [
        list(player["hand"]) for _, player in others(players, viewer) if len(player["hand"]) > 1
    ]
