"""IM@S x Workerplacement's board as an SVG picture, a pure function of the view
(app/games/idolwp/view.py).

From top to bottom: the round, the board's name, the phase and whose turn; the final result
once the game is over; the current event (each level's target, EVP and rewards, the rank
rewards); the draft while it runs (whose pick, the idols left); the round board as a graph;
then one panel per player (points, EVP, abilities and chips, 思い出, マニー, cards, the two idols
and where they stand); the results so far as a table.

The board flows from top to bottom: a space's ``col`` (0 = the start, along the arrows) is
drawn as its height and its ``row`` across. The boards are up to 9 columns long but only
5 rows wide, so a 360 unit wide picture holds boxes wide enough to read (``2枚/Lv``,
``Vo1 Da1 Vi1``) and the arrows between them; laid left to right, a column would be 38 units.
A start or goal alone in its column is drawn across the whole width, with every idol standing
there as a token inside it.

The public picture (``own`` None) shows no hand, even when the view passed in is a seat's or the
GM's: the hand is read from ``own`` alone. Given ``own`` (the viewer's own view, with ``seat``),
the viewer's panel is marked and lists their face-down cards under "あなたの手札".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.games import svg
from app.games.idolwp.rules import SPACE_JA
from app.games.svg import CONTENT_WIDTH, INK, MARGIN, MUTED, PADDING, SECTION_GAP, WIDTH, Node

ABILITIES = ("Vo", "Da", "Vi")
ABILITY_COLOURS = {"Vo": "#e91e63", "Da": "#1e88e5", "Vi": "#f9a825"}
# Players' token colours, by seat (up to 5 players).
PLAYER_COLOURS = ("#d32f2f", "#1565c0", "#2e7d32", "#ef6c00", "#6a1b9a")

PHASE_JA = {
    "draft": "アイドル指名",
    "play": "ラウンド進行中",
    "final": "最後の特訓",
    "over": "ゲーム終了",
}
# A space type: its name on the board (the rules' SPACE_JA), a short one for a box, fill and ink.
SPACE_SHORT = {**SPACE_JA, "daily": "日常"}
SPACE_COLOURS = {
    "start": ("#eceff1", "#455a64"),
    "goal": ("#fff8e1", "#b26a00"),
    "lesson": ("#e3f2fd", "#0d47a1"),
    "training": ("#fce4ec", "#ad1457"),
    "daily": ("#f1f8e9", "#33691e"),
    "sales": ("#ede7f6", "#4527a0"),
    "event": ("#fff3e0", "#bf360c"),
}
LEGEND = ("lesson", "training", "daily", "sales", "event")

# The board: box sizes and gaps in viewBox units.
BOX_MAX_WIDTH = 88
BOX_MIN_WIDTH = 44
ARROW_ROOM = 16  # the least room between two boxes side by side, for an arrow
ROW_GAP = 18  # between the boxes of one column and the next (the arrows)
TOKEN_HEIGHT = 16
TOKEN_GAP = 3
TOKEN_SIZE = 11
BOX_TEXT = 30  # the box's two lines of text above its tokens
WIDE_TEXT = 20  # a wide start or goal: its one line of text
ARROW = "#90a4ae"
ARROW_HEAD = 7.0


def _colour(seat: int) -> str:
    return PLAYER_COLOURS[seat % len(PLAYER_COLOURS)]


def _amounts(amounts: Mapping[str, Any]) -> str:
    return " ".join(
        f"{name}{svg.as_int(count)}" for name, count in amounts.items() if svg.as_int(count)
    )


def space_amount(space: Mapping[str, Any]) -> str:
    """What the space prints: ``Vo2``, ``2枚/Lv``, ``思い出1``, ``カード1``, ``イベント``."""
    kind = space.get("type")
    if kind == "lesson":
        return _amounts(space.get("chips") or {})
    if kind == "training":
        return f"{svg.as_int(space.get('rate'))}枚/Lv"
    if kind == "daily":
        return f"思い出{svg.as_int(space.get('amount'))}"
    if kind == "sales":
        return f"カード{svg.as_int(space.get('amount'))}"
    if kind == "event":
        return "イベント"
    return ""


# --------------------------------------------------------------------------- header


def _status(view: Mapping[str, Any]) -> str:
    """Whose turn it is and what the bot waits for, in one line."""
    phase = view.get("phase")
    if view.get("over"):
        return "ゲーム終了"
    players = view.get("players") or []
    if phase == "draft":
        draft = view.get("draft") or {}
        order = draft.get("order") or []
        index = svg.as_int(draft.get("index"))
        who = order[index] if index < len(order) else view.get("turn")
        return f"指名の番: {who}"
    pending = view.get("pending")
    if isinstance(pending, Mapping):
        seat = svg.as_int(pending.get("seat"))
        who = players[seat].get("name") if seat < len(players) else view.get("turn")
        kind = pending.get("kind")
        if kind == "event":
            return f"イベント参加待ち: {who}"
        if kind == "training":
            return f"特訓待ち: {who}"
        return f"カード{svg.as_int(pending.get('count'))}枚を捨てる: {who}"
    if phase == "final":
        return f"特訓の番: {view.get('turn')}"
    turn_seat = svg.as_int(view.get("turn_seat"))
    due: Sequence[Any] = []
    if turn_seat < len(players):
        due = players[turn_seat].get("due") or []
    movable = f"(動かせる: {'・'.join(str(idol) for idol in due)})" if due else ""
    return f"手番: {view.get('turn')}{movable}"


def _header(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    parts: list[Node] = [svg.text(MARGIN, y + 19, "IM@S x Workerplacement", size=16, bold=True)]
    rounds = view.get("rounds")
    when = f"第{view.get('round')}ラウンド" + (f" / {rounds}" if rounds is not None else "")
    parts.append(svg.text(WIDTH - MARGIN, y + 19, when, size=14, anchor="end", bold=True))
    y += 28
    board = view.get("board") or {}
    parts.append(
        svg.text(
            MARGIN,
            y + 14,
            f"ボード{board.get('id')}「{board.get('name')}」",
            size=13,
            max_width=CONTENT_WIDTH,
        )
    )
    y += 20
    phase = "over" if view.get("over") else str(view.get("phase"))
    shown = PHASE_JA.get(phase, phase)
    parts.append(svg.text(MARGIN, y + 14, shown, size=13, fill=MUTED, bold=True))
    if phase != "over":
        # Whose turn stands right of the phase, or on a line of its own when it is long.
        beside, y = svg.status_beside(shown, _status(view), y)
        parts.append(beside)
    y += 20
    if not view.get("over") and view.get("phase") != "draft" and view.get("start_player"):
        parts.append(svg.note_line(y, f"スタートプレイヤー: {view.get('start_player')}"))
        y += 18
    return parts, y + SECTION_GAP - 4


# --------------------------------------------------------------------------- result


def _result(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    entries = svg.ranking_entries(view)
    if not entries:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "最終結果")]
    y += 20
    for entry in entries:
        breakdown = entry.get("breakdown") or {}
        parts.extend(svg.ranking_row(entry, y))
        y += 19
        detail = f"イベント {breakdown.get('events')} ・ 能力順位 {breakdown.get('abilities')}"
        parts.append(svg.text(MARGIN + 40, y + 12, detail, size=11, fill=MUTED))
        y += 20
    return parts, y + SECTION_GAP - 4


# --------------------------------------------------------------------------- event


def _level_reward(level: Mapping[str, Any]) -> str:
    shown = [f"{svg.as_int(level.get('evp'))}EVP"]
    if svg.as_int(level.get("memory")):
        shown.append(f"思い出+{svg.as_int(level.get('memory'))}")
    if svg.as_int(level.get("cards")):
        shown.append(f"カード+{svg.as_int(level.get('cards'))}")
    return " ".join(shown)


def _event(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    event = view.get("event")
    if not isinstance(event, Mapping):
        return [], y
    top = y
    fill, ink = SPACE_COLOURS["event"]
    inner: list[Node] = []
    x = MARGIN + PADDING
    inner_width = CONTENT_WIDTH - 2 * PADDING
    y += 6
    inner.append(
        svg.text(
            x,
            y + 15,
            f"イベント「{event.get('name')}」",
            size=14,
            fill=ink,
            bold=True,
            max_width=inner_width,
        )
    )
    y += 22
    levels = event.get("levels") or []
    for level in levels:
        inner.append(svg.text(x, y + 14, f"Lv{level.get('level')}", size=13, fill=ink, bold=True))
        inner.append(
            svg.text(x + 34, y + 14, str(level.get("text")), size=13, bold=True, max_width=120)
        )
        inner.append(
            svg.text(
                x + inner_width,
                y + 14,
                _level_reward(level),
                size=12,
                anchor="end",
                max_width=inner_width - 160,
            )
        )
        y += 20
    if any(level.get("kind") == "any" for level in levels):
        inner.append(
            svg.text(
                x,
                y + 12,
                "( ) の数は Vo/Da/Vi に自由に割り当て",
                size=11,
                fill=MUTED,
                max_width=inner_width,
            )
        )
        y += 16
    count = len(view.get("players") or []) or len(event.get("rewards") or [])
    rewards = [str(svg.as_int(reward)) for reward in (event.get("rewards") or [])[:count]]
    if rewards:
        inner.append(
            svg.text(x, y + 13, "順位報酬: " + " / ".join(rewards), size=12, max_width=inner_width)
        )
        y += 18
    decks = (
        f"残りイベント {svg.as_int(view.get('events_left'))} ・ カード山札 "
        f"{svg.as_int(view.get('card_deck'))} ・ 捨て札 {svg.as_int(view.get('card_discard'))}"
    )
    inner.append(svg.text(x, y + 12, decks, size=11, fill=MUTED, max_width=inner_width))
    y += 16 + 6
    frame = svg.rect(
        MARGIN, top, CONTENT_WIDTH, y - top, fill=fill, stroke=ink, radius=8, stroke_width=1
    )
    return [frame, *inner], y + SECTION_GAP


# --------------------------------------------------------------------------- draft


def _draft(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    draft = view.get("draft")
    if view.get("phase") != "draft" or not isinstance(draft, Mapping):
        return [], y
    parts: list[Node] = [svg.section_heading(y, "アイドル指名(カタン取り)")]
    y += 20
    order = [str(name) for name in draft.get("order") or []]
    index = svg.as_int(draft.get("index"))
    # Who picked which idol: a player's idols stand in the order they were picked.
    picked = {
        str(player.get("name")): [str(idol) for idol in player.get("idol_order") or []]
        for player in view.get("players") or []
    }
    picks = []
    for number, name in enumerate(order):
        if number < index:
            mine = picked.get(name, [])
            turn = order[:number].count(name)
            idol = f" {mine[turn]}" if turn < len(mine) else ""
            picks.append((f"{number + 1}. {name}{idol}", "#eeeeee", MUTED))
        elif number == index:
            picks.append((f"{number + 1}. {name} ← 指名中", *svg.WAITING_CHIP))
        else:
            picks.append((f"{number + 1}. {name}", "#e8eaf6", "#283593"))
    if picks:
        drawn, height = svg.chip_rows(MARGIN, y, CONTENT_WIDTH, picks)
        parts.append(drawn)
        y += height + 8
    parts.append(svg.section_heading(y, "残りのアイドル"))
    y += 18
    pool = [(str(idol), "#fce4ec", "#880e4f") for idol in draft.get("pool") or []]
    if pool:
        drawn, height = svg.chip_rows(MARGIN, y, CONTENT_WIDTH, pool, size=13)
        parts.append(drawn)
        y += height + 4
    else:
        parts.append(svg.text(MARGIN, y + 13, "なし", size=12, fill="#9e9e9e"))
        y += 18
    return parts, y + SECTION_GAP


# --------------------------------------------------------------------------- the board


@dataclass(frozen=True)
class _Token:
    idol: str
    seat: int


@dataclass(frozen=True)
class _Box:
    space: Mapping[str, Any]
    x: float
    y: float
    width: float
    height: float
    wide: bool
    tokens: tuple[_Token, ...]

    @property
    def cx(self) -> float:
        return self.x + self.width / 2

    @property
    def cy(self) -> float:
        return self.y + self.height / 2


def _token_width(idol: str, room: float) -> float:
    return min(svg.text_width(idol, TOKEN_SIZE) + 10, room)


def _token_rows(tokens: Sequence[_Token], first: float, room: float) -> int:
    """How many rows the tokens take: the first row has `first` units, the others `room`."""
    if not tokens:
        return 0
    rows, used, width = 1, 0.0, first
    for token in tokens:
        wanted = _token_width(token.idol, room)
        if used and used + wanted > width:
            rows, used, width = rows + 1, 0.0, room
        used += wanted + TOKEN_GAP
    return rows


def _draw_tokens(
    tokens: Sequence[_Token], x: float, y: float, first: float, room: float, left: float
) -> list[Node]:
    """Tokens laid left to right from (x, y) wrapping back to `left` within `room`."""
    parts: list[Node] = []
    used, width, line_x = 0.0, first, x
    for token in tokens:
        wanted = _token_width(token.idol, room)
        if used and used + wanted > width:
            used, width, line_x, y = 0.0, room, left, y + TOKEN_HEIGHT + TOKEN_GAP
        colour = _colour(token.seat)
        parts.append(
            svg.group(
                [
                    svg.rect(line_x + used, y, wanted, TOKEN_HEIGHT, fill=colour, radius=8),
                    svg.text(
                        line_x + used + wanted / 2,
                        y + TOKEN_HEIGHT - 4,
                        token.idol,
                        size=TOKEN_SIZE,
                        fill="#ffffff",
                        anchor="middle",
                        bold=True,
                        max_width=wanted - 6,
                    ),
                ]
            )
        )
        used += wanted + TOKEN_GAP
    return parts


def _tokens(view: Mapping[str, Any]) -> dict[str, list[_Token]]:
    """Every idol on the board by space: seat order, each player's idols in their order; on
    the goal, players who finished first stand first."""
    players = view.get("players") or []
    finished = [str(name) for name in view.get("finished") or []]

    def arrival(index: int) -> tuple[int, int]:
        name = str(players[index].get("name"))
        return (finished.index(name) if name in finished else len(finished), index)

    where: dict[str, list[_Token]] = {}
    for index in sorted(range(len(players)), key=arrival):
        player = players[index]
        seat = svg.as_int(player.get("seat", index))
        idols = player.get("idols") or {}
        order = [str(idol) for idol in player.get("idol_order") or idols]
        order += [str(idol) for idol in idols if str(idol) not in order]
        for idol in order:
            space = idols.get(idol)
            if space is not None:
                where.setdefault(str(space), []).append(_Token(idol, seat))
    return where


def _box_width(spaces: Sequence[Mapping[str, Any]], last_row: int) -> float:
    """As wide as the closest two boxes of one column leave room for (an arrow between them),
    at most BOX_MAX_WIDTH: with step = (CONTENT_WIDTH - w) / last_row between rows and g the
    least row gap in a column, w + ARROW_ROOM <= g * step."""
    if last_row <= 0:
        return BOX_MAX_WIDTH
    gaps = [
        abs(svg.as_int(a.get("row")) - svg.as_int(b.get("row")))
        for i, a in enumerate(spaces)
        for b in spaces[i + 1 :]
        if svg.as_int(a.get("col")) == svg.as_int(b.get("col"))
    ]
    gap = min([g for g in gaps if g > 0] or [last_row + 1])
    ratio = gap / last_row
    width = (CONTENT_WIDTH * ratio - ARROW_ROOM) / (1 + ratio)
    return max(BOX_MIN_WIDTH, min(BOX_MAX_WIDTH, width))


def _layout(view: Mapping[str, Any], y: float) -> list[_Box]:
    board = view.get("board") or {}
    spaces = [space for space in board.get("spaces") or [] if isinstance(space, Mapping)]
    if not spaces:
        return []
    tokens = _tokens(view)
    last_row = max(svg.as_int(space.get("row")) for space in spaces)
    width = _box_width(spaces, last_row)
    step = (CONTENT_WIDTH - width) / last_row if last_row else 0.0
    columns: dict[int, list[Mapping[str, Any]]] = {}
    for space in spaces:
        columns.setdefault(svg.as_int(space.get("col")), []).append(space)
    boxes: list[_Box] = []
    for col in sorted(columns):
        members = columns[col]
        placed: list[_Box] = []
        for space in members:
            here = tuple(tokens.get(str(space.get("id")), []))
            if len(members) == 1 and space.get("type") in ("start", "goal"):
                label_room = svg.text_width(_wide_label(space), 13) + 20
                rows = _token_rows(here, CONTENT_WIDTH - label_room, CONTENT_WIDTH - 12)
                height = max(WIDE_TEXT + 8, 6 + rows * (TOKEN_HEIGHT + TOKEN_GAP) + 5)
                placed.append(_Box(space, MARGIN, y, CONTENT_WIDTH, height, True, here))
            else:
                rows = max(_token_rows(here, width - 8, width - 8), 1)
                height = BOX_TEXT + rows * (TOKEN_HEIGHT + TOKEN_GAP) + 3
                x = MARGIN + svg.as_int(space.get("row")) * step
                placed.append(_Box(space, x, y, width, height, False, here))
        boxes.extend(placed)
        tallest = max(box.height for box in placed)
        y += tallest + ROW_GAP
    return boxes


def _wide_label(space: Mapping[str, Any]) -> str:
    return f"{space.get('id')} {SPACE_JA.get(str(space.get('type')), '')}"


def _draw_box(box: _Box) -> Node:
    space = box.space
    kind = str(space.get("type"))
    fill, ink = SPACE_COLOURS.get(kind, ("#fafafa", INK))
    parts: list[Node | None] = [
        svg.rect(
            box.x, box.y, box.width, box.height, fill=fill, stroke=ink, radius=6, stroke_width=1.2
        )
    ]
    left = box.x + 5
    room = box.width - 10
    if box.wide:
        ident = str(space.get("id"))
        parts.append(svg.text(left + 2, box.y + 18, ident, size=13, fill=ink, bold=True))
        parts.append(
            svg.text(
                left + 2 + svg.text_width(ident, 13) + 5,
                box.y + 18,
                SPACE_JA.get(kind, kind),
                size=13,
                fill=ink,
                bold=True,
            )
        )
        label_room = svg.text_width(_wide_label(space), 13) + 20
        parts.extend(
            _draw_tokens(
                box.tokens,
                box.x + label_room,
                box.y + 6,
                box.width - label_room - 6,
                box.width - 12,
                box.x + 6,
            )
        )
        return svg.group(parts)
    ident = str(space.get("id"))
    parts.append(svg.text(left, box.y + 14, ident, size=13, fill=ink, bold=True))
    if kind != "event":
        ident_width = svg.text_width(ident, 13) + 4
        parts.append(
            svg.text(
                box.x + box.width - 5,
                box.y + 13,
                SPACE_SHORT.get(kind, kind),
                size=11,
                fill=ink,
                anchor="end",
                max_width=room - ident_width,
            )
        )
    amount = space_amount(space)
    if amount:
        size = 12 if svg.text_width(amount, 12) <= room else 11  # Vo1 Da1 Vi1
        parts.append(svg.text(left, box.y + 27, amount, size=size, fill=INK, max_width=room))
    parts.extend(
        _draw_tokens(box.tokens, box.x + 4, box.y + BOX_TEXT + 1, room + 2, room + 2, box.x + 4)
    )
    return svg.group(parts)


def _anchor(box: _Box, toward: _Box) -> tuple[float, float, float]:
    """The point an arrow to or from `box` aims at, and the box's half width there: a wide
    box is met straight above or below the other box."""
    if box.wide:
        x = min(max(toward.cx, box.x + 12), box.x + box.width - 12)
        return x, box.cy, box.width
    return box.cx, box.cy, box.width / 2


def _exit(half_width: float, half_height: float, dx: float, dy: float) -> float:
    """The fraction of (dx, dy) a ray from a box's centre travels inside the box."""
    limits = []
    if dx:
        limits.append(half_width / abs(dx))
    if dy:
        limits.append(half_height / abs(dy))
    return min(limits) if limits else 0.0


def _arrow(source: _Box, target: _Box) -> Node | None:
    x1, y1, half1 = _anchor(source, target)
    x2, y2, half2 = _anchor(target, source)
    if source.wide:
        x1 = x2
    if target.wide:
        x2 = x1
    dx, dy = x2 - x1, y2 - y1
    length = (dx * dx + dy * dy) ** 0.5
    if length == 0:
        return None
    start = _exit(half1, source.height / 2, dx, dy)
    end = 1 - _exit(half2, target.height / 2, dx, dy)
    if end - start <= 0:
        return None
    ux, uy = dx / length, dy / length
    sx, sy = x1 + dx * start + ux, y1 + dy * start + uy
    tx, ty = x1 + dx * end - ux, y1 + dy * end - uy
    visible = ((tx - sx) ** 2 + (ty - sy) ** 2) ** 0.5
    head = min(ARROW_HEAD, visible)
    bx, by = tx - ux * head, ty - uy * head
    wing = head * 0.5
    points = (
        f"{_n(tx)},{_n(ty)} {_n(bx - uy * wing)},{_n(by + ux * wing)} "
        f"{_n(bx + uy * wing)},{_n(by - ux * wing)}"
    )
    return svg.group(
        [
            svg.el(
                "line", x1=_n(sx), y1=_n(sy), x2=_n(bx), y2=_n(by), stroke=ARROW, stroke_width=1.4
            )
            if visible > head
            else None,
            svg.el("polygon", points=points, fill=ARROW),
        ]
    )


def _n(value: float) -> float:
    return round(value, 1)


def _board(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    board = view.get("board") or {}
    parts: list[Node] = [svg.section_heading(y, "ラウンドボード(矢印の向きに進む)")]
    y += 20
    boxes = _layout(view, y)
    if not boxes:
        return parts, y + SECTION_GAP
    by_id = {str(box.space.get("id")): box for box in boxes}
    for edge in board.get("edges") or []:
        if len(edge) != 2:
            continue
        source, target = by_id.get(str(edge[0])), by_id.get(str(edge[1]))
        arrow = None if source is None or target is None else _arrow(source, target)
        if arrow is not None:
            parts.append(arrow)
    parts.extend(_draw_box(box) for box in boxes)
    y = max(box.y + box.height for box in boxes) + 8
    # The legend: a swatch and the name of every action space type.
    x = float(MARGIN)
    for kind in LEGEND:
        fill, ink = SPACE_COLOURS[kind]
        parts.append(svg.rect(x, y + 2, 12, 12, fill=fill, stroke=ink, radius=2))
        parts.append(svg.text(x + 15, y + 12, SPACE_JA[kind], size=11, fill=MUTED))
        x += 15 + svg.text_width(SPACE_JA[kind], 11) + 10
    return parts, y + 18 + SECTION_GAP


# --------------------------------------------------------------------------- players


def _status_chips(
    view: Mapping[str, Any], player: Mapping[str, Any], seat: int, own: bool
) -> list[tuple[str, str, str]]:
    chips: list[tuple[str, str, str]] = []
    if own:
        chips.append(("あなた", svg.OWN_EDGE, "#ffffff"))
    if not view.get("over") and seat in (view.get("waiting_seats") or []):
        chips.append(("手番", *svg.WAITING_CHIP))
    finished = [str(name) for name in view.get("finished") or []]
    rank = player.get("finish_rank")
    if rank is not None:
        chips.append((f"ゴール{rank}番", "#fff8e1", "#b26a00"))
    elif str(player.get("name")) in finished:
        chips.append(
            (f"{finished.index(str(player.get('name'))) + 1}番目にゴール", "#fff8e1", "#b26a00")
        )
    return chips


def _space_text(view: Mapping[str, Any], space: Any) -> str:
    if space is None:
        return ""  # drafted, not yet on a board
    for entry in (view.get("board") or {}).get("spaces") or []:
        if entry.get("id") == space:
            kind = str(entry.get("type"))
            if kind in ("start", "goal"):
                return SPACE_JA[kind]
            if kind == "event":
                return f"{space}(イベント)"
            return f"{space}({SPACE_SHORT.get(kind, kind)} {space_amount(entry)})"
    return str(space)


def _idol_lines(
    view: Mapping[str, Any], player: Mapping[str, Any], seat: int, x: float, y: float, width: float
) -> tuple[list[Node], float]:
    parts: list[Node] = []
    idols = player.get("idols") or {}
    order = [str(idol) for idol in player.get("idol_order") or idols]
    order += [str(idol) for idol in idols if str(idol) not in order]
    if not order:
        parts.append(svg.text(x, y + 13, "アイドル: まだ指名していません", size=12, fill="#9e9e9e"))
        return parts, y + 20
    a_idol = player.get("a_idol")
    due = [str(idol) for idol in player.get("due") or []]
    turn = svg.as_int(view.get("turn_seat")) == seat and view.get("phase") == "play"
    for idol in order:
        label = "" if a_idol is None else ("A" if idol == a_idol else "B")
        token_width = min(svg.text_width(idol, 12) + 12, 90)
        parts.append(svg.rect(x, y + 1, token_width, 18, fill=_colour(seat), radius=9))
        parts.append(
            svg.text(
                x + token_width / 2,
                y + 14,
                idol,
                size=12,
                fill="#ffffff",
                anchor="middle",
                bold=True,
                max_width=token_width - 6,
            )
        )
        left = x + token_width + 6
        if label:
            parts.append(svg.text(left, y + 14, label, size=12, fill=_colour(seat), bold=True))
            left += 14
        mark = ""
        if len(due) == 1 and idol in due and not view.get("over"):
            mark = "← 今動かす" if turn else "← 次に動かす"
        mark_width = svg.text_width(mark, 11) + 4 if mark else 0
        parts.append(
            svg.text(
                left,
                y + 14,
                _space_text(view, idols.get(idol)),
                size=12,
                max_width=x + width - left - mark_width,
            )
        )
        if mark:
            parts.append(
                svg.text(x + width, y + 14, mark, size=11, fill="#8d6e00", anchor="end", bold=True)
            )
        y += 22
    return parts, y


def _cards_line(
    player: Mapping[str, Any], x: float, y: float, width: float
) -> tuple[list[Node], float]:
    parts: list[Node] = []
    count = svg.as_int(player.get("cards"))
    kept = [str(card) for card in player.get("kept") or []]
    label = f"カード 伏せ{count}枚" + (f"・表{len(kept)}枚" if kept else "")
    parts.append(svg.text(x, y + 13, label, size=12))
    left = x + svg.text_width(label, 12) + 8
    for index in range(min(count, 8)):
        parts.append(svg.card_back(left + index * 12, y, width=16, height=22))
    y += 26
    if kept:
        chips = [(f"表: {card}", "#e8f5e9", "#1b5e20") for card in kept]
        drawn, height = svg.chip_rows(x, y, width, chips, size=11)
        parts.append(drawn)
        y += height + 6
    return parts, y


def _hand(own: Mapping[str, Any], x: float, y: float, width: float) -> tuple[list[Node], float]:
    seat = own.get("seat")
    players = own.get("players") or []
    if not isinstance(seat, int) or not 0 <= seat < len(players):
        return [], y
    hand = players[seat].get("hand")
    if hand is None:
        return [], y
    cards = [str(card) for card in hand]
    parts: list[Node] = [
        svg.text(
            x, y + 13, f"{svg.HAND_LABEL}({len(cards)}枚)", size=12, fill=svg.OWN_EDGE, bold=True
        )
    ]
    y += 18
    if cards:
        drawn, height = svg.chip_rows(x, y, width, [(card, "#e3f2fd", "#0d47a1") for card in cards])
        parts.append(drawn)
        y += height + 6
    else:
        parts.append(svg.text(x, y + 13, "なし", size=12, fill="#9e9e9e"))
        y += 20
    return parts, y


def _player_panel(
    view: Mapping[str, Any],
    player: Mapping[str, Any],
    seat: int,
    y: float,
    *,
    maximum: int,
    own: Mapping[str, Any] | None,
) -> tuple[list[Node], float]:
    top = y
    x = MARGIN + PADDING + 6
    width = CONTENT_WIDTH - 2 * PADDING - 6
    inner: list[Node] = []
    y += PADDING
    chips = _status_chips(view, player, seat, own is not None)
    drawn_name, y = svg.name_and_chips(x, y, width, str(player.get("name")), chips)
    inner.extend(drawn_name)

    badges = [
        ("得点", svg.as_int(player.get("points"))),
        ("EVP", svg.as_int(player.get("evp"))),
        ("思い出", svg.as_int(player.get("memory"))),
        ("マニー", svg.as_int(player.get("money"))),
    ]
    badge_width = (width - 3 * 4) / 4
    for index, (label, count) in enumerate(badges):
        inner.append(
            svg.count_badge(
                x + index * (badge_width + 4), y, label, count, width=badge_width, size=12
            )
        )
    y += 28

    abilities = player.get("abilities") or {}
    chips_held = player.get("chips") or {}
    for ability in ABILITIES:
        inner.append(
            svg.bar(
                x,
                y,
                width - 78,
                f"{ability} 能力",
                svg.as_int(abilities.get(ability)),
                maximum,
                color=ABILITY_COLOURS[ability],
                label_width=52,
            )
        )
        inner.append(
            svg.text(
                x + width,
                y + 13,
                f"チップ {svg.as_int(chips_held.get(ability))}",
                size=12,
                anchor="end",
            )
        )
        y += 20
    y += 4

    drawn, y = _idol_lines(view, player, seat, x, y, width)
    inner.extend(drawn)
    drawn, y = _cards_line(player, x, y, width)
    inner.extend(drawn)
    if own is not None:
        drawn, y = _hand(own, x, y, width)
        inner.extend(drawn)
    y += PADDING - 4

    frame = svg.player_frame(top, y, own is not None)
    stripe = svg.rect(MARGIN + 4, top + 6, 5, y - top - 12, fill=_colour(seat), radius=2)
    return [frame, stripe, *inner], y


def _players(
    view: Mapping[str, Any], own: Mapping[str, Any] | None, y: float
) -> tuple[list[Node], float]:
    players = view.get("players") or []
    own_seat = own.get("seat") if own is not None else None
    levels = [
        svg.as_int(value)
        for player in players
        for value in (player.get("abilities") or {}).values()
    ]
    maximum = max([10, *levels])
    parts: list[Node] = []
    for index, player in enumerate(players):
        seat = svg.as_int(player.get("seat", index))
        mine = own if own_seat is not None and seat == own_seat else None
        drawn, y = _player_panel(view, player, seat, y, maximum=maximum, own=mine)
        parts.extend(drawn)
        y += 8
    return parts, y + SECTION_GAP - 8


# --------------------------------------------------------------------------- results


def _results(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    """Every results step so far: one column each, a row per player, ``EVP+報酬``."""
    results = [entry for entry in view.get("results") or [] if isinstance(entry, Mapping)]
    if not results:
        return [], y
    players = view.get("players") or []
    parts: list[Node] = [svg.section_heading(y, "イベント結果(EVP+順位報酬)")]
    y += 20
    name_width = 92.0
    column = (CONTENT_WIDTH - name_width) / max(len(results), 4)
    # The event's name under each round, on up to two lines (cut after that).
    names = [svg.wrap_text(str(entry.get("event")), column - 4, 11) for entry in results]
    lines = 2 if any(len(name) > 1 for name in names) else 1
    for index, entry in enumerate(results):
        left = MARGIN + name_width + index * column
        parts.append(
            svg.text(
                left + column / 2,
                y + 12,
                f"第{entry.get('round')}R",
                size=12,
                anchor="middle",
                bold=True,
            )
        )
        heading = names[index][:lines]
        if len(names[index]) > lines:
            heading[-1] = "".join(names[index][lines - 1 :])
        for number, line in enumerate(heading):
            parts.append(
                svg.text(
                    left + column / 2,
                    y + 26 + number * 13,
                    line,
                    size=11,
                    fill=MUTED,
                    anchor="middle",
                    max_width=column - 4,
                )
            )
    y += 20 + 13 * lines
    for row_index, player in enumerate(players):
        name = str(player.get("name"))
        if row_index % 2 == 0:
            parts.append(svg.rect(MARGIN, y, CONTENT_WIDTH, 20, fill="#f5f5f5"))
        parts.append(svg.text(MARGIN + 4, y + 14, name, size=12, max_width=name_width - 8))
        for index, entry in enumerate(results):
            row = next(
                (row for row in entry.get("rows") or [] if str(row.get("name")) == name), None
            )
            if row is None:
                continue
            left = MARGIN + name_width + index * column
            shown = f"{svg.as_int(row.get('evp'))}+{svg.as_int(row.get('reward'))}"
            parts.append(svg.text(left + column / 2, y + 14, shown, size=12, anchor="middle"))
        y += 20
    return parts, y + SECTION_GAP


# --------------------------------------------------------------------------- the picture


def board_svg(view: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> str:
    """The board of `view` as SVG text; with `own` (the viewer's view) also their hand."""
    parts: list[Node] = []
    y = 4.0
    for section in (_header, _result, _event, _draft, _board):
        drawn, y = section(view, y)
        parts.extend(drawn)
    drawn, y = _players(view, own, y)
    parts.extend(drawn)
    drawn, y = _results(view, y)
    parts.extend(drawn)
    title = f"IM@S x Workerplacement 第{view.get('round')}ラウンドの盤面"
    return svg.document(WIDTH, round(y), title, parts)
