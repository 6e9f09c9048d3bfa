"""Dice (app/games/kit/dice.py): rolls replay from the seed, stay in range, and labelled dice
read the same numbers as plain ones."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from app.games.base import Rng
from app.games.kit.dice import roll, roll_face, roll_faces, roll_one, roll_sum


def test_roll_gives_n_dice_each_between_one_and_the_number_of_sides() -> None:
    for number in range(20):
        dice = roll(Rng("s", number), 5, 8)
        assert len(dice) == 5
        assert all(1 <= die <= 8 for die in dice)


def test_every_face_of_a_d6_comes_up() -> None:
    rng = Rng("faces", 0)
    assert set(roll(rng, 200)) == {1, 2, 3, 4, 5, 6}


def test_rolls_replay_with_the_same_seed_and_differ_with_another() -> None:
    assert roll(Rng("seed", 5), 10) == roll(Rng("seed", 5), 10)
    assert roll(Rng("seed", 5), 10) != roll(Rng("other", 5), 10)
    assert roll(Rng("seed", 5), 10) != roll(Rng("seed", 6), 10)


def test_roll_one_is_the_first_die_of_roll() -> None:
    assert roll_one(Rng("s", 1), 12) == roll(Rng("s", 1), 3, 12)[0]


def test_roll_sum_adds_the_dice_and_the_bonus_and_keeps_the_dice() -> None:
    result = roll_sum(Rng("s", 1), 2, 6, bonus=3)
    assert result["dice"] == roll(Rng("s", 1), 2, 6)
    assert result["bonus"] == 3
    assert result["total"] == sum(result["dice"]) + 3
    assert json.loads(json.dumps(result)) == result


def test_a_labelled_die_with_faces_one_to_six_rolls_what_a_d6_rolls() -> None:
    for number in range(30):
        assert roll_face(Rng("s", number), [1, 2, 3, 4, 5, 6]) == roll_one(Rng("s", number))


def test_a_labelled_die_with_repeated_labels_reads_face_pairs() -> None:
    # Populous' catastrophe: 1–2 -> square 0, 3–4 -> square 1, 5–6 -> square 2.
    for number in range(30):
        face = roll_one(Rng("s", number))
        assert roll_face(Rng("s", number), [0, 0, 1, 1, 2, 2]) == (face - 1) // 2


def test_roll_faces_rolls_the_labelled_die_n_times() -> None:
    labels = ["役者", "役者", "音楽家", "演出家", "脚本家", "任意"]
    rolled = roll_faces(Rng("s", 1), labels, 300)
    assert len(rolled) == 300
    assert Counter(rolled).keys() == set(labels)
    assert roll_faces(Rng("s", 1), labels, 300) == rolled


def test_impossible_dice_are_refused() -> None:
    with pytest.raises(ValueError):
        roll(Rng("s", 1), -1)
    with pytest.raises(ValueError):
        roll(Rng("s", 1), 1, 0)
    with pytest.raises(ValueError):
        roll_face(Rng("s", 1), [])
    assert roll(Rng("s", 1), 0) == []
