"""What a viewer sees of a battle: both fields once revealed, declared magic, costs, the turn,
the last result; never a deck before both are sealed, nor a magic card before it is declared
(the owner sees their own)."""

from __future__ import annotations

import functools
from typing import Any

from app.games.base import State, Viewer
from app.games.cardbattle.cards import Ability, ability_text
from app.games.cardbattle.rules import (
    LAST_TURN,
    deck_cost,
    reason_text,
    total_cost,
    turn_player,
    waiting_for,
)
from app.games.cardbattle.scoring import result
from app.games.kit import secret


def _card(entry: dict[str, Any]) -> dict[str, Any]:
    ability = entry["ability"]
    return {
        "name": entry["name"],
        "cost": entry["cost"],
        "attack": entry["attack"] + entry["bonus"],
        "base_attack": entry["attack"],
        "durability": entry["left"],
        "max_durability": entry["durability"],
        "state": entry["state"],
        "shield": entry["shield"],
        "ability": None if ability is None else _ability_text(tuple(sorted(ability.items()))),
        "ability_used": entry["ability_used"],
    }


@functools.lru_cache(maxsize=512)
def _ability_text(ability: tuple[tuple[str, Any], ...]) -> str:
    """A field card's ability as text, made once per ability (the view is built on every
    post, the abilities are few)."""
    return ability_text(Ability.model_validate(dict(ability)))


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    final = result(state)
    waiting = waiting_for(state)
    step = state["step"]
    players = []
    for seat, player in enumerate(state["players"]):
        entry: dict[str, Any] = {
            "seat": seat,
            "name": player["name"],
            "sealed": step is None or str(seat) in step["sealed"],
            "field": [_card(card) for card in player["field"]],
            "deck_cost": deck_cost(player),
            "total_cost": total_cost(state, seat),
            "magic_used": list(player["magic_used"]),
            "magic_left": len(player["magic"]),
        }
        if viewer == "gm" or viewer == seat:
            entry["magic"] = list(player["magic"])
            if step is not None and str(seat) in step["sealed"]:
                entry["sealed_deck"] = secret.own_payload(step, seat)
        players.append(entry)
    shown: dict[str, Any] = {
        "kind": "cardbattle",
        "phase": state["phase"],
        "turn": state["turn"],
        "turns": LAST_TURN,
        "first": state["players"][state["first"]]["name"],
        "first_seat": state["first"],
        "dice": list(state["dice"]),
        "turn_player": (
            state["players"][turn_player(state)]["name"] if state["turn"] > 0 else None
        ),
        "players": players,
        "passed": [state["players"][seat]["name"] for seat in state["passed"]],
        "log": [dict(row) for row in state["log"]],
        "log_turn": state["log_turn"],
        "log_player": (
            None if state["log_seat"] is None else state["players"][state["log_seat"]]["name"]
        ),
        "pool": {
            name: {
                "kind": card["kind"],
                "cost": card["cost"],
                "attack": card["attack"],
                "durability": card["durability"],
                "version": card["version"],
            }
            for name, card in state["pool"].items()
        },
        "waiting_for": [state["players"][seat]["name"] for seat in waiting],
        "waiting_seats": waiting,
        "winner": None if state["winner"] is None else state["players"][state["winner"]]["name"],
        "reason": reason_text(state),
        "over": state["over"],
        "result": final.to_json() if final is not None else None,
    }
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        shown["seat"] = viewer
    return shown
