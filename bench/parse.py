"""Benchmark: microseconds per command line for each game's grammar (every game registered in
app.games), against a compiled regular expression that recognises the same lines' shape.

    python bench/parse.py

Lines: what each seat (and the GM) may play in a fresh game of each kind, plus the platform's
lines — all valid. Timed: `game.parse(line)` (NFKC normalisation, Lark LALR parse, transform to
a command object). Baseline: one compiled regex per game, `(VERB|…)( \\S+)*`, with every verb
spelling of the game, `fullmatch` on the same lines. Best of 5 runs of 2,000 lines. Prints one
line per game and last ``parse_ratio <x>``: µs per line of the slowest grammar / µs per line of
its regex.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine

from app.games import all_games
from app.games.base import Game, Rng

PLATFORM = ["JOIN", "START", "UNDO", "KICK 太郎", "DEADLINE 24", "ADJUST 太郎 -3 理由"]
LINES_PER_RUN = 2000
REPEATS = 5


def sample(game: Game) -> list[str]:
    players = ["太郎", "次郎", "花子", "四郎", "五郎", "六郎"][: max(game.min_players, 3)]
    state = game.setup(players[: game.max_players], {}, Rng("bench", 0))
    lines = list(PLATFORM)
    for seat in range(len(players[: game.max_players])):
        lines.extend(game.legal(state, seat))
    lines.extend(game.legal(state, "gm"))
    return [line for line in dict.fromkeys(lines) if _parses(game, line)]


def _parses(game: Game, line: str) -> bool:
    try:
        game.parse(line)
    except Exception:
        return False
    return True


def per_line(fn: object, lines: list[str]) -> float:
    batch = (lines * (LINES_PER_RUN // len(lines) + 1))[:LINES_PER_RUN]
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for line in batch:
            fn(line)  # type: ignore[operator]
        best = min(best, time.perf_counter() - t0)
    return best / len(batch) * 1e6


def main() -> None:
    print(f"machine: {machine()}")
    worst: tuple[float, float] | None = None
    for game in all_games():
        lines = sample(game)
        verbs = sorted(game.verbs(), key=len, reverse=True)
        pattern = re.compile("(?:" + "|".join(map(re.escape, verbs)) + r")(?: \S+)*", re.I)
        assert all(pattern.fullmatch(line) for line in lines)
        game.parse(lines[0])  # the parser is built once per process, not timed
        grammar = per_line(game.parse, lines)
        regex = per_line(pattern.fullmatch, lines)
        print(
            f"{game.kind:<10} {len(lines):>4} lines  parse {grammar:8.1f} µs/line  "
            f"regex {regex:6.2f} µs/line  ×{grammar / regex:.0f}"
        )
        if worst is None or grammar / regex > worst[0] / worst[1]:
            worst = (grammar, regex)
    assert worst is not None
    print(f"parse_ratio {worst[0] / worst[1]:.1f}")


if __name__ == "__main__":
    main()
