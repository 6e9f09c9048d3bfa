"""The result (R 勝利/敗北): the winner ranks 1 and the loser 2; a draw ranks both 1. The
breakdown says why (``reason``, in players' words: rules.reason_text) and each side's total
cost."""

from __future__ import annotations

from app.games.base import N_, RankEntry, Result, State
from app.games.cardbattle.rules import reason_text, total_cost

# What the result table calls each line of the breakdown (Game.breakdown_labels).
BREAKDOWN_LABELS: dict[str, str] = {
    "reason": N_("決着の理由"),
    "total_cost": N_("総コスト"),
}


def result(state: State) -> Result | None:
    if not state["over"]:
        return None
    winner = state["winner"]
    entries = []
    for seat, player in enumerate(state["players"]):
        won = winner is None or winner == seat
        entries.append(
            RankEntry(
                name=player["name"],
                rank=1 if won else 2,
                score=1 if winner == seat else 0,
                breakdown={"reason": reason_text(state), "total_cost": total_cost(state, seat)},
            )
        )
    entries.sort(key=lambda entry: entry.rank)
    return Result(ranking=entries)
