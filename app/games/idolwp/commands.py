"""IM@S x Workerplacement's commands (docs/rules/idolwp.md, "Command syntax").

Each is a frozen dataclass whose `canonical()` is the English line, with
``game.parse(cmd.canonical()) == cmd``. Abilities are written ``Vo``, ``Da``, ``Vi``; an amount
follows its ability without a space (``Vo2``; ``Vo`` alone is ``Vo1``). Idol, space and card
names are words of the house content (app/games/idolwp/content/), checked by the rules, not by
the grammar.

A turn may be one line — ``MOVE 春香 L3 MONEY EVENT LV2 BOOST Vo1 Da2 DOUBLE`` — or its steps
over several posts (``MOVE 春香 E1``, then ``EVENT LV2 BOOST Vo1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ABILITIES",
    "GAME_COMMANDS",
    "CardPlay",
    "Convert",
    "Discard",
    "EventEntry",
    "GameCommand",
    "Move",
    "Pick",
    "Skip",
    "Train",
]

ABILITIES: tuple[str, ...] = ("Vo", "Da", "Vi")


def amounts_text(amounts: tuple[tuple[str, int], ...]) -> str:
    """``(("Vo", 1), ("Da", 2))`` -> ``Vo1 Da2`` (abilities in Vo, Da, Vi order)."""
    return " ".join(f"{ability}{count}" for ability, count in amounts)


@dataclass(frozen=True)
class Pick:
    """PICK <idol>: take an idol in the open snake draft (R 3.2 カタン取り)."""

    idol: str

    def canonical(self) -> str:
        return f"PICK {self.idol}"


@dataclass(frozen=True)
class EventEntry:
    """EVENT LV<n> [BOOST <amounts>] [DOUBLE]: take part in the event at level n, spending
    ability chips to raise abilities for this check only, and doubling the EVP with a 思い出
    chip if it succeeds. ``EVENT SKIP`` is SKIP (declining an event the space offered)."""

    level: int
    boost: tuple[tuple[str, int], ...] = ()
    double: bool = False

    def canonical(self) -> str:
        parts = [f"EVENT LV{self.level}"]
        if self.boost:
            parts.append("BOOST " + amounts_text(self.boost))
        if self.double:
            parts.append("DOUBLE")
        return " ".join(parts)


@dataclass(frozen=True)
class Train:
    """TRAIN <amounts>: raise abilities by levels, paying the 特訓 rate in chips of that
    ability per level (a 特訓 space, 美希 before her turn, the final 特訓). ``TRAIN`` alone
    raises nothing."""

    levels: tuple[tuple[str, int], ...] = ()

    def canonical(self) -> str:
        return "TRAIN " + amounts_text(self.levels) if self.levels else "TRAIN"


@dataclass(frozen=True)
class Move:
    """MOVE <idol> <space> [VO] [MONEY] [EVENT …] [TRAIN …]: the turn's action. VO: at a
    レッスン of Da/Vi chips, take Vo chips instead (千早's ability). MONEY right after the move
    spends a マニー chip to take part in the event instead of the space's action; the event or
    training choice may follow on the same line."""

    idol: str
    space: str
    vo: bool = False
    money: bool = False
    event: EventEntry | None = None
    train: Train | None = None

    def canonical(self) -> str:
        parts = [f"MOVE {self.idol} {self.space}"]
        if self.vo:
            parts.append("VO")
        if self.money:
            parts.append("MONEY")
        if self.event is not None:
            parts.append(self.event.canonical())
        if self.train is not None:
            parts.append(self.train.canonical())
        return " ".join(parts)


@dataclass(frozen=True)
class Convert:
    """CONVERT MEMORY <3 abilities> | CONVERT MONEY <2 abilities>: spend a 思い出 chip for
    three ability chips of your choice, or a マニー chip for two (R 4.6)."""

    chip: str  # "MEMORY" | "MONEY"
    abilities: tuple[str, ...]

    def canonical(self) -> str:
        return f"CONVERT {self.chip} " + " ".join(self.abilities)


@dataclass(frozen=True)
class CardPlay:
    """CARD <name> [<abilities>]: play a held appeal card; some cards take the abilities
    they give or raise (``CARD 差し入れ Vo Da``)."""

    name: str
    abilities: tuple[str, ...] = field(default=())

    def canonical(self) -> str:
        return " ".join(("CARD", self.name, *self.abilities))


@dataclass(frozen=True)
class Discard:
    """DISCARD <card>: let a held card go (over the hold limit of 3, or at will)."""

    name: str

    def canonical(self) -> str:
        return f"DISCARD {self.name}"


@dataclass(frozen=True)
class Skip:
    """SKIP: decline what the space offered (the event, the training) and end the turn."""

    def canonical(self) -> str:
        return "SKIP"


GameCommand = Pick | Move | EventEntry | Train | Convert | CardPlay | Discard | Skip
GAME_COMMANDS = (Pick, Move, EventEntry, Train, Convert, CardPlay, Discard, Skip)
