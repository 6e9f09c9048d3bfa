"""掲示板進行カードゲーム's field as an SVG picture, a pure function of the view
(app/games/cardbattle/view.py).

From top to bottom: the title and the turn (N / 20), the phase and whose turn it is (who has
passed in a magic window, who has still to seal a deck), the first player's die; the winner and
the reason once the battle is over; then the two sides, the upper one first, the last attack's
result as a small table between them. A side: the player's name with 先攻/後攻 and what the bot
waits for, the total cost against 1,000 (red when over: R 総コストが1000を超えると敗北), the magic
cards declared by name and the undeclared ones as card backs, then the three normal cards in deck
order, each a full-width card (number, name, cost, attack, durability bar, shield, the ability the
die chose and whether it fired; destroyed cards greyed and crossed, removed ones dashed with
除外). Before the reveal (phase ``deck``) there is no field: a side says whether it has sealed.

Everything is stacked one card a row: three cards side by side would be 110 units each, too
narrow for a 16-character name or ``手番開始時 全体ダメージ 100`` on a phone.

The upper side is the viewer's opponent when ``own`` (the viewer's own view) has a ``seat``,
otherwise the first player (先攻). The public picture (``own`` None) shows no undeclared magic
card and no sealed deck, even when the view passed in is a seat's or the GM's: both are read from
``own`` alone, for the viewer's own seat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.games import svg
from app.games.svg import CONTENT_WIDTH, INK, INNER_WIDTH, MARGIN, MUTED, PADDING, SECTION_GAP, Node

CARD_HEIGHT = 64
CARD_X = MARGIN + 6
CARD_WIDTH = CONTENT_WIDTH - 12
CARD_GAP = 6
COST_LIMIT = 1000  # R 初期コスト 1000

TITLE = "掲示板進行カードゲーム"
OWN_MAGIC_LABEL = "あなたの魔法(未宣言)"
SEALED_LABEL = "あなたの封印したデッキ(公開前)"
PHASE_JA = {
    "deck": "デッキ封印待ち",
    "attack": "攻撃",
    "window": "魔法の宣言受付",
    "over": "決着",
}
STATE_JA = {"destroyed": "破壊", "removed": "除外"}

OVER_COST = "#c62828"
CARD_FILL = "#fffdf7"
CARD_EDGE = "#8d6e63"
DOWN_FILL = "#eeeeee"
DOWN_INK = "#9e9e9e"
CROSS = "#e57373"
MAGIC_CHIP = ("#ede7f6", "#4527a0")
OWN_MAGIC_CHIP = ("#e3f2fd", "#0d47a1")
PASSED_CHIP = ("#eceff1", "#455a64")
FIRST_CHIP = ("#ffebee", "#b71c1c")
SECOND_CHIP = ("#e8eaf6", "#283593")
SEALED_CHIP = ("#e8f5e9", "#1b5e20")
PHASE_COLOURS = {
    "deck": ("#eceff1", "#455a64"),
    "attack": ("#ffebee", "#b71c1c"),
    "window": ("#ede7f6", "#4527a0"),
    "over": ("#fff8e1", "#8d6e00"),
}
# The side colours, by seat: the card numbers and the side's stripe.
SEAT_COLOURS = ("#c62828", "#1565c0")


def _names(values: Any) -> list[str]:
    return [str(value) for value in values or []]


def _seat_colour(seat: int) -> str:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


def _pack(pieces: list[str], size: float, width: float = CONTENT_WIDTH) -> list[str]:
    """Pieces joined by spaces into as few lines as fit `width`, breaking between pieces only
    (a piece too wide for a line of its own is cut with an ellipsis when drawn)."""
    lines: list[str] = []
    for piece in pieces:
        if lines and svg.text_width(f"{lines[-1]} {piece}", size) <= width:
            lines[-1] += f" {piece}"
        else:
            lines.append(piece)
    return lines


def _players(view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [player for player in view.get("players") or [] if isinstance(player, Mapping)]


def _own_seat(own: Mapping[str, Any] | None) -> int | None:
    if own is None:
        return None
    seat = own.get("seat")
    return seat if isinstance(seat, int) and not isinstance(seat, bool) else None


def _own_entry(own: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The viewer's own player entry in `own` (its magic, its sealed deck), if any."""
    seat = _own_seat(own)
    if own is None or seat is None:
        return None
    players = own.get("players") or []
    if seat >= len(players) or not isinstance(players[seat], Mapping):
        return None
    entry: Mapping[str, Any] = players[seat]
    return entry


def _order(view: Mapping[str, Any], own: Mapping[str, Any] | None) -> list[int]:
    """The seats from the top: the viewer's opponent first, else the first player (先攻)."""
    count = len(_players(view))
    seats = list(range(count))
    seat = _own_seat(own)
    top = (1 - seat) if seat is not None and count == 2 and seat in seats else None
    if top is None:
        first = svg.as_int(view.get("first_seat"))
        top = first if first in seats else 0
    return [top, *[other for other in seats if other != top]]


# --------------------------------------------------------------------------- header


def _turn_label(view: Mapping[str, Any]) -> str:
    turn = svg.as_int(view.get("turn"))
    turns = svg.as_int(view.get("turns")) or 20
    if turn <= 0:
        return f"開始前(全{turns}手番)"
    return f"第{turn}手番 / {turns}"


def _status(view: Mapping[str, Any]) -> str:
    """Whose turn it is, or what the bot waits for, in one line."""
    phase = view.get("phase")
    waiting = _names(view.get("waiting_for"))
    if view.get("over"):
        return ""
    if phase == "deck":
        return f"未封印: {'、'.join(waiting)}" if waiting else ""
    turn = svg.as_int(view.get("turn"))
    who = view.get("turn_player")
    if phase == "attack":
        return f"{who}の攻撃(ATTACK 待ち)"
    if turn <= 0:
        return "両者の PASS で第1手番"
    return f"{who}の攻撃のあと"


def _header(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    parts: list[Node] = [svg.text(MARGIN, y + 19, TITLE, size=16, bold=True)]
    parts.append(
        svg.text(svg.WIDTH - MARGIN, y + 19, _turn_label(view), size=14, anchor="end", bold=True)
    )
    y += 28
    phase = "over" if view.get("over") else str(view.get("phase"))
    fill, ink = PHASE_COLOURS.get(phase, PHASE_COLOURS["deck"])
    badge, badge_width = svg.chip(
        MARGIN, y, PHASE_JA.get(phase, phase), size=13, fill=fill, ink=ink
    )
    parts.append(badge)
    status = _status(view)
    if status:
        room = CONTENT_WIDTH - badge_width - 8
        if svg.text_width(status, 13) > room:
            y += 25
            parts.append(
                svg.text(MARGIN, y + 14, status, size=13, bold=True, max_width=CONTENT_WIDTH)
            )
        else:
            parts.append(
                svg.text(
                    MARGIN + badge_width + 8, y + 15, status, size=13, bold=True, max_width=room
                )
            )
    y += 26
    if phase == "window":
        passed = _names(view.get("passed"))
        waiting = _names(view.get("waiting_for"))
        pieces = [f"PASS済み: {'、'.join(passed) if passed else 'なし'}"]
        if waiting:
            pieces[0] += " ・"
            pieces.append(f"待ち: {'、'.join(waiting)}")
        for row in _pack(pieces, 12):
            parts.append(svg.text(MARGIN, y + 13, row, size=12, max_width=CONTENT_WIDTH))
            y += 16
        y += 2
    dice = view.get("dice") or []
    players = _players(view)
    if len(dice) == len(players) and players:
        pieces = [
            f"{player.get('name')} {svg.as_int(die)}" + (" ・" if index < len(players) - 1 else "")
            for index, (player, die) in enumerate(zip(players, dice, strict=True))
        ]
        for row in _pack(["先攻決めのダイス:", *pieces, f"→ 先攻 {view.get('first')}"], 12):
            parts.append(
                svg.text(MARGIN, y + 13, row, size=12, fill=MUTED, max_width=CONTENT_WIDTH)
            )
            y += 16
        y += 2
    return parts, y + SECTION_GAP - 4


# --------------------------------------------------------------------------- result


def _result(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    if not view.get("over"):
        return [], y
    top = y
    fill, ink = PHASE_COLOURS["over"]
    inner: list[Node] = []
    x = MARGIN + PADDING
    y += 6
    winner = view.get("winner")
    shown = f"勝者: {winner}" if winner is not None else "引き分け"
    inner.append(svg.text(x, y + 17, shown, size=16, fill=ink, bold=True, max_width=INNER_WIDTH))
    y += 24
    reason = view.get("reason")
    if reason:
        for row in svg.wrap_text(str(reason), INNER_WIDTH, 12):
            inner.append(svg.text(x, y + 13, row, size=12))
            y += 17
    y += 6
    frame = svg.rect(
        MARGIN, top, CONTENT_WIDTH, y - top, fill=fill, stroke=ink, radius=8, stroke_width=1
    )
    return [frame, *inner], y + SECTION_GAP


# --------------------------------------------------------------------------- a side


def _side_chips(
    view: Mapping[str, Any], player: Mapping[str, Any], own_seat: int | None
) -> list[tuple[str, str, str]]:
    seat = svg.as_int(player.get("seat"))
    chips: list[tuple[str, str, str]] = []
    first = svg.as_int(view.get("first_seat")) == seat
    chips.append(("先攻" if first else "後攻", *(FIRST_CHIP if first else SECOND_CHIP)))
    if own_seat == seat:
        chips.append(("あなた", "#1e88e5", "#ffffff"))
    if view.get("over"):
        winner = view.get("winner")
        if winner is None:
            chips.append(("引き分け", *PASSED_CHIP))
        elif winner == player.get("name"):
            chips.append(("勝ち", *svg.WAITING_CHIP))
        else:
            chips.append(("負け", *PASSED_CHIP))
        return chips
    name = player.get("name")
    phase = view.get("phase")
    waiting = name in _names(view.get("waiting_for"))
    if phase == "deck":
        if player.get("sealed"):
            chips.append(("封印済み", *SEALED_CHIP))
        else:
            chips.append(("未封印", *svg.WAITING_CHIP))
    elif phase == "attack":
        if waiting:
            chips.append(("攻撃待ち", *svg.WAITING_CHIP))
    elif phase == "window":
        if name in _names(view.get("passed")):
            chips.append(("PASS済み", *PASSED_CHIP))
        elif waiting:
            chips.append(("PASS/魔法待ち", *svg.WAITING_CHIP))
    return chips


def _cost_line(player: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    """総コスト against 1,000 as a bar (red when over), the deck cost beside it."""
    total = svg.as_int(player.get("total_cost"))
    deck = svg.as_int(player.get("deck_cost"))
    over = total > COST_LIMIT
    colour = OVER_COST if over else "#43a047"
    x = MARGIN + PADDING
    label = "総コスト"
    label_width = svg.text_width(label, 12) + 8
    value = f"{total} / {COST_LIMIT}"
    value_width = svg.text_width(value, 13) + 8
    track_x = x + label_width
    track_width = INNER_WIDTH - label_width - value_width
    filled = track_width * min(max(total, 0), COST_LIMIT) / COST_LIMIT
    middle = y + 9
    parts: list[Node] = [
        svg.text(x, y + 13, label, size=12, fill=MUTED),
        svg.rect(track_x, middle - 5, track_width, 10, fill="#e0e0e0", radius=3),
    ]
    if filled > 0:
        parts.append(svg.rect(track_x, middle - 5, filled, 10, fill=colour, radius=3))
    parts += [
        svg.text(
            x + INNER_WIDTH,
            y + 14,
            value,
            size=13,
            anchor="end",
            bold=True,
            fill=OVER_COST if over else INK,
        ),
    ]
    y += 20
    detail = f"デッキコスト {deck}"
    if total != deck:
        detail += f" ・ 魔法など {total - deck:+d}"
    if over:
        detail += " ・ 1000超過(敗北条件)"
    parts.append(
        svg.text(
            x, y + 12, detail, size=11, fill=OVER_COST if over else MUTED, max_width=INNER_WIDTH
        )
    )
    return parts, y + 18


def _magic_line(player: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    """The declared magic by name, then the undeclared ones as card backs."""
    x = MARGIN + PADDING
    parts: list[Node] = [svg.text(x, y + 14, "魔法", size=12, fill=MUTED, bold=True)]
    left = x + 34
    room = x + INNER_WIDTH - left
    used = [(f"{name} 宣言済み", *MAGIC_CHIP) for name in _names(player.get("magic_used"))]
    count = svg.as_int(player.get("magic_left"))
    height = 20.0
    if used:
        drawn, height = svg.chip_rows(left, y, room, used)
        parts.append(drawn)
        y += height + 4
    if count:
        for index in range(count):
            parts.append(svg.card_back(left + index * 18, y, width=15, height=21))
        parts.append(
            svg.text(
                left + count * 18 + 4,
                y + 15,
                f"未宣言 {count}枚",
                size=12,
                fill=MUTED,
            )
        )
        y += 25
    elif not used:
        parts.append(svg.text(left, y + 14, "なし", size=12, fill=DOWN_INK))
        y += 20
    return parts, y


def _own_magic(entry: Mapping[str, Any] | None, y: float) -> tuple[list[Node], float]:
    if entry is None or "magic" not in entry:
        return [], y
    x = MARGIN + PADDING
    magic = _names(entry.get("magic"))
    parts: list[Node] = [
        svg.text(
            x, y + 13, OWN_MAGIC_LABEL, size=12, fill=svg.OWN_EDGE, bold=True, max_width=INNER_WIDTH
        )
    ]
    y += 18
    if magic:
        drawn, height = svg.chip_rows(
            x, y, INNER_WIDTH, [(name, *OWN_MAGIC_CHIP) for name in magic]
        )
        parts.append(drawn)
        y += height + 4
    else:
        parts.append(svg.text(x, y + 13, "なし", size=12, fill=DOWN_INK))
        y += 18
    return parts, y


def _pool_line(view: Mapping[str, Any], name: str) -> str:
    card = (view.get("pool") or {}).get(name)
    if not isinstance(card, Mapping):
        return name
    if card.get("kind") == "magic":
        return f"{name}(魔法) コスト{svg.as_int(card.get('cost'))}"
    return (
        f"{name} コスト{svg.as_int(card.get('cost'))} 攻撃{svg.as_int(card.get('attack'))} "
        f"耐久{svg.as_int(card.get('durability'))}"
    )


def _sealed_deck(
    view: Mapping[str, Any], entry: Mapping[str, Any] | None, y: float
) -> tuple[list[Node], float]:
    """The viewer's own sealed deck before the reveal (from `own` only)."""
    if entry is None or view.get("phase") != "deck":
        return [], y
    deck = entry.get("sealed_deck")
    if not isinstance(deck, Mapping):
        return [], y
    x = MARGIN + PADDING
    parts: list[Node] = [
        svg.text(
            x, y + 13, SEALED_LABEL, size=12, fill=svg.OWN_EDGE, bold=True, max_width=INNER_WIDTH
        )
    ]
    y += 18
    for number, name in enumerate(_names(deck.get("cards")), start=1):
        parts.append(
            svg.text(
                x, y + 13, f"{number}. {_pool_line(view, name)}", size=12, max_width=INNER_WIDTH
            )
        )
        y += 17
    magic = _names(deck.get("magic"))
    line = "魔法: " + ("、".join(magic) if magic else "なし")
    parts.append(svg.text(x, y + 13, line, size=12, max_width=INNER_WIDTH))
    return parts, y + 18


def _durability_colour(left: int, maximum: int) -> str:
    if maximum <= 0 or left * 2 > maximum:
        return "#43a047"
    if left * 4 > maximum:
        return "#f9a825"
    return "#e53935"


def _card(card: Mapping[str, Any], number: int, seat: int, y: float) -> tuple[Node, float]:
    """One normal card, the side's width: number, name, state, cost; attack and durability;
    shield and ability (on a line of its own below the shield when both do not fit); returns
    it and its height."""
    x = CARD_X
    width = CARD_WIDTH
    inner_x = x + PADDING
    right = x + width - PADDING
    shield = svg.as_int(card.get("shield"))
    shield_label = f"防御 {shield}"
    shield_width = svg.text_width(shield_label, 11) + 12 if shield else 0.0
    ability = card.get("ability")
    used = bool(card.get("ability_used"))
    mark = "使用済み" if used else "未使用"
    mark_width = svg.text_width(mark, 11)
    described = f"能力 {ability}" if ability else "能力なし"
    room = right - mark_width - 8 - inner_x
    own_line = bool(shield) and svg.text_width(described, 12) > room - shield_width - 6
    height = CARD_HEIGHT + (18 if own_line else 0)
    state = str(card.get("state") or "active")
    down = state != "active"
    ink = DOWN_INK if down else INK
    muted = DOWN_INK if down else MUTED
    name = str(card.get("name"))
    parts: list[Node] = [svg.el("title", name)]
    if state == "removed":
        parts.append(
            svg.rect(
                x,
                y,
                width,
                height,
                fill="#fafafa",
                stroke=DOWN_INK,
                radius=6,
                stroke_width=1.5,
                stroke_dasharray="6 4",
            )
        )
    else:
        parts.append(
            svg.rect(
                x,
                y,
                width,
                height,
                fill=DOWN_FILL if down else CARD_FILL,
                stroke=DOWN_INK if down else CARD_EDGE,
                radius=6,
                stroke_width=1,
            )
        )
    if state == "destroyed":
        # A light ✕ across the card, under its text.
        parts.append(
            svg.el(
                "path",
                d=(
                    f"M{x + 12} {y + 6}L{x + width - 12} {y + height - 6}"
                    f"M{x + width - 12} {y + 6}L{x + 12} {y + height - 6}"
                ),
                stroke=CROSS,
                stroke_width=3,
                opacity=0.55,
            )
        )
    # Line 1: number, name, state, cost.
    parts.append(
        svg.el(
            "circle", cx=inner_x + 9, cy=y + 14, r=9, fill=DOWN_INK if down else _seat_colour(seat)
        )
    )
    parts.append(
        svg.text(
            inner_x + 9, y + 18, str(number), size=12, fill="#ffffff", anchor="middle", bold=True
        )
    )
    cost = f"コスト {svg.as_int(card.get('cost'))}"
    cost_width = svg.text_width(cost, 12)
    parts.append(svg.text(right, y + 18, cost, size=12, fill=muted, anchor="end"))
    name_room = right - cost_width - 8 - (inner_x + 24)
    if down:
        label = STATE_JA.get(state, state)
        label_chip, label_width = svg.chip(
            right - cost_width - 8 - (svg.text_width(label, 12) + 12),
            y + 5,
            label,
            size=12,
            fill="#ffffff" if state == "removed" else "#ffebee",
            stroke=DOWN_INK if state == "removed" else CROSS,
            ink=MUTED if state == "removed" else "#b71c1c",
        )
        name_room -= label_width + 6
        parts.append(label_chip)
    parts.append(
        svg.text(inner_x + 24, y + 19, name, size=14, fill=ink, bold=True, max_width=name_room)
    )
    # Line 2: attack, durability bar.
    line2 = y + 40
    attack = svg.as_int(card.get("attack"))
    base = card.get("base_attack")
    parts.append(svg.text(inner_x, line2, "攻撃", size=11, fill=muted))
    parts.append(svg.text(inner_x + 26, line2, str(attack), size=14, fill=ink, bold=True))
    bonus_x = inner_x + 26 + svg.text_width(str(attack), 14) + 3
    if isinstance(base, int) and not isinstance(base, bool) and base != attack:
        parts.append(svg.text(bonus_x, line2, f"(+{attack - base})", size=11, fill=muted))
    left = svg.as_int(card.get("durability"))
    maximum = svg.as_int(card.get("max_durability"))
    bar_x = inner_x + 104
    parts.append(svg.text(bar_x, line2, "耐久", size=11, fill=muted))
    value = f"{left}/{maximum}"
    value_width = svg.text_width(value, 13)
    track_x = bar_x + 26
    track_width = right - value_width - 6 - track_x
    filled = 0.0 if maximum <= 0 else track_width * min(max(left, 0), maximum) / maximum
    parts.append(svg.rect(track_x, line2 - 9, track_width, 9, fill="#e0e0e0", radius=3))
    if filled > 0:
        colour = DOWN_INK if down else _durability_colour(left, maximum)
        parts.append(svg.rect(track_x, line2 - 9, filled, 9, fill=colour, radius=3))
    parts.append(svg.text(right, line2, value, size=13, fill=ink, anchor="end", bold=True))
    # Line 3: shield, ability, used (the ability on line 4 when it does not fit beside the
    # shield).
    line3 = y + 58
    ability_x: float = inner_x
    if shield:
        shield_chip, _width = svg.chip(
            inner_x, line3 - 14, shield_label, size=11, fill="#e0f2f1", ink="#00695c"
        )
        parts.append(shield_chip)
        if own_line:
            line3 += 18
        else:
            ability_x += shield_width + 6
    if ability:
        parts.append(
            svg.text(
                right, line3, mark, size=11, fill=DOWN_INK if used else "#2e7d32", anchor="end"
            )
        )
    parts.append(
        svg.text(
            ability_x,
            line3,
            described,
            size=12,
            fill=DOWN_INK if not ability else muted if used or down else INK,
            max_width=right - (mark_width + 8 if ability else 0) - ability_x,
        )
    )
    return svg.group(parts), height


def _side(
    view: Mapping[str, Any],
    player: Mapping[str, Any],
    own: Mapping[str, Any] | None,
    y: float,
) -> tuple[list[Node], float]:
    seat = svg.as_int(player.get("seat"))
    own_seat = _own_seat(own)
    mine = own_seat == seat
    top = y
    panel: list[Node] = []
    x = MARGIN + PADDING
    y += 6
    panel.append(
        svg.text(x, y + 17, str(player.get("name")), size=16, bold=True, max_width=INNER_WIDTH)
    )
    y += 24
    drawn, height = svg.chip_rows(x, y, INNER_WIDTH, _side_chips(view, player, own_seat))
    panel.append(drawn)
    y += height + 8
    entry = _own_entry(own) if mine else None
    if view.get("phase") != "deck":
        parts, y = _cost_line(player, y)
        panel += parts
        parts, y = _magic_line(player, y)
        panel += parts
        parts, y = _own_magic(entry, y)
        panel += parts
    else:
        parts, y = _sealed_deck(view, entry, y)
        panel += parts
    for number, card in enumerate(player.get("field") or [], start=1):
        if isinstance(card, Mapping):
            card_node, card_height = _card(card, number, seat, y + 2)
            panel.append(card_node)
            y += card_height + CARD_GAP
    y += 4
    frame = svg.rect(
        MARGIN,
        top,
        CONTENT_WIDTH,
        y - top,
        fill="#f3f8ff" if mine else "#fafafa",
        stroke=svg.OWN_EDGE if mine else svg.PANEL_EDGE,
        radius=8,
        stroke_width=1.5 if mine else 1,
    )
    stripe = svg.rect(MARGIN, top + 8, 4, y - top - 16, fill=_seat_colour(seat), radius=2)
    return [frame, stripe, *panel], y + SECTION_GAP


# --------------------------------------------------------------------------- the last result

# The table's columns: attacker, target, damage, durability left, destroyed.
COLUMNS = (("攻撃", 96), ("対象", 96), ("ダメージ", 82), ("残り", 34), ("", 36))


def _log_heading(view: Mapping[str, Any]) -> str:
    """Which turn the rows are of: the log is the last attack's (this turn's in the magic
    window, the previous one's while the next attack is awaited)."""
    turn = svg.as_int(view.get("turn"))
    phase = view.get("phase")
    if phase == "attack":
        turn -= 1
    elif phase != "window":
        return "直前の攻撃の結果"
    if turn <= 0:
        return "直前の攻撃の結果"
    first = svg.as_int(view.get("first_seat"))
    seat = first if turn % 2 == 1 else 1 - first
    players = _players(view)
    who = players[seat].get("name") if seat < len(players) else None
    return f"第{turn}手番の結果" + (f"({who}の攻撃)" if who is not None else "")


def _log(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    rows = [row for row in view.get("log") or [] if isinstance(row, Mapping)]
    if not rows:
        return [], y
    parts: list[Node] = [svg.section_heading(y, _log_heading(view), max_width=CONTENT_WIDTH)]
    y += 20
    lefts = []
    left = MARGIN
    for _label, width in COLUMNS:
        lefts.append(left)
        left += width
    parts.append(svg.rect(MARGIN, y, CONTENT_WIDTH, 20, fill="#eceff1", radius=3))
    for (label, width), column_x in zip(COLUMNS, lefts, strict=True):
        if label:
            parts.append(
                svg.text(
                    column_x + 4, y + 14, label, size=11, fill=MUTED, bold=True, max_width=width
                )
            )
    y += 20
    for index, row in enumerate(rows):
        if index % 2:
            parts.append(svg.rect(MARGIN, y, CONTENT_WIDTH, 22, fill="#fafafa"))
        destroyed = bool(row.get("destroyed"))
        blocked = svg.as_int(row.get("blocked"))
        damage = str(svg.as_int(row.get("damage"))) + (f"(防{blocked})" if blocked else "")
        cells = (
            f"{svg.as_int(row.get('attacker_number'))} {row.get('attacker')}",
            f"→{svg.as_int(row.get('target_number'))} {row.get('target')}",
            damage,
            str(svg.as_int(row.get("left"))),
            "破壊" if destroyed else "―",
        )
        for column, (cell, column_x, (_label, width)) in enumerate(
            zip(cells, lefts, COLUMNS, strict=True)
        ):
            parts.append(
                svg.text(
                    column_x + 4,
                    y + 15,
                    cell,
                    size=12,
                    fill=OVER_COST if column == 4 and destroyed else INK,
                    bold=column == 4 and destroyed,
                    max_width=width - 6,
                )
            )
        y += 22
    parts.append(
        svg.el(
            "line",
            x1=MARGIN,
            y1=y,
            x2=MARGIN + CONTENT_WIDTH,
            y2=y,
            stroke=svg.PANEL_EDGE,
            stroke_width=1,
        )
    )
    return parts, y + SECTION_GAP


# --------------------------------------------------------------------------- the picture


def board_svg(view: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> str:
    """The battle as an SVG document 360 units wide (see the module docstring)."""
    y = 6.0
    parts: list[Node] = []
    for section in (_header, _result):
        drawn, y = section(view, y)
        parts += drawn
    players = _players(view)
    order = [seat for seat in _order(view, own) if seat < len(players)]
    for index, seat in enumerate(order):
        drawn, y = _side(view, players[seat], own, y)
        parts += drawn
        if index == 0:
            drawn, y = _log(view, y)
            parts += drawn
    title = f"{TITLE} {_turn_label(view)}"
    return svg.document(svg.WIDTH, y, title, parts)
