"""Seats and turn rotation: who is next, the order of a round, snake drafts, passing hands.

A seat is an index into the game's players list (0-based, as `app.games.base.Actor`). Seats run
clockwise in index order, so the next player in turn order is ``seat + 1`` (wrapping), and
"passing left" — handing your cards to the player on your left, as in a draft — also goes to
``seat + 1``: at a real table, play that goes clockwise moves to the left. "Right" is the other
way.

Games skip players in different ways (eliminated, both idols at the goal, already passed this
round), so a seat that is "out" is given either as a collection of seats or as a predicate on
the seat; the functions here only need to ask the question.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, MutableSequence, Sequence
from typing import Literal, TypeVar

from app.games.base import Rng

__all__ = [
    "Direction",
    "Out",
    "next_seat",
    "others",
    "pass_hands",
    "pass_to",
    "random_seat",
    "round_order",
    "snake_order",
]

H = TypeVar("H")
P = TypeVar("P")

# Seats to skip: a collection of seats, or a predicate that says whether a seat is out.
Out = Collection[int] | Callable[[int], bool]
Direction = Literal["left", "right"]


def _is_out(out: Out) -> Callable[[int], bool]:
    if callable(out):
        return out
    seats = out
    return lambda seat: seat in seats


def _check_seat(seat: int, count: int) -> None:
    if count < 1:
        raise ValueError(f"a table needs at least one seat: {count}")
    if not 0 <= seat < count:
        raise ValueError(f"seat {seat} is not at a table of {count}")


def next_seat(seat: int, count: int, out: Out = (), *, step: int = 1) -> int | None:
    """The first seat after `seat` going round the table that is not out.

    ``step=1`` goes clockwise (turn order), ``step=-1`` the other way. When every other seat is
    out, the turn comes back to `seat` itself if it is still in; when every seat is out, the
    answer is None (the round, or the game, is over — the caller decides which).
    """
    _check_seat(seat, count)
    if step not in (1, -1):
        raise ValueError(f"step must be 1 or -1: {step}")
    skip = _is_out(out)
    for offset in range(1, count + 1):
        candidate = (seat + step * offset) % count
        if not skip(candidate):
            return candidate
    return None


def round_order(first: int, count: int, out: Out = ()) -> list[int]:
    """Every seat once, clockwise from `first`, leaving out the seats that are out.

    `first` itself is listed first unless it is out (then the round starts at the next seat).
    """
    _check_seat(first, count)
    skip = _is_out(out)
    seats = [(first + offset) % count for offset in range(count)]
    return [seat for seat in seats if not skip(seat)]


def snake_order(count: int, rounds: int = 2, first: int = 0) -> list[int]:
    """The picking order of a snake draft: clockwise from `first`, then back, and so on.

    Four players from seat 0, two rounds: ``[0, 1, 2, 3, 3, 2, 1, 0]`` — the last seat picks
    twice in a row, which is the point of the snake (「カタン取り」): it evens out the first
    pick's advantage.
    """
    forward = round_order(first, count)
    order: list[int] = []
    for number in range(rounds):
        order.extend(forward if number % 2 == 0 else reversed(forward))
    return order


def pass_to(seat: int, count: int, direction: Direction = "left") -> int:
    """The seat a hand goes to when `seat` passes it to the `direction` (left: ``seat + 1``)."""
    _check_seat(seat, count)
    return (seat + (1 if direction == "left" else -1)) % count


def pass_hands(hands: MutableSequence[H], direction: Direction = "left") -> None:
    """Pass every hand at once: afterwards ``hands[pass_to(i)]`` is what ``hands[i]`` was.

    `hands` is indexed by seat and rearranged in place, for drafts where everyone picks and
    then hands the rest on.
    """
    count = len(hands)
    if count == 0:
        return
    before = list(hands)
    for seat, hand in enumerate(before):
        hands[pass_to(seat, count, direction)] = hand


def random_seat(rng: Rng, count: int) -> int:
    """A seat chosen with `rng`, e.g. the start player when the rules say "the seed decides"."""
    if count < 1:
        raise ValueError(f"a table needs at least one seat: {count}")
    return rng.randint(0, count - 1)


def others(players: Sequence[P], viewer: object) -> Iterator[tuple[int, P]]:
    """(seat, player) for every seat but `viewer`'s, in seat order (all of them for a viewer
    that is no seat, such as the public ``None``)."""
    return ((seat, player) for seat, player in enumerate(players) if seat != viewer)
