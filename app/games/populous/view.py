"""What a viewer sees of ポピュラス 草案21 (docs/rules/populous.md, "Views").

Public: the map (tiles, terrains, rings, pieces), the genesis markers, resources, VP,
generations (a face-down card shows as face down, with the action it was played for), revealed
skills, hand sizes, the last war. Private (the seat itself, and the GM): its hand, its face-down
skills, which card lies under each of its face-down cards; a seat also sees its own draft pack
and its own sealed choice. The deck's order is nobody's.
"""

from __future__ import annotations

from typing import Any

from app.games.base import State, Viewer
from app.games.kit import secret
from app.games.populous import board
from app.games.populous.content import KINDS, RESOURCES
from app.games.populous.rules import (
    STEP_JA,
    _prompt,
    aptitudes,
    area_squares,
    content,
    contested_squares,
    hand_size,
    majorities,
    waiting_for,
)
from app.games.populous.scoring import result

_PIECE = {"w": "worker", "t": "town", "x": "ruin"}


def _map(state: State) -> list[dict[str, Any]]:
    names = [p["name"] for p in state["players"]]
    dice = content().dice
    area = state["t"]["area"] if state["t"] else None
    near = board.adjacency(board.map_key(state["map"]))
    contested = set(contested_squares(state)) if state["step"] == "war" else set()
    tiles = []
    for tile in state["map"]:
        squares = []
        # The square's terrain as `terrain` tells it, read from the tile at hand: `terrain`
        # looks the tile up again on the map for each of the map's squares.
        ring = tile["ring"]
        for index, square in enumerate(area_squares(tile["id"])):
            letter = square[-1]
            squares.append(
                {
                    "id": square,
                    "letter": letter,
                    "dice": list(dice[letter]),
                    "printed": tile["squares"][index],
                    "terrain": str(ring) if ring is not None else str(tile["squares"][index]),
                    "adjacent": list(near.get(square, ())),
                    "contested": square in contested,
                    "pieces": [
                        {"seat": seat, "player": names[seat], "type": _PIECE[kind]}
                        for seat, kind in state["pieces"].get(square, ())
                    ],
                }
            )
        tiles.append(
            {
                "id": tile["id"],
                "q": tile["q"],
                "r": tile["r"],
                "rot": tile["rot"],
                "ring": tile["ring"],
                "genesis": tile["id"] == area,
                "squares": squares,
            }
        )
    return tiles


def _generations(player: dict[str, Any], own: bool) -> list[list[dict[str, Any]]]:
    gens = []
    for gen in player["gens"]:
        cards = []
        for card in gen:
            if card["down"]:
                shown: dict[str, Any] = {"down": True, "action": card["action"]}
                if own:
                    shown["kind"] = card["kind"]
            else:
                shown = {"down": False, "kind": card["kind"], "action": card["action"]}
            cards.append(shown)
        gens.append(cards)
    return gens


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    data = content()
    players = []
    for seat, player in enumerate(state["players"]):
        own = viewer == "gm" or viewer == seat
        race = data.races.get(player["race"]) if player["race"] else None
        entry: dict[str, Any] = {
            "name": player["name"],
            "seat": seat,
            "race": player["race"],
            "colour": race.colour if race else "#888888",
            "aptitudes": sorted(aptitudes(state, seat)),
            "resources": dict(player["res"]),
            "vp": player["vp"],
            "hand_size": len(player["hand"]),
            "max_hand": hand_size(state, seat),
            "workers_home": player["workers"],
            "towns_home": player["towns"],
            "generations": _generations(player, own),
            "skills_revealed": [
                {"name": name, "text": data.skills[name].text} for name in player["revealed"]
            ],
            "skills_face_down": len(player["skills"]) - len(player["revealed"]),
            "majorities": majorities(state, seat) if state["phase"] == "play" else [],
        }
        if own:
            entry["hand"] = sorted(player["hand"], key=KINDS.index)
            entry["skills"] = [
                {
                    "name": name,
                    "text": data.skills[name].text,
                    "revealed": name in player["revealed"],
                }
                for name in player["skills"]
            ]
        players.append(entry)
    t = state["t"]
    out: dict[str, Any] = {
        "kind": "populous",
        "phase": state["phase"],
        "over": state["over"],
        "round": state["round"],
        "rounds": state["rounds"],
        "start": state["start"],
        "turn": state["turn"],
        "step": state["step"],
        "step_ja": STEP_JA.get(state["step"] or "", ""),
        "seat": viewer if isinstance(viewer, int) and not isinstance(viewer, bool) else None,
        "waiting_for": [state["players"][s]["name"] for s in waiting_for(state)],
        "waiting_seats": waiting_for(state),
        "prompt": _prompt(state),
        "area": t["area"] if t else None,
        "markers": list(state["markers"]),
        "rings": dict(state["rings"]),
        "deck": len(state["deck"]),
        "discard": len(state["discard"]),
        "players": players,
        "map": _map(state),
        "turn_state": None,
        "last_war": state["last_war"],
        "contested": contested_squares(state) if state["step"] == "war" else [],
        "race_order": [state["players"][s]["name"] for s in state["race_order"]],
        "races": [
            {"name": r.name, "colour": r.colour, "aptitude": r.aptitude, "text": r.text}
            for r in data.races.values()
        ],
        "draft": None,
        "sealed": None,
        "result": None,
    }
    if t is not None:
        out["turn_state"] = {
            "played": t["played"],
            "moves_left": t["moves"],
            "discards_left": t["discards"],
            "newgen": t["newgen"],
            "wrath_used": t["wrath"],
        }
    if state["phase"] == "draft":
        out["draft"] = {"pick": state["draft"]["pick"], "of": 5}
        if isinstance(viewer, int) and not isinstance(viewer, bool):
            out["draft"]["pack"] = [
                {"name": name, "text": data.skills[name].text}
                for name in state["draft"]["packs"][viewer]
            ]
    if state["secret"] is not None:
        step = state["secret"]
        out["sealed"] = secret.public_view(step)
        if isinstance(viewer, int) and not isinstance(viewer, bool):
            mine = secret.own_payload(step, viewer)
            if step["kind"] == "cubes" and mine is not None:
                mine = dict(zip(RESOURCES, mine, strict=True))
            out["sealed"]["mine"] = mine
    final = result(state)
    if final is not None:
        out["result"] = final.to_json()
    return out
