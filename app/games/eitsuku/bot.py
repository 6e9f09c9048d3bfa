"""えいつく's bot (Game.bot_lines; docs/bot-play.md): from one seat's own view and legal lines
only (everything but the closed decks' order is open, and the bot reads no deck).

A week, in the phases' order: answer a pending 6 (the zombie's deck); play the event cards
that pay — those that count at scoring (タイアップキャンペーン +10, the four awards, 電撃発表,
話題の独占) at once, 方針転換 when the swap raises the film's base, 独自の情報網 for the card
that fits an empty slot best (in place of a scout), ストライキ on the rival with most slots
filled; place the role card worth most to the film — what it adds to the base score (its
number, and the bonus of equal numbers: 70 / 50 / 30 / 10 for five / four / three / two), a
still empty required slot first, 助演 too (the zombie leaves it empty) — before releasing in
the same week; release as soon as the film can be; scout a missing role's deck (役者 for an
empty 助演 once the required roles are in hand; with every role in hand and 6 or more of
budget, an empty slot's deck again, for a better number), else buy the largest budget card on
offer; with no role to place, draw an event card rather than nothing; then end the week.
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
BUDGET_VALUE = {"予算・小": 1, "予算・中": 2, "予算・大": 3}
# With every needed role in hand and at least this much budget in stock, scout on for a
# better card for an empty slot instead of buying budget.
EXTRA_SCOUT = 6
# Played as soon as held: they count at scoring and cost nothing.
SCORING_EVENTS = frozenset(
    {
        TIE_IN.split()[1],
        "役者大賞",
        "脚本家大賞",
        "音楽家大賞",
        "演出家大賞",
        "電撃発表",
        "話題の独占",
    }
)
POLICY_CHANGE = "方針転換"
OWN_NETWORK = "独自の情報網"
STRIKE = "ストライキ"


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


def _film(slots: Mapping[str, Any]) -> int:
    return film_base([role_number(str(card)) for card in slots.values() if card])


def _event(legal: Sequence[str], own_view: Mapping[str, Any], seat: int) -> str | None:
    """The event card worth playing now, if any (see the module's text)."""
    events = [line for line in legal if line.startswith("EVENT ")]
    if not events:
        return None
    me = own_view["players"][seat]
    slots = me["slots"]
    for line in events:
        if line.split()[1] in SCORING_EVENTS and len(line.split()) == 2:
            return line
    empty = [slot for slot in (*REQUIRED_SLOTS, SUPPORT) if slots.get(slot) is None]
    best_line, best_gain = None, 0.0
    for line in events:
        words = line.split()
        if words[1] == POLICY_CHANGE and len(words) == 4:
            swapped = {**slots, words[2]: words[3]}
            gain = float(_film(swapped) - _film(slots))
        elif words[1] == OWN_NETWORK and len(words) == 3:
            fitting = [slot for slot in empty if role_deck_of(words[2]) == SLOT_DECK[slot]]
            gain = max((_set_value(f"SET {slot} {words[2]}", slots) for slot in fitting), default=0)
            gain -= 100 * any(slot in REQUIRED_SLOTS for slot in fitting)  # a scout's worth
            gain = max(gain, 0.0) + 0.5 * bool(fitting)
        elif words[1] == STRIKE and len(words) == 3:
            target = next(
                (p for p in own_view["players"] if p["name"] == words[2] and p["seat"] != seat),
                None,
            )
            filled = 0 if target is None else sum(bool(c) for c in target["slots"].values())
            gain = 0.25 * filled
        else:
            continue
        if gain > best_gain:
            best_line, best_gain = line, gain
    return best_line


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    seat = own_view.get("seat")
    if not legal or not isinstance(seat, int):
        return []
    me = own_view["players"][seat]
    if any(line.startswith("CHOOSE ") for line in legal):
        chosen = zombie(own_view, legal)
        return [chosen] if chosen is not None and chosen in legal else [legal[0]]
    slots = me["slots"]
    event = _event(legal, own_view, seat)
    if event is not None:
        return [event]
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
    if EXTRA_SCOUT and not missing:
        budget = sum(count * BUDGET_VALUE.get(card, 0) for card, count in me["stock"].items())
        if budget >= EXTRA_SCOUT:
            missing = [
                SLOT_DECK[slot] for slot in (*REQUIRED_SLOTS, SUPPORT) if slots.get(slot) is None
            ]
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
