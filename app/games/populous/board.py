"""The hex map of ポピュラス 草案21 (docs/rules/populous.md, "The map").

I: each area tile is a flat-topped hexagon cut into three rhombi from its centre. Corner i of
the hexagon lies at 60°·i (screen coordinates, y down); edge i joins corners i and i+1 and faces
the neighbouring tile in axial direction i. Square k of a tile touches edges 2k and 2k+1, turned
by the tile's rotation (0, 1 or 2 steps of 120°). Two squares are adjacent when they are on the
same tile or touch the same shared edge. Tiles sit on an axial grid (q, r): the centre at
(0, 0), the base's six around it, the rest on the ring around the base.

The geometry depends only on the map, which never changes after setup, so adjacency is computed
once per map and cached.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "DIRECTIONS",
    "MapKey",
    "adjacency",
    "edges_of",
    "map_key",
    "ring",
    "square_letter",
    "tile_of",
]

# Axial neighbour across edge i (flat-topped hexagons: edge i faces 30° + 60°·i).
DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))
LETTERS = ("a", "b", "c")

# A map as the cache key: (tile id, q, r, rotation) per tile.
MapKey = tuple[tuple[str, int, int, int], ...]


def ring(radius: int) -> list[tuple[int, int]]:
    """The axial positions at exactly `radius` steps from the centre, walking round it."""
    if radius == 0:
        return [(0, 0)]
    q, r = DIRECTIONS[4][0] * radius, DIRECTIONS[4][1] * radius
    positions = []
    for side in range(6):
        for _ in range(radius):
            positions.append((q, r))
            q, r = q + DIRECTIONS[side][0], r + DIRECTIONS[side][1]
    return positions


def edges_of(letter_index: int, rotation: int) -> tuple[int, int]:
    """The two hex edges square `letter_index` touches on a tile turned by `rotation`."""
    first = (2 * letter_index + 2 * rotation) % 6
    return first, (first + 1) % 6


def square_letter(square: str) -> str:
    return square[-1]


def tile_of(square: str) -> str:
    """``24a`` -> ``2-4``."""
    return f"{square[0]}-{square[1]}"


def map_key(tiles: Iterable[Mapping[str, Any]]) -> MapKey:
    return tuple((t["id"], t["q"], t["r"], t["rot"]) for t in tiles)


@functools.lru_cache(maxsize=256)
def adjacency(key: MapKey) -> Mapping[str, tuple[str, ...]]:
    """Square id -> the adjacent squares' ids (sorted), for the map `key`."""
    at: dict[tuple[int, int], tuple[str, int]] = {(q, r): (tid, rot) for tid, q, r, rot in key}
    near: dict[str, set[str]] = {}
    for tid, q, r, rot in key:
        prefix = tid.replace("-", "")
        squares = [prefix + letter for letter in LETTERS]
        for square in squares:
            near.setdefault(square, set()).update(s for s in squares if s != square)
        for index, letter in enumerate(LETTERS):
            for edge in edges_of(index, rot):
                dq, dr = DIRECTIONS[edge]
                other = at.get((q + dq, r + dr))
                if other is None:
                    continue
                other_id, other_rot = other
                facing = (edge + 3) % 6
                for other_index, other_letter in enumerate(LETTERS):
                    if facing in edges_of(other_index, other_rot):
                        near[prefix + letter].add(other_id.replace("-", "") + other_letter)
    return {square: tuple(sorted(others)) for square, others in near.items()}


def neighbours(key: MapKey, squares: Sequence[str]) -> set[str]:
    """The squares adjacent to any of `squares` (not including them unless adjacent)."""
    near = adjacency(key)
    found: set[str] = set()
    for square in squares:
        found.update(near.get(square, ()))
    return found
