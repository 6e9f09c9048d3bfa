"""ポピュラス 草案21's commands (docs/rules/populous.md, "Command syntax").

Each is a frozen dataclass whose `canonical()` is the English line, with
``game.parse(cmd.canonical()) == cmd``. Squares are named as the picture prints them: the
tile's two numbers and the square's letter (``24a``); genesis cards as their number, Free as
``F`` with the number it stands for (``AREA F2 4``). Epic card kinds, terrains and resources
are written in Japanese as the cards print them (English words are accepted too).

A turn is a chain of steps (area → wrath → placement → hand play → war/mediation → end); each
step is one line, and a post may carry several::

    AREA 2 4
    PLACE 24a 24c
    PLAY 労働 EXTRA 1
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "GAME_COMMANDS",
    "Area",
    "Catastrophe",
    "Cubes",
    "Discard",
    "End",
    "GameCommand",
    "Mediate",
    "Move",
    "Pick",
    "Place",
    "Play",
    "Race",
    "Reveal",
    "Town",
    "War",
    "WrathBuy",
]


@dataclass(frozen=True)
class Race:
    """RACE <race>: choose a race (setup, in turn, open)."""

    name: str

    def canonical(self) -> str:
        return f"RACE {self.name}"


@dataclass(frozen=True)
class Pick:
    """PICK <skill>: keep one skill of the pack in hand and pass the rest left (sealed)."""

    skill: str

    def canonical(self) -> str:
        return f"PICK {self.skill}"


@dataclass(frozen=True)
class Cubes:
    """CUBES 情熱 a 食料 b 信仰 c: the starting split of 7 cubes (sealed)."""

    passion: int
    food: int
    faith: int

    def canonical(self) -> str:
        return f"CUBES 情熱 {self.passion} 食料 {self.food} 信仰 {self.faith}"


@dataclass(frozen=True)
class Area:
    """AREA <card> <card>: the two genesis cards of the turn. A card is ``1``–``5`` or ``F<n>``
    (Free standing for n); a bare ``F`` (Free, its number not written: ``AREA F 3``) is resolved
    by the rules to the one area it can stand for. Low first in the canonical line."""

    cards: tuple[str, str]

    def canonical(self) -> str:
        return "AREA " + " ".join(self.cards)

    @property
    def numbers(self) -> tuple[int, int]:
        low, high = sorted(int(card.lstrip("F")) for card in self.cards)
        return low, high

    @property
    def free(self) -> int:
        return sum(card.startswith("F") for card in self.cards)


def card_order(card: str) -> tuple[int, int]:
    """Numbered cards first, then Free, each by number (the canonical order)."""
    return (1 if card.startswith("F") else 0, int(card.lstrip("F") or 0))


@dataclass(frozen=True)
class WrathBuy:
    """WRATH BUY: pay 3 信仰 for 1 神の怒り."""

    def canonical(self) -> str:
        return "WRATH BUY"


@dataclass(frozen=True)
class Catastrophe:
    """WRATH <n> [SQUARE <sq>…] RING <terrain>: pay n 神の怒り for a catastrophe on the genesis
    area (3: the die picks the square; 4: one chosen square; 5 or more: one or two), then a
    terrain ring on it."""

    paid: int
    squares: tuple[str, ...]
    ring: str

    def canonical(self) -> str:
        parts = [f"WRATH {self.paid}"]
        if self.squares:
            parts.append("SQUARE " + " ".join(self.squares))
        parts.append(f"RING {self.ring}")
        return " ".join(parts)


@dataclass(frozen=True)
class Place:
    """PLACE <sq> [<sq>…]: the first worker and up to three extra ones on the genesis area."""

    squares: tuple[str, ...]

    def canonical(self) -> str:
        return "PLACE " + " ".join(self.squares)


@dataclass(frozen=True)
class Play:
    """The hand play: ``PLAY <kind>`` (face up), ``FACEDOWN <action> [CARD <kind>]`` (face down,
    any action; the card named only when sealed, else the newest card of the hand), each after
    ``NEWGEN`` for a generation change, each with ``EXTRA <n>`` actions bought with 情熱."""

    kind: str
    extra: int = 0
    newgen: bool = False
    down: bool = False
    card: str | None = None

    def canonical(self) -> str:
        line: str | None = self.__dict__.get("_line")  # a frozen command: its line never changes
        if line is None:
            line = self._line()
            object.__setattr__(self, "_line", line)
        return line

    def _line(self) -> str:
        parts = ["NEWGEN"] if self.newgen else []
        if self.down:
            parts.append(f"FACEDOWN {self.kind}")
            if self.card is not None:
                parts.append(f"CARD {self.card}")
        elif self.newgen:
            parts.append(self.kind)
        else:
            parts.append(f"PLAY {self.kind}")
        if self.extra:
            parts.append(f"EXTRA {self.extra}")
        return " ".join(parts)


@dataclass(frozen=True)
class Move:
    """MOVE <from> <to> [<to>…]: 啓示 — one own worker along adjacent squares, one action a step."""

    path: tuple[str, ...]

    def canonical(self) -> str:
        return "MOVE " + " ".join(self.path)


@dataclass(frozen=True)
class Discard:
    """DISCARD <kind> [<kind>…]: hand cards to the discard pile (繁栄: one per action; after a
    generation change: any)."""

    kinds: tuple[str, ...]

    def canonical(self) -> str:
        return "DISCARD " + " ".join(self.kinds)


@dataclass(frozen=True)
class War:
    """WAR: settle the contested squares by war."""

    def canonical(self) -> str:
        return "WAR"


@dataclass(frozen=True)
class Mediate:
    """MEDIATE: pay 3 食料 to each other player involved; they take their workers home."""

    def canonical(self) -> str:
        return "MEDIATE"


@dataclass(frozen=True)
class Town:
    """TOWN <sq>: the 決算's town, replacing an own worker there."""

    square: str

    def canonical(self) -> str:
        return f"TOWN {self.square}"


@dataclass(frozen=True)
class Reveal:
    """REVEAL <skill>: the 決算's skill turned face up."""

    skill: str

    def canonical(self) -> str:
        return f"REVEAL {self.skill}"


@dataclass(frozen=True)
class End:
    """END: finish the turn; every decision not yet made is made by the default rule."""

    def canonical(self) -> str:
        return "END"


GameCommand = (
    Race
    | Pick
    | Cubes
    | Area
    | WrathBuy
    | Catastrophe
    | Place
    | Play
    | Move
    | Discard
    | War
    | Mediate
    | Town
    | Reveal
    | End
)
GAME_COMMANDS: tuple[type, ...] = (
    Race,
    Pick,
    Cubes,
    Area,
    WrathBuy,
    Catastrophe,
    Place,
    Play,
    Move,
    Discard,
    War,
    Mediate,
    Town,
    Reveal,
    End,
)
