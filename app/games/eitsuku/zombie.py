"""えいつく for a dropped player (Game.zombie): from that player's own view and legal lines only.

A player who wants a film: answer a pending 6, release as soon as the film can be released,
place a role into a required slot that is still empty, scout a deck whose role is still
missing from the slots and the stock, buy the largest budget card on offer, then end the week
(docs/rules/eitsuku.md, "A dropped player"). Event cards are not played: their choices depend
on the others, and ending the week is always legal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.eitsuku.cards import REQUIRED_SLOTS, SLOT_DECK, role_deck_of

__all__ = ["zombie"]


def zombie(own_view: Mapping[str, Any], legal: Sequence[str]) -> str | None:
    seat = own_view.get("seat")
    if not isinstance(seat, int) or not legal:
        return None
    me = own_view["players"][seat]
    for verb in ("CHOOSE", "RELEASE"):
        found = [line for line in legal if line.split()[0] == verb]
        if found:
            return _choose_deck(found, me) if verb == "CHOOSE" else found[0]
    empty = [slot for slot in REQUIRED_SLOTS if me["slots"].get(slot) is None]
    for line in legal:
        words = line.split()
        if words[0] == "SET" and words[1] in empty:
            return line
    held = {role_deck_of(card) for card in me["stock"]}
    missing = [SLOT_DECK[slot] for slot in empty if SLOT_DECK[slot] not in held]
    for line in legal:
        words = line.split()
        if words[0] == "SCOUT" and len(words) > 1 and words[1] in missing:
            return line
    for wanted in ("BUY 大", "BUY 中", "BUY 小"):
        if wanted in legal:
            return wanted
    return "END" if "END" in legal else None


def _choose_deck(lines: Sequence[str], me: Mapping[str, Any]) -> str:
    """The deck of a required role the player has least of."""
    held = [role_deck_of(card) for card in me["stock"]]
    return min(lines, key=lambda line: held.count(line.split()[1]))
