"""えいつく's bot (Game.bot_lines; docs/bot-play.md): from one seat's own view and legal lines
only (everything but the closed decks' order is open, and the bot reads no deck).

A week, in the phases' order: answer a pending 6 (the zombie's deck); play タイアップキャンペーン
(+10, R) when held; place the role card worth most to the film — what it adds to the base score
(its number, and the bonus of equal numbers: 70 / 50 / 30 / 10 for five / four / three / two),
a still empty required slot first, 助演 too (the zombie leaves it empty) — before releasing in the
same week; release as soon as the film can be; scout a missing role's deck (役者 for an empty 助演
once the required roles are in hand), else buy the largest budget card on offer; with no role to
place, draw an event card (a chance of タイアップキャンペーン) rather than nothing; then end the
week.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.eitsuku.cards import REQUIRED_SLOTS, SLOT_DECK, role_deck_of, role_number
from app.games.eitsuku.zombie import zombie
from app.games.kit.bot import view_rng

__all__ = ["bot", "film_base"]

TIE_IN = "EVENT タイアップキャンペーン"
GROUP_BONUS = {5: 70, 4: 50, 3: 30, 2: 10}
SUPPORT = "助演"


def film_base(numbers: Sequence[int]) -> int:
    """The base score of a film's role numbers (R: the sum, plus the bonus of the largest
    group of equal numbers)."""
    if not numbers:
        return 0
    largest = max(numbers.count(number) for number in set(numbers))
    return sum(numbers) + GROUP_BONUS.get(largest, 0)


def _set_value(line: str, slots: Mapping[str, Any]) -> float:
    words = line.split()
    slot, card = words[1], words[2]
    numbers = [role_number(str(held)) for held in slots.values() if held]
    gain = film_base([*numbers, role_number(card)]) - film_base(numbers)
    return gain + (100 if slot in REQUIRED_SLOTS else 0)


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    seat = own_view.get("seat")
    if not legal or not isinstance(seat, int):
        return []
    me = own_view["players"][seat]
    if any(line.startswith("CHOOSE ") for line in legal):
        chosen = zombie(own_view, legal)
        return [chosen] if chosen is not None and chosen in legal else [legal[0]]
    if TIE_IN in legal:
        return [TIE_IN]
    slots = me["slots"]
    sets = [
        line for line in legal if line.startswith("SET ") and slots.get(line.split()[1]) is None
    ]
    if sets:
        return [max(sets, key=lambda line: _set_value(line, slots))]
    if "RELEASE" in legal:
        return ["RELEASE"]
    empty = [slot for slot in REQUIRED_SLOTS if slots.get(slot) is None]
    held = [role_deck_of(card) for card in me["stock"]]
    missing = [SLOT_DECK[slot] for slot in empty if SLOT_DECK[slot] not in held]
    if (
        not missing
        and slots.get(SUPPORT) is None
        and held.count(SLOT_DECK[SUPPORT]) < 1 + (slots.get("主演") is None)
    ):
        missing = [SLOT_DECK[SUPPORT]]
    for line in legal:
        words = line.split()
        if words[0] == "SCOUT" and len(words) > 1 and words[1] in missing:
            return [line]
    for wanted in ("BUY 大", "BUY 中", "BUY 小"):
        if wanted in legal:
            return [wanted]
    if "DRAW" in legal:
        return ["DRAW"]
    if "END" in legal:
        return ["END"]
    return [view_rng(own_view, legal).choice(list(legal))]
