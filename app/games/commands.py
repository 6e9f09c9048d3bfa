"""Platform commands every game understands (API.md), and the Transformer for common.lark.

The app handles these (JOIN, START, ...); games only parse them. Each is a frozen dataclass
whose `canonical()` is the English line, with ``game.parse(cmd.canonical()) == cmd``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer

from app.games.base import Command, SyntaxErrorDetail

__all__ = [
    "Abort",
    "Absent",
    "Adjust",
    "As",
    "Board",
    "Bot",
    "Deadline",
    "Join",
    "Kick",
    "Leave",
    "Pause",
    "PlatformCommand",
    "PlatformTransformer",
    "Replace",
    "Resume",
    "Start",
    "Undo",
]


@dataclass(frozen=True)
class Join:
    def canonical(self) -> str:
        return "JOIN"


@dataclass(frozen=True)
class Leave:
    def canonical(self) -> str:
        return "LEAVE"


@dataclass(frozen=True)
class Start:
    def canonical(self) -> str:
        return "START"


@dataclass(frozen=True)
class Undo:
    def canonical(self) -> str:
        return "UNDO"


@dataclass(frozen=True)
class As:
    """The GM applies `command` for the player called `name`."""

    name: str
    command: Command

    def canonical(self) -> str:
        return f"AS {self.name} {self.command.canonical()}"


@dataclass(frozen=True)
class Kick:
    name: str

    def canonical(self) -> str:
        return f"KICK {self.name}"


@dataclass(frozen=True)
class Replace:
    name: str
    new: str

    def canonical(self) -> str:
        return f"REPLACE {self.name} {self.new}"


@dataclass(frozen=True)
class Pause:
    def canonical(self) -> str:
        return "PAUSE"


@dataclass(frozen=True)
class Resume:
    def canonical(self) -> str:
        return "RESUME"


@dataclass(frozen=True)
class Abort:
    def canonical(self) -> str:
        return "ABORT"


@dataclass(frozen=True)
class Deadline:
    hours: int

    def canonical(self) -> str:
        return f"DEADLINE {self.hours}"


@dataclass(frozen=True)
class Adjust:
    """The GM corrects a player's final score by `delta` points, for `reason`."""

    name: str
    delta: int
    reason: str

    def canonical(self) -> str:
        return f"ADJUST {self.name} {self.delta:+d} {self.reason}"


@dataclass(frozen=True)
class Absent:
    hours: int

    def canonical(self) -> str:
        return f"ABSENT {self.hours}"


@dataclass(frozen=True)
class Bot:
    """BOT [N]: the GM seats N bots (1 without a number) while recruiting (docs/bots.md)."""

    count: int = 1

    def canonical(self) -> str:
        return "BOT" if self.count == 1 else f"BOT {self.count}"


@dataclass(frozen=True)
class Board:
    """Anyone asks for the board (and its picture) between the round's summaries; it changes
    nothing (issue #43)."""

    def canonical(self) -> str:
        return "BOARD"


PlatformCommand = (
    Join
    | Leave
    | Start
    | Undo
    | As
    | Kick
    | Replace
    | Pause
    | Resume
    | Abort
    | Deadline
    | Adjust
    | Absent
    | Bot
    | Board
)

# Hours accepted by DEADLINE and ABSENT: at least one, at most four weeks.
MAX_HOURS = 24 * 28


def _hours(token: Token) -> int:
    hours = int(token)
    if not 1 <= hours <= MAX_HOURS:
        raise SyntaxErrorDetail(
            token, f"時間数は 1 から {MAX_HOURS} までです({hours} は書けません)。", ["1〜672"]
        )
    return hours


class PlatformTransformer(Transformer[Token, Any]):
    """Turns common.lark's platform_command trees into the dataclasses above.

    Merged into a game's transformer under the ``common`` prefix (`lark.visitors.
    merge_transformers`), because imported rules are namespaced ``common__join`` etc.
    """

    def join(self, _: list[Any]) -> Join:
        return Join()

    def leave(self, _: list[Any]) -> Leave:
        return Leave()

    def start_game(self, _: list[Any]) -> Start:
        return Start()

    def undo(self, _: list[Any]) -> Undo:
        return Undo()

    def as_player(self, children: list[Any]) -> As:
        _, name, command = children
        return As(str(name), command)

    def kick(self, children: list[Any]) -> Kick:
        return Kick(str(children[1]))

    def replace(self, children: list[Any]) -> Replace:
        return Replace(str(children[1]), str(children[2]))

    def pause(self, _: list[Any]) -> Pause:
        return Pause()

    def resume(self, _: list[Any]) -> Resume:
        return Resume()

    def abort(self, _: list[Any]) -> Abort:
        return Abort()

    def deadline(self, children: list[Any]) -> Deadline:
        return Deadline(_hours(children[1]))

    def absent(self, children: list[Any]) -> Absent:
        return Absent(_hours(children[1]))

    def bot(self, children: list[Any]) -> Bot:
        if len(children) < 2 or children[1] is None:
            return Bot()
        # Out of range is the platform's refusal, which knows the seats left (app/gm/platform.py);
        # a number too long for any game is read as one over every limit.
        digits = str(children[1]).lstrip("0") or "0"
        return Bot(int(digits) if len(digits) <= 3 else 1000)

    def board(self, _: list[Any]) -> Board:
        return Board()

    def adjust(self, children: list[Any]) -> Adjust:
        _, name, delta_token, reason = children
        delta = int(str(delta_token).replace("\u2212", "-"))
        if not -1000 <= delta <= 1000:
            raise SyntaxErrorDetail(
                delta_token, f"調整できる点数は -1000 から +1000 までです({delta} は書けません)。"
            )
        return Adjust(str(name), delta, str(reason).strip())
