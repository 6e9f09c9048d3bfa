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

from app.games import svg
from app.games.eitsuku.cards import PILE_PER_PLAYER
from app.games.svg import CONTENT_WIDTH, INK, INNER_WIDTH, MARGIN, MUTED, PADDING, WIDTH, Node

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
_ROLE_CARD = re.compile(r"^(\D+)(\d+)$")


def _card_colours(card: str) -> tuple[str, str]:
    if card.startswith("予算"):
        return BUDGET_CHIP
    if _ROLE_CARD.match(card):
        return ROLE_CHIP
    return EVENT_CHIP


def _counted(cards: Mapping[str, Any]) -> list[tuple[str, int]]:
    return [(str(card), int(count)) for card, count in cards.items() if int(count) > 0]


def _header(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    week = view.get("week")
    weeks = view.get("weeks")
    title = svg.text(MARGIN, y + 20, "えいつく", size=18, bold=True)
    when = f"第{week}週" + (f" / 全{weeks}週" if weeks is not None else "")
    parts: list[Node] = [
        title,
        svg.text(WIDTH - MARGIN, y + 20, when, size=14, anchor="end", bold=True),
    ]
    y += 30
    if view.get("over"):
        status = "ゲーム終了"
    else:
        waiting = [str(name) for name in view.get("waiting_for") or []]
        status = "手番: " + ("、".join(waiting) if waiting else "なし")
    parts.append(svg.text(MARGIN, y + 14, status, size=13, max_width=CONTENT_WIDTH))
    return parts, y + 22 + SECTION_GAP


def _result(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    ranking = svg.ranking_entries(view)
    if not ranking:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "結果", size=12)]
    y += 18
    for entry in ranking:
        score = entry.get("score")
        breakdown = entry.get("breakdown") or {}
        parts.extend(svg.ranking_row(entry, y, "未完成" if score is None else None))
        y += 20
        if score is not None:
            detail = (
                f"基本 {breakdown.get('base')} ・ 公開週 {breakdown.get('release')}"
                f" ・ イベント {breakdown.get('events')}"
            )
            parts.append(svg.text(MARGIN + 40, y + 12, detail, size=11, fill=MUTED))
            y += 16
        y += 4
    return parts, y + SECTION_GAP


def _shared_field(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    parts: list[Node] = [svg.section_heading(y, "予算の山", size=12)]
    y += 18
    piles = _counted_all(view.get("piles") or {})
    full = PILE_PER_PLAYER * len(view.get("players") or [])
    for pile, count in piles:
        parts.append(
            svg.bar(MARGIN, y, CONTENT_WIDTH, pile, count, max(full, count), label_width=72)
        )
        y += 22
    y += 4
    parts.append(svg.section_heading(y, "山札・捨て札", size=12))
    y += 18
    decks = [(f"山札 {deck}", count) for deck, count in _counted_all(view.get("decks") or {})]
    discard = sum(count for _card, count in _counted(view.get("discard") or {}))
    badges = [*decks, ("捨て札", discard)]
    columns = 2
    badge_width = (CONTENT_WIDTH - (columns - 1) * 6) / columns
    for index, (label, count) in enumerate(badges):
        column, row = index % columns, index // columns
        parts.append(
            svg.count_badge(
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
        chips.append(("あなた", svg.OWN_EDGE, "#ffffff"))
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
        chips.append(("手番待ち", *svg.WAITING_CHIP))
    return chips


def _slot(x: float, y: float, width: float, slot: str, card: Any) -> Node:
    label = svg.text(x + width / 2, y + 14, slot, size=11, fill=MUTED, anchor="middle")
    if card is None:
        return svg.group(
            [
                svg.rect(
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
                svg.text(x + width / 2, y + 42, "空き", size=12, fill="#9e9e9e", anchor="middle"),
            ]
        )
    name = str(card)
    match = _ROLE_CARD.match(name)
    number = match.group(2) if match else ""
    fill, ink = ROLE_CHIP
    return svg.group(
        [
            svg.rect(x, y, width, SLOT_HEIGHT, fill=fill, stroke=ink, radius=5),
            label,
            svg.text(
                x + width / 2, y + 31, name, size=12, fill=ink, anchor="middle", max_width=width - 4
            ),
            svg.text(x + width / 2, y + 55, number, size=20, fill=ink, anchor="middle", bold=True)
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
    drawn_name, y = svg.name_and_chips(
        x, y, INNER_WIDTH, str(player.get("name")), chips, wrap=24, below=26
    )
    inner.extend(drawn_name)

    inner.append(svg.section_heading(y, "役割場", x, size=12))
    y += 18
    slots = player.get("slots") or {}
    count = max(len(slots), 1)
    slot_width = (INNER_WIDTH - (count - 1) * SLOT_GAP) / count
    for index, (slot, card) in enumerate(slots.items()):
        inner.append(_slot(x + index * (slot_width + SLOT_GAP), y, slot_width, str(slot), card))
    y += SLOT_HEIGHT + 8

    inner.append(svg.section_heading(y, "ストック", x, size=12))
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

    inner.append(svg.section_heading(y, "イベント場", x, size=12))
    y += 18
    events = [(str(name), *EVENT_CHIP) for name in player.get("events") or []]
    y = _chips_or_none(inner, x, y, events)
    y += PADDING - 6

    frame = svg.player_frame(top, y, own)
    return [frame, *inner], y


def _chips_or_none(
    parts: list[Node], x: float, y: float, chips: Sequence[tuple[str, str, str]]
) -> float:
    if not chips:
        parts.append(svg.text(x, y + 13, "なし", size=12, fill="#9e9e9e"))
        return y + 22
    element, height = svg.chip_rows(x, y, INNER_WIDTH, chips)
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
    return svg.document(WIDTH, round(y), title, parts)
