"""新新エリューシス's cards: two standard 52-card decks, 104 cards, no jokers (R 準備 1).

One spelling everywhere (state, views, events, canonical lines): suit symbol + rank,
``♠A`` ``♥7`` ``♦10`` ``♣K``. Input also accepts suit letters (``S7``, ``h10``), white suit
symbols (``♤♡♢♧``), ``T`` for 10 and the numbers 1, 11, 12, 13 for A, J, Q, K.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

# Display order of suits (and the letters the rule language uses for them).
SUITS: tuple[str, ...] = ("♠", "♥", "♦", "♣")
SUIT_LETTER: dict[str, str] = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
RED_SUITS = frozenset({"♥", "♦"})
RANKS: tuple[int, ...] = tuple(range(1, 14))
RANK_TEXT: dict[int, str] = {1: "A", 11: "J", 12: "Q", 13: "K"} | {n: str(n) for n in range(2, 11)}
DECKS = 2
HAND_SIZE = 12

_SUIT_INPUT: dict[str, str] = {
    **{symbol: symbol for symbol in SUITS},
    **{letter: symbol for symbol, letter in SUIT_LETTER.items()},
    **{letter.lower(): symbol for symbol, letter in SUIT_LETTER.items()},
    "♤": "♠",
    "♡": "♥",
    "♢": "♦",
    "♧": "♣",
}
_RANK_INPUT: dict[str, int] = {
    **{text: rank for rank, text in RANK_TEXT.items()},
    "1": 1,
    "T": 10,
    "11": 11,
    "12": 12,
    "13": 13,
}


def card(suit: str, rank: int) -> str:
    return f"{suit}{RANK_TEXT[rank]}"


ALL_KINDS: tuple[str, ...] = tuple(card(suit, rank) for suit in SUITS for rank in RANKS)
_ORDER: dict[str, int] = {kind: index for index, kind in enumerate(ALL_KINDS)}
_RANK_OF: dict[str, int] = {card(suit, rank): rank for suit in SUITS for rank in RANKS}
_SUIT_OF: dict[str, str] = {card(suit, rank): suit for suit in SUITS for rank in RANKS}


def parse_card(text: str) -> str | None:
    """The card a player wrote (``S7``, ``♥Q``, ``d10``, ``CT``), None if it is no card."""
    if len(text) < 2:
        return None
    suit = _SUIT_INPUT.get(text[0])
    rank = _RANK_INPUT.get(text[1:].upper())
    if suit is None or rank is None:
        return None
    return card(suit, rank)


def is_card(text: str) -> bool:
    return text in _ORDER


def rank_of(card_id: str) -> int:
    return _RANK_OF[card_id]


def suit_of(card_id: str) -> str:
    return _SUIT_OF[card_id]


def is_red(card_id: str) -> bool:
    return _SUIT_OF[card_id] in RED_SUITS


def full_deck() -> list[str]:
    """All 104 cards in display order (each kind twice)."""
    return [kind for kind in ALL_KINDS for _ in range(DECKS)]


def sort_cards(cards: Iterable[str]) -> list[str]:
    """Display order: ♠ ♥ ♦ ♣, then A to K."""
    return sorted(cards, key=_ORDER.__getitem__)


def census(cards: Iterable[str]) -> Counter[str]:
    return Counter(cards)


def format_cards(cards: Iterable[str]) -> str:
    return " ".join(cards)


def suited(cards: Iterable[str]) -> str:
    """A hand in short: each suit once before its ranks, ``♠J Q ♥6 7 10 ♣2``. "" for none."""
    ranks: dict[str, list[str]] = {}
    for card_id in sort_cards(cards):
        ranks.setdefault(_SUIT_OF[card_id], []).append(RANK_TEXT[_RANK_OF[card_id]])
    return " ".join(suit + " ".join(shown) for suit, shown in ranks.items())
