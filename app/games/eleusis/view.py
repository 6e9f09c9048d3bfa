"""What a viewer sees of 新新エリューシス, and the epilogue that reveals the rest at the end.

The public view follows the rules page's "Public view"; a seat's view adds its own hand (and its
own secret judgment of the pending play); the parent's view adds the rule; the GM's view adds
every hand, the rule and every secret judgment. Deck order, the rng and, before their reveal,
the rule text, its salt and other seats' judgments appear in no other view.
"""

from __future__ import annotations

from typing import Any

from app.games.base import State, Viewer
from app.games.eleusis.cards import suited
from app.games.eleusis.rules import (
    ENDED_JA,
    hint_allowed,
    hints_left,
    waiting_for,
)
from app.games.eleusis.scoring import result


def _name(state: State, seat: int | None) -> str | None:
    return None if seat is None else str(state["players"][seat]["name"])


def _players(state: State) -> list[dict[str, Any]]:
    return [
        {
            "seat": seat,
            "name": player["name"],
            "hand_size": len(player["hand"]),
            "prophet": player["prophet"],
            "prophet_at": player.get("prophet_at"),
            "disqualified": player["disqualified"],
            "score": player["score"],
            "parent": seat == state["parent"],
            "prophet_correct": player["correct"],
            "prophet_failed": player["prophet_failed"],
        }
        for seat, player in enumerate(state["players"])
    ]


def _pending(state: State, viewer: Viewer) -> dict[str, Any] | None:
    pending = state["pending"]
    if pending is None:
        return None
    shown: dict[str, Any] = {
        "seat": pending["seat"],
        "player": _name(state, pending["seat"]),
        "declaration": pending["declaration"],
        "cards": list(pending["cards"]),
        "secret": pending["secret"],
        "judges": [
            {
                "seat": entry["seat"],
                "name": _name(state, entry["seat"]),
                "judged": entry["judgment"] is not None,
            }
            for entry in pending["judges"]
        ],
    }
    if viewer == "gm":
        shown["parent_judgment"] = pending["parent_judgment"]
        for entry, judge in zip(shown["judges"], pending["judges"], strict=True):
            entry["judgment"] = judge["judgment"]
    return shown


def _last_play(state: State) -> dict[str, Any] | None:
    last = state["last_play"]
    if last is None:
        return None
    return {
        **last,
        "player": _name(state, last["seat"]),
        "cards": list(last["cards"]),
        "judgments": [
            {**entry, "name": _name(state, entry["seat"])} for entry in last["judgments"]
        ],
        "disqualified": [_name(state, seat) for seat in last["disqualified"]],
    }


def _history(state: State, viewer: Viewer) -> list[dict[str, Any]]:
    shown = []
    for record in state["history"]:
        entry = {
            "round": record["round"],
            "parent": _name(state, record["parent"]),
            "mode": record["mode"],
            "rule": record["rule"],
            "salt": record["salt"],
            "rule_hash": record["rule_hash"],
            "ended_by": record["ended_by"],
            "ended": ENDED_JA[record["ended_by"]],
            "emptied": _name(state, record["emptied"]),
            "played": record["played"],
            "prophets": [_name(state, seat) for seat in record["prophets"]],
            "hints": [dict(hint) for hint in record["hints"]],
            "scores": [
                {"name": player["name"], "total": line["total"]}
                for player, line in zip(state["players"], record["scores"], strict=True)
            ],
        }
        if viewer == "gm":
            entry["hands"] = {
                player["name"]: list(hand)
                for player, hand in zip(state["players"], record["hands"], strict=True)
            }
        shown.append(entry)
    return shown


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """The rules page's public view plus turn details; private parts by viewer (see above)."""
    waiting = waiting_for(state)
    final = result(state)
    shown: dict[str, Any] = {
        "kind": "eleusis",
        "round": state["round"],
        "rounds": state["rounds"],
        "parent": _name(state, state["parent"]),
        "parent_seat": state["parent"],
        "phase": state["phase"],
        "mode": state["mode"],
        "rules": state["rules"],
        "line": [
            {"card": entry["card"], "failed": [list(run) for run in entry["failed"]]}
            for entry in state["line"]
        ],
        "played": state["played"],
        "deck": len(state["deck"]),
        "players": _players(state),
        "rule_hash": state["rule_hash"],
        "turn": _name(state, state["turn"]),
        "turn_seat": state["turn"],
        "prophet_window": _name(state, state["window"]),
        "pending": _pending(state, viewer),
        "last_play": _last_play(state),
        "hints": [dict(hint) for hint in state["hints"]],
        "hints_left": max(0, hints_left(state)),
        "hint_allowed": hint_allowed(state),
        "waiting_for": [_name(state, seat) for seat in waiting],
        "waiting_seats": waiting,
        "history": _history(state, viewer),
        "over": state["over"],
        "result": final.to_json() if final is not None else None,
    }
    rule = {"mode": state["mode"], "text": state["rule"], "salt": state["salt"]}
    if viewer == "gm":
        for entry, player in zip(shown["players"], state["players"], strict=True):
            entry["hand"] = list(player["hand"])
        if state["rule"] is not None:
            shown["rule"] = rule
    elif isinstance(viewer, int) and 0 <= viewer < len(state["players"]):
        shown["seat"] = viewer
        shown["hand"] = list(state["players"][viewer]["hand"])
        if viewer == state["parent"] and state["rule"] is not None:
            shown["rule"] = rule
        pending = state["pending"]
        if pending is not None:
            for judge in pending["judges"]:
                if judge["seat"] == viewer:
                    shown["my_judgment"] = judge["judgment"]
    return shown


def epilogue(state: State) -> list[str]:
    """Lines revealing everything that stayed hidden, for the thread once the game is over:
    every round's rule (with salt and hash) and every hand at each round's end."""
    if not state["over"]:
        return []
    lines = ["【新新エリューシス 種明かし】"]
    for record in state["history"]:
        parent = _name(state, record["parent"])
        # How the round ended was told when it did; the hash was public from its start.
        head = f"第{record['round']}ラウンド 親 {parent}"
        if record["rule"] is None:
            lines.append(f"{head}: ルールなし")
            continue
        lines.append(f"{head}「{record['rule']}」ソルト {record['salt']}。残った手札:")
        for seat, hand in enumerate(record["hands"]):
            if seat == record["parent"]:
                continue
            name = state["players"][seat]["name"]
            lines.append(f"・{name}: {suited(hand) or 'なし'}")
    return lines
