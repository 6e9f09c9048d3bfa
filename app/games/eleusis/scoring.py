"""R 得点(vpt): each round's scoring table for children and the parent, and the final result.

Every line of the table is one key of a round's breakdown, so the result shows where each point
came from; the final breakdown sums the rounds and adds each round's total as ``round_<n>``.
"""

from __future__ import annotations

from typing import Any

from app.games.base import N_, RankEntry, Result, State, competition_ranks

# R 子プレイヤー
CARD_LEFT = -1  # 残った手札1枚につき−1vpt
EMPTIED = 4  # 手札0で終了したプレイヤーに+4vpt
PROPHET_CORRECT = 1  # 他の子プレイヤーの出したカードを正しく判断した回数1回につき+1vpt
PROPHET_MAX = 5  # 但し1ラウンド中Max5vptまで
PROPHET_FAILURE = -5  # 預言者で預言失敗により失格した場合−5vpt(預言成功の+ポイントも0リセット)
CAUSED_DISQUALIFICATION = 2  # 他の預言者を失格させるカードを出した子プレイヤーに+2vpt
# R 親プレイヤー
PARENT_PROPHET_EMPTIED = 4  # 預言者となった子プレイヤーが手札を0にしてラウンドが終了した場合
PARENT_CHILD_EMPTIED = 2  # 預言者でない子プレイヤーが手札を0にしてラウンドが終了した場合
PARENT_PER_PROPHET_FAILURE = 3  # 預言者が預言に失敗して失格した場合、1人につき+3vpt
PARENT_FEWEST_CARD = -1  # 全員失格: 一番手札の枚数の少ない子プレイヤーの手札1枚につき−1vpt

CHILD_LINES: tuple[str, ...] = (
    "cards_left",
    "emptied",
    "prophet",
    "prophet_failure",
    "caused_disqualification",
)
PARENT_LINES: tuple[str, ...] = (
    "parent_emptied",
    "parent_prophet_failures",
    "parent_all_disqualified",
)
# The breakdown of a round and of the game: every line, the parent's subtotal, the total.
LINES: tuple[str, ...] = (*CHILD_LINES, *PARENT_LINES, "parent", "total")
# What the result table calls each line (Game.breakdown_labels); ``round_{n}``: each round's total.
BREAKDOWN_LABELS: dict[str, str] = {
    "cards_left": N_("残り手札"),
    "emptied": N_("上がり"),
    "prophet": N_("預言"),
    "prophet_failure": N_("預言失敗"),
    "caused_disqualification": N_("預言者を失格させた"),
    "parent_emptied": N_("親: 子の上がり"),
    "parent_prophet_failures": N_("親: 預言者の失格"),
    "parent_all_disqualified": N_("親: 全員失格"),
    "parent": N_("親"),
    "total": N_("合計"),
    "round_{n}": N_("第%(n)sラウンド"),
}


def _zero() -> dict[str, int]:
    return dict.fromkeys(LINES, 0)


def round_scores(state: State, ended_by: str, emptied: int | None) -> list[dict[str, int]]:
    """One breakdown per seat for the round that ends now (`ended_by`: "emptied",
    "all_disqualified", "agreement" or "void"; `emptied`: the child whose empty hand ended it)."""
    players: list[dict[str, Any]] = state["players"]
    scores = [_zero() for _ in players]
    if ended_by == "void":
        return scores
    parent = state["parent"]
    kids = [seat for seat in range(len(players)) if seat != parent]
    for seat in kids:
        player = players[seat]
        line = scores[seat]
        line["cards_left"] = CARD_LEFT * len(player["hand"])
        line["emptied"] = EMPTIED if seat == emptied else 0
        if player["prophet_failed"]:
            line["prophet_failure"] = PROPHET_FAILURE
        elif player["prophet"]:
            line["prophet"] = min(PROPHET_MAX, PROPHET_CORRECT * player["correct"])
        line["caused_disqualification"] = CAUSED_DISQUALIFICATION * player["caused"]
    line = scores[parent]
    if emptied is not None:
        by_prophet = players[emptied]["prophet"]
        line["parent_emptied"] = PARENT_PROPHET_EMPTIED if by_prophet else PARENT_CHILD_EMPTIED
    failures = sum(1 for seat in kids if players[seat]["prophet_failed"])
    line["parent_prophet_failures"] = PARENT_PER_PROPHET_FAILURE * failures
    if ended_by == "all_disqualified":
        fewest = min(len(players[seat]["hand"]) for seat in kids)
        line["parent_all_disqualified"] = PARENT_FEWEST_CARD * fewest
    line["parent"] = sum(line[key] for key in PARENT_LINES)
    for line in scores:
        line["total"] = sum(line[key] for key in CHILD_LINES) + line["parent"]
    return scores


def breakdown(state: State, seat: int) -> dict[str, int | str | None]:
    """The game's breakdown for one seat: every line summed over the rounds, then each
    round's total."""
    summed = _zero()
    per_round: dict[str, int | str | None] = {}
    for record in state["history"]:
        line = record["scores"][seat]
        for key in LINES:
            summed[key] += line[key]
        per_round[f"round_{record['round']}"] = line["total"]
    return {**summed, **per_round}


def result(state: State) -> Result | None:
    """Ranking once the game is over: highest total first, equal totals share the rank."""
    if not state["over"]:
        return None
    entries = [(breakdown(state, seat), seat) for seat in range(len(state["players"]))]
    entries.sort(key=lambda item: (-int(item[0]["total"] or 0), item[1]))
    ranks = competition_ranks([int(lines["total"] or 0) for lines, _ in entries])
    return Result(
        ranking=[
            RankEntry(
                name=state["players"][seat]["name"],
                rank=rank,
                score=int(lines["total"] or 0),
                breakdown=lines,
            )
            for rank, (lines, seat) in zip(ranks, entries, strict=True)
        ]
    )
