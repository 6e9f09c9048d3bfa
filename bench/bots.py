"""Benchmark: how well each kind's bot plays (issue #39, docs/bot-play.md).

    python bench/bots.py                 # every kind, the default number of games
    python bench/bots.py --quick         # a few games per kind (a smoke run)
    python bench/bots.py --games 200 --kinds eleusis cardbattle
    python bench/bots.py --kinds eleusis --outside-rules   # parents' rules not in the list

For each kind, whole games with the bot (`Game.bot_lines`) in one seat — a different seat each
game — and the other seats played either by random legal lines ("random") or by the kind's
zombie heuristic (`Game.autoplay`, "zombie"). Every line the bot gives is applied, sealed when
the rules want it; a refused line stops the run. The winner is the first of the ranking, ties
split (two winners: half a win each). Prints per kind and opponent the bot's win share and the
even share (1 / seats), then ``bot_share_<kind>_<opponent> <x>`` and the ratio to the even share
``bot_ratio_<kind>_<opponent> <x>`` (the target: ≥ 2 against random play, > 1 against the
zombie; for two seats, where twice the even share is every game, see docs/bot-play.md), and the
bot's time per decision (mean, 99th percentile and the slowest).

Where the rules give a seat no listed line to play (エリューシス's parent sealing a rule: free
text), a random or zombie parent seals a rule drawn at random from the house list of formal
rules (app/games/eleusis/content/house_rules.toml), or with ``--outside-rules`` one of
`OUTSIDE_RULES`, none of which is in that list (the child bot's hypotheses). An エリューシス
round that goes on past 400 moves is ended by the GM (ENDROUND), as a table would agree to.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.games import GAMES
from app.games.base import Game, Rng, State

SEATS = {"eitsuku": 3, "eleusis": 4, "populous": 3, "idolwp": 3, "cardbattle": 2}
GAMES_PER_KIND = {"eitsuku": 60, "eleusis": 24, "populous": 30, "idolwp": 60, "cardbattle": 200}
QUICK_GAMES = 4
# --outside-rules: rules an エリューシス parent other than the bot seals, none of them in the
# house list (the child bot's hypotheses), to see how it does when the list misses the rule.
OUTSIDE_RULES = (
    "card.rank > prev.rank",
    "card.rank < prev.rank",
    "abs(card.rank - prev.rank) <= 1",
    "card.rank >= 7",
    "card.color == red or card.face",
    "card.rank % 3 != 0",
    "card.face or card.rank > prev.rank",
)
MAX_MOVES = 20000
ROUND_MOVES = 400


def _options(kind: str) -> dict[str, Any]:
    if kind == "cardbattle":
        from app.games.cardbattle.content import starter_pool

        return {"pool": {card.name: card.model_dump(mode="json") for card in starter_pool()}}
    return {}


@dataclass
class Tally:
    games: int = 0
    wins: float = 0.0
    decisions: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    times: list[float] = field(default_factory=list)
    unfinished: int = 0


def _opponent_lines(
    impl: Game, state: State, seat: int, style: str, rng: random.Random, outside: bool = False
) -> list[str]:
    if outside and impl.kind == "eleusis" and state["phase"] == "rule":
        return [f"RULE {rng.choice(OUTSIDE_RULES)}"]
    if style == "zombie":
        lines = impl.autoplay(state, seat)
        if lines:
            return lines
    thread, sealed = impl.legal_split(state, seat)
    if thread or sealed:
        return [rng.choice(thread or sealed)]
    if impl.kind == "eleusis" and state["phase"] == "rule":
        from app.games.eleusis.bot import house_rules

        return [f"RULE {rng.choice(house_rules()).text}"]
    return []


def _apply(impl: Game, state: State, actor: Any, line: str, seed: str, seq: int) -> State:
    command = impl.parse(line)
    sealed = actor != "gm" and impl.needs_seal(state, command) is True
    new_state, _ = impl.apply(state, actor, command, Rng(seed, seq), sealed=sealed)
    return new_state


def play_one(kind: str, game_no: int, style: str, tally: Tally, outside: bool = False) -> None:
    impl = GAMES[kind]
    seats = SEATS[kind]
    bot_seat = game_no % seats
    seed = f"bench-bots-{kind}-{style}-{game_no}"
    names = [f"p{seat}" for seat in range(seats)]
    state = impl.setup(names, _options(kind), Rng(seed, 0))
    rng = random.Random(seed)
    seq = 0
    round_moves = 0
    current_round = state.get("round")
    while not impl.is_over(state) and seq < MAX_MOVES:
        if kind == "eleusis":
            if state["round"] != current_round:
                current_round, round_moves = state["round"], 0
            if round_moves > ROUND_MOVES:
                seq += 1
                state = _apply(impl, state, "gm", "ENDROUND", seed, seq)
                continue
        waiting = impl.waiting_for(state)
        if not waiting:
            break
        seat = bot_seat if bot_seat in waiting else rng.choice(waiting)
        if seat == bot_seat:
            started = time.perf_counter()
            lines = impl.bot_lines(state, seat)
            spent = time.perf_counter() - started
            tally.decisions += 1
            tally.seconds += spent
            tally.slowest = max(tally.slowest, spent)
            tally.times.append(spent)
        else:
            lines = _opponent_lines(impl, state, seat, style, rng, outside)
        if not lines:
            if kind == "eleusis":
                seq += 1
                state = _apply(impl, state, "gm", "ENDROUND", seed, seq)
                continue
            raise RuntimeError(f"{kind}: seat {seat} has nothing to play ({seed})")
        for line in lines:
            seq += 1
            round_moves += 1
            state = _apply(impl, state, seat, line, seed, seq)
    result = impl.result(state)
    tally.games += 1
    if result is None:
        tally.unfinished += 1
        return
    winners = [entry.name for entry in result.ranking if entry.rank == 1]
    if names[bot_seat] in winners:
        tally.wins += 1 / len(winners)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=None, help="games per kind and opponent")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_GAMES} games each")
    parser.add_argument("--kinds", nargs="*", default=sorted(SEATS))
    parser.add_argument("--against", nargs="*", default=["random", "zombie"])
    parser.add_argument(
        "--outside-rules",
        action="store_true",
        help="エリューシス: other parents seal rules outside the house list",
    )
    args = parser.parse_args()
    print(f"# bots: python {sys.version.split()[0]}")
    for kind in args.kinds:
        for style in args.against:
            games = QUICK_GAMES if args.quick else (args.games or GAMES_PER_KIND[kind])
            tally = Tally()
            started = time.perf_counter()
            for game_no in range(games):
                play_one(kind, game_no, style, tally, args.outside_rules)
            wall = time.perf_counter() - started
            share = tally.wins / tally.games
            even = 1 / SEATS[kind]
            mean_ms = 1000 * tally.seconds / max(1, tally.decisions)
            ordered = sorted(tally.times) or [0.0]
            p99_ms = 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
            print(
                f"{kind:10s} vs {style:6s}: {tally.wins:6.1f} wins of {tally.games} games, "
                f"share {share:6.1%} (even {even:.1%}), bot {mean_ms:.2f} ms/decision "
                f"(p99 {p99_ms:.1f} ms, slowest {1000 * tally.slowest:.1f} ms), {wall:.1f} s"
                + (f", {tally.unfinished} unscored" if tally.unfinished else "")
            )
            print(f"bot_share_{kind}_{style} {share:.3f}")
            print(f"bot_ratio_{kind}_{style} {share / even:.2f}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
