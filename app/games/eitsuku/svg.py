"""えいつく's board as an SVG picture, a pure function of the view (app/games/eitsuku/view.py).

From top to bottom: the week and who the bot waits for; the result once the game is over; the
shared field (budget piles, closed decks, discard); then one panel per player: status, 役割場
(five slots with the card and its number), ストック (with the flipped budget cards) and
イベント場. Everything in えいつく is public, so `own` (the viewer's own view) only marks the
viewer's seat; it never adds to the picture.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from app.games.eitsuku.cards import PILE_PER_PLAYER
from app.games.svg import (
    INK,
    MUTED,
    WIDTH,
    Node,
    bar,
    chip,
    chip_rows,
    count_badge,
    document,
    group,
    rect,
    text,
    text_width,
)

MARGIN = 8
PADDING = 8
PANEL_WIDTH = WIDTH - 2 * MARGIN
INNER_WIDTH = PANEL_WIDTH - 2 * PADDING
SLOT_GAP = 4
SLOT_HEIGHT = 62
SECTION_GAP = 10

PHASE_JA = {
    "action": "アクションフェイズ",
    "scout": "スカウトフェイズ",
    "set": "セットフェイズ",
    "end": "エンドフェイズ",
}
BUDGET_CHIP = ("#e8f5e9", "#1b5e20")
ROLE_CHIP = ("#e3f2fd", "#0d47a1")
EVENT_CHIP = ("#fff3e0", "#bf360c")
FLIPPED_CHIP = ("#e0e0e0", "#424242")
WAITING_CHIP = ("#fff8e1", "#8d6e00")
OWN_EDGE = "#1e88e5"
PANEL_EDGE = "#bdbdbd"
_ROLE_CARD = re.compile(r"^(\D+)(\d+)$")


def _card_colours(card: str) -> tuple[str, str]:
    if card.startswith("予算"):
        return BUDGET_CHIP
    if _ROLE_CARD.match(card):
        return ROLE_CHIP
    return EVENT_CHIP


def _counted(cards: Mapping[str, Any]) -> list[tuple[str, int]]:
    return [(str(card), int(count)) for card, count in cards.items() if int(count) > 0]


def _heading(y: float, label: str, x: float = MARGIN) -> Node:
    return text(x, y + 12, label, size=12, fill=MUTED, bold=True)


def _header(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    week = view.get("week")
    weeks = view.get("weeks")
    title = text(MARGIN, y + 20, "えいつく", size=18, bold=True)
    when = f"第{week}週" + (f" / 全{weeks}週" if weeks is not None else "")
    parts: list[Node] = [
        title,
        text(WIDTH - MARGIN, y + 20, when, size=14, anchor="end", bold=True),
    ]
    y += 30
    if view.get("over"):
        status = "ゲーム終了"
    else:
        waiting = [str(name) for name in view.get("waiting_for") or []]
        status = "手番: " + ("、".join(waiting) if waiting else "なし")
    parts.append(text(MARGIN, y + 14, status, size=13, max_width=PANEL_WIDTH))
    return parts, y + 22 + SECTION_GAP


def _result(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    result = view.get("result")
    ranking = result.get("ranking") if isinstance(result, Mapping) else None
    if not ranking:
        return [], y
    parts: list[Node] = [_heading(y, "結果")]
    y += 18
    for entry in ranking:
        score = entry.get("score")
        breakdown = entry.get("breakdown") or {}
        parts.append(text(MARGIN, y + 14, f"{entry.get('rank')}位", size=14, bold=True))
        parts.append(
            text(MARGIN + 40, y + 14, str(entry.get("name")), size=14, max_width=PANEL_WIDTH - 110)
        )
        shown = "未完成" if score is None else f"{score}点"
        parts.append(text(WIDTH - MARGIN, y + 14, shown, size=14, anchor="end", bold=True))
        y += 20
        if score is not None:
            detail = (
                f"基本 {breakdown.get('base')} ・ 公開週 {breakdown.get('release')}"
                f" ・ イベント {breakdown.get('events')}"
            )
            parts.append(text(MARGIN + 40, y + 12, detail, size=11, fill=MUTED))
            y += 16
        y += 4
    return parts, y + SECTION_GAP


def _shared_field(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    parts: list[Node] = [_heading(y, "予算の山")]
    y += 18
    piles = _counted_all(view.get("piles") or {})
    full = PILE_PER_PLAYER * len(view.get("players") or [])
    for pile, count in piles:
        parts.append(bar(MARGIN, y, PANEL_WIDTH, pile, count, max(full, count), label_width=72))
        y += 22
    y += 4
    parts.append(_heading(y, "山札・捨て札"))
    y += 18
    decks = [(f"山札 {deck}", count) for deck, count in _counted_all(view.get("decks") or {})]
    discard = sum(count for _card, count in _counted(view.get("discard") or {}))
    badges = [*decks, ("捨て札", discard)]
    columns = 2
    badge_width = (PANEL_WIDTH - (columns - 1) * 6) / columns
    for index, (label, count) in enumerate(badges):
        column, row = index % columns, index // columns
        parts.append(
            count_badge(
                MARGIN + column * (badge_width + 6),
                y + row * 26,
                label,
                count,
                width=badge_width,
            )
        )
    rows = (len(badges) + columns - 1) // columns
    return parts, y + rows * 26 + SECTION_GAP


def _counted_all(cards: Mapping[str, Any]) -> list[tuple[str, int]]:
    return [(str(card), int(count)) for card, count in cards.items()]


def _status_chips(
    player: Mapping[str, Any], waiting: bool, own: bool
) -> list[tuple[str, str, str]]:
    status = player.get("status")
    chips: list[tuple[str, str, str]] = []
    if own:
        chips.append(("あなた", OWN_EDGE, "#ffffff"))
    if status == "released":
        chips.append((f"第{player.get('released_week')}週に公開", "#c8e6c9", "#1b5e20"))
    elif status == "unfinished":
        chips.append(("未完成", "#ffcdd2", "#b71c1c"))
    elif player.get("done"):
        chips.append(("今週は終了", "#eeeeee", INK))
    else:
        phase = str(player.get("phase"))
        chips.append((PHASE_JA.get(phase, phase), "#eeeeee", INK))
    if waiting:
        chips.append(("手番待ち", *WAITING_CHIP))
    return chips


def _slot(x: float, y: float, width: float, slot: str, card: Any) -> Node:
    label = text(x + width / 2, y + 14, slot, size=11, fill=MUTED, anchor="middle")
    if card is None:
        return group(
            [
                rect(
                    x,
                    y,
                    width,
                    SLOT_HEIGHT,
                    fill="#fafafa",
                    stroke="#bdbdbd",
                    radius=5,
                    stroke_dasharray="4 3",
                ),
                label,
                text(x + width / 2, y + 42, "空き", size=12, fill="#9e9e9e", anchor="middle"),
            ]
        )
    name = str(card)
    match = _ROLE_CARD.match(name)
    number = match.group(2) if match else ""
    fill, ink = ROLE_CHIP
    return group(
        [
            rect(x, y, width, SLOT_HEIGHT, fill=fill, stroke=ink, radius=5),
            label,
            text(
                x + width / 2, y + 31, name, size=12, fill=ink, anchor="middle", max_width=width - 4
            ),
            text(x + width / 2, y + 55, number, size=20, fill=ink, anchor="middle", bold=True)
            if number
            else None,
        ]
    )


def _player_panel(
    player: Mapping[str, Any], y: float, *, waiting: bool, own: bool
) -> tuple[list[Node], float]:
    x = MARGIN + PADDING
    top = y
    inner: list[Node] = []
    y += PADDING
    # The status chips stand right of the name when both fit, else on a line of their own.
    chips = _status_chips(player, waiting, own)
    widths = [text_width(label, 11) + 12 for label, _fill, _ink in chips]
    chips_width = sum(widths) + 4 * (len(chips) - 1)
    name = str(player.get("name"))
    inner.append(text(x, y + 15, name, size=15, bold=True, max_width=INNER_WIDTH))
    if text_width(name, 15) + 8 + chips_width > INNER_WIDTH:
        y += 24
        left: float = x
    else:
        left = x + INNER_WIDTH - chips_width
    for (label, fill, ink), width in zip(chips, widths, strict=True):
        element, _width = chip(left, y, label, size=11, fill=fill, ink=ink)
        inner.append(element)
        left += width + 4
    y += 26

    inner.append(_heading(y, "役割場", x))
    y += 18
    slots = player.get("slots") or {}
    count = max(len(slots), 1)
    slot_width = (INNER_WIDTH - (count - 1) * SLOT_GAP) / count
    for index, (slot, card) in enumerate(slots.items()):
        inner.append(_slot(x + index * (slot_width + SLOT_GAP), y, slot_width, str(slot), card))
    y += SLOT_HEIGHT + 8

    inner.append(_heading(y, "ストック", x))
    y += 18
    stock = [
        (f"{card} ×{n}" if n > 1 else card, *_card_colours(card))
        for card, n in _counted(player.get("stock") or {})
    ]
    flipped = [
        (f"裏返し {card} ×{n}" if n > 1 else f"裏返し {card}", *FLIPPED_CHIP)
        for card, n in _counted(player.get("flipped") or {})
    ]
    y = _chips_or_none(inner, x, y, [*stock, *flipped])

    inner.append(_heading(y, "イベント場", x))
    y += 18
    events = [(str(name), *EVENT_CHIP) for name in player.get("events") or []]
    y = _chips_or_none(inner, x, y, events)
    y += PADDING - 6

    edge, edge_width = (OWN_EDGE, 2) if own else (PANEL_EDGE, 1)
    frame = rect(
        MARGIN,
        top,
        PANEL_WIDTH,
        y - top,
        fill="#ffffff",
        stroke=edge,
        radius=8,
        stroke_width=edge_width,
    )
    return [frame, *inner], y


def _chips_or_none(
    parts: list[Node], x: float, y: float, chips: Sequence[tuple[str, str, str]]
) -> float:
    if not chips:
        parts.append(text(x, y + 13, "なし", size=12, fill="#9e9e9e"))
        return y + 22
    element, height = chip_rows(x, y, INNER_WIDTH, chips)
    parts.append(element)
    return y + height + 8


def board_svg(view: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> str:
    """The board of `view` as SVG text; `own` (the viewer's view) only highlights their seat."""
    own_seat = own.get("seat") if own is not None else None
    waiting = set() if view.get("over") else set(view.get("waiting_seats") or [])
    parts: list[Node] = []
    y = 4.0
    for section in (_header, _result, _shared_field):
        drawn, y = section(view, y)
        parts.extend(drawn)
    for index, player in enumerate(view.get("players") or []):
        seat = player.get("seat", index)
        drawn, y = _player_panel(
            player, y, waiting=seat in waiting, own=own_seat is not None and seat == own_seat
        )
        parts.extend(drawn)
        y += SECTION_GAP
    title = f"えいつく 第{view.get('week')}週の盤面"
    return document(WIDTH, round(y), title, parts)
