"""ポピュラス 草案21's final scoring (R 最終決算) and result.

+1 VP per worker on the map, +3 per intact town; face-down cards are discarded; for each
generation column (1st, 2nd, …) the players with the most cards there gain 4 VP (ties all gain
it; a column where nobody has a card gives nothing); then the end-of-game skills (revealed ones
only: a face-down skill does nothing). Highest VP wins; a tie goes to more towns left on the
race board; then a draw.
"""

from __future__ import annotations

from typing import Any

from app.games.base import N_, RankEntry, Result, State, competition_ranks

__all__ = ["BREAKDOWN_LABELS", "COLUMN_VP", "final_scores", "result"]

COLUMN_VP = 4
WORKER_VP = 1
TOWN_VP = 3

BREAKDOWN_LABELS = {
    "play": N_("ゲーム中のVP"),
    "workers": N_("ワーカー"),
    "towns": N_("タウン"),
    "generations": N_("世代のマジョリティ"),
    "skills": N_("スキル"),
}


def _columns(state: State) -> list[list[int]]:
    """Face-up cards per player per generation column, after the face-down ones are gone."""
    return [
        [sum(1 for card in gen if not card["down"]) for gen in player["gens"]]
        for player in state["players"]
    ]


def final_scores(state: State) -> list[dict[str, Any]]:
    from app.games.populous.rules import active_skills, terrain

    players = state["players"]
    workers = [0] * len(players)
    towns = [0] * len(players)
    on_terrain: list[dict[str, int]] = [{} for _ in players]
    for square, pieces in state["pieces"].items():
        here = terrain(state, square)
        for seat, kind in pieces:
            if kind == "w":
                workers[seat] += 1
            elif kind == "t":
                towns[seat] += 1
            if kind in ("w", "t"):
                on_terrain[seat][here] = on_terrain[seat].get(here, 0) + 1
    columns = _columns(state)
    generation_vp = [0] * len(players)
    for index in range(max((len(c) for c in columns), default=0)):
        counts = [c[index] if index < len(c) else 0 for c in columns]
        best = max(counts)
        if best == 0:
            continue
        for seat, count in enumerate(counts):
            if count == best:
                generation_vp[seat] += COLUMN_VP
    scores = []
    for seat, player in enumerate(players):
        skills = 0
        for skill in active_skills(state, seat):
            if skill.effect == "end_vp_town":
                skills += skill.amount * towns[seat]
            elif skill.effect == "end_vp_worker":
                skills += skill.amount * workers[seat]
            elif skill.effect == "end_vp_terrain" and skill.terrain is not None:
                skills += skill.amount * on_terrain[seat].get(skill.terrain, 0)
            elif skill.effect == "end_vp_generation":
                skills += skill.amount * len(player["gens"])
            elif skill.effect == "end_vp_resource" and skill.resource is not None:
                skills += skill.amount * int(player["res"][skill.resource])
        breakdown = {
            "play": int(player["vp"]),
            "workers": WORKER_VP * workers[seat],
            "towns": TOWN_VP * towns[seat],
            "generations": generation_vp[seat],
            "skills": skills,
        }
        scores.append(
            {
                **breakdown,
                "score": sum(breakdown.values()),
                "towns_left": int(player["towns"]),
            }
        )
    return scores


def result(state: State) -> Result | None:
    if not state["over"] or state["final"] is None:
        return None
    final = state["final"]
    order = sorted(
        range(len(final)), key=lambda s: (-final[s]["score"], -final[s]["towns_left"], s)
    )
    keys = [(final[s]["score"], final[s]["towns_left"]) for s in order]
    ranks = competition_ranks(keys)  # type: ignore[arg-type]
    ranking = []
    for seat, rank in zip(order, ranks, strict=True):
        entry = final[seat]
        breakdown: dict[str, int | str | None] = {
            key: entry[key] for key in ("play", "workers", "towns", "generations", "skills")
        }
        ranking.append(
            RankEntry(
                name=state["players"][seat]["name"],
                rank=rank,
                score=entry["score"],
                breakdown=breakdown,
            )
        )
    return Result(ranking)
