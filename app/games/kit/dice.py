"""Dice: numbered dice, labelled dice (faces that name squares, decks, results) and sums.

Rulebooks roll dice for many things (a catastrophe's square, a war's strength, which deck to
draw from, which of a card's abilities fires) and the bot must roll them from the move's `Rng`
so that a replay rolls the same numbers. The functions return plain ints, lists and dicts, ready
to be written into the state or into an event so that players can see what was rolled.

A labelled die rolls a face number first and looks the label up, so a die whose faces are
``[1, 2, 3, 4, 5, 6]`` rolls exactly what `roll_one` rolls with the same `Rng`: a game may
switch between the two without changing any recorded game.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict, TypeVar

from app.games.base import Rng

__all__ = ["Roll", "roll", "roll_face", "roll_faces", "roll_one", "roll_sum"]

F = TypeVar("F")


class Roll(TypedDict):
    """A summed roll as JSON: the dice in the order rolled, the fixed bonus, and the total."""

    dice: list[int]
    bonus: int
    total: int


def _check(n: int, sides: int) -> None:
    if n < 0:
        raise ValueError(f"cannot roll a negative number of dice: {n}")
    if sides < 1:
        raise ValueError(f"a die needs at least one side: {sides}")


def roll_one(rng: Rng, sides: int = 6) -> int:
    """One die with faces 1..`sides`."""
    _check(1, sides)
    return rng.randint(1, sides)


def roll(rng: Rng, n: int, sides: int = 6) -> list[int]:
    """`n` dice with faces 1..`sides`, in the order rolled (``roll(rng, 2)`` is 2d6)."""
    _check(n, sides)
    return [rng.randint(1, sides) for _ in range(n)]


def roll_sum(rng: Rng, n: int, sides: int = 6, *, bonus: int = 0) -> Roll:
    """Roll `n` dice with `sides` faces and add them and `bonus` (``roll_sum(rng, 2, 6)``: 2d6).

    The single dice are kept beside the total because players check them (「5と2で7」).
    """
    dice = roll(rng, n, sides)
    return {"dice": dice, "bonus": bonus, "total": sum(dice) + bonus}


def roll_face(rng: Rng, faces: Sequence[F]) -> F:
    """Roll a die whose faces carry `faces` (labels, in face order 1..len) and return the label.

    Labels may repeat, as on a d6 read 1–2 → square 0, 3–4 → 1, 5–6 → 2:
    ``roll_face(rng, [0, 0, 1, 1, 2, 2])``.
    """
    if not faces:
        raise ValueError("a labelled die needs at least one face")
    return faces[rng.randint(1, len(faces)) - 1]


def roll_faces(rng: Rng, faces: Sequence[F], n: int) -> list[F]:
    """`n` rolls of the labelled die `faces`, in the order rolled."""
    _check(n, max(1, len(faces)))
    return [roll_face(rng, faces) for _ in range(n)]
