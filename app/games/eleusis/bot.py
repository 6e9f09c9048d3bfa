"""新新エリューシス's bot (Game.bot_lines; docs/bot-play.md): from one seat's own view and legal
lines only.

As the parent (phase ``rule``): a formal rule from the house list (content/house_rules.toml)
of grade 2–4 (an easy rule is found at once, a hard one disqualifies everyone, and the parent
scores when a child empties the hand), picked by `kit.bot.secret_rng` — a digest of the view
keyed with the process's secret: the others see nearly all of the parent's view, so a plain
digest would tell them the rule — and sealed with ``RULE``; the game then judges every play by
it. Asked to judge (a hand-judged round the bot took over, whose words no machine reads) it
takes the player at their word, as at a deadline.

As a child: the hypotheses are the rules of the same list, each weighted by how well it agrees
with what the view shows — every accepted card of the line follows it, every refused string
breaks it (a single refused card was refused; a longer string did not all succeed in order) —
and a rule outside the list, known only by the share of cards it accepts.
A play of 1–4 cards declared ○ (they succeed in order) or ● (each would fail) is worth
``n × (2p − 1)`` cards shed, ``p`` being the weight of the hypotheses that judge it as declared
(a wrong declaration draws ``2n``), and after the 40th card a wrong declaration disqualifies,
which costs the whole hand. The best play is built greedily card by card. A child sure of the
rule (one hypothesis left, enough seen) declares ``PROPHET`` when offered; a prophet judges by
its best hypothesis.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.games.eleusis.rule import (
    FAILURE,
    SUCCESS,
    Node,
    RuleLanguageError,
    accepts,
    judge,
    parse_rule,
)
from app.games.kit.bot import secret_rng
from app.games.kit.content import EntryError, content_dir, load_content

__all__ = ["HouseRule", "bot", "house_rules", "hypotheses"]

# A hypothesis that breaks what the view shows keeps this much weight per disagreement.
SOFTNESS = 0.05
# The grades the parent picks from.
PARENT_GRADES = (2, 3, 4)
# After this many cards a wrong declaration disqualifies (R).
CAREFUL_AFTER = 40
MAX_CARDS = 4
# A rule outside the list is as likely as a listed rule that broke this many observations.
UNKNOWN_MISSES = 1.5
# Only the latest observations are weighed (a long round's line makes every decision slower).
RECENT = 80
# Hypotheses below this share of the weight are left out of the play's reckoning.
NEGLIGIBLE = 1e-4


class HouseRule(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1)
    grade: int = Field(ge=1, le=5)
    ja: str = Field(min_length=1)


class HouseRules(BaseModel):
    model_config = ConfigDict(frozen=True)

    rules: list[HouseRule]


@dataclass(frozen=True)
class Hypothesis:
    rule: HouseRule
    node: Node


def _check_rules(loaded: HouseRules) -> None:
    """Every text parses and type-checks in the rule language, once; the parent's grades are
    there (kit.content turns an EntryError into an error on the entry's line)."""
    seen: set[str] = set()
    for index, entry in enumerate(loaded.rules):
        try:
            parse_rule(entry.text)
        except RuleLanguageError as error:
            raise EntryError(("rules", index, "text"), error.message) from None
        if entry.text in seen:
            raise EntryError(("rules", index, "text"), f"{entry.text!r} is listed twice")
        seen.add(entry.text)
    if not any(entry.grade in PARENT_GRADES for entry in loaded.rules):
        raise EntryError(("rules",), f"no rule of grade {PARENT_GRADES} for a bot parent")


@functools.cache
def house_rules() -> tuple[HouseRule, ...]:
    """The house list, validated (raises kit.content.ContentError naming file and line)."""
    path = content_dir("eleusis") / "house_rules.toml"
    return tuple(load_content(path, HouseRules, _check_rules).rules)


@functools.cache
def hypotheses() -> tuple[Hypothesis, ...]:
    return tuple(Hypothesis(rule, parse_rule(rule.text)) for rule in house_rules())


def _observations(line: Sequence[Mapping[str, Any]]) -> list[tuple[list[str], list[str], bool]]:
    """(line so far, cards, accepted in order?) for every card of the line after the starter
    and every refused string under it."""
    seen: list[tuple[list[str], list[str], bool]] = []
    cards = [str(entry["card"]) for entry in line]
    for index, entry in enumerate(line):
        before = cards[: index + 1]
        for run in entry.get("failed", []):
            if run:
                seen.append((before, [str(card) for card in run], False))
        if index + 1 < len(cards):
            seen.append((before, [cards[index + 1]], True))
    return seen


@dataclass(frozen=True)
class Belief:
    """The child's belief about the rule: the house rules' weights, and the weight of a rule
    outside the list, of which only the share of cards it accepts is known (`rate`)."""

    rules: list[tuple[Node, float]]
    unknown: float
    rate: float


def _belief(line: Sequence[Mapping[str, Any]]) -> Belief:
    seen = _observations(line)[-RECENT:]
    weighted = []
    for hypothesis in hypotheses():
        misses = 0
        for before, cards, ok in seen:
            if ok:
                misses += not accepts(hypothesis.node, before, cards[0])
            else:
                misses += judge(hypothesis.node, before, cards) == SUCCESS
        weighted.append((hypothesis.node, SOFTNESS**misses))
    unknown = SOFTNESS**UNKNOWN_MISSES
    total = sum(weight for _, weight in weighted) + unknown
    kept = [(node, weight / total) for node, weight in weighted if weight / total > NEGLIGIBLE]
    accepted = sum(ok for _, _, ok in seen)
    refused = sum(len(cards) == 1 and not ok for _, cards, ok in seen)
    rate = (accepted + 1) / (accepted + refused + 2)  # Laplace's rule of succession
    return Belief(kept, unknown / total, rate)


def _best_play(
    belief: Belief, line: list[str], hand: list[str], careful: bool
) -> tuple[str, list[str]]:
    """The declaration and cards of the best play, built greedily (see the module's text)."""
    loss = len(hand) if careful else 0

    def worth(n: int, p: float) -> float:
        return p * n - (1 - p) * (n + loss)

    options: list[tuple[float, str, list[str]]] = []
    # ●: each card would fail as the next card, all judged against the same line.
    refused = [
        (weight, {card for card in set(hand) if not accepts(node, line, card)})
        for node, weight in belief.rules
    ]
    chosen: list[str] = []
    left = list(hand)
    while left and len(chosen) < MAX_CARDS:
        n = len(chosen) + 1
        scored = [
            (
                sum(w for w, cards in refused if card in cards and set(chosen) <= cards)
                + belief.unknown * (1 - belief.rate) ** n,
                card,
            )
            for card in left
        ]
        p, card = max(scored, key=lambda item: item[0])
        chosen.append(card)
        left.remove(card)
        options.append((worth(n, p), FAILURE, list(chosen)))
        if p < 0.5:
            break
    # ○: the cards succeed one after another, the line growing with each.
    alive = list(belief.rules)
    chosen = []
    left = list(hand)
    while left and len(chosen) < MAX_CARDS:
        n = len(chosen) + 1
        grown = [*line, *chosen]
        accepting = {
            card: [(node, w) for node, w in alive if accepts(node, grown, card)]
            for card in set(left)
        }
        scored = [
            (sum(w for _, w in accepting[card]) + belief.unknown * belief.rate**n, card)
            for card in left
        ]
        p, card = max(scored, key=lambda item: item[0])
        alive = accepting[card]
        chosen.append(card)
        left.remove(card)
        options.append((worth(n, p), SUCCESS, list(chosen)))
        if p < 0.5:
            break
    _, mark, cards = max(options, key=lambda item: item[0])
    return mark, cards


def _judgment(belief: Belief, line: list[str], cards: list[str]) -> str:
    tally: dict[str, float] = {}
    for node, weight in belief.rules:
        mark = judge(node, line, cards)
        tally[mark] = tally.get(mark, 0.0) + weight
    if not tally:
        return SUCCESS
    return max(sorted(tally), key=lambda mark: tally[mark])


def _sure(belief: Belief, line: Sequence[Mapping[str, Any]]) -> bool:
    """One hypothesis carries the weight, after enough of the line to tell them apart."""
    top = max((weight for _, weight in belief.rules), default=0.0)
    return len(_observations(line)) >= 10 and top > 0.97


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    seat = own_view.get("seat")
    phase = own_view.get("phase")
    if not isinstance(seat, int) or own_view.get("over"):
        return []
    entries = own_view.get("line") or []
    line = [str(entry["card"]) for entry in entries]
    if phase == "rule":
        if own_view.get("parent_seat") != seat or own_view.get("rule") is not None:
            return []
        rng = secret_rng(own_view, legal)  # the rule is secret: not computable by the others
        choices = [rule for rule in house_rules() if rule.grade in PARENT_GRADES]
        return [f"RULE {rng.choice(choices).text}"]
    pending = own_view.get("pending")
    judges = [line_ for line_ in legal if line_.startswith("JUDGE ")]
    if pending is not None and judges:
        cards = [str(card) for card in pending["cards"]]
        rule = own_view.get("rule")
        if own_view.get("parent_seat") == seat:
            if rule is not None and rule.get("mode") == "formal":
                wanted = f"JUDGE {judge(parse_rule(str(rule['text'])), line, cards)}"
            else:
                wanted = f"JUDGE {pending['declaration']}"
        else:
            wanted = f"JUDGE {_judgment(_belief(entries), line, cards)}"
        return [wanted] if wanted in judges else [judges[0]]
    if "PROPHET" in legal and _sure(_belief(entries), entries):
        return ["PROPHET"]
    hand = [str(card) for card in own_view.get("hand") or []]
    plays = [line_ for line_ in legal if line_.startswith("PLAY ")]
    if not plays or not hand or not line:
        return [plays[0]] if plays else []
    careful = int(own_view.get("played") or 0) >= CAREFUL_AFTER
    mark, cards = _best_play(_belief(entries), line, hand, careful)
    return [f"PLAY {mark} {' '.join(cards)}"]
