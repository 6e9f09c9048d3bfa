"""Benchmark: how long the game takes to answer `/legal` — every state of 5-player games of a
kind (ポピュラス 草案21 by default), and the busiest state among them.

    python bench/legal.py [kind ...]

Each game is played by the rules library with random legal lines (seeded) to its end; at every
state the lines of the one to move are listed (`legal_split`: thread and sealed, what `/legal`
answers). Timed per state, several times, the best kept: the game's time for `/legal`, without
HTTP and the database. Baseline: a JSON round trip of the same state (`json.loads(json.dumps())`,
what reading it from the database costs at least). Prints the median and the busiest state's
time in microseconds, and ``legal_ratio <x>``: the busiest state's `/legal` time divided by its
baseline. The issue asks for the busiest populous state under a millisecond of game time.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine

from app.games import find_game
from app.games.base import Game, Rng

GAMES = 3
REPEATS = 7
NAMES = ["一郎", "二郎", "三郎", "四郎", "五郎"]


def states_of(impl: Game, seed: str) -> list[tuple[dict[str, Any], int]]:
    """(state, seat to move) at every point of one game played by random legal lines."""
    players = NAMES[: max(impl.min_players, min(5, impl.max_players))]
    options: dict[str, Any] = {}
    if impl.uses_card_registry:
        from app.games.cardbattle.content import starter_pool

        options = {"pool": {c.name: c.model_dump(mode="json") for c in starter_pool()}}
    state = impl.setup(players, options, Rng(seed, 0))
    chooser = random.Random(seed)
    found = []
    for seq in range(1, 20_000):
        if impl.is_over(state):
            break
        seat = chooser.choice(impl.waiting_for(state))
        found.append((state, seat))
        lines = [(line, False) for line in impl.legal(state, seat)]
        lines += [(line, True) for line in impl.sealed_legal(state, seat)]
        line, sealed = chooser.choice(lines)
        state, _ = impl.apply(state, seat, impl.parse(line), Rng(seed, seq), sealed=sealed)
    return found


def best_of(action: Any) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(kind: str) -> float:
    impl = find_game(kind)
    assert impl is not None, kind
    legal_times: list[float] = []
    busiest = (0.0, 0.0, 0)
    for game in range(GAMES):
        for state, seat in states_of(impl, f"bench-legal-{kind}-{game}"):

            def answer(state: dict[str, Any] = state, seat: int = seat) -> None:
                impl.legal_split(state, seat)

            spent = best_of(answer)
            legal_times.append(spent)
            if spent > busiest[0]:
                baseline = best_of(lambda state=state: json.loads(json.dumps(state)))
                lines = sum(map(len, impl.legal_split(state, seat)))
                busiest = (spent, baseline, lines)
    median = statistics.median(legal_times)
    spent, baseline, lines = busiest
    print(
        f"{kind}: {len(legal_times)} states; /legal median {median * 1e6:.0f} µs; busiest "
        f"{spent * 1e6:.0f} µs ({lines} lines); its JSON round trip {baseline * 1e6:.0f} µs"
    )
    return spent / baseline


def main() -> None:
    print(machine())
    kinds = sys.argv[1:] or ["populous"]
    ratios = [measure(kind) for kind in kinds]
    print(f"legal_ratio {max(ratios):.2f}")


if __name__ == "__main__":
    main()
