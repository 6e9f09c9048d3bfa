"""R 2−4 えいつくの成績発表: 基礎点数 + 公開週補正 + イベント修正."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from app.games.base import N_, RankEntry, Result, State, competition_ranks
from app.games.eitsuku.cards import RELEASE_PENALTY_PER_WEEK, SLOTS, role_number
from app.games.eitsuku.events import (
    ACTOR_AWARD,
    BUZZ_MONOPOLY,
    COMPOSER_AWARD,
    DIRECTOR_AWARD,
    EVENTS,
    PROMOTER,
    SCREENWRITER_AWARD,
    SURPRISE_ANNOUNCEMENT,
    TIE_UP,
)

# R: 5つ / 4つ / 3つ / 2つ の役割の数字が同じ: +70 / +50 / +30 / +10. I: the largest group
# of equal numbers decides (3+2 scores +30, 2+2 scores +10).
SAME_NUMBER_BONUS: dict[int, int] = {5: 70, 4: 50, 3: 30, 2: 10}

# What the result table calls each line of the breakdown (Game.breakdown_labels).
BREAKDOWN_LABELS: dict[str, str] = {
    "base": N_("基礎点数"),
    "release": N_("公開週補正"),
    "events": N_("イベント修正"),
    "total": N_("合計"),
}


def base_score(slots: Mapping[str, str | None]) -> int:
    """Sum of the numbers in 主演・助演・脚本家・音楽家・演出家 plus the same-number bonus.

    I: an empty slot (only 助演 can be empty in a released film) contributes nothing.
    """
    numbers = [role_number(card) for slot in SLOTS if (card := slots.get(slot)) is not None]
    if not numbers:
        return 0
    largest_group = max(Counter(numbers).values())
    return sum(numbers) + SAME_NUMBER_BONUS.get(largest_group, 0)


def release_correction(released_week: int, first_release_week: int) -> int:
    """R: −5 for each week later than the first player to release."""
    return -RELEASE_PENALTY_PER_WEEK * (released_week - first_release_week)


def event_modifier(player: Mapping[str, Any], release: int, sole_first_releaser: bool) -> int:
    """R: タイアップキャンペーン +10, プロモーターの介入 −宣言した数字; the rest: house rules."""
    total = 0
    correction_left = -release  # how much 電撃発表 may still cancel
    for entry in player["events"]:
        name = entry["name"]
        card = EVENTS[name]
        if name == TIE_UP:
            total += card.amount
        elif name == PROMOTER:
            total -= int(entry["number"])
        elif name == SURPRISE_ANNOUNCEMENT:
            cancelled = min(card.amount, correction_left)
            correction_left -= cancelled
            total += cancelled
        elif name in (ACTOR_AWARD, SCREENWRITER_AWARD, COMPOSER_AWARD, DIRECTOR_AWARD):
            assert card.slot is not None
            held = player["slots"].get(card.slot)
            total += role_number(held) if held is not None else 0
        elif name == BUZZ_MONOPOLY and sole_first_releaser:
            total += card.amount
    return total


def score_player(state: State, seat: int) -> dict[str, int] | None:
    """The breakdown of one released player's score, None for 未完成."""
    player = state["players"][seat]
    released_week = player["released_week"]
    first = state["first_release_week"]
    if released_week is None or first is None:
        return None
    release = release_correction(released_week, first)
    first_releasers = [p for p in state["players"] if p["released_week"] == first]
    sole_first = released_week == first and len(first_releasers) == 1
    base = base_score(player["slots"])
    events = event_modifier(player, release, sole_first)
    return {"base": base, "release": release, "events": events, "total": base + release + events}


def result(state: State) -> Result | None:
    """Ranking once the game is over: scored players best first (ties share the rank, 1, 1, 3),
    then every 未完成 player, ranked together below them all (the rank after the last scored
    player's place) with no score. When nobody released, all share rank 1 and nobody won:
    the archive counts a win only with a score (app/archive/listing.py)."""
    if not state["over"]:
        return None
    scored: list[tuple[int, int, dict[str, int]]] = []
    unfinished: list[int] = []
    for seat in range(len(state["players"])):
        breakdown = score_player(state, seat)
        if breakdown is None:
            unfinished.append(seat)
        else:
            scored.append((breakdown["total"], seat, breakdown))
    scored.sort(key=lambda item: (-item[0], item[1]))
    ranks = competition_ranks([total for total, _, _ in scored])
    ranking: list[RankEntry] = []
    for rank, (total, seat, breakdown) in zip(ranks, scored, strict=True):
        ranking.append(
            RankEntry(
                name=state["players"][seat]["name"],
                rank=rank,
                score=total,
                breakdown=dict(breakdown),
            )
        )
    for seat in unfinished:
        ranking.append(
            RankEntry(
                name=state["players"][seat]["name"],
                rank=len(scored) + 1,
                score=None,
                breakdown={"base": None, "release": None, "events": None, "total": None},
            )
        )
    return Result(ranking=ranking)
