"""A dropped player (kicked, nobody in their seat) plays on by the game's own heuristic
(Game.autoplay → Game.zombie), which sees only what that seat sees: its own view and its legal
lines. えいつく: the film still gets made; エリューシス: the child plays cards the line suggests,
not always the first card of the hand; and the choice never depends on another's secret."""

from __future__ import annotations

from random import Random

from app.games import find_game
from app.games.base import Rng, State
from tests.fuzz_states import script
from tests.games.test_eitsuku_piles import _purposeful_line


def _eitsuku_with_a_dropped_seat(seed: str, dropped: int, *, zombie: bool) -> State:
    impl = find_game("eitsuku")
    assert impl is not None
    state = impl.setup(["太郎", "花子", "次郎"], {}, Rng(seed, 0))
    choices = Random(seed)
    for seq in range(1, 3000):
        if impl.is_over(state):
            break
        seat = impl.waiting_for(state)[0]
        if seat == dropped:
            lines = impl.autoplay(state, seat) if zombie else impl.default_commands(state, seat)
            line = lines[0]
        else:
            line = _purposeful_line(state, seat, impl.legal(state, seat), choices)
        state, _ = impl.apply(state, seat, impl.parse(line), Rng(seed, seq))
    assert impl.is_over(state)
    return state


def test_a_dropped_eitsuku_player_still_makes_and_releases_a_film() -> None:
    seeds = [f"zombie-{n}" for n in range(8)]
    made = [
        _eitsuku_with_a_dropped_seat(seed, 2, zombie=True)["players"][2]["status"] for seed in seeds
    ]
    passed = [
        _eitsuku_with_a_dropped_seat(seed, 2, zombie=False)["players"][2]["status"]
        for seed in seeds
    ]
    assert all(status == "unfinished" for status in passed)  # END every week makes nothing
    assert sum(status != "unfinished" for status in made) >= 6, made


def test_the_dropped_child_plays_what_the_line_suggests() -> None:
    """A line of accepted cards all of one colour after each other, refused plays of the
    other colour: the zombie plays a card of the last card's colour, declared ○."""
    impl = find_game("eleusis")
    assert impl is not None
    view = {
        "seat": 1,
        "line": [
            {"card": "♥3", "failed": [["♠5"]]},
            {"card": "♦9", "failed": [["♣2"], ["♠K"]]},
            {"card": "♥Q", "failed": []},
        ],
    }
    legal = [f"PLAY {mark} {card}" for card in ("♠4", "♣7", "♦5") for mark in "○●"]
    assert impl.zombie(view, legal) == "PLAY ○ ♦5"
    assert impl.zombie(view, ["PLAY ○ ♠4", "PLAY ● ♠4", "PLAY ○ ♣7", "PLAY ● ♣7"]) in (
        "PLAY ● ♠4",
        "PLAY ● ♣7",
    )


def test_a_dropped_seat_s_choice_never_depends_on_another_s_secret() -> None:
    """Two states differing only in another child's hand: the dropped seat plays the same."""
    impl = find_game("eleusis")
    assert impl is not None
    played = script("eleusis", ["A", "B", "C", "D"])
    state = played.stop("第1ラウンドのプレイ中").state
    seat = impl.waiting_for(state)[0]
    other = next(s for s in range(4) if s not in (seat, state["parent"]))
    swapped = impl.copy_state(state)
    hand = swapped["players"][other]["hand"]
    swapped["deck"], swapped["players"][other]["hand"] = (
        list(hand) + swapped["deck"][len(hand) :],
        swapped["deck"][: len(hand)],
    )
    assert swapped["players"][other]["hand"] != state["players"][other]["hand"]
    assert impl.autoplay(state, seat) == impl.autoplay(swapped, seat)
    assert impl.autoplay(state, seat)[0] in impl.legal(state, seat)
