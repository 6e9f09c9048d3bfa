"""What a viewer sees of えいつく: everything but the order of the closed decks.

R 2−2: the stock is open (「これらのカードはすべて『ストック場』に公開して置かれます」), the budget
piles are open, the role and event decks are closed. Nothing else is hidden, so the public view,
a seat's view and the GM's view are the same; none of them carries deck order or the RNG.
"""

from __future__ import annotations

from typing import Any

from app.games.base import State, Viewer
from app.games.eitsuku.cards import BUDGET_CARDS_PER_WEEK
from app.games.eitsuku.rules import (
    active_effects,
    can_release,
    first_release_week,
    sorted_cards,
    waiting_for,
)
from app.games.eitsuku.scoring import result


def _player_view(state: State, seat: int) -> dict[str, Any]:
    player: dict[str, Any] = state["players"][seat]
    return {
        "seat": seat,
        "name": player["name"],
        "stock": sorted_cards(player["stock"]),
        "flipped": sorted_cards(player["flipped"]),
        "slots": dict(player["slots"]),
        "events": [entry["name"] for entry in player["events"]],
        "event_details": [dict(entry) for entry in player["events"]],
        "active_effects": active_effects(state, seat),
        "released_week": player["released_week"],
        "done": player["done"],
        "status": player["status"],
        "phase": player["phase"],
        "pending_choices": player["pending_choices"],
        "dice": list(player["dice"]),
        "budget_used": player["budget_used"],
        "budget_left": BUDGET_CARDS_PER_WEEK - player["budget_used"],
        "scouts_left": player["scouts_left"],
        "sets_left": player["sets_left"],
        "buy_discount": player["buy_discount"],
        "set_discount": player["set_discount"],
        "set_blocked": player["set_blocked"],
        "strikes_next": player["strikes_next"],
        "can_release": can_release(player),
        "moves": list(player["moves"]),
    }


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    """The view shape of rules/eitsuku.md ("Public view") plus per-player phase details."""
    final = result(state)
    waiting = waiting_for(state)
    shown: dict[str, Any] = {
        "kind": "eitsuku",
        "week": state["week"],
        "weeks": state["weeks"],
        "over": state["over"],
        "players": [_player_view(state, seat) for seat in range(len(state["players"]))],
        "piles": dict(state["piles"]),
        "decks": {deck: len(cards) for deck, cards in state["decks"].items()},
        "discard": sorted_cards(state["discard"]),
        "waiting_for": [state["players"][seat]["name"] for seat in waiting],
        "waiting_seats": waiting,
        # Known from the first RELEASE on (null before): with each released_week it gives the
        # running 公開週補正 while the game goes on. Read from the players, so that a state
        # saved before the field was kept up to date shows it too.
        "first_release_week": first_release_week(state),
        "result": final.to_json() if final is not None else None,
    }
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        shown["seat"] = viewer  # whose view it is (the picture marks that seat)
    return shown
