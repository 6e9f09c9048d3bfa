"""ポピュラス 草案21's board as an SVG picture, a pure function of the view
(app/games/populous/view.py).

From top to bottom: the title, the round, the phase and step, whose turn and the prompt; the
final ranking once the game is over; the last war; the hex map; its legend; the genesis cards
1–5 and F with their markers, the ring supply and the deck; the races while they are chosen;
then one panel per player (name, race and colour, VP, the four resources, hand size, the
pieces at home, skills, majorities and the generations as columns of cards).

The map follows board.py: a flat-topped hexagon per tile at its axial (q, r), corner i at 60°·i
(y down), cut into three rhombi from its centre; square k touches edges 2k and 2k+1 turned by
the tile's rotation, so its rhombus is the centre and corners 2k+2·rot … 2k+2·rot+2. Each
square is filled with its terrain and carries its id as players type it (``24a``), its pieces
and its die faces (``1-2``); the tile's id stands at its centre, on a disc of the ring's colour
when the tile has a terrain ring. The genesis area has a thick outline, and while war or
mediation is to be chosen the contested squares a dashed red one. Where the text and the
pieces go inside a rhombus depends only on the hex size and the rhombus's direction, so it is
worked out once per size (`_shape`).

The public picture (``own`` None) shows no hand, no face-down skill and no card under a
face-down card, even when the view passed in is a seat's or the GM's: those are read from
``own`` alone. Given ``own`` (the viewer's own view: the seats whose entry has a ``hand``), the
viewer's panel is marked and lists their hand, their skills (face-down ones marked), the kinds
under their face-down cards, their sealed choice (a PICK or CUBES not yet revealed) and, during
the draft, their pack.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from app.games import svg
from app.games.svg import CONTENT_WIDTH, INK, MARGIN, MUTED, PADDING, SECTION_GAP, WIDTH, Node

FADED = "#9e9e9e"
SKILLS_LABEL = "あなたのスキル"
PACK_LABEL = "あなたのドラフトのパック"
SEALED_LABEL = "あなたの封印"
GM_HAND_LABEL = "手札の中身"
GM_SKILLS_LABEL = "スキルの中身(伏せたものも)"
DEFAULT_COLOUR = "#888888"

PHASE_JA = {
    "race": "種族選択",
    "draft": "スキルのドラフト",
    "cubes": "リソースの配分",
    "play": "ラウンド進行中",
    "over": "ゲーム終了",
}

# Terrains: the squares' fills (light, so the ids stay readable) and the rings' colours.
TERRAINS = ("平地", "山岳", "砂漠", "凍土", "海")
TERRAIN_FILLS = {
    "平地": "#a5d6a7",
    "山岳": "#bdbdbd",
    "砂漠": "#fff59d",
    "凍土": "#eef2f6",
    "海": "#90caf9",
}
RING_COLOURS = {
    "平地": "#2e7d32",
    "山岳": "#616161",
    "砂漠": "#f9a825",
    "凍土": "#90a4ae",
    "海": "#1565c0",
}
UNKNOWN_TERRAIN = "#ffffff"

RESOURCES = ("情熱", "食料", "信仰", "神の怒り")
RESOURCE_COLOURS = {"情熱": "#e53935", "食料": "#7cb342", "信仰": "#fbc02d", "神の怒り": "#5e35b1"}
RESOURCE_MAX = 6

# Epic cards: a kind's fill and ink; a face-down card is a card back with its action.
KIND_COLOURS = {
    "祝福": ("#fff9c4", "#8d6e00"),
    "労働": ("#d7ccc8", "#4e342e"),
    "奇跡": ("#e1bee7", "#6a1b9a"),
    "啓示": ("#bbdefb", "#0d47a1"),
    "繁栄": ("#c8e6c9", "#1b5e20"),
}
PLAIN_CARD = ("#eeeeee", INK)
CARD_BACK = "#3949ab"
CARD_BACK_EDGE = "#1a237e"
CARD_BACK_INK = "#ffffff"
GEN_MIN_WIDTH = 28.0
GEN_MAX_WIDTH = 46.0
GEN_GAP = 4.0
CARD_STRIP = 16.0
CARD_KNOWN = 30.0  # a face-down card whose kind the viewer knows: a second line
CARD_GAP = 2.0

# The genesis cards and their markers.
GENESIS_CARDS = ("1", "2", "3", "4", "5", "F")
GENESIS_CARD_WIDTH = 44.0
GENESIS_CARD_HEIGHT = 44.0
GENESIS_CARD_GAP = 8.0
GENESIS_FILL = "#fffde7"
GENESIS_INK = "#6d4c41"
MARKER = "#d81b60"
MARKER_RADIUS = 6.0

# The map.
MAP_MARGIN = 4.0
MAX_HEX = 52.0
SQRT3 = math.sqrt(3.0)
HALF_SQRT3 = SQRT3 / 2
# Corner i of a unit hexagon at 60°·i, y down (board.py).
CORNERS = (
    (1.0, 0.0),
    (0.5, HALF_SQRT3),
    (-0.5, HALF_SQRT3),
    (-1.0, 0.0),
    (-0.5, -HALF_SQRT3),
    (0.5, -HALF_SQRT3),
)
LETTERS = ("a", "b", "c")
LABEL_SIZE = 11
TEXT_HEIGHT = 8.0  # an 11 unit line of digits and latin letters, baseline to top
TEXT_ROOM = svg.text_width("24a", LABEL_SIZE)
PIECE = 9.0
PIECE_GAP = 1.5
PIECES_ROOM = 3 * PIECE + 2 * PIECE_GAP  # a rhombus's pieces row should hold three
ROW_GAP = 2.0
STACK_HEIGHT = 2 * TEXT_HEIGHT + PIECE + 2 * ROW_GAP
CENTRE_ROOM = 12.5  # kept clear round a tile's centre for its id and ring
RING_RADIUS = 11.0
SQUARE_INSET = 1.5
SQUARE_EDGE = "#78909c"
TILE_EDGE = "#37474f"
GENESIS_EDGE = "#d81b60"
CONTESTED_EDGE = "#c62828"
PIECE_EDGE = "#212121"
PIECE_ORDER = {"town": 0, "ruin": 1, "worker": 2}
PIECE_JA = {"worker": "ワーカー", "town": "タウン", "ruin": "破壊されたタウン"}
LEGEND_NOTE = "マスの中: 上からマスの名前、駒、天変地異のサイコロの目"


def _n(value: float) -> float:
    return round(value, 1)


def _points(points: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{_number(x)},{_number(y)}" for x, y in points)


def _number(value: float) -> str:
    shown = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if shown in ("", "-0") else shown


def _players(view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [player for player in view.get("players") or [] if isinstance(player, Mapping)]


def _colours(view: Mapping[str, Any]) -> dict[int, str]:
    """Seat -> the race's colour (grey before the race is chosen)."""
    return {
        svg.as_int(player.get("seat", index)): str(player.get("colour") or DEFAULT_COLOUR)
        for index, player in enumerate(_players(view))
    }


def _names(view: Mapping[str, Any]) -> dict[int, str]:
    return {
        svg.as_int(player.get("seat", index)): str(player.get("name"))
        for index, player in enumerate(_players(view))
    }


def dice_label(faces: Sequence[Any]) -> str:
    """A square's die faces as printed: ``1-2`` for a run, else ``1・4``."""
    numbers = sorted(svg.as_int(face) for face in faces)
    if len(numbers) > 1 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return "・".join(str(number) for number in numbers)


def _card_colours(kind: str) -> tuple[str, str]:
    return KIND_COLOURS.get(kind, PLAIN_CARD)


# --------------------------------------------------------------------------- header


def _status(view: Mapping[str, Any]) -> str:
    waiting = [str(name) for name in view.get("waiting_for") or []]
    if view.get("over") or not waiting:
        return ""
    phase = view.get("phase")
    if phase in ("draft", "cubes"):
        sealed = view.get("sealed")
        seats = sealed.get("sealed_seats") if isinstance(sealed, Mapping) else None
        names = _names(view)
        done = [names.get(svg.as_int(seat), "") for seat in seats or []]
        extra = f"(封印済み: {'、'.join(done)})" if done else ""
        return f"待ち: {'、'.join(waiting)}{extra}"
    return f"手番: {'、'.join(waiting)}"


def _phase_label(view: Mapping[str, Any]) -> str:
    if view.get("over"):
        return PHASE_JA["over"]
    phase = str(view.get("phase"))
    if phase == "draft":
        draft = view.get("draft")
        if isinstance(draft, Mapping):
            pick, of = svg.as_int(draft.get("pick")), svg.as_int(draft.get("of"))
            return f"スキルのドラフト {pick}/{of}巡目"
    if phase == "play" and view.get("step_ja"):
        return str(view.get("step_ja"))
    return PHASE_JA.get(phase, phase)


def _header(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    parts: list[Node] = [svg.text(MARGIN, y + 19, "ポピュラス 草案21", size=16, bold=True)]
    rounds = svg.as_int(view.get("rounds"))
    if view.get("phase") in ("play", "over") or view.get("over"):
        when = f"第{svg.as_int(view.get('round'))}ラウンド / {rounds}"
    else:
        when = f"全{rounds}ラウンド"
    parts.append(svg.text(WIDTH - MARGIN, y + 19, when, size=14, anchor="end", bold=True))
    y += 28
    shown = _phase_label(view)
    parts.append(svg.text(MARGIN, y + 14, shown, size=13, fill=MUTED, bold=True))
    status = _status(view)
    if status:
        beside, y = svg.status_beside(shown, status, y)
        parts.append(beside)
    y += 20
    prompt = str(view.get("prompt") or "")
    if prompt and not view.get("over"):
        for line in svg.wrap_text(prompt, CONTENT_WIDTH, 12):
            parts.append(svg.text(MARGIN, y + 13, line, size=12))
            y += 17
    players = _names(view)
    start = view.get("start")
    if not view.get("over") and isinstance(start, int) and start in players:
        parts.append(svg.note_line(y, f"スタートプレイヤー: {players[start]}"))
        y += 18
    return parts, y + SECTION_GAP - 4


# --------------------------------------------------------------------------- result, war


def _result(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    ranking = svg.ranking_entries(view)
    if not view.get("over") or not ranking:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "最終結果")]
    y += 20
    # The tie-break (rules: more towns left on the race board, as the board's table gives
    # it), under each entry whose score another shares.
    towns_left = {p.get("name"): p.get("towns_home") for p in view.get("players") or []}
    scores = Counter(entry.get("score") for entry in ranking)
    for entry in ranking:
        breakdown = entry.get("breakdown") or {}
        parts.extend(svg.ranking_row(entry, y))
        y += 19
        detail = (
            f"ゲーム中{breakdown.get('play')}・ワーカー{breakdown.get('workers')}"
            f"・タウン{breakdown.get('towns')}・世代{breakdown.get('generations')}"
            f"・スキル{breakdown.get('skills')}"
        )
        parts.append(
            svg.text(MARGIN + 40, y + 12, detail, size=11, fill=MUTED, max_width=CONTENT_WIDTH - 40)
        )
        y += 20
        if scores[entry.get("score")] > 1:
            left = towns_left.get(entry.get("name"), "—")
            tie = f"同点: 種族ボードに残るタウン {left} (多いほうが上位)"
            parts.append(
                svg.text(
                    MARGIN + 40, y + 10, tie, size=11, fill=MUTED, max_width=CONTENT_WIDTH - 40
                )
            )
            y += 16
    return parts, y + SECTION_GAP - 4


OUTCOME_JA = {"win": "勝ち", "lose": "負け", "draw": "引き分け"}


def war_text(view: Mapping[str, Any]) -> str:
    """The last war in one sentence (empty when there was none)."""
    war = view.get("last_war")
    if not isinstance(war, Mapping):
        return ""
    names = _names(view)
    outcome = war.get("outcome") or {}
    fighters = []
    for fighter in war.get("fighters") or []:
        seat = svg.as_int(fighter.get("seat"))
        result = OUTCOME_JA.get(str(outcome.get(str(seat))), "")
        fighters.append(
            f"{names.get(seat, '?')} 戦力{svg.as_int(fighter.get('strength'))} {result}"
        )
    contested = "・".join(str(square) for square in war.get("contested") or [])
    return (
        f"直前の戦争(第{svg.as_int(war.get('round'))}ラウンド、{war.get('area')} の {contested}): "
        + " / ".join(fighters)
    )


def _war(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    shown = war_text(view)
    if not shown:
        return [], y
    parts: list[Node] = []
    for line in svg.wrap_text(shown, CONTENT_WIDTH, 12):
        parts.append(svg.text(MARGIN, y + 13, line, size=12))
        y += 17
    return parts, y + SECTION_GAP - 4


# --------------------------------------------------------------------------- the map


@dataclass(frozen=True)
class _Shape:
    """A square's rhombus on a tile of one hex size, relative to the tile's centre: its
    corners, where its id and die faces are written (x centre, baseline, room) and the run
    its pieces stand on (left, right, middle y)."""

    points: tuple[tuple[float, float], ...]
    label: tuple[float, float, float]
    dice: tuple[float, float, float]
    pieces: tuple[float, float, float]


def _cross(points: Sequence[tuple[float, float]], y: float) -> tuple[float, float]:
    """Where the horizontal line at `y` enters and leaves the convex polygon."""
    xs: list[float] = []
    for (x1, y1), (x2, y2) in pairwise((*points, points[0])):
        if min(y1, y2) <= y <= max(y1, y2):
            if y1 == y2:
                xs.extend((x1, x2))
            else:
                xs.append(x1 + (x2 - x1) * (y - y1) / (y2 - y1))
    return (min(xs), max(xs)) if xs else (0.0, 0.0)


def _band(points: Sequence[tuple[float, float]], top: float, bottom: float) -> tuple[float, float]:
    """The widest run inside the rhombus for the whole band top..bottom that keeps clear of
    the tile's centre (a convex polygon is narrowest at one of the band's edges)."""
    left1, right1 = _cross(points, top)
    left2, right2 = _cross(points, bottom)
    left, right = max(left1, left2) + SQUARE_INSET, min(right1, right2) - SQUARE_INSET
    nearest = 0.0 if top <= 0 <= bottom else min(abs(top), abs(bottom))
    if nearest < CENTRE_ROOM:
        half = math.sqrt(CENTRE_ROOM**2 - nearest**2) + SQUARE_INSET
        before = (left, min(right, -half))
        after = (max(left, half), right)
        left, right = before if before[1] - before[0] >= after[1] - after[0] else after
    return left, right


Run = tuple[float, float]


def _rows(points: Sequence[tuple[float, float]], top: float) -> tuple[Run, Run, Run]:
    """The runs of the id, the pieces and the die faces for a stack starting at `top`."""
    pieces_top = top + TEXT_HEIGHT + ROW_GAP
    dice_top = pieces_top + PIECE + ROW_GAP
    return (
        _band(points, top, top + TEXT_HEIGHT),
        _band(points, pieces_top, pieces_top + PIECE),
        _band(points, dice_top, dice_top + TEXT_HEIGHT),
    )


@functools.lru_cache(maxsize=64)
def _shape(size: float, first: int) -> _Shape:
    """The rhombus of the centre and corners first … first + 2, with its id above its pieces
    above its die faces, the stack at the height where the tightest of the three has the most
    room to spare."""
    points = (
        (0.0, 0.0),
        *(
            (size * CORNERS[(first + i) % 6][0], size * CORNERS[(first + i) % 6][1])
            for i in range(3)
        ),
    )
    ys = [y for _x, y in points]
    tops = [min(ys) + 2 + step / 2 for step in range(int(2 * (max(ys) - min(ys))))]
    tops = [top for top in tops if top + STACK_HEIGHT <= max(ys) - 2] or [min(ys)]

    def spare(top: float) -> float:
        label, pieces, dice = _rows(points, top)
        return min(
            label[1] - label[0] - TEXT_ROOM,
            dice[1] - dice[0] - TEXT_ROOM,
            pieces[1] - pieces[0] - PIECES_ROOM,
        )

    top = max(tops, key=spare)  # the first of the best, so always the same
    label, pieces, dice = _rows(points, top)
    pieces_top = top + TEXT_HEIGHT + ROW_GAP
    dice_top = pieces_top + PIECE + ROW_GAP
    return _Shape(
        points=points,
        label=((label[0] + label[1]) / 2, top + TEXT_HEIGHT, label[1] - label[0]),
        dice=((dice[0] + dice[1]) / 2, dice_top + TEXT_HEIGHT, dice[1] - dice[0]),
        pieces=(pieces[0], pieces[1], pieces_top + PIECE / 2),
    )


def _piece(kind: str, x: float, y: float, size: float, colour: str) -> Node:
    """A worker (a disc), a town (a house) or a destroyed town (a hollow, crossed house)."""
    half = size / 2
    if kind == "worker":
        return svg.el(
            "circle",
            cx=_n(x),
            cy=_n(y),
            r=_n(half),
            fill=colour,
            stroke=PIECE_EDGE,
            stroke_width=0.8,
        )
    house = _points(
        (
            (x - half, y + half),
            (x + half, y + half),
            (x + half, y - half * 0.15),
            (x, y - half),
            (x - half, y - half * 0.15),
        )
    )
    if kind == "town":
        return svg.el("polygon", points=house, fill=colour, stroke=PIECE_EDGE, stroke_width=0.8)
    cross = (
        f"M{_number(x - half * 0.6)} {_number(y - half * 0.2)}"
        f"L{_number(x + half * 0.6)} {_number(y + half * 0.8)}"
        f"M{_number(x + half * 0.6)} {_number(y - half * 0.2)}"
        f"L{_number(x - half * 0.6)} {_number(y + half * 0.8)}"
    )
    return svg.group(
        [
            svg.el("polygon", points=house, fill="#ffffff", stroke=colour, stroke_width=1.2),
            svg.el("path", d=cross, fill="none", stroke=colour, stroke_width=1.2),
        ]
    )


def piece_layout(count: int, width: float) -> tuple[int, float]:
    """How many pieces stand in a row and how large, for `count` pieces on a run `width`
    long: one row, or two half-height rows when that draws them larger (a crowded square
    keeps every piece inside its rhombus and apart)."""
    size = min(PIECE, (width - (count - 1) * PIECE_GAP) / count)
    per_row = math.ceil(count / 2)
    halves = min((PIECE - PIECE_GAP) / 2, (width - (per_row - 1) * PIECE_GAP) / per_row)
    if count > 1 and halves > size:
        return per_row, halves
    return count, max(size, 1.0)


def _square_title(square: Mapping[str, Any], names: Mapping[int, str]) -> str:
    terrain = str(square.get("terrain"))
    printed = square.get("printed")
    if printed and printed != terrain:
        terrain += f"(リング。元は{printed})"
    said = [f"{square.get('id')} {terrain} サイコロ{dice_label(square.get('dice') or [])}"]
    counts: dict[tuple[int, str], int] = {}
    for piece in square.get("pieces") or []:
        key = (svg.as_int(piece.get("seat")), str(piece.get("type")))
        counts[key] = counts.get(key, 0) + 1
    for (seat, kind), count in sorted(counts.items(), key=lambda item: item[0]):
        shown = f"{names.get(seat, '?')}の{PIECE_JA.get(kind, kind)}"
        said.append(shown + (f"×{count}" if count > 1 else ""))
    return "、".join(said)


def _square_shape(
    square: Mapping[str, Any], index: int, tile: Mapping[str, Any], size: float
) -> _Shape:
    """Square k (a, b, c) touches edges 2k and 2k+1 turned by the tile's rotation."""
    letter = str(square.get("letter") or str(square.get("id"))[-1:])
    number = LETTERS.index(letter) if letter in LETTERS else index
    return _shape(size, (2 * number + 2 * svg.as_int(tile.get("rot"))) % 6)


def _square(
    square: Mapping[str, Any],
    index: int,
    tile: Mapping[str, Any],
    cx: float,
    cy: float,
    size: float,
    colours: Mapping[int, str],
    names: Mapping[int, str],
) -> Node:
    shape = _square_shape(square, index, tile, size)
    terrain = str(square.get("terrain"))
    parts: list[Node | None] = [
        svg.el("title", _square_title(square, names)),
        svg.el(
            "polygon",
            points=_points([(cx + x, cy + y) for x, y in shape.points]),
            fill=TERRAIN_FILLS.get(terrain, UNKNOWN_TERRAIN),
            stroke=SQUARE_EDGE,
            stroke_width=0.8,
        ),
    ]
    label_x, label_y, label_room = shape.label
    parts.append(
        svg.text(
            _n(cx + label_x),
            _n(cy + label_y),
            str(square.get("id")),
            size=LABEL_SIZE,
            anchor="middle",
            bold=True,
            max_width=max(label_room, LABEL_SIZE * 2),
        )
    )
    dice_x, dice_y, dice_room = shape.dice
    parts.append(
        svg.text(
            _n(cx + dice_x),
            _n(cy + dice_y),
            dice_label(square.get("dice") or []),
            size=LABEL_SIZE,
            fill=MUTED,
            anchor="middle",
            max_width=max(dice_room, LABEL_SIZE * 2),
        )
    )
    pieces = sorted(
        (piece for piece in square.get("pieces") or [] if isinstance(piece, Mapping)),
        key=lambda piece: (
            PIECE_ORDER.get(str(piece.get("type")), 3),
            svg.as_int(piece.get("seat")),
        ),
    )
    if pieces:
        left, right, middle = shape.pieces
        per_row, piece_size = piece_layout(len(pieces), right - left)
        rows = [pieces[start : start + per_row] for start in range(0, len(pieces), per_row)]
        y = cy + middle - (len(rows) - 1) * (piece_size + PIECE_GAP) / 2
        for row in rows:
            total = len(row) * piece_size + (len(row) - 1) * PIECE_GAP
            x = cx + (left + right) / 2 - total / 2 + piece_size / 2
            for piece in row:
                colour = colours.get(svg.as_int(piece.get("seat")), DEFAULT_COLOUR)
                parts.append(_piece(str(piece.get("type")), x, y, piece_size, colour))
                x += piece_size + PIECE_GAP
            y += piece_size + PIECE_GAP
    return svg.group(parts)


def _hexagon(cx: float, cy: float, size: float) -> str:
    return _points([(cx + size * dx, cy + size * dy) for dx, dy in CORNERS])


def _tile_centre(tile: Mapping[str, Any], cx: float, cy: float) -> Node:
    """The tile's id at its centre, on a disc of its ring's colour when it has one."""
    ring = tile.get("ring")
    disc = None
    if ring is not None:
        disc = svg.el(
            "circle",
            svg.el("title", f"地形リング: {ring}"),
            cx=_n(cx),
            cy=_n(cy),
            r=RING_RADIUS,
            fill=RING_COLOURS.get(str(ring), UNKNOWN_TERRAIN),
            stroke=INK,
            stroke_width=1,
        )
    label = svg.el(
        "text",
        str(tile.get("id")),
        x=_n(cx),
        y=_n(cy + 4),
        font_family=svg.FONT_FAMILY,
        font_size=LABEL_SIZE,
        font_weight="bold",
        text_anchor="middle",
        fill=INK,
        stroke="#ffffff",
        stroke_width=3,
        stroke_linejoin="round",
        paint_order="stroke",
    )
    return svg.group([disc, label])


def _map(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    tiles = [tile for tile in view.get("map") or [] if isinstance(tile, Mapping)]
    if not tiles:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "マップ")]
    area = view.get("area")
    if area:
        parts.append(
            svg.text(
                WIDTH - MARGIN,
                y + 13,
                f"創世エリア {area}",
                size=13,
                fill=GENESIS_EDGE,
                anchor="end",
                bold=True,
            )
        )
    y += 20
    # Tile centres in hex sizes; the map is as large as the width allows (at most MAX_HEX).
    centres = [
        (
            1.5 * svg.as_int(tile.get("q")),
            SQRT3 * (svg.as_int(tile.get("r")) + svg.as_int(tile.get("q")) / 2),
        )
        for tile in tiles
    ]
    low_x = min(x for x, _y in centres) - 1
    high_x = max(x for x, _y in centres) + 1
    low_y = min(y for _x, y in centres) - HALF_SQRT3
    high_y = max(y for _x, y in centres) + HALF_SQRT3
    size = round(min(MAX_HEX, (WIDTH - 2 * MAP_MARGIN) / (high_x - low_x)), 2)
    origin_x = WIDTH / 2 - size * (low_x + high_x) / 2
    origin_y = y + MAP_MARGIN - size * low_y
    colours = _colours(view)
    names = _names(view)
    on_top: list[Node] = []  # the genesis outline and contested squares, over every tile
    contested: list[str] = []
    for tile, (tx, ty) in zip(tiles, centres, strict=True):
        cx, cy = origin_x + size * tx, origin_y + size * ty
        squares = [square for square in tile.get("squares") or [] if isinstance(square, Mapping)]
        drawn: list[Node | None] = [
            _square(square, index, tile, cx, cy, size, colours, names)
            for index, square in enumerate(squares)
        ]
        drawn.append(
            svg.el(
                "polygon",
                points=_hexagon(cx, cy, size),
                fill="none",
                stroke=TILE_EDGE,
                stroke_width=1.5,
            )
        )
        drawn.append(_tile_centre(tile, cx, cy))
        parts.append(svg.group(drawn))
        for index, square in enumerate(squares):
            if square.get("contested"):
                contested.append(str(square.get("id")))
                shape = _square_shape(square, index, tile, size)
                on_top.append(
                    svg.el(
                        "polygon",
                        svg.el("title", f"係争マス {square.get('id')}"),
                        points=_points([(cx + x, cy + y) for x, y in shape.points]),
                        fill="none",
                        stroke=CONTESTED_EDGE,
                        stroke_width=2.5,
                        stroke_dasharray="4 2",
                    )
                )
        if tile.get("genesis"):
            on_top.insert(
                0,
                svg.el(
                    "polygon",
                    svg.el("title", f"創世エリア {tile.get('id')}"),
                    points=_hexagon(cx, cy, size),
                    fill="none",
                    stroke=GENESIS_EDGE,
                    stroke_width=4,
                    stroke_linejoin="round",
                ),
            )
    parts.extend(on_top)
    y += size * (high_y - low_y) + 2 * MAP_MARGIN
    if contested:
        parts.append(
            svg.text(
                MARGIN,
                y + 13,
                f"赤の破線は係争マス: {'・'.join(contested)}",
                size=12,
                fill=CONTESTED_EDGE,
                bold=True,
                max_width=CONTENT_WIDTH,
            )
        )
        y += 20
    drawn_legend, y = _legend(y)
    parts.extend(drawn_legend)
    return parts, y + SECTION_GAP - 4


def _legend(y: float) -> tuple[list[Node], float]:
    """The five terrains, the three pieces, and what a square shows."""
    parts: list[Node] = []
    x = float(MARGIN)
    for terrain in TERRAINS:
        parts.append(
            svg.rect(x, y + 2, 12, 12, fill=TERRAIN_FILLS[terrain], stroke=SQUARE_EDGE, radius=2)
        )
        parts.append(svg.text(x + 15, y + 12, terrain, size=11, fill=MUTED))
        x += 15 + svg.text_width(terrain, 11) + 10
    y += 18
    x = float(MARGIN)
    for kind in ("worker", "town", "ruin"):
        parts.append(_piece(kind, x + 5, y + 8, PIECE, MUTED))
        parts.append(svg.text(x + 13, y + 12, PIECE_JA[kind], size=11, fill=MUTED))
        x += 13 + svg.text_width(PIECE_JA[kind], 11) + 12
    y += 18
    parts.append(
        svg.text(MARGIN, y + 12, LEGEND_NOTE, size=11, fill=MUTED, max_width=CONTENT_WIDTH)
    )
    return parts, y + 18


# --------------------------------------------------------------------------- genesis cards


def _genesis(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    markers = [str(marker) for marker in view.get("markers") or []]
    parts: list[Node] = [svg.section_heading(y, "創世カードとマーカー")]
    y += 20
    x = float(MARGIN)
    for card in GENESIS_CARDS:
        count = markers.count(card)
        inner: list[Node | None] = [
            svg.rect(
                x,
                y,
                GENESIS_CARD_WIDTH,
                GENESIS_CARD_HEIGHT,
                fill=GENESIS_FILL,
                stroke=MARKER if count else GENESIS_INK,
                radius=4,
                stroke_width=2 if count else 1,
            )
        ]
        middle = x + GENESIS_CARD_WIDTH / 2
        if card == "F":
            inner.append(
                svg.text(middle, y + 22, "F", size=18, fill=GENESIS_INK, anchor="middle", bold=True)
            )
            inner.append(
                svg.text(middle, y + 38, "フリー", size=11, fill=GENESIS_INK, anchor="middle")
            )
        else:
            inner.append(
                svg.text(
                    middle, y + 29, card, size=20, fill=GENESIS_INK, anchor="middle", bold=True
                )
            )
        width = count * 2 * MARKER_RADIUS + (count - 1) * 3
        left = middle - width / 2 + MARKER_RADIUS
        for index in range(count):
            inner.append(
                svg.el(
                    "circle",
                    cx=_n(left + index * (2 * MARKER_RADIUS + 3)),
                    cy=_n(y + GENESIS_CARD_HEIGHT + 3 + MARKER_RADIUS),
                    r=MARKER_RADIUS,
                    fill=MARKER,
                    stroke="#ffffff",
                    stroke_width=1.5,
                )
            )
        parts.append(svg.group(inner))
        x += GENESIS_CARD_WIDTH + GENESIS_CARD_GAP
    y += GENESIS_CARD_HEIGHT + 6 + 2 * MARKER_RADIUS + 4
    shown = "・".join("フリー" if marker == "F" else f"【{marker}】" for marker in markers)
    parts.append(
        svg.text(
            MARGIN,
            y + 12,
            f"マーカー: {shown or 'なし'}(マーカーのある数字は選べません)",
            size=11,
            fill=MUTED,
            max_width=CONTENT_WIDTH,
        )
    )
    y += 20
    drawn, y = _supply(view, y)
    parts.extend(drawn)
    return parts, y + SECTION_GAP - 4


def _supply(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    """The rings left, by terrain, and the deck and discard."""
    rings = view.get("rings") or {}
    parts: list[Node] = [svg.text(MARGIN, y + 13, "地形リング残り", size=12, bold=True)]
    x = MARGIN + svg.text_width("地形リング残り", 12) + 8
    for terrain in TERRAINS:
        label = f"{terrain}{svg.as_int(rings.get(terrain))}"
        parts.append(
            svg.group(
                [
                    svg.el(
                        "circle",
                        cx=_n(x + 6),
                        cy=y + 9,
                        r=5,
                        fill="none",
                        stroke=RING_COLOURS[terrain],
                        stroke_width=3,
                    ),
                    svg.text(x + 14, y + 13, label, size=12),
                ]
            )
        )
        x += 14 + svg.text_width(label, 12) + 6
    y += 20
    parts.append(
        svg.text(
            MARGIN,
            y + 12,
            f"山札 {svg.as_int(view.get('deck'))}枚 ・ 捨て札 {svg.as_int(view.get('discard'))}枚",
            size=11,
            fill=MUTED,
        )
    )
    return parts, y + 16


# --------------------------------------------------------------------------- races


def _races(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    if view.get("phase") != "race":
        return [], y
    taken = {
        str(player.get("race")): str(player.get("name"))
        for player in _players(view)
        if player.get("race")
    }
    chips = []
    for race in view.get("races") or []:
        name = str(race.get("name"))
        if name in taken:
            chips.append((f"{name} → {taken[name]}", "#e0e0e0", MUTED))
        else:
            chips.append(
                (f"{name}(適性 {race.get('aptitude')})", str(race.get("colour")), "#ffffff")
            )
    if not chips:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "種族")]
    y += 20
    drawn, height = svg.chip_rows(MARGIN, y, CONTENT_WIDTH, chips)
    parts.append(drawn)
    return parts, y + height + SECTION_GAP


# --------------------------------------------------------------------------- players


def _status_chips(
    view: Mapping[str, Any], player: Mapping[str, Any], mine: bool
) -> list[tuple[str, str, str]]:
    chips: list[tuple[str, str, str]] = []
    if mine:
        chips.append(("あなた", svg.OWN_EDGE, "#ffffff"))
    waiting = [str(name) for name in view.get("waiting_for") or []]
    if not view.get("over") and str(player.get("name")) in waiting:
        chips.append(("手番", *svg.WAITING_CHIP))
    return chips


def _known_kinds(own_player: Mapping[str, Any] | None) -> list[list[str | None]]:
    """The kinds under the viewer's face-down cards, from their own view."""
    if own_player is None:
        return []
    return [
        [str(card.get("kind")) if card.get("down") and card.get("kind") else None for card in gen]
        for gen in own_player.get("generations") or []
    ]


def _card(
    card: Mapping[str, Any], known: str | None, x: float, y: float, width: float
) -> tuple[Node, float]:
    """One card of a generation column; returns it and its height."""
    if not card.get("down"):
        kind = str(card.get("kind"))
        fill, ink = _card_colours(kind)
        return (
            svg.group(
                [
                    svg.rect(
                        x, y, width, CARD_STRIP, fill=fill, stroke=ink, radius=3, stroke_width=1
                    ),
                    svg.text(
                        x + width / 2,
                        y + 12,
                        kind,
                        size=11,
                        fill=ink,
                        anchor="middle",
                        max_width=width - 2,
                    ),
                ]
            ),
            CARD_STRIP,
        )
    height = CARD_STRIP if known is None else CARD_KNOWN
    parts: list[Node | None] = [
        svg.rect(
            x, y, width, height, fill=CARD_BACK, stroke=CARD_BACK_EDGE, radius=3, stroke_width=1
        ),
        svg.text(
            x + width / 2,
            y + 12,
            str(card.get("action")),
            size=11,
            fill=CARD_BACK_INK,
            anchor="middle",
            max_width=width - 2,
        ),
    ]
    if known is not None:
        fill, ink = _card_colours(known)
        parts.append(svg.rect(x + 2, y + 15, width - 4, 13, fill=fill, radius=2))
        parts.append(
            svg.text(
                x + width / 2,
                y + 26,
                known,
                size=11,
                fill=ink,
                anchor="middle",
                max_width=width - 4,
            )
        )
    return svg.group(parts), height


def _generations(
    player: Mapping[str, Any],
    known: Sequence[Sequence[str | None]],
    x: float,
    y: float,
    width: float,
) -> tuple[list[Node], float]:
    """The generations as columns (the first on the left), each a stack of its cards."""
    gens = [gen for gen in player.get("generations") or [] if isinstance(gen, Sequence)]
    parts: list[Node] = [svg.text(x, y + 13, "世代", size=12, fill=MUTED, bold=True)]
    if not gens:
        parts.append(svg.text(x + 32, y + 13, "まだカードを置いていません", size=12, fill=FADED))
        return parts, y + 20
    parts.append(
        svg.text(x + width, y + 13, "紺=裏向き(アクション)", size=11, fill=MUTED, anchor="end")
    )
    y += 18
    per_row = len(gens)
    column = (width - (per_row - 1) * GEN_GAP) / per_row
    if column < GEN_MIN_WIDTH:
        per_row = max(1, int((width + GEN_GAP) // (GEN_MIN_WIDTH + GEN_GAP)))
        column = (width - (per_row - 1) * GEN_GAP) / per_row
    column = min(column, GEN_MAX_WIDTH)
    for start in range(0, len(gens), per_row):
        bottom = y + 14
        for offset, gen in enumerate(gens[start : start + per_row]):
            number = start + offset
            left = x + offset * (column + GEN_GAP)
            parts.append(
                svg.text(
                    left + column / 2, y + 11, str(number + 1), size=11, fill=MUTED, anchor="middle"
                )
            )
            top = y + 14
            mine = known[number] if number < len(known) else []
            for index, card in enumerate(gen):
                if not isinstance(card, Mapping):
                    continue
                kind = mine[index] if index < len(mine) else None
                drawn, height = _card(card, kind, left, top, column)
                parts.append(drawn)
                top += height + CARD_GAP
            bottom = max(bottom, top)
        y = bottom + 4
    return parts, y


def sealed_text(mine: Any) -> str:
    """The viewer's own sealed choice: a skill picked, or the cubes split."""
    if isinstance(mine, Mapping):
        return "・".join(f"{name}{svg.as_int(count)}" for name, count in mine.items())
    if isinstance(mine, list):
        return "・".join(str(item) for item in mine)
    return str(mine)


def _hidden_lines(
    view: Mapping[str, Any],
    own: Mapping[str, Any],
    own_player: Mapping[str, Any],
    gm: bool,
    x: float,
    y: float,
    width: float,
) -> tuple[list[Node], float]:
    """What only the viewer sees: their hand, their skills and, in the draft, their pack."""
    parts: list[Node] = []
    hand = [str(card) for card in own_player.get("hand") or []]
    label = GM_HAND_LABEL if gm else svg.HAND_LABEL
    parts.append(
        svg.text(x, y + 13, f"{label}({len(hand)}枚)", size=12, fill=svg.OWN_EDGE, bold=True)
    )
    y += 18
    if hand:
        drawn, height = svg.chip_rows(x, y, width, [(card, *_card_colours(card)) for card in hand])
        parts.append(drawn)
        y += height + 6
    else:
        parts.append(svg.text(x, y + 13, "なし", size=12, fill=FADED))
        y += 20
    skills = [skill for skill in own_player.get("skills") or [] if isinstance(skill, Mapping)]
    label = GM_SKILLS_LABEL if gm else SKILLS_LABEL
    parts.append(svg.text(x, y + 13, label, size=12, fill=svg.OWN_EDGE, bold=True))
    y += 18
    if skills:
        chips = [
            (str(skill.get("name")), "#e8f5e9", "#1b5e20")
            if skill.get("revealed")
            else (f"伏 {skill.get('name')}", "#eceff1", "#37474f")
            for skill in skills
        ]
        drawn, height = svg.chip_rows(x, y, width, chips)
        parts.append(drawn)
        y += height + 6
    else:
        parts.append(svg.text(x, y + 13, "なし", size=12, fill=FADED))
        y += 20
    sealed = own.get("sealed")
    mine = sealed.get("mine") if isinstance(sealed, Mapping) and not gm else None
    if mine is not None and not view.get("over"):
        parts.append(
            svg.text(
                x,
                y + 13,
                f"{SEALED_LABEL}: {sealed_text(mine)}",
                size=12,
                fill=svg.OWN_EDGE,
                bold=True,
                max_width=width,
            )
        )
        y += 20
    draft = own.get("draft")
    pack = draft.get("pack") if isinstance(draft, Mapping) and not gm else None
    if view.get("phase") == "draft" and pack:
        parts.append(svg.text(x, y + 13, PACK_LABEL, size=12, fill=svg.OWN_EDGE, bold=True))
        y += 18
        chips = [(str(skill.get("name")), "#fff3e0", "#bf360c") for skill in pack]
        drawn, height = svg.chip_rows(x, y, width, chips)
        parts.append(drawn)
        y += height + 6
    return parts, y


def _player_panel(
    view: Mapping[str, Any],
    player: Mapping[str, Any],
    y: float,
    *,
    own: Mapping[str, Any] | None,
    own_player: Mapping[str, Any] | None,
    gm: bool,
) -> tuple[list[Node], float]:
    top = y
    x = MARGIN + PADDING + 6
    width = CONTENT_WIDTH - 2 * PADDING - 6
    colour = str(player.get("colour") or DEFAULT_COLOUR)
    inner: list[Node] = []
    y += PADDING
    chips = _status_chips(view, player, own_player is not None and not gm)
    drawn_name, y = svg.name_and_chips(x, y, width, str(player.get("name")), chips)
    inner.extend(drawn_name)

    # The race with its colour, and the VP.
    race = player.get("race")
    aptitudes = "・".join(str(terrain) for terrain in player.get("aptitudes") or [])
    race_text = f"{race}(適性 {aptitudes})" if race and aptitudes else str(race or "種族未選択")
    vp = f"{svg.as_int(player.get('vp'))}VP"
    inner.append(svg.rect(x, y + 2, 14, 14, fill=colour, stroke=PIECE_EDGE, radius=3))
    inner.append(
        svg.text(
            x + 20,
            y + 14,
            race_text,
            size=13,
            fill=INK if race else FADED,
            max_width=width - 20 - svg.text_width(vp, 15) - 8,
        )
    )
    inner.append(svg.text(x + width, y + 15, vp, size=15, anchor="end", bold=True))
    y += 22

    resources = player.get("resources") or {}
    bar_width = (width - 12) / 2
    for index, resource in enumerate(RESOURCES):
        column, row = index % 2, index // 2
        inner.append(
            svg.bar(
                x + column * (bar_width + 12),
                y + row * 20,
                bar_width,
                resource,
                svg.as_int(resources.get(resource)),
                RESOURCE_MAX,
                color=RESOURCE_COLOURS[resource],
                label_width=54,
            )
        )
    y += 42

    pieces = (
        f"手札 {svg.as_int(player.get('hand_size'))}/{svg.as_int(player.get('max_hand'))}枚"
        f" ・ 手元 ワーカー {svg.as_int(player.get('workers_home'))}"
        f" ・ タウン {svg.as_int(player.get('towns_home'))}"
    )
    inner.append(svg.text(x, y + 13, pieces, size=12, max_width=width))
    y += 20

    skills = [
        (str(skill.get("name")), "#e8f5e9", "#1b5e20")
        for skill in player.get("skills_revealed") or []
        if isinstance(skill, Mapping)
    ]
    face_down = svg.as_int(player.get("skills_face_down"))
    if face_down:
        skills.append((f"伏せスキル {face_down}枚", "#eceff1", "#37474f"))
    inner.append(svg.text(x, y + 13, "スキル", size=12, fill=MUTED, bold=True))
    if skills:
        drawn, height = svg.chip_rows(x + 44, y, width - 44, skills)
        inner.append(drawn)
        y += max(height, 20) + 6
    else:
        inner.append(svg.text(x + 44, y + 13, "なし", size=12, fill=FADED))
        y += 22

    majorities = [str(area) for area in player.get("majorities") or []]
    if majorities:
        inner.append(
            svg.text(x, y + 13, f"マジョリティ: {'・'.join(majorities)}", size=12, max_width=width)
        )
        y += 20

    drawn_gens, y = _generations(player, _known_kinds(own_player), x, y, width)
    inner.extend(drawn_gens)
    if own is not None and own_player is not None:
        drawn_hidden, y = _hidden_lines(view, own, own_player, gm, x, y, width)
        inner.extend(drawn_hidden)
    y += PADDING - 4

    frame = svg.player_frame(top, y, own_player is not None)
    stripe = svg.rect(MARGIN + 4, top + 6, 5, y - top - 12, fill=colour, radius=2)
    return [frame, stripe, *inner], y


def _own_players(own: Mapping[str, Any] | None) -> dict[int, Mapping[str, Any]]:
    """The seats the own view shows a hand for (one seat; every seat for the GM)."""
    if own is None:
        return {}
    return {
        svg.as_int(player.get("seat", index)): player
        for index, player in enumerate(_players(own))
        if "hand" in player
    }


def _panels(
    view: Mapping[str, Any], own: Mapping[str, Any] | None, y: float
) -> tuple[list[Node], float]:
    mine = _own_players(own)
    gm = len(mine) > 1
    parts: list[Node] = []
    for index, player in enumerate(_players(view)):
        seat = svg.as_int(player.get("seat", index))
        drawn, y = _player_panel(view, player, y, own=own, own_player=mine.get(seat), gm=gm)
        parts.extend(drawn)
        y += 8
    return parts, y + SECTION_GAP - 8


# --------------------------------------------------------------------------- the picture


def board_svg(view: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> str:
    """The board of `view` as SVG text; with `own` (the viewer's view) also what only the
    viewer sees (their hand, their skills, the kinds under their face-down cards)."""
    parts: list[Node] = []
    y = 4.0
    for section in (_header, _result, _war, _map, _genesis, _races):
        drawn, y = section(view, y)
        parts.extend(drawn)
    drawn, y = _panels(view, own, y)
    parts.extend(drawn)
    if view.get("over"):
        title = "ポピュラス 草案21 最終盤面"
    elif view.get("phase") == "play":
        title = f"ポピュラス 草案21 第{svg.as_int(view.get('round'))}ラウンドの盤面"
    else:
        title = f"ポピュラス 草案21 {PHASE_JA.get(str(view.get('phase')), '')}の盤面"
    return svg.document(WIDTH, round(y), title, parts)
