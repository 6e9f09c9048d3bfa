"""A small SVG builder shared by the games' board pictures (compare python-chess's chess/svg.py).

A picture is a pure function of a game's view: the same view gives the same bytes. Every text
and attribute value goes through `escape_text` / `escape_attribute`, so player names and other
user text (``<script>``, quotes, ampersands, control characters) can never become markup. The
builder refuses, whatever it is asked: elements outside a short list of shapes and text (no
<script>, <foreignObject>, <image>, <style>, <a>), event attributes (``on*``), ``href`` in any
namespace and ``style``; looks come only from presentation attributes.

Sizes are in viewBox units. Pictures are about `WIDTH` units wide and grow downwards, so they
stay readable on a 360 px phone; text is never smaller than `MIN_FONT_SIZE`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

__all__ = [
    "BLACK_SUIT",
    "CONTENT_WIDTH",
    "FONT_FAMILY",
    "HAND_LABEL",
    "INK",
    "INNER_WIDTH",
    "MARGIN",
    "MIN_FONT_SIZE",
    "MUTED",
    "OWN_EDGE",
    "PADDING",
    "PANEL_EDGE",
    "RED_SUIT",
    "SECTION_GAP",
    "WAITING_CHIP",
    "WIDTH",
    "Element",
    "Node",
    "as_int",
    "bar",
    "card_back",
    "chip",
    "chip_rows",
    "count_badge",
    "document",
    "el",
    "escape_attribute",
    "escape_text",
    "fit_text",
    "group",
    "name_and_chips",
    "note_line",
    "player_frame",
    "playing_card",
    "ranking_entries",
    "ranking_row",
    "rect",
    "section_heading",
    "status_beside",
    "text",
    "text_width",
    "wrap_text",
]

SVG_NAMESPACE = "http://www.w3.org/2000/svg"
WIDTH = 360
MIN_FONT_SIZE = 11
FONT_FAMILY = "'Noto Sans CJK JP', 'Hiragino Sans', 'Yu Gothic', sans-serif"

INK = "#212121"
MUTED = "#616161"
PAPER = "#ffffff"
RED_SUIT = "#c62828"
BLACK_SUIT = "#212121"
CARD_EDGE = "#757575"
CARD_BACK = "#3949ab"
CARD_BACK_LINE = "#c5cae9"

# What a picture may contain: shapes, groups and text. Nothing that runs, loads or embeds.
ALLOWED_TAGS = frozenset(
    {
        "svg",
        "g",
        "title",
        "desc",
        "rect",
        "circle",
        "ellipse",
        "line",
        "polyline",
        "polygon",
        "path",
        "text",
        "tspan",
    }
)
_ATTRIBUTE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]*$")
_FORBIDDEN_ATTRIBUTES = frozenset({"href", "style", "src"})
# XML 1.0 refuses these characters even as references; a name holding one would break the
# whole picture, so they are shown as U+FFFD instead.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")

Attribute = str | int | float | None


# --------------------------------------------------------------------------- escaping


def escape_text(value: str) -> str:
    """Character data: ``& < >`` escaped, characters XML cannot hold replaced by U+FFFD."""
    return escape(_NOT_XML.sub("\ufffd", value))


def escape_attribute(value: str) -> str:
    """A value for a double-quoted attribute; whitespace kept as references so it survives
    attribute-value normalisation."""
    return escape(
        _NOT_XML.sub("\ufffd", value),
        {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"},
    )


def _number(value: int | float) -> str:
    if isinstance(value, int):
        return str(value)
    shown = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if shown in ("", "-0") else shown


def _attribute_value(name: str, value: str | int | float) -> str:
    if isinstance(value, bool):
        raise TypeError(f"attribute {name}: a bool is no SVG value")
    if isinstance(value, int | float):
        return _number(value)
    return value


def _check_attribute_name(name: str) -> None:
    lowered = name.lower()
    if (
        not _ATTRIBUTE_NAME.match(name)
        or lowered.startswith("on")
        or lowered in _FORBIDDEN_ATTRIBUTES
    ):
        raise ValueError(f"attribute {name!r} is not allowed in a board picture")


# --------------------------------------------------------------------------- elements


@dataclass(frozen=True)
class Element:
    """One SVG element; children are elements or plain text (escaped when rendered)."""

    tag: str
    attributes: tuple[tuple[str, str], ...] = ()
    children: tuple[Node, ...] = ()

    def __post_init__(self) -> None:
        if self.tag not in ALLOWED_TAGS:
            raise ValueError(f"element <{self.tag}> is not allowed in a board picture")
        for name, _value in self.attributes:
            _check_attribute_name(name)

    def render(self) -> str:
        parts: list[str] = []
        self._render_into(parts)
        return "".join(parts)

    def _render_into(self, parts: list[str]) -> None:
        parts.append(f"<{self.tag}")
        for name, value in self.attributes:
            parts.append(f' {name}="{escape_attribute(value)}"')
        if not self.children:
            parts.append("/>")
            return
        parts.append(">")
        for child in self.children:
            if isinstance(child, Element):
                child._render_into(parts)
            else:
                parts.append(escape_text(child))
        parts.append(f"</{self.tag}>")


Node = Element | str


def el(tag: str, *children: Node | None, **attributes: Attribute) -> Element:
    """An element; ``font_size=12`` becomes ``font-size="12"``, None values and None
    children are left out."""
    shown = tuple(
        (name.rstrip("_").replace("_", "-"), _attribute_value(name, value))
        for name, value in attributes.items()
        if value is not None
    )
    return Element(tag, shown, tuple(child for child in children if child is not None))


def group(children: Iterable[Node | None], **attributes: Attribute) -> Element:
    return el("g", *children, **attributes)


def rect(
    x: float,
    y: float,
    width: float,
    height: float,
    *,
    fill: str = "none",
    stroke: str | None = None,
    radius: float | None = None,
    **attributes: Attribute,
) -> Element:
    return el(
        "rect",
        x=x,
        y=y,
        width=width,
        height=height,
        rx=radius,
        fill=fill,
        stroke=stroke,
        **attributes,
    )


def document(width: float, height: float, title: str, children: Iterable[Node | None]) -> str:
    """The whole picture, titled for screen readers, on a white background. Its size is its
    viewBox in CSS pixels (360 wide): opened on its own, a phone shows it at that width and
    scrolls down, readable (``width="100%"`` alone made a browser fit the whole height into
    the screen, at half size); a page sizes the ``<img>`` by its CSS (width 100%, height
    auto), which keeps the aspect ratio."""
    root = el(
        "svg",
        el("title", title),
        rect(0, 0, width, height, fill=PAPER),
        *children,
        xmlns=SVG_NAMESPACE,
        viewBox=f"0 0 {_number(width)} {_number(height)}",
        width=_number(width),
        height=_number(height),
        role="img",
    )
    return root.render()


# --------------------------------------------------------------------------- text


def _char_width(char: str) -> float:
    if unicodedata.combining(char):
        return 0.0
    return 1.0 if unicodedata.east_asian_width(char) in ("W", "F", "A") else 0.62


def text_width(content: str, size: float) -> float:
    """A generous estimate of how wide `content` is drawn at `size` (CJK 1 em, others 0.62)."""
    return sum(_char_width(char) for char in content) * size


def fit_text(content: str, max_width: float, size: float) -> str:
    """`content`, cut with an ellipsis where it would be wider than `max_width`."""
    if text_width(content, size) <= max_width:
        return content
    budget = max_width - size  # room for the ellipsis
    kept: list[str] = []
    used = 0.0
    for char in content:
        used += _char_width(char) * size
        if used > budget:
            break
        kept.append(char)
    return "".join(kept) + "…"


def wrap_text(content: str, max_width: float, size: float) -> list[str]:
    """`content` broken into lines no wider than `max_width` (at any character: Japanese
    has no spaces to break at). Always at least one line."""
    lines: list[str] = []
    for paragraph in content.splitlines() or [""]:
        line = ""
        used = 0.0
        for char in paragraph:
            width = _char_width(char) * size
            if line and used + width > max_width:
                lines.append(line)
                line, used = "", 0.0
            line += char
            used += width
        lines.append(line)
    return lines


def text(
    x: float,
    y: float,
    content: str,
    *,
    size: float = 13,
    fill: str = INK,
    anchor: str | None = None,
    bold: bool = False,
    max_width: float | None = None,
) -> Element:
    """One line of text with the Japanese font stack, its baseline at `y`. With `max_width`
    a longer text is cut with an ellipsis and the whole text kept as the line's <title>."""
    if size < MIN_FONT_SIZE:
        raise ValueError(f"font size {size} is below {MIN_FONT_SIZE}: unreadable on a phone")
    shown = content if max_width is None else fit_text(content, max_width, size)
    line = el(
        "text",
        shown,
        x=x,
        y=y,
        font_family=FONT_FAMILY,
        font_size=size,
        font_weight="bold" if bold else None,
        text_anchor=anchor,
        fill=fill,
    )
    if shown == content:
        return line
    return el("g", el("title", content), line)


# --------------------------------------------------------------------------- badges and bars


def chip(
    x: float,
    y: float,
    label: str,
    *,
    size: float = 12,
    fill: str = "#eeeeee",
    stroke: str | None = None,
    ink: str = INK,
    max_width: float | None = None,
) -> tuple[Element, float]:
    """A rounded label (a card name, a status); returns it and its width. `y` is its top."""
    padding = 6
    room = None if max_width is None else max_width - 2 * padding
    shown = label if room is None else fit_text(label, room, size)
    width = text_width(shown, size) + 2 * padding
    height = size + 8
    element = group(
        [
            rect(x, y, width, height, fill=fill, stroke=stroke, radius=height / 2),
            text(x + padding, y + size + 2, label, size=size, fill=ink, max_width=room),
        ]
    )
    return element, width


def chip_rows(
    x: float,
    y: float,
    width: float,
    chips: Iterable[tuple[str, str, str]],
    *,
    size: float = 12,
    gap: float = 4,
) -> tuple[Element, float]:
    """(label, fill, ink) chips laid out left to right, wrapping into rows within `width`;
    returns them and the height they take from `y`."""
    placed: list[Node | None] = []
    left, top = x, y
    row_height = size + 8
    rows = 0
    for label, fill, ink in chips:
        wanted = min(text_width(label, size) + 12, width)
        if rows == 0:
            rows = 1
        elif left + wanted > x + width:
            left, top, rows = x, top + row_height + gap, rows + 1
        element, chip_width = chip(left, top, label, size=size, fill=fill, ink=ink, max_width=width)
        placed.append(element)
        left += chip_width + gap
    height = rows * row_height + max(rows - 1, 0) * gap
    return group(placed), height


def count_badge(
    x: float,
    y: float,
    label: str,
    count: int,
    *,
    width: float,
    fill: str = "#eceff1",
    ink: str = INK,
    size: float = 12,
) -> Element:
    """A box `width` wide with a label on the left and a count on the right; `y` is its top."""
    height = size + 10
    count_width = text_width(str(count), size) + 8
    return group(
        [
            rect(x, y, width, height, fill=fill, radius=4),
            text(
                x + 6, y + size + 4, label, size=size, fill=ink, max_width=width - 12 - count_width
            ),
            text(
                x + width - 6,
                y + size + 4,
                str(count),
                size=size,
                fill=ink,
                anchor="end",
                bold=True,
            ),
        ]
    )


def bar(
    x: float,
    y: float,
    width: float,
    label: str,
    value: int,
    maximum: int,
    *,
    color: str = "#43a047",
    size: float = 12,
    label_width: float = 64,
) -> Element:
    """A labelled horizontal bar: the label, a track filled in proportion value/maximum, and
    the value as a number; `y` is its top, its height ``size + 6``."""
    count_width = text_width("000", size) + 4
    track_x = x + label_width
    track_width = max(width - label_width - count_width, 10)
    filled = 0.0 if maximum <= 0 else track_width * min(max(value, 0), maximum) / maximum
    middle = y + (size + 6) / 2
    return group(
        [
            text(x, y + size + 1, label, size=size, max_width=label_width - 4),
            rect(track_x, middle - 5, track_width, 10, fill="#e0e0e0", radius=3),
            rect(track_x, middle - 5, filled, 10, fill=color, radius=3) if filled > 0 else None,
            text(x + width, y + size + 1, str(value), size=size, anchor="end", bold=True),
        ]
    )


# --------------------------------------------------------------------------- playing cards

CARD_WIDTH = 40
CARD_HEIGHT = 56
_SUITS = "♠♥♦♣"


def _split_card(card: str) -> tuple[str, str] | None:
    """(rank, suit) of a card written suit first (``♠10``, ``♦A``), None for other text."""
    if len(card) >= 2 and card[0] in _SUITS:
        return card[1:], card[0]
    return None


def playing_card(
    x: float,
    y: float,
    card: str,
    *,
    width: float = CARD_WIDTH,
    height: float = CARD_HEIGHT,
    fill: str = PAPER,
    edge: str = CARD_EDGE,
) -> Element:
    """A face-up card at (x, y): rank and suit in the top corners (readable when cards
    overlap, as in a column), a large suit in the middle; ♥♦ red, ♠♣ black. Text that is no
    card is written on a blank card."""
    parts = _split_card(card)
    outline = rect(x, y, width, height, fill=fill, stroke=edge, radius=4, stroke_width=1)
    if parts is None:
        return group(
            [outline, text(x + width / 2, y + height / 2 + 4, card, size=11, anchor="middle")]
        )
    rank, suit = parts
    ink = RED_SUIT if suit in "♥♦" else BLACK_SUIT
    return group(
        [
            el("title", card),
            outline,
            text(x + 4, y + 14, rank, size=13, fill=ink, bold=True),
            text(x + width - 4, y + 14, suit, size=12, fill=ink, anchor="end"),
            text(x + width / 2, y + height - 10, suit, size=22, fill=ink, anchor="middle"),
        ]
    )


def card_back(
    x: float, y: float, *, width: float = CARD_WIDTH, height: float = CARD_HEIGHT
) -> Element:
    """A face-down card."""
    return group(
        [
            rect(x, y, width, height, fill=CARD_BACK, stroke=CARD_EDGE, radius=4),
            rect(
                x + 4,
                y + 4,
                width - 8,
                height - 8,
                stroke=CARD_BACK_LINE,
                radius=2,
                stroke_width=1,
            ),
            el(
                "path",
                d=(
                    f"M{_number(x + 4)} {_number(y + 4)}L{_number(x + width - 4)} "
                    f"{_number(y + height - 4)}M{_number(x + width - 4)} {_number(y + 4)}"
                    f"L{_number(x + 4)} {_number(y + height - 4)}"
                ),
                stroke=CARD_BACK_LINE,
                stroke_width=1,
            ),
        ]
    )


# --------------------------------------------------------------------------- the games' page
# The layout the games' pictures share: a column `CONTENT_WIDTH` wide between margins, made of
# sections (a heading, then its lines) and of framed panels, one per player.

MARGIN = 8
PADDING = 8
CONTENT_WIDTH = WIDTH - 2 * MARGIN
INNER_WIDTH = CONTENT_WIDTH - 2 * PADDING
SECTION_GAP = 12
OWN_EDGE = "#1e88e5"
PANEL_EDGE = "#bdbdbd"
WAITING_CHIP = ("#fff8e1", "#8d6e00")
HAND_LABEL = "あなたの手札"


def section_heading(
    y: float, label: str, x: float = MARGIN, *, size: float = 13, max_width: float | None = None
) -> Element:
    """A section's heading, `y` its top (cut to `max_width` if given)."""
    return text(x, y + size, label, size=size, fill=MUTED, bold=True, max_width=max_width)


def note_line(y: float, content: str) -> Element:
    """A small grey line across the column (the start player, a sealed rule), `y` its top."""
    return text(MARGIN, y + 13, content, size=12, fill=MUTED, max_width=CONTENT_WIDTH)


def status_beside(label: str, status: str, y: float) -> tuple[Element, float]:
    """Whose turn, right of the phase `label` written at the margin, or on a line of its own
    when it is too long; returns it and the `y` it moved down to."""
    label_width = text_width(label, 13) + 10
    if text_width(status, 13) > CONTENT_WIDTH - label_width:
        y += 18
        label_width = 0
    shown = text(
        MARGIN + label_width,
        y + 14,
        status,
        size=13,
        bold=True,
        max_width=CONTENT_WIDTH - label_width,
    )
    return shown, y


def ranking_entries(view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The entries of the final ranking a view's ``result`` holds (`Result.to_json`), or none."""
    result = view.get("result")
    entries = result.get("ranking") if isinstance(result, Mapping) else None
    return list(entries) if entries else []


def ranking_row(entry: Mapping[str, Any], y: float, score: str | None = None) -> list[Element]:
    """One entry of a ranking on a line: its rank, the name (cut to fit) and the score (by
    default its points), `y` its top."""
    shown = f"{entry.get('score')}点" if score is None else score
    return [
        text(MARGIN, y + 14, f"{entry.get('rank')}位", size=14, bold=True),
        text(MARGIN + 40, y + 14, str(entry.get("name")), size=14, max_width=CONTENT_WIDTH - 110),
        text(WIDTH - MARGIN, y + 14, shown, size=14, anchor="end", bold=True),
    ]


def name_and_chips(
    x: float,
    y: float,
    width: float,
    name: str,
    chips: Sequence[tuple[str, str, str]],
    *,
    wrap: float = 22,
    below: float = 24,
) -> tuple[list[Element], float]:
    """A player panel's first line: the name, and its (label, fill, ink) status chips at the
    right end, or on a line of their own (`wrap` lower) when both do not fit in `width`;
    returns them and the `y` under them (`below` under the last line)."""
    widths = [text_width(label, 11) + 12 for label, _fill, _ink in chips]
    chips_width = sum(widths) + 4 * max(len(chips) - 1, 0)
    drawn = [text(x, y + 15, name, size=15, bold=True, max_width=width)]
    if chips and text_width(name, 15) + 8 + chips_width > width:
        y += wrap
        left = x
    else:
        left = x + width - chips_width
    for (label, fill, ink), chip_width in zip(chips, widths, strict=True):
        element, _width = chip(left, y, label, size=11, fill=fill, ink=ink)
        drawn.append(element)
        left += chip_width + 4
    return drawn, y + below


def player_frame(top: float, bottom: float, own: bool, *, radius: float = 8) -> Element:
    """A player's panel frame across the column, from `top` to `bottom`: the viewer's own
    with a thicker blue edge."""
    edge, edge_width = (OWN_EDGE, 2) if own else (PANEL_EDGE, 1)
    return rect(
        MARGIN,
        top,
        CONTENT_WIDTH,
        bottom - top,
        fill="#ffffff",
        stroke=edge,
        radius=radius,
        stroke_width=edge_width,
    )


def as_int(value: Any) -> int:
    """A count read from a view: the int itself, anything else (None, a bool, text) 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
