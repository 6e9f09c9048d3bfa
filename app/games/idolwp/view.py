"""What a viewer sees of IM@S x Workerplacement: everything but the face-down cards in a hand
(their number is public) and the order of the decks (docs/rules/idolwp.md, "View")."""

from __future__ import annotations

from typing import Any

from app.games.base import State, Viewer
from app.games.idolwp.rules import (
    board_of,
    content,
    due_idols,
    level_target,
    target_text,
    waiting_for,
)
from app.games.idolwp.scoring import result


def _board(state: State) -> dict[str, Any]:
    board = board_of(state)
    return {
        "id": board.id,
        "name": board.name,
        "spaces": [
            {
                "id": space.id,
                "type": space.type,
                "chips": dict(space.chips),
                "rate": space.rate,
                "amount": space.amount,
                "col": space.col,
                "row": space.row,
            }
            for space in board.spaces
        ],
        "edges": [list(edge) for edge in board.edges],
    }


def _event(state: State) -> dict[str, Any]:
    event_card = content().events[state["event"]]
    levels = []
    for level in event_card.levels:
        kind, target = level_target(state, level, event_card)
        levels.append(
            {
                "level": level.level,
                "kind": kind,
                "target": target,
                "text": target_text(kind, target),
                "evp": level.evp,
                "memory": level.memory,
                "cards": level.cards,
            }
        )
    return {"name": event_card.name, "levels": levels, "rewards": list(event_card.rewards)}


def _idol_info() -> dict[str, dict[str, Any]]:
    """Every idol's card (public content): what a drafter reads before a PICK."""
    return {
        idol.name: {
            "full_name": idol.full_name,
            "Vo": idol.Vo,
            "Da": idol.Da,
            "Vi": idol.Vi,
            "memory": idol.memory,
            "text": idol.text,
        }
        for idol in content().idols.values()
    }


def _card_info(names: list[str]) -> dict[str, dict[str, Any]]:
    cards = content().cards
    return {name: {"text": cards[name].text, "timing": cards[name].timing} for name in names}


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    final = result(state)
    waiting = waiting_for(state)
    playing = state["phase"] in ("play", "final") and not state["over"]
    players = []
    for seat, player in enumerate(state["players"]):
        entry: dict[str, Any] = {
            "seat": seat,
            "name": player["name"],
            "idols": dict(player["positions"])
            if player["positions"]
            else {idol: None for idol in player["idols"]},
            "idol_order": list(player["idols"]),
            "points": player["points"],
            "evp": player["evp"],
            "abilities": dict(player["abilities"]),
            "chips": dict(player["chips"]),
            "memory": player["memory"],
            "money": player["money"],
            "cards": len(player["hand"]),
            "kept": list(player["kept"]),
            "a_idol": player["a_idol"],
            "due": due_idols(state, seat) if playing and state["phase"] == "play" else [],
            "finish_rank": player["finish_rank"],
        }
        if viewer == "gm" or viewer == seat:
            entry["hand"] = list(player["hand"])
        players.append(entry)
    shown: dict[str, Any] = {
        "kind": "idolwp",
        "phase": state["phase"],
        "round": state["round"],
        "rounds": len(state["boards"]),
        "board": _board(state),
        "event": _event(state),
        "events_left": len(state["event_deck"]),
        "card_deck": len(state["card_deck"]),
        "card_discard": len(state["card_discard"]),
        "players": players,
        "turn": state["players"][state["turn"]]["name"],
        "turn_seat": state["turn"],
        "start_player": state["players"][state["start_player"]]["name"],
        "pending": dict(state["pending"]) if state["pending"] is not None else None,
        "finished": [state["players"][seat]["name"] for seat in state["finished"]],
        "draft": (
            {
                "pool": list(state["draft"]["pool"]),
                "order": [state["players"][seat]["name"] for seat in state["draft"]["order"]],
                "index": state["draft"]["index"],
            }
            if state["draft"] is not None
            else None
        ),
        "final_order": [state["players"][seat]["name"] for seat in state["final_order"]],
        "results": [dict(entry) for entry in state["results"]],
        "waiting_for": [state["players"][seat]["name"] for seat in waiting],
        "waiting_seats": waiting,
        "over": state["over"],
        "result": final.to_json() if final is not None else None,
    }
    named = [name for player in players for name in (*player["kept"], *player.get("hand", []))]
    shown["idol_info"] = _idol_info()
    shown["card_info"] = _card_info(list(dict.fromkeys(named)))
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        shown["seat"] = viewer
    return shown
