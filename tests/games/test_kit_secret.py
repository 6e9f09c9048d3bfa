"""Simultaneous secret steps (app/games/kit/secret.py): sealing, re-sealing, the deadline's
defaults, and the reveal in seat order — all on plain JSON that survives the database."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.games.base import RuleError
from app.games.kit.secret import (
    fill_missing,
    is_complete,
    missing,
    open_step,
    own_payload,
    public_view,
    reveal,
    seal,
    seats,
)


def through_json(step: dict[str, Any]) -> dict[str, Any]:
    """What the step looks like after the state has been stored and loaded again."""
    loaded: dict[str, Any] = json.loads(json.dumps(step))
    return loaded


def test_open_step_waits_for_every_seat_once_in_seat_order() -> None:
    assert open_step("cubes", [2, 0, 2, 1]) == {
        "kind": "cubes",
        "waiting": [0, 1, 2],
        "sealed": {},
        "revealed": False,
    }


def test_sealing_records_the_payload_under_a_string_key_and_stops_waiting() -> None:
    step = open_step("cubes", [0, 1, 2])
    seal(step, 1, {"情熱": 2, "食料": 3, "信仰": 2})
    assert step["sealed"] == {"1": {"情熱": 2, "食料": 3, "信仰": 2}}
    assert missing(step) == [0, 2]
    assert not is_complete(step)
    assert seats(step) == [0, 1, 2]


def test_a_step_works_the_same_after_a_json_round_trip() -> None:
    step = through_json(open_step("pick", [0, 1]))
    seal(step, 0, "a")
    step = through_json(step)
    seal(step, 1, "b")
    step = through_json(step)
    assert reveal(step) == {0: "a", 1: "b"}


def test_resealing_before_the_reveal_replaces_the_earlier_choice() -> None:
    step = open_step("pick", [0, 1])
    seal(step, 0, "first")
    seal(step, 0, "second")
    assert own_payload(step, 0) == "second"
    assert missing(step) == [1]


def test_resealing_is_refused_when_the_step_locks_choices() -> None:
    step = open_step("pick", [0, 1])
    seal(step, 0, "first")
    with pytest.raises(RuleError) as caught:
        seal(step, 0, "second", replace=False)
    assert str(caught.value) == "この選択はもう提出済みのため、変更できません。"
    assert own_payload(step, 0) == "first"


def test_a_seat_outside_the_step_cannot_seal() -> None:
    step = open_step("pick", [0, 2])
    with pytest.raises(RuleError) as caught:
        seal(step, 1, "x")
    assert str(caught.value) == "この選択に参加していないため、提出できません。"
    assert step["sealed"] == {}


def test_nothing_can_be_sealed_after_the_reveal() -> None:
    step = open_step("pick", [0])
    seal(step, 0, "a")
    reveal(step)
    with pytest.raises(RuleError) as caught:
        seal(step, 0, "b")
    assert str(caught.value) == "この選択はもう公開されたため、提出できません。"
    assert own_payload(step, 0) == "a"


def test_reveal_returns_every_payload_in_seat_order_whatever_order_they_came_in() -> None:
    step = open_step("deck", [0, 1, 2, 10])
    for seat in (10, 2, 0, 1):
        seal(step, seat, f"deck of {seat}")
    revealed = reveal(step)
    assert list(revealed.items()) == [
        (0, "deck of 0"),
        (1, "deck of 1"),
        (2, "deck of 2"),
        (10, "deck of 10"),
    ]
    assert step["revealed"] is True


def test_reveal_is_refused_while_a_seat_is_missing_and_after_a_reveal() -> None:
    step = open_step("pick", [0, 1])
    seal(step, 0, "a")
    with pytest.raises(RuleError) as caught:
        reveal(step)
    assert str(caught.value) == "まだ1人が選んでいないため、公開できません。"
    seal(step, 1, "b")
    reveal(step)
    with pytest.raises(RuleError):
        reveal(step)


def test_fill_missing_seals_the_default_only_for_the_seats_still_missing() -> None:
    step = open_step("cubes", [0, 1, 2])
    seal(step, 1, "chosen")
    filled = fill_missing(step, lambda seat: f"default for {seat}")
    assert filled == [0, 2]
    assert is_complete(step)
    assert reveal(step) == {0: "default for 0", 1: "chosen", 2: "default for 2"}


def test_fill_missing_on_a_complete_step_fills_nothing() -> None:
    step = open_step("pick", [0])
    seal(step, 0, "a")
    assert fill_missing(step, lambda seat: "never") == []
    assert own_payload(step, 0) == "a"


def test_the_public_view_shows_who_has_sealed_but_no_payload_before_the_reveal() -> None:
    step = open_step("pick", [0, 1])
    seal(step, 1, "secret card")
    view = public_view(step)
    assert view == {"kind": "pick", "waiting": [0], "sealed_seats": [1], "revealed": False}
    assert "secret card" not in json.dumps(view, ensure_ascii=False)
    seal(step, 0, "other card")
    reveal(step)
    assert public_view(step)["payloads"] == {"0": "other card", "1": "secret card"}


def test_own_payload_is_none_for_a_seat_that_has_not_sealed() -> None:
    assert own_payload(open_step("pick", [0]), 0) is None
