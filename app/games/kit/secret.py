"""A simultaneous secret step, kept in the state as JSON: everyone seals a choice, then all of
them are revealed at once.

Board games often have every player choose at the same time (split cubes, pick a draft card,
seal a deck); on a bulletin board that becomes sealed commands arriving one by one. The step
records who has sealed what so that nobody acts on another's choice before the reveal; the
game decides what "reveal" then does.

The step is a dict in the state::

    {"kind": "cubes", "waiting": [1, 2], "sealed": {"0": {...}}, "revealed": False}

- ``kind``: the game's name for the step (so a game with several kinds can tell them apart).
- ``waiting``: the seats that have not sealed yet, ascending. A seat belongs to the step when
  it is waiting or has sealed.
- ``sealed``: seat -> payload; the keys are strings because JSON object keys are strings (a
  state that went through the database comes back that way, so the step is written that way
  from the start). Payloads are JSON values.
- ``revealed``: set by `reveal`; afterwards the step refuses seals.

Re-sealing before the reveal **replaces** the earlier choice (unless ``replace=False``): on a
board a player may post a corrected sealed command until the last player's choice arrives,
just as at a table one may change one's mind until everyone has chosen. The payloads are
secret until the reveal: `public_view` is what a view may show to anyone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from app.games.base import RuleError

__all__ = [
    "Step",
    "fill_missing",
    "is_complete",
    "missing",
    "open_step",
    "own_payload",
    "public_view",
    "reveal",
    "seal",
    "seats",
]

# The step as it sits in the state: plain JSON (see the module docstring for its keys).
Step = dict[str, Any]


def open_step(kind: str, step_seats: Iterable[int]) -> Step:
    """A new step waiting for `step_seats` (duplicates ignored); put it into the state."""
    return {
        "kind": kind,
        "waiting": sorted(set(step_seats)),
        "sealed": {},
        "revealed": False,
    }


def seats(step: Step) -> list[int]:
    """Every seat in the step, sealed or not, ascending."""
    return sorted({*step["waiting"], *(int(key) for key in step["sealed"])})


def seal(step: Step, seat: int, payload: Any, *, replace: bool = True) -> None:
    """Record `seat`'s secret `payload`.

    Refused with a `RuleError` when the step has been revealed, when `seat` is not in it, or,
    with ``replace=False``, when `seat` has already sealed. Otherwise a seat that has already
    sealed replaces its choice.
    """
    if step["revealed"]:
        raise RuleError("この選択はもう公開されたため、提出できません。")
    key = str(seat)
    if seat in step["waiting"]:
        step["waiting"].remove(seat)
    elif key in step["sealed"]:
        if not replace:
            raise RuleError("この選択はもう提出済みのため、変更できません。")
    else:
        raise RuleError("この選択に参加していないため、提出できません。")
    step["sealed"][key] = payload


def missing(step: Step) -> list[int]:
    """The seats that have not sealed yet, ascending (what the game is waiting for)."""
    return list(step["waiting"])


def is_complete(step: Step) -> bool:
    """True when every seat in the step has sealed."""
    return not step["waiting"]


def fill_missing(step: Step, default: Callable[[int], Any]) -> list[int]:
    """At the deadline, seal ``default(seat)`` for every seat still missing; returns those seats.

    The caller's `default` applies the rules' default choice for a player who did not answer;
    the seats returned let the game say whose choice was made for them. Filling does not
    reveal: the game reveals as usual once the step is complete.
    """
    if step["revealed"]:
        raise RuleError("この選択はもう公開されています。")
    filled = missing(step)
    for seat in filled:
        seal(step, seat, default(seat))
    return filled


def reveal(step: Step) -> dict[int, Any]:
    """Reveal all payloads at once: seat -> payload, in ascending seat order.

    Refused with a `RuleError` while a seat is still missing (fill it first at the deadline)
    and when the step has already been revealed, so a choice is never revealed twice.
    """
    if step["revealed"]:
        raise RuleError("この選択はもう公開されています。")
    if step["waiting"]:
        raise RuleError(f"まだ{len(step['waiting'])}人が選んでいないため、公開できません。")
    step["revealed"] = True
    return {seat: step["sealed"][str(seat)] for seat in seats(step)}


def own_payload(step: Step, seat: int) -> Any:
    """What `seat` itself has sealed (None when it has not): a player may see their own choice."""
    return step["sealed"].get(str(seat))


def public_view(step: Step) -> dict[str, Any]:
    """The step as anyone may see it: who has sealed and who is missing, but no payload until
    the reveal (then all of them, keyed by seat as strings like the state)."""
    view: dict[str, Any] = {
        "kind": step["kind"],
        "waiting": missing(step),
        "sealed_seats": sorted(int(key) for key in step["sealed"]),
        "revealed": step["revealed"],
    }
    if step["revealed"]:
        view["payloads"] = {str(seat): step["sealed"][str(seat)] for seat in seats(step)}
    return view
