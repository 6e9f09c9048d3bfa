"""新新エリューシス's board as an SVG picture, a pure function of the view
(app/games/eleusis/view.py).

From top to bottom: round, parent, whose turn, the sealed rule's hash; the result once the game
is over; counts (deck, cards played, hints); the parent's hints; the line — the main line in
rows, and under each card, in a column, the failed strings played after it (the source's
layout); the play waiting for judgment and the last play; the players (cards in hand, score,
parent, prophet, disqualified); the rules revealed at the end of past rounds.

The public picture (``own`` None) shows no hand, even when the view passed in is a seat's or the
GM's: hands are read from ``own`` alone. Given ``own`` (the viewer's own view), the picture adds
that view's hand below the board, and what else that view carries for its seat only (the
parent's rule, the viewer's secret judgment).

A prophet's marker stands on the card named by the player's ``prophet_at`` (an index into
``line``: the card last on the main line when they declared); a prophet without it (a view
from before that field) is marked in the players list only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games import svg
from app.games.svg import CONTENT_WIDTH, INK, MARGIN, MUTED, SECTION_GAP, WIDTH, Node

CARD_WIDTH = 40
CARD_HEIGHT = 56
CARD_GAP = 3
CARDS_PER_ROW = (CONTENT_WIDTH + CARD_GAP) // (CARD_WIDTH + CARD_GAP)
# A failed card shows its top corner (rank and suit) above the next one in its column.
FAILED_STEP = 20
FAILED_RUN_GAP = 6

FAILED_FILL = "#eceff1"
FAILED_EDGE = "#90a4ae"
PROPHET = "#6a1b9a"
PHASE_JA = {
    "rule": "親のルール待ち",
    "play": "プレイ中",
    "judge": "判定待ち",
    "over": "ゲーム終了",
}
# What a player the bot waits for is to do, by phase.
WAITING_JA = {"rule": "ルール待ち", "play": "手番", "judge": "判定待ち"}
MODE_JA = {"formal": "形式ルール", "hand": "文章のルール"}


def _cards(card_list: Any) -> list[str]:
    return [str(card) for card in card_list or []]


def _header(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    parts: list[Node] = [svg.text(MARGIN, y + 20, "新新エリューシス", size=18, bold=True)]
    rounds = view.get("rounds")
    when = f"第{view.get('round')}ラウンド" + (f" / 全{rounds}" if rounds is not None else "")
    parts.append(svg.text(WIDTH - MARGIN, y + 20, when, size=14, anchor="end", bold=True))
    y += 30
    parent = view.get("parent")
    parts.append(
        svg.text(
            MARGIN,
            y + 14,
            f"親: {parent if parent is not None else '未定'}",
            size=13,
            max_width=CONTENT_WIDTH,
        )
    )
    y += 20
    phase = str(view.get("phase"))
    status = PHASE_JA.get(phase, phase)
    if phase == "play" and view.get("turn") is not None:
        status = f"手番: {view.get('turn')}"
    elif phase in ("judge", "rule"):
        waiting = [str(name) for name in view.get("waiting_for") or []]
        if waiting:
            status = f"{status}: {'、'.join(waiting)}"
    parts.append(svg.text(MARGIN, y + 14, status, size=13, bold=True, max_width=CONTENT_WIDTH))
    y += 20
    mode = view.get("mode")
    rule_hash = view.get("rule_hash")
    if mode is not None or rule_hash:
        sealed = MODE_JA.get(str(mode), str(mode)) if mode is not None else "ルール"
        if rule_hash:
            sealed += f"(封印 SHA-256 {str(rule_hash)[:16]}…)"
        parts.append(svg.note_line(y, sealed))
        y += 18
    return parts, y + SECTION_GAP - 4


def _result(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    ranking = svg.ranking_entries(view)
    if not ranking:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "結果")]
    y += 20
    for entry in ranking:
        parts.extend(svg.ranking_row(entry, y))
        y += 22
    return parts, y + SECTION_GAP


def _counts(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    badges: list[tuple[str, int]] = [
        ("山札", int(view.get("deck") or 0)),
        ("出たカード", int(view.get("played") or 0)),
    ]
    if view.get("phase") in ("play", "judge"):
        badges.append(("残りのヒント", int(view.get("hints_left") or 0)))
    columns = len(badges)
    width = (CONTENT_WIDTH - (columns - 1) * 6) / columns
    parts: list[Node] = [
        svg.count_badge(MARGIN + index * (width + 6), y, label, count, width=width)
        for index, (label, count) in enumerate(badges)
    ]
    return parts, y + 22 + SECTION_GAP


def _wrapped(
    parts: list[Node],
    x: float,
    y: float,
    content: str,
    *,
    size: float = 13,
    fill: str = INK,
    width: float = CONTENT_WIDTH,
) -> float:
    """Draws `content` wrapped to `width` from `y` (its top); returns the y below it."""
    for line in svg.wrap_text(content, width, size):
        parts.append(svg.text(x, y + size + 1, line, size=size, fill=fill))
        y += size + 6
    return y


def _hints(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    hints = view.get("hints") or []
    if not hints:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "親のヒント")]
    y += 20
    for hint in hints:
        label = f"{hint.get('played')}枚目の後: {hint.get('text')}"
        y = _wrapped(parts, MARGIN, y, label)
    return parts, y + SECTION_GAP - 6


def _prophet_positions(view: Mapping[str, Any], length: int) -> dict[int, int]:
    """How many prophet markers stand on each main-line position (see the module doc)."""
    positions: dict[int, int] = {}
    for player in view.get("players") or []:
        at = player.get("prophet_at")
        if (
            player.get("prophet")
            and isinstance(at, int)
            and not isinstance(at, bool)
            and 0 <= at < length
        ):
            positions[at] = positions.get(at, 0) + 1
    return positions


def _prophet_marker(x: float, y: float, count: int) -> Node:
    """A purple frame round the card and a 預 badge over its large suit (its corner index
    stays readable); with several prophets on one card, their number."""
    label = "預" if count == 1 else f"預{count}"
    badge_width = svg.text_width(label, 11) + 8
    middle = x + CARD_WIDTH / 2
    return svg.group(
        [
            svg.el("title", f"預言者の位置({count}人)"),
            svg.rect(
                x - 1.5,
                y - 1.5,
                CARD_WIDTH + 3,
                CARD_HEIGHT + 3,
                stroke=PROPHET,
                radius=5,
                stroke_width=3,
            ),
            svg.rect(middle - badge_width / 2, y + 26, badge_width, 18, fill=PROPHET, radius=9),
            svg.text(middle, y + 39, label, size=11, fill="#ffffff", anchor="middle", bold=True),
        ]
    )


def _column_height(failed: Sequence[Sequence[str]]) -> float:
    cards = sum(len(run) for run in failed)
    if cards == 0:
        return CARD_HEIGHT
    runs = sum(1 for run in failed if run)
    return (
        CARD_HEIGHT
        + FAILED_RUN_GAP
        + (cards - 1) * FAILED_STEP
        + (runs - 1) * FAILED_RUN_GAP
        + CARD_HEIGHT
    )


def _column(x: float, y: float, card: str, failed: Sequence[Sequence[str]]) -> list[Node]:
    """A main-line card and, under it, its failed strings (one run after another)."""
    parts: list[Node] = [svg.playing_card(x, y, card, width=CARD_WIDTH, height=CARD_HEIGHT)]
    top = y + CARD_HEIGHT + FAILED_RUN_GAP
    for run in failed:
        for failed_card in run:
            parts.append(
                svg.playing_card(
                    x,
                    top,
                    failed_card,
                    width=CARD_WIDTH,
                    height=CARD_HEIGHT,
                    fill=FAILED_FILL,
                    edge=FAILED_EDGE,
                )
            )
            top += FAILED_STEP
        if run:
            top += FAILED_RUN_GAP
    return parts


def _line(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    line = view.get("line") or []
    parts: list[Node] = [svg.section_heading(y, "場の列(失敗したカードはその下)")]
    y += 20
    if not line:
        parts.append(svg.text(MARGIN, y + 13, "まだカードはありません", size=12, fill="#9e9e9e"))
        return parts, y + 20 + SECTION_GAP
    prophets = _prophet_positions(view, len(line))
    for start in range(0, len(line), CARDS_PER_ROW):
        row = line[start : start + CARDS_PER_ROW]
        height = 0.0
        for offset, entry in enumerate(row):
            x = MARGIN + offset * (CARD_WIDTH + CARD_GAP)
            failed = [_cards(run) for run in entry.get("failed") or []]
            parts.extend(_column(x, y, str(entry.get("card")), failed))
            height = max(height, _column_height(failed))
        for offset in range(len(row)):
            count = prophets.get(start + offset, 0)
            if count:
                parts.append(_prophet_marker(MARGIN + offset * (CARD_WIDTH + CARD_GAP), y, count))
        y += height + 10
    return parts, y + SECTION_GAP - 10


def _card_rows(parts: list[Node], y: float, cards: Sequence[str]) -> float:
    """Face-up cards in rows; returns the y below them."""
    for index, card in enumerate(cards):
        row, column = divmod(index, CARDS_PER_ROW)
        parts.append(
            svg.playing_card(
                MARGIN + column * (CARD_WIDTH + CARD_GAP),
                y + row * (CARD_HEIGHT + 6),
                card,
                width=CARD_WIDTH,
                height=CARD_HEIGHT,
            )
        )
    rows = (len(cards) + CARDS_PER_ROW - 1) // CARDS_PER_ROW
    return y + rows * (CARD_HEIGHT + 6)


def _pending(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    pending = view.get("pending")
    if not isinstance(pending, Mapping):
        return [], y
    parts: list[Node] = [svg.section_heading(y, "判定待ちのプレイ")]
    y += 20
    kind = "秘密の判定" if pending.get("secret") else "公開の判定"
    parts.append(
        svg.text(
            MARGIN,
            y + 14,
            f"{pending.get('player')} の宣言 {pending.get('declaration')}",
            size=13,
            max_width=CONTENT_WIDTH - svg.text_width(kind, 11) - 20,
        )
    )
    parts.append(svg.text(WIDTH - MARGIN, y + 14, kind, size=11, fill=MUTED, anchor="end"))
    y += 22
    y = _card_rows(parts, y, _cards(pending.get("cards")))
    judges = [
        f"{judge.get('name')} {'済' if judge.get('judged') else '未'}"
        for judge in pending.get("judges") or []
    ]
    if judges:
        y = _wrapped(parts, MARGIN, y, "判定: " + "、".join(judges), size=12, fill=MUTED)
    return parts, y + SECTION_GAP - 6


def _last_play(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    last = view.get("last_play")
    if not isinstance(last, Mapping):
        return [], y
    parts: list[Node] = [svg.section_heading(y, "直前のプレイ")]
    y += 20
    summary = (
        f"{last.get('player')}: {' '.join(_cards(last.get('cards')))} "
        f"宣言 {last.get('declaration')} → 判定 {last.get('judgment')}"
    )
    penalty = last.get("penalty")
    if penalty:
        summary += f"、ペナルティ {penalty}枚"
    disqualified = [str(name) for name in last.get("disqualified") or []]
    if disqualified:
        summary += f"、失格: {'、'.join(disqualified)}"
    y = _wrapped(parts, MARGIN, y, summary)
    return parts, y + SECTION_GAP - 6


def _player_chips(
    player: Mapping[str, Any], *, waiting_for: str | None, own: bool
) -> list[tuple[str, str, str]]:
    chips: list[tuple[str, str, str]] = []
    if own:
        chips.append(("あなた", svg.OWN_EDGE, "#ffffff"))
    if player.get("parent"):
        chips.append(("親", "#ffe0b2", "#e65100"))
    if player.get("prophet"):
        chips.append(("預言者", PROPHET, "#ffffff"))
    if player.get("prophet_failed"):
        chips.append(("預言失敗", "#ffcdd2", "#b71c1c"))
    if player.get("disqualified"):
        chips.append(("失格", "#ffcdd2", "#b71c1c"))
    if waiting_for is not None:
        chips.append((waiting_for, "#fff8e1", "#8d6e00"))
    return chips


def _players(view: Mapping[str, Any], y: float, own_seat: Any) -> tuple[list[Node], float]:
    parts: list[Node] = [svg.section_heading(y, "プレイヤー")]
    y += 20
    waiting = set(view.get("waiting_seats") or [])
    for index, player in enumerate(view.get("players") or []):
        seat = player.get("seat", index)
        own = own_seat is not None and seat == own_seat
        top = y
        row: list[Node] = []
        waiting_for = WAITING_JA.get(str(view.get("phase"))) if seat in waiting else None
        chips = _player_chips(player, waiting_for=waiting_for, own=own)
        widths = [svg.text_width(label, 11) + 12 for label, _fill, _ink in chips]
        chips_width = sum(widths) + 4 * max(len(chips) - 1, 0)
        name = str(player.get("name"))
        x = MARGIN + 8
        inner_width = CONTENT_WIDTH - 16
        y += 6
        row.append(svg.text(x, y + 15, name, size=14, bold=True, max_width=inner_width))
        if svg.text_width(name, 14) + 8 + chips_width > inner_width:
            y += 22
            left: float = x
        else:
            left = x + inner_width - chips_width
        for (label, fill, ink), width in zip(chips, widths, strict=True):
            element, _width = svg.chip(left, y + 1, label, size=11, fill=fill, ink=ink)
            row.append(element)
            left += width + 4
        y += 24
        stats = [f"得点 {player.get('score')}"]
        if player.get("parent") and not player.get("hand_size"):
            stats.insert(0, "親(手札なし)")
            stats_x = x
        else:
            stats.insert(0, f"手札 {player.get('hand_size')}枚")
            row.append(svg.card_back(x, y, width=14, height=20))
            stats_x = x + 20
        if player.get("prophet"):
            stats.append(f"的中 {player.get('prophet_correct')}")
        row.append(
            svg.text(
                stats_x, y + 15, " ・ ".join(stats), size=12, max_width=x + inner_width - stats_x
            )
        )
        y += 26
        parts.append(svg.player_frame(top, y, own, radius=6))
        parts.extend(row)
        y += 6
    return parts, y + SECTION_GAP - 6


def _revealed_rules(view: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    records = [record for record in view.get("history") or [] if record.get("rule") is not None]
    if not records:
        return [], y
    parts: list[Node] = [svg.section_heading(y, "公開されたルール")]
    y += 20
    for record in records:
        head = f"第{record.get('round')}ラウンド 親 {record.get('parent')}"
        if record.get("ended"):
            head += f"({record.get('ended')})"
        parts.append(svg.note_line(y, head))
        y += 18
        kind = MODE_JA.get(str(record.get("mode")), "ルール")
        y = _wrapped(parts, MARGIN, y, f"{kind}: {record.get('rule')}")
        y += 4
    return parts, y + SECTION_GAP - 4


def _own(own: Mapping[str, Any], y: float) -> tuple[list[Node], float]:
    """What the viewer's own view adds for their seat: their hand, and for the parent the
    sealed rule, for a judge their secret judgment."""
    parts: list[Node] = []
    top = y
    y += 10
    if "hand" in own:
        hand = _cards(own.get("hand"))
        parts.append(svg.section_heading(y, f"{svg.HAND_LABEL}({len(hand)}枚)"))
        y += 20
        if hand:
            y = _card_rows(parts, y, hand)
        else:
            parts.append(svg.text(MARGIN, y + 13, "なし", size=12, fill="#9e9e9e"))
            y += 20
    rule = own.get("rule")
    if isinstance(rule, Mapping) and rule.get("text") is not None:
        parts.append(svg.section_heading(y, "親のルール(非公開)"))
        y += 20
        kind = MODE_JA.get(str(rule.get("mode")), "ルール")
        y = _wrapped(parts, MARGIN, y, f"{kind}: {rule.get('text')}")
    judgment = own.get("my_judgment")
    if "my_judgment" in own:
        shown = "まだ" if judgment is None else str(judgment)
        parts.append(svg.text(MARGIN, y + 14, f"あなたの秘密の判定: {shown}", size=13))
        y += 20
    if not parts:
        return [], top
    y += 4
    frame = svg.rect(MARGIN / 2, top, WIDTH - MARGIN, y - top, fill="#e3f2fd", radius=8)
    return [frame, *parts], y + SECTION_GAP


def board_svg(view: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> str:
    """The board of `view` as SVG text; with `own` (the viewer's view) also their hand."""
    own_seat = own.get("seat") if own is not None else None
    parts: list[Node] = []
    y = 4.0
    for section in (_header, _result, _counts, _hints, _line, _pending, _last_play):
        drawn, y = section(view, y)
        parts.extend(drawn)
    drawn, y = _players(view, y, own_seat)
    parts.extend(drawn)
    drawn, y = _revealed_rules(view, y)
    parts.extend(drawn)
    if own is not None:
        drawn, y = _own(own, y)
        parts.extend(drawn)
    title = f"新新エリューシス 第{view.get('round')}ラウンドの場"
    return svg.document(WIDTH, round(y), title, parts)
