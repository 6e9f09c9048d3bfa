"""新新エリューシス for a dropped player (Game.zombie): from that player's own view and legal
lines only — the accepted line and the refused plays everyone sees, and the player's own hand.

A child guesses the rule as players do: of a few simple rules about the card before (same suit,
same colour, other colour, higher, lower, same or next number), the one that agrees with most
of what the line shows (each accepted card follows it, each refused play breaks it) is taken,
and a card of the hand that follows it after the last accepted card is played, declared ○. When
no card fits, the lowest card is played declared ● (a card expected to be refused costs less
if declared so).

A dropped parent (docs/rules/eleusis.md, "Dropped players"): a formal rule needs nobody — the
bot judges it; a hand-judged rule's words cannot be checked by a machine, so the parent takes
the player at their word (`JUDGE <declaration>`, as at a deadline) and the round goes on to its
end. No hint is given. A parent dropped before sealing a rule plays nothing: nobody may invent
the parent's secret rule, so the round waits for the GM (`PARENT <name>` hands it to a player
who is there, `ENDROUND` voids it). A dropped prophet judges as at a deadline (its JUDGE is
sealed, which is no line of `legal`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["zombie"]

RED = "♥♦"
RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13}


def _suit(card: str) -> str:
    return card[0]


def _rank(card: str) -> int:
    text = card[1:]
    return RANKS.get(text, int(text) if text.isdigit() else 0)


def _red(card: str) -> bool:
    return _suit(card) in RED


Rule = Callable[[str, str], bool]
GUESSES: dict[str, Rule] = {
    "same_suit": lambda before, card: _suit(before) == _suit(card),
    "same_colour": lambda before, card: _red(before) == _red(card),
    "other_colour": lambda before, card: _red(before) != _red(card),
    "higher": lambda before, card: _rank(card) > _rank(before),
    "lower": lambda before, card: _rank(card) < _rank(before),
    "near": lambda before, card: abs(_rank(card) - _rank(before)) <= 1,
}


def _agreement(rule: Rule, line: Sequence[Mapping[str, Any]]) -> int:
    score = 0
    for index, entry in enumerate(line):
        before = entry["card"]
        if index + 1 < len(line) and rule(before, line[index + 1]["card"]):
            score += 1
        for refused in entry.get("failed", []):
            if refused and not rule(before, refused[0]):
                score += 1
    return score


def zombie(own_view: Mapping[str, Any], legal: Sequence[str]) -> str | None:
    pending = own_view.get("pending")
    if pending is not None and any(line.startswith("JUDGE ") for line in legal):
        wanted = f"JUDGE {pending['declaration']}"  # the parent of a hand-judged rule
        return wanted if wanted in legal else None
    plays = [line for line in legal if line.startswith("PLAY ") and len(line.split()) == 3]
    line = own_view.get("line") or []
    if not plays or not line:
        return None
    hand = [play.split()[2] for play in plays if play.split()[1] == "○"]
    if not hand:
        return None
    last = line[-1]["card"]
    best = max(GUESSES.values(), key=lambda rule: _agreement(rule, line))
    fitting = [card for card in hand if best(last, card)]
    wanted = f"PLAY ○ {fitting[0]}" if fitting else f"PLAY ● {min(hand, key=_rank)}"
    return wanted if wanted in legal else None
