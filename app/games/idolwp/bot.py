"""IM@S x Workerplacement's bot (Game.bot_lines; docs/bot-play.md): from one seat's own view and
legal lines only — the public board, event and players, the idols' and cards' public texts (the
house content), its own hand.

- The draft: the idol of the most ability and 思い出 on its card (Vo + Da + Vi + memory: a
  player starts with the sum of their two idols'), the first on ties.
- Its turn: first the appeal cards that give something for nothing (chips, 思い出, マニー,
  cards, ability levels; a keep card's lasting bonus), chips of choice on its lowest ability;
  then the zombie's move (the most valuable reachable space for the fewest steps).
- An event: every EVENT line the view lets it judge is worth its level's EVP (twice with
  DOUBLE, which spends a 思い出 chip) plus the 思い出 and cards it gives, less half a point a chip
  of BOOST spent, if the abilities (its idols' event bonuses and the boost counted in) pass the
  level, else nothing; an event card (マイク …) that lets a higher level pass is played first;
  SKIP when nothing passes.
- 特訓 and the final round: the zombie's (its lowest ability, chips converted at the final).
- Otherwise a line drawn by the view's own digest (kit.bot.view_rng), never the game's seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.idolwp.content import load
from app.games.idolwp.rules import meets
from app.games.idolwp.zombie import _abilities, zombie
from app.games.kit.bot import best, view_rng

__all__ = ["bot"]

ABILITIES = ("Vo", "Da", "Vi")
FREE_EFFECTS = frozenset({"chips", "memory", "money", "draw", "ability", "choice"})
KEEP_EFFECTS = frozenset({"lesson_plus", "evp_plus"})
CHIP_COST = 0.5  # what an ability chip spent on a boost is worth elsewhere (a 特訓)
MEMORY_WORTH = 1.5  # a 思い出 chip: three chips, or an event's EVP doubled


def _idol_worth(info: Mapping[str, Any]) -> int:
    return sum(int(info.get(key) or 0) for key in ("Vo", "Da", "Vi", "memory"))


def _boost(words: Sequence[str]) -> dict[str, int]:
    """The chips of a BOOST (``Vo1 Da2``) in an EVENT line's words."""
    raised = dict.fromkeys(ABILITIES, 0)
    if "BOOST" in words:
        for word in words[words.index("BOOST") + 1 :]:
            if word[:2] in raised and word[2:].isdigit():
                raised[word[:2]] += int(word[2:])
    return raised


def _event_worth(
    line: str, me: Mapping[str, Any], own_view: Mapping[str, Any], extra: Mapping[str, int]
) -> float:
    words = line.split()
    if words[0] != "EVENT" or not words[1].startswith("LV"):
        return 0.0
    number = int(words[1][2:])
    levels = (own_view.get("event") or {}).get("levels") or []
    level = next((lvl for lvl in levels if int(lvl["level"]) == number), None)
    if level is None:
        return 0.0
    boost = _boost(words)
    shown = _abilities(me)
    checked = {a: shown[a] + boost[a] + int(extra.get(a, 0)) for a in ABILITIES}
    if not meets(checked, level["kind"], level["target"]):
        return 0.0
    double = "DOUBLE" in words
    evp = int(level.get("evp") or 0)
    worth = evp * (2 if double else 1) + MEMORY_WORTH * int(level.get("memory") or 0)
    worth += int(level.get("cards") or 0) - CHIP_COST * sum(boost.values())
    return worth - (MEMORY_WORTH if double else 0) + 0.01


def _event(legal: Sequence[str], me: Mapping[str, Any], own_view: Mapping[str, Any]) -> str:
    entries = [line for line in legal if line.startswith("EVENT ")]
    cards = load().cards
    plain = max((_event_worth(line, me, own_view, {}) for line in entries), default=0.0)
    for line in legal:
        words = line.split()
        card = cards.get(words[1]) if words[0] == "CARD" and len(words) > 1 else None
        if card is None or card.effect != "boost":
            continue
        boosted = max(
            (
                _event_worth(e, me, own_view, {str(a): n for a, n in card.chips.items()})
                for e in entries
            ),
            default=0.0,
        )
        if boosted > plain + 0.5:
            return line
    if entries and plain > 0:
        return best(entries, lambda line: _event_worth(line, me, own_view, {}))
    return "SKIP" if "SKIP" in legal else best(list(legal), lambda line: 0.0)


def _free_card(legal: Sequence[str], me: Mapping[str, Any]) -> str | None:
    cards = load().cards
    lowest = min(ABILITIES, key=lambda a: (int(me["abilities"][a]), ABILITIES.index(a)))
    found = []
    for line in legal:
        words = line.split()
        card = cards.get(words[1]) if words[0] == "CARD" and len(words) > 1 else None
        if card is None or card.effect not in FREE_EFFECTS | KEEP_EFFECTS:
            continue
        found.append((sum(word == lowest for word in words[2:]) - len(words[2:]), line))
    return max(found)[1] if found else None


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    if not legal:
        return []
    seat = own_view.get("seat")
    picks = [line for line in legal if line.startswith("PICK ")]
    if own_view.get("phase") == "draft" and picks:
        idols = own_view.get("idol_info") or {}
        return [best(picks, lambda line: _idol_worth(idols.get(line.split()[1], {})))]
    if isinstance(seat, int) and own_view.get("phase") == "play":
        me = own_view["players"][seat]
        pending = own_view.get("pending")
        if pending is not None and pending.get("kind") == "event":
            return [_event(legal, me, own_view)]
        if pending is None:
            card = _free_card(legal, me)
            if card is not None:
                return [card]
    chosen = zombie(own_view, legal)
    if chosen is not None and chosen in legal:
        return [chosen]
    return [view_rng(own_view, legal).choice(list(legal))]
