"""Benchmark: what the oracle rule (docs/security.md, "No answer depends on a hidden or random
result") adds to applying a line — ``Game.reveals`` and the comparison of what ``hidden``
lists for the line's seat before and after it (app/gm/play.py) — against applying the line.

    python bench/oracle_checks.py

Every kind's scripted game (tests/support/fuzz_states.py: a whole game of each kind, every
seat and the GM taking their recorded lines) is played once from its seed, keeping each
line's state before and after it. Then, taking turns for ROUNDS rounds, the baseline applies
every line again (``Game.apply`` on the kept state before it) and the checks run on the kept
pairs; best round of each, the collector off while timed. Prints
``oracle_checks_ratio_<kind> <x>``: (apply + checks) / apply (1.0 = free), and last
``oracle_checks_ratio_max <x>``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

from app.games.base import Rng
from tests.support.fuzz_states import DRIVERS, PLAYERS, script

ROUNDS = 9
NAMES = ["太郎", "次郎", "花子", "四郎", "三郎", "六郎"]


def timed(fn: Callable[[], None]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    finally:
        gc.enable()


def measure(kind: str) -> float:
    """(apply + checks) / apply for ``kind``'s scripted game, printing the time a line."""
    played = script(kind, NAMES[: PLAYERS[kind]])
    impl = played.impl
    state = impl.setup(played.names, played.options, Rng(played.seed, 0))
    lines: list[tuple[Any, Any, Any, Any, int]] = []
    for seq, step in enumerate(played.steps, start=1):
        command = impl.parse(step.line)
        after, _ = impl.apply(state, step.actor, command, Rng(played.seed, seq), sealed=step.sealed)
        lines.append((state, after, step, command, seq))
        state = after

    def apply_all() -> None:
        for before, _after, step, command, seq in lines:
            rng = Rng(played.seed, seq)
            impl.apply(before, step.actor, command, rng, sealed=step.sealed)

    def checks() -> None:
        for before, after, step, command, _seq in lines:
            viewer = step.actor if isinstance(step.actor, int) else None
            impl.reveals(before, command)
            _ = impl.hidden(before, viewer) != impl.hidden(after, viewer)

    applied: list[float] = []
    checked: list[float] = []
    for _ in range(ROUNDS):
        applied.append(timed(apply_all))
        checked.append(timed(checks))
    per_line = 1e6 / len(lines)
    print(
        f"{kind}: {len(lines)} lines, apply {min(applied) * per_line:.1f} µs a line, "
        f"the checks {min(checked) * per_line:.1f} µs a line"
    )
    return (min(applied) + min(checked)) / min(applied)


def main() -> None:
    ratios: dict[str, float] = {}
    for kind in DRIVERS:
        ratios[kind] = measure(kind)
        print(f"oracle_checks_ratio_{kind} {ratios[kind]:.3f}")
    print(f"oracle_checks_ratio_max {max(ratios.values()):.3f}")


if __name__ == "__main__":
    main()
