"""Benchmark: moves replayed per second — a 5-player 12-week えいつく game, and a 10,000-move
log — against reading a stored snapshot of the state per move (a JSON round trip).

    python bench/replay.py
    python bench/replay.py --all-kinds

With ``--all-kinds``: every kind's scripted game (tests/support/fuzz_states.py, the game the
fuzzers and the contract test play: a whole game of each kind) is folded from its seed, best of
nine runs in each of seven rounds over every kind (the best round kept, the slowest printed
too), and the same JSON-snapshot baseline is taken on that game's final state. Prints
``replay_moves_per_s_<kind> <x>`` and ``replay_ratio_<kind> <x>`` for each, and last
``replay_moves_per_s_min <x>`` (the issue's target: 20,000 or more).

The game is played once by the rules library with every seat taking its legal lines (as the
test scripts do) until the 12th week ends; its log is (seq, seat, canonical line, sealed), exactly
what `moves` holds. Timed: `app.gm.replay.fold` (setup from the seed, then parse + apply per
move), for the one game and for a log of 10,000 moves (the game's log replayed back to back,
each from its setup, as `bbsgm check` does game after game), and the same fold from a
database (`app.gm.replay.replay`, which also loads the moves). Baseline: what keeping a
snapshot per move instead of a log would cost to read — `json.loads(json.dumps(state))` once per
move of the same log (`copy.deepcopy` per move is printed too). Prints moves/s, and last
``replay_ratio <x>``: replayed moves per second divided by the baseline's.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SECRET, machine, make_users, pick, scratch_database

from app.db.engine import Database
from app.db.models import Game, User
from app.games import find_game
from app.games.base import Rng
from app.gm import replay
from app.gm import service as gm

PLAYERS = ["一郎", "二郎", "三郎", "四郎", "五郎"]
SEED = "c" * 64
LOG_MOVES = 10_000
REPEATS = 5
ALL_KINDS_ROUNDS = 7  # --all-kinds: rounds over every kind (all_kinds)


def play() -> list[tuple[int, int | None, str, bool]]:
    impl = find_game("eitsuku")
    assert impl is not None
    state = impl.setup(PLAYERS, {}, Rng(SEED, 0))
    log: list[tuple[int, int | None, str, bool]] = []
    while not impl.is_over(state):
        moved = False
        for seat in range(len(PLAYERS)):
            legal = impl.legal(state, seat)
            if not legal:
                continue
            line = impl.parse(pick(legal)).canonical()
            seq = len(log) + 1
            state, _events = impl.apply(state, seat, impl.parse(line), Rng(SEED, seq))
            log.append((seq, seat, line, False))
            moved = True
        assert moved
    return log


def best(fn: object, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def fold(
    impl: object, game: Game, names: list[str], log: list[tuple[int, int | None, str, bool]]
) -> None:
    replay.fold(impl, game, names, log)  # type: ignore[arg-type]


def all_kinds() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from app.games import GAMES
    from tests.support.fuzz_states import PLAYERS as SEATS
    from tests.support.fuzz_states import script

    print(f"machine: {machine()}")
    games = []
    for kind, impl in GAMES.items():
        names = PLAYERS[: SEATS[kind]]
        played = script(kind, names)
        log = [
            (seq, None if step.actor == "gm" else int(step.actor), step.line, step.sealed)
            for seq, step in enumerate(played.steps, start=1)
        ]
        game = Game(seed=played.seed, options=played.options)
        games.append((kind, impl, game, names, log, replay.fold(impl, game, names, log)))
    # Every kind once a round, ALL_KINDS_ROUNDS rounds, the best of each kind's rounds kept:
    # this virtual machine's speed came and went by up to 1.6 x for a second or more at a
    # time, and one kind's nine folds took a few milliseconds.
    spent: dict[str, list[float]] = {kind: [] for kind, *_ in games}
    floor: dict[str, list[float]] = {kind: [] for kind, *_ in games}
    for _round in range(ALL_KINDS_ROUNDS):
        for kind, impl, game, names, log, final in games:
            spent[kind].append(best(lambda i=impl, g=game, n=names, m=log: fold(i, g, n, m), 9))

            def snapshots(final: dict[str, object] = final, count: int = len(log)) -> None:
                state = final
                for _ in range(count):
                    state = json.loads(json.dumps(state))

            floor[kind].append(best(snapshots, 9))
    rates: dict[str, float] = {}
    for kind, _impl, _game, _names, log, _final in games:
        rates[kind] = len(log) / min(spent[kind])
        slowest = len(log) / max(spent[kind])
        snapshot = len(log) / min(floor[kind])
        print(
            f"{kind:<10} {len(log):4d} moves  {rates[kind]:8.0f} moves/s  (slowest round "
            f"{slowest:.0f}; JSON snapshot per move {snapshot:8.0f}/s)"
        )
        print(f"replay_moves_per_s_{kind} {rates[kind]:.0f}")
        print(f"replay_ratio_{kind} {rates[kind] / snapshot:.3f}")
    print(f"replay_moves_per_s_min {min(rates.values()):.0f}")


def main() -> None:
    if "--all-kinds" in sys.argv[1:]:
        all_kinds()
        return
    print(f"machine: {machine()}")
    impl = find_game("eitsuku")
    assert impl is not None
    log = play()
    game = Game(seed=SEED, options={})
    final = replay.fold(impl, game, PLAYERS, log)
    weeks = final["week"]
    print(f"game: {len(PLAYERS)} players, {weeks} weeks, {len(log)} moves")

    one = best(lambda: replay.fold(impl, game, PLAYERS, log))
    rounds = -(-LOG_MOVES // len(log))
    long_log = best(lambda: [replay.fold(impl, game, PLAYERS, log) for _ in range(rounds)], 3)
    long_moves = rounds * len(log)

    def snapshots() -> None:
        state = impl.setup(PLAYERS, {}, Rng(SEED, 0))
        for _ in range(long_moves):
            state = json.loads(json.dumps(state))

    def copies() -> None:
        state = impl.setup(PLAYERS, {}, Rng(SEED, 0))
        for _ in range(long_moves):
            state = copy.deepcopy(state)

    floor = best(snapshots, 3)
    deep = best(copies, 3)

    with scratch_database(None) as url:
        db = Database(url)
        users = make_users(db, ["replaygm", *PLAYERS])
        with db.session() as session:
            master = session.get(User, users["replaygm"][0])
            assert master is not None
            stored = gm.create_game(session, master, "eitsuku", "replay", {}, SECRET, seed=SEED)
            for name in PLAYERS:
                player = session.get(User, users[name][0])
                assert player is not None
                gm.submit_post(session, stored.thread_id, player, "JOIN", SECRET)
            gm.submit_post(session, stored.thread_id, master, "START", SECRET)
            seats = [session.get(User, users[name][0]) for name in PLAYERS]
            for _seq, seat, line, _sealed in log:
                who = seats[seat]
                assert who is not None
                gm.submit_post(session, stored.thread_id, who, line, SECRET)
            session.commit()
            game_id = stored.id
        with db.session() as session:
            row = session.get(Game, game_id)
            assert row is not None and replay.replay(session, row) == row.state == final
            from_db = best(lambda: replay.replay(session, row))
        db.dispose()

    print(f"fold, one game          {len(log) / one:10.0f} moves/s  ({one * 1000:.1f} ms)")
    print(
        f"fold, {long_moves}-move log   {long_moves / long_log:10.0f} moves/s  ({long_log:.2f} s)"
    )
    print(f"replay from SQLite      {len(log) / from_db:10.0f} moves/s  ({from_db * 1000:.1f} ms)")
    print(f"copy.deepcopy per move  {long_moves / deep:10.0f} moves/s  ({deep:.2f} s)")
    print(f"baseline JSON snapshot  {long_moves / floor:10.0f} moves/s  ({floor:.2f} s)")
    print(f"replay_ratio {(long_moves / long_log) / (long_moves / floor):.3f}")


if __name__ == "__main__":
    main()
