"""ポピュラス 草案21 for a dropped player (Game.zombie): from that player's own view and legal
lines only — the public map, resources and generations, and the player's own hand.

A god who keeps building (docs/rules/populous.md, "Dropped players"): the area that costs no
信仰, where a worker goes for free and a second square of an area would make a majority; no
wrath; one worker (two on different squares when that costs at most half the 食料) on new
squares, away from others' pieces; a card played face up for what is needed most (繁栄 with 信仰
to spend, else 労働, 奇跡, 繁栄, 祝福 — never a resource already full, 啓示 never), face down
for that action when the hand lacks it, and a generation change once the present holds three
cards or in the last round; war when its pieces and 情熱 match every other side, else mediation
when offered; a town where it makes a new majority; the first face-down skill; then END (the
moves and discards are skipped). Setup choices (race, draft, cubes) stay with the default moves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["zombie"]

EXTRA_COST = (0, 1, 3, 6)  # R: 1 食料 → +1 worker, 3 → +2, 6 → +3
CAPPED = {"祝福": "情熱", "労働": "食料", "奇跡": "信仰"}  # the resource each action gains
RESOURCE_CAP = 6


def zombie(own_view: Mapping[str, Any], legal: Sequence[str]) -> str | None:
    seat = own_view.get("seat")
    if not isinstance(seat, int) or own_view.get("phase") != "play" or not legal:
        return None
    me = own_view["players"][seat]
    squares = {sq["id"]: sq for tile in own_view["map"] for sq in tile["squares"]}
    lines = {verb: [line for line in legal if line.split()[0] == verb] for verb in _VERBS}
    if lines["AREA"]:
        return _area(lines["AREA"], me, seat, own_view["map"])
    if "WAR" in legal:
        return _war(legal, seat, own_view)
    if lines["TOWN"]:
        return _town(lines["TOWN"], me, squares)
    if lines["REVEAL"]:
        return lines["REVEAL"][0]
    if lines["PLACE"]:
        return _place(lines["PLACE"], me, seat, squares)
    plays = [*lines["PLAY"], *lines["FACEDOWN"], *lines["NEWGEN"]]
    if plays:
        return _play(plays, me, own_view)
    return "END" if "END" in legal else None


_VERBS = ("AREA", "TOWN", "REVEAL", "PLACE", "PLAY", "FACEDOWN", "NEWGEN")


def _cost(square: Mapping[str, Any], me: Mapping[str, Any]) -> int:
    """R: a worker goes for free on 平地 or an aptitude terrain, else for 1 食料."""
    here = square["terrain"]
    return 0 if here == "平地" or here in me["aptitudes"] else 1


def _live(square: Mapping[str, Any], seat: int | None = None) -> list[int]:
    """The seats of the workers and intact towns on a square (only `seat`'s when given)."""
    return [
        piece["seat"]
        for piece in square["pieces"]
        if piece["type"] != "ruin" and (seat is None or piece["seat"] == seat)
    ]


def _area(
    lines: Sequence[str], me: Mapping[str, Any], seat: int, tiles: Sequence[Mapping[str, Any]]
) -> str:
    by_id = {tile["id"]: tile for tile in tiles}
    food = me["resources"]["食料"]

    def key(index: int) -> tuple[int, ...]:
        cards = lines[index].split()[1:]
        free = sum(card.startswith("F") for card in cards)
        low, high = sorted(int(card.lstrip("F")) for card in cards)
        tile = by_id.get(f"{low}-{high}")
        if tile is None:  # pragma: no cover - the legal areas are on the map
            return (free, 1, 1, 1, index)
        own = [sq for sq in tile["squares"] if _live(sq, seat)]
        cheap = [sq for sq in tile["squares"] if _cost(sq, me) == 0]
        placeable = bool(cheap) or food >= 1
        alone = any(not [s for s in _live(sq) if s != seat] for sq in cheap)
        majority = tile["id"] not in me["majorities"] and len(own) == 1
        return (free, not placeable, not majority, not alone, index)

    return lines[min(range(len(lines)), key=key)]


def _place(
    lines: Sequence[str], me: Mapping[str, Any], seat: int, squares: Mapping[str, Any]
) -> str:
    food = me["resources"]["食料"]
    found: list[tuple[tuple[int, int, int, int], str]] = []
    for index, line in enumerate(lines):
        chosen = line.split()[1:]
        if len(chosen) > 2 or len(set(chosen)) != len(chosen):
            continue
        cost = EXTRA_COST[len(chosen) - 1] + sum(_cost(squares[sq], me) for sq in chosen)
        if len(chosen) > 1 and cost > food // 2:
            continue
        new = sum(not _live(squares[sq], seat) for sq in chosen)
        hostile = sum(any(s != seat for s in _live(squares[sq])) for sq in chosen)
        found.append(((-new, hostile, cost, index), line))
    if not found:
        return lines[0]
    return min(found)[1]


def _wanted(me: Mapping[str, Any]) -> list[str]:
    """The actions in the order the player needs them now."""
    res = me["resources"]
    order = []
    if res["信仰"] >= 3:
        order.append("繁栄")
    if res["食料"] <= 1:
        order.append("労働")
    if res["信仰"] <= 1:
        order.append("奇跡")
    order += ["労働", "奇跡"]
    if res["信仰"] >= 1:
        order.append("繁栄")
    order.append("祝福")
    useful = [
        kind
        for kind in dict.fromkeys(order)
        if kind not in CAPPED or res[CAPPED[kind]] < RESOURCE_CAP
    ]
    return useful or ["繁栄"]


def _play(lines: Sequence[str], me: Mapping[str, Any], own_view: Mapping[str, Any]) -> str:
    present = me["generations"][-1] if me["generations"] else []
    last = own_view["round"] >= own_view["rounds"]
    newgen = any(line.startswith("NEWGEN") for line in lines) and (
        len(present) >= 3 or (last and len(present) >= 1)
    )
    prefix = "NEWGEN " if newgen else ""
    wanted = _wanted(me)
    for kind in wanted:
        line = f"{prefix}{kind}" if newgen else f"PLAY {kind}"
        if line in lines:
            return line
    line = f"{prefix}FACEDOWN {wanted[0]}"
    if line in lines:
        return line
    plain = [line for line in lines if "EXTRA" not in line and "CARD" not in line]
    return (plain or list(lines))[0]


def _contested(tile: Mapping[str, Any]) -> list[str]:
    return [sq["id"] for sq in tile["squares"] if len(set(_live(sq))) > 1]


def _war(legal: Sequence[str], seat: int, own_view: Mapping[str, Any]) -> str:
    """War when its pieces around the contested squares and its 情熱 (the die's cap) match every
    other participant's; else mediation when offered."""
    if "MEDIATE" not in legal:
        return "WAR"
    genesis = next((tile for tile in own_view["map"] if tile["genesis"]), None)
    if genesis is None:  # pragma: no cover - a war choice is on the genesis area
        return "WAR"
    squares = {sq["id"]: sq for tile in own_view["map"] for sq in tile["squares"]}
    contested = _contested(genesis)
    around = set(contested)
    for square in contested:
        around.update(squares[square]["adjacent"])
    participants = {s for square in contested for s in _live(squares[square])}
    players = own_view["players"]

    def strength(who: int) -> int:
        pieces = sum(len(_live(squares[sq], who)) for sq in around if sq in squares)
        return pieces + min(int(players[who]["resources"]["情熱"]), 3)

    mine = strength(seat)
    if all(mine >= strength(other) for other in participants if other != seat):
        return "WAR"
    return "MEDIATE"


def _town(lines: Sequence[str], me: Mapping[str, Any], squares: Mapping[str, Any]) -> str:
    """A town where it makes a new majority (an area not yet held)."""
    for line in lines:
        square = line.split()[1]
        tile = f"{square[0]}-{square[1]}"
        if square in squares and tile not in me["majorities"]:
            return line
    return lines[0]
