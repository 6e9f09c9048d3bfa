"""Property test: hundreds of random えいつく games played only from `legal()`.

Properties (docs/rules/eitsuku.md):
- every legal line is canonical, parses, and is accepted by apply;
- apply never mutates its input;
- every budget/role/event card is in exactly one place at every step (cards are conserved);
- the view never shows deck order;
- every game finishes within 12 weeks, with a result ranking every player;
- replaying the canonical lines from setup gives an identical state.
"""

from __future__ import annotations

import json
from random import Random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.games.base import Rng
from app.games.eitsuku import game
from app.games.eitsuku.cards import WEEKS
from app.games.eitsuku.rules import card_census, copy_state, full_census

# Lines that move a film forward; drawn from first on "eager" steps so that many random games
# release films and reach the scoring rules.
EAGER = ("SET", "RELEASE", "CHOOSE", "BUY", "EVENT")
MAX_STEPS = WEEKS * 6 * 40


def _deck_orders(state: dict[str, object]) -> list[list[str]]:
    decks = state["decks"]
    assert isinstance(decks, dict)
    return [cards for cards in decks.values() if len(cards) > 1]


def assert_every_event_said(state: dict[str, Any], events: list[dict[str, Any]]) -> None:
    """Every event is said in the thread: by its own text, or (one line for many, issue #43)
    by another event's: a week's start by the end of the week before (「第1週が終わり、第2週が
    始まりました。」), a player's start-phase gain or unfinished film by the line naming all
    whom it befell (「P0、P2: …」, or 「制作中の全員: …」 for every player still at work)."""
    said = "\n".join(str(e["text"]) for e in events)
    for e in events:
        if e["text"]:
            continue
        if e["type"] == "week":
            assert f"終わり、第{e['week']}週が始まりました。" in said, events
            continue
        assert e["type"] in ("start", "unfinished"), e
        name = state["players"][e["seat"]]["name"]
        lines = [str(o["text"]) for o in events if o["type"] == e["type"] and o["text"]]
        everyone = e["type"] == "start" and any(t.startswith("制作中の全員: ") for t in lines)
        assert everyone or any(name in t.split(": ", 1)[0].split("、") for t in lines), events


@given(
    player_count=st.integers(2, 6),
    seed=st.text(alphabet="abcdef0123", min_size=1, max_size=6),
    choices=st.randoms(use_true_random=False),
)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_games_from_legal_lines(player_count: int, seed: str, choices: Random) -> None:
    players = [f"P{i}" for i in range(player_count)]
    state = game.setup(players, {}, Rng(seed, 0))
    total = full_census(len(players))
    assert card_census(state) == total
    log: list[tuple[int, str]] = []
    for seq in range(1, MAX_STEPS):
        if game.is_over(state):
            break
        waiting = game.waiting_for(state)
        assert waiting
        seat = choices.choice(waiting)
        lines = game.legal(state, seat)
        assert lines[-1] == "END" or all(line.startswith("CHOOSE") for line in lines)
        eager = [line for line in lines if line.startswith(EAGER)]
        line = choices.choice(eager if eager and choices.random() < 0.6 else lines)
        command = game.parse(line)
        assert command.canonical() == line
        snapshot = copy_state(state)
        new_state, events = game.apply(state, seat, command, Rng(seed, seq))
        assert state == snapshot, "apply mutated its input"
        assert new_state != state
        state = new_state
        assert events and all(e["type"] for e in events)
        assert_every_event_said(new_state, events)
        assert card_census(state) == total
        assert 1 <= state["week"] <= WEEKS
        log.append((seat, line))
    assert game.is_over(state), "the game did not finish"
    assert state["week"] <= WEEKS
    assert game.turn_key(state) == "over"

    result = game.result(state)
    assert result is not None
    assert sorted(entry.name for entry in result.ranking) == sorted(players)
    scores = [entry.score for entry in result.ranking]
    scored = [s for s in scores if s is not None]
    assert scored == sorted(scored, reverse=True)
    assert scores == scored + [None] * (len(scores) - len(scored))

    view = game.view(state, None)
    text = json.dumps(view, ensure_ascii=False)
    for order in _deck_orders(state):
        assert json.dumps(order, ensure_ascii=False) not in text
    assert view["result"] == result.to_json()

    replayed = game.setup(players, {}, Rng(seed, 0))
    for seq, (seat, line) in enumerate(log, start=1):
        replayed, _ = game.apply(replayed, seat, game.parse(line), Rng(seed, seq))
    assert replayed == state
