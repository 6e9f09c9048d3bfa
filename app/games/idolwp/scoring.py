"""The final ranking (R 6): points from events (EVP and rank rewards) and from the final
ability ranking; the highest total wins, ties share (competition ranks)."""

from __future__ import annotations

from app.games.base import N_, RankEntry, Result, State, competition_ranks

# What the result table calls each line of the breakdown (Game.breakdown_labels).
BREAKDOWN_LABELS: dict[str, str] = {
    "events": N_("イベント"),
    "abilities": N_("能力順位"),
}


def result(state: State) -> Result | None:
    if not state["over"]:
        return None
    players = sorted(state["players"], key=lambda player: -player["points"])
    ranks = competition_ranks([player["points"] for player in players])
    return Result(
        ranking=[
            RankEntry(
                name=player["name"],
                rank=rank,
                score=player["points"],
                breakdown={
                    "events": player["event_points"],
                    "abilities": player["ability_points"],
                },
            )
            for player, rank in zip(players, ranks, strict=True)
        ]
    )
