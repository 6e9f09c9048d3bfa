"""ポピュラス 草案21: whole games by random legal lines (3, 4 and 5 players).

Each game chooses among `game.legal` lines (posted in the thread) and `game.sealed_legal` lines
(sent sealed) with `random.Random(seed)`. Every game must end after exactly 12 rounds (every seat
playing one turn a round, from the start player), keep every resource within 0–6 after every
move, keep the components (10 workers and 5 towns per race, 90 epic cards), accept every line it
offers, replay to an equal state from the recorded lines, and rank the result by score (the sum
of its breakdown) then by towns left on the race board.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from app.games.base import Rng, State
from app.games.populous import game

NAMES = ["A", "B", "C", "D", "E"]
RESOURCES = ("情熱", "食料", "信仰", "神の怒り")
Record = list[tuple[int, str, bool]]


def offered(state: State, seat: int) -> list[tuple[str, bool]]:
    lines = [(line, False) for line in game.legal(state, seat)]
    return lines + [(line, True) for line in game.sealed_legal(state, seat)]


def check_components(state: State) -> None:
    for seat, player in enumerate(state["players"]):
        for resource in RESOURCES:
            assert 0 <= player["res"][resource] <= 6, (seat, resource, player["res"])
        mine = Counter(p[1] for pieces in state["pieces"].values() for p in pieces if p[0] == seat)
        assert player["workers"] + mine["w"] == 10
        assert player["towns"] + mine["t"] + mine["x"] == 5
        assert player["vp"] >= 0
    cards = len(state["deck"]) + len(state["discard"])
    for player in state["players"]:
        cards += len(player["hand"]) + sum(len(gen) for gen in player["gens"])
    assert cards == 90


def random_game(players: int, seed: int, try_all: int | None) -> tuple[State, Record]:
    """A whole game; at each state `try_all` offered lines (None: all of them) are applied
    to check that they are accepted."""
    rnd = random.Random(seed)
    key = f"game{players}-{seed}"
    state = game.setup(NAMES[:players], {}, Rng(key, 0))
    record: Record = []
    turns: list[tuple[int, int]] = []
    for seq in range(1, 5000):
        if game.is_over(state):
            break
        if state["phase"] == "play" and (not turns or turns[-1] != (state["round"], state["turn"])):
            turns.append((state["round"], state["turn"]))
        waiting = game.waiting_for(state)
        assert waiting
        seat = rnd.choice(waiting)
        lines = offered(state, seat)
        assert lines, (state["phase"], state["step"])
        sample = lines if try_all is None else rnd.sample(lines, min(try_all, len(lines)))
        for line, sealed in sample:
            game.apply(state, seat, game.parse(line), Rng(key, seq), sealed=sealed)
        line, sealed = rnd.choice(lines)
        state, _ = game.apply(state, seat, game.parse(line), Rng(key, seq), sealed=sealed)
        record.append((seat, line, sealed))
        check_components(state)
    assert game.is_over(state)
    start = state["start"]
    order = [(start + offset) % players for offset in range(players)]
    assert turns == [(rnd_, seat) for rnd_ in range(1, 13) for seat in order]
    assert state["round"] == 12
    return state, record


def replay(players: int, seed: int, record: Record) -> State:
    key = f"game{players}-{seed}"
    state = game.setup(NAMES[:players], {}, Rng(key, 0))
    for seq, (seat, line, sealed) in enumerate(record, start=1):
        state, _ = game.apply(state, seat, game.parse(line), Rng(key, seq), sealed=sealed)
    return state


def expected_breakdown(state: State) -> list[dict[str, int]]:
    """The final scoring as the rules page words it (skills aside): 1 VP per worker on the map,
    3 per intact town, 4 to each player with most face-up cards in a generation column."""
    players = state["players"]
    columns = [[sum(1 for c in gen if not c["down"]) for gen in p["gens"]] for p in players]
    width = max(len(c) for c in columns)
    generations = [0] * len(players)
    for index in range(width):
        counts = [c[index] if index < len(c) else 0 for c in columns]
        if max(counts) > 0:
            for seat, count in enumerate(counts):
                if count == max(counts):
                    generations[seat] += 4
    out = []
    for seat, player in enumerate(players):
        mine = Counter(p[1] for pieces in state["pieces"].values() for p in pieces if p[0] == seat)
        out.append(
            {
                "play": player["vp"],
                "workers": mine["w"],
                "towns": 3 * mine["t"],
                "generations": generations[seat],
            }
        )
    return out


def check_result(state: State) -> None:
    result = game.result(state)
    assert result is not None
    final = state["final"]
    expected = expected_breakdown(state)
    by_name: dict[str, Any] = {entry.name: entry for entry in result.ranking}
    assert sorted(by_name) == sorted(p["name"] for p in state["players"])
    keys = []
    for seat, player in enumerate(state["players"]):
        entry = by_name[player["name"]]
        breakdown = {k: int(v or 0) for k, v in entry.breakdown.items()}
        assert set(breakdown) == {"play", "workers", "towns", "generations", "skills"}
        assert entry.score == sum(breakdown.values())
        assert entry.score == final[seat]["score"]
        assert {k: breakdown[k] for k in expected[seat]} == expected[seat]
        assert breakdown["skills"] >= 0
        assert final[seat]["towns_left"] == player["towns"]
        keys.append((entry.score, player["towns"]))
    ranking = result.ranking
    names = [p["name"] for p in state["players"]]
    ordered = [keys[names.index(entry.name)] for entry in ranking]
    assert ordered == sorted(ordered, reverse=True)
    for index, entry in enumerate(ranking):
        if index and ordered[index] == ordered[index - 1]:
            assert entry.rank == ranking[index - 1].rank
        else:
            assert entry.rank == index + 1


@pytest.mark.parametrize(
    ("players", "seed", "try_all"),
    [(3, 1, None), (3, 2, 4), (4, 3, 6), (4, 4, 2), (5, 5, 6), (5, 6, 2)],
)
def test_random_game_ends_after_12_rounds_and_replays(
    players: int, seed: int, try_all: int | None
) -> None:
    state, record = random_game(players, seed, try_all)
    check_result(state)
    assert replay(players, seed, record) == state
    assert game.legal(state, 0) == [] and game.sealed_legal(state, 0) == []
    assert game.waiting_for(state) == []


def test_same_seed_same_game_other_seed_other_game() -> None:
    first, record = random_game(3, 7, 0)
    again, record_again = random_game(3, 7, 0)
    assert record == record_again and first == again
    other, _ = random_game(3, 8, 0)
    assert other != first
