"""Seats (app/games/kit/seats.py): who is next, round and snake orders, passing hands."""

from __future__ import annotations

import pytest

from app.games.base import Rng
from app.games.kit.seats import (
    next_seat,
    others,
    pass_hands,
    pass_to,
    random_seat,
    round_order,
    snake_order,
)


def test_next_seat_goes_clockwise_and_wraps_round_the_table() -> None:
    assert next_seat(0, 4) == 1
    assert next_seat(3, 4) == 0


def test_next_seat_skips_the_seats_that_are_out_given_as_a_set_or_a_predicate() -> None:
    assert next_seat(0, 5, {1, 2}) == 3
    assert next_seat(3, 5, {4, 0}) == 1
    assert next_seat(0, 5, lambda seat: seat in (1, 2)) == 3


def test_next_seat_can_go_counterclockwise() -> None:
    assert next_seat(0, 4, step=-1) == 3
    assert next_seat(0, 4, {3}, step=-1) == 2


def test_next_seat_comes_back_to_the_only_seat_still_in() -> None:
    assert next_seat(2, 4, {0, 1, 3}) == 2


def test_next_seat_is_none_when_every_seat_is_out() -> None:
    assert next_seat(2, 4, {0, 1, 2, 3}) is None


def test_round_order_lists_every_seat_once_from_the_first_player() -> None:
    assert round_order(2, 4) == [2, 3, 0, 1]
    assert round_order(2, 5, {3, 0}) == [2, 4, 1]
    assert round_order(2, 4, {2}) == [3, 0, 1]


def test_snake_order_goes_round_and_back() -> None:
    assert snake_order(4) == [0, 1, 2, 3, 3, 2, 1, 0]
    assert snake_order(3, rounds=3, first=1) == [1, 2, 0, 0, 2, 1, 1, 2, 0]
    assert snake_order(4, rounds=0) == []


def test_passing_left_goes_to_the_next_seat_in_turn_order_and_right_to_the_previous() -> None:
    assert [pass_to(seat, 4, "left") for seat in range(4)] == [1, 2, 3, 0]
    assert [pass_to(seat, 4, "right") for seat in range(4)] == [3, 0, 1, 2]


def test_pass_hands_moves_every_hand_to_the_seat_it_is_passed_to() -> None:
    hands = [["a"], ["b"], ["c"]]
    pass_hands(hands, "left")
    assert hands == [["c"], ["a"], ["b"]]
    pass_hands(hands, "right")
    assert hands == [["a"], ["b"], ["c"]]


def test_random_seat_replays_with_the_seed_and_covers_every_seat() -> None:
    assert random_seat(Rng("s", 0), 5) == random_seat(Rng("s", 0), 5)
    assert {random_seat(Rng("s", number), 5) for number in range(100)} == set(range(5))


def test_a_seat_that_is_not_at_the_table_is_refused() -> None:
    with pytest.raises(ValueError):
        next_seat(4, 4)
    with pytest.raises(ValueError):
        round_order(-1, 4)
    with pytest.raises(ValueError):
        pass_to(0, 0)


def test_others_gives_every_seat_but_the_viewer_s_in_seat_order() -> None:
    players = ["A", "B", "C"]
    assert list(others(players, 1)) == [(0, "A"), (2, "C")]
    assert list(others(players, None)) == [(0, "A"), (1, "B"), (2, "C")]
    assert list(others(players, "gm")) == [(0, "A"), (1, "B"), (2, "C")]
