"""新新エリューシス's game commands: frozen dataclasses with canonical English lines.

Canonical lines use the English verb, ○ / ● / ○● and the card spelling of cards.py
(``PLAY ○ ♠7 ♥8``); ``game.parse(cmd.canonical()) == cmd`` for every command. A formal rule's
text is the rule language's canonical spelling (rule.to_text), so equal rules are equal commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RuleMode = Literal["formal", "hand"]
FORMAL: RuleMode = "formal"
HAND: RuleMode = "hand"


@dataclass(frozen=True)
class Play:
    """PLAY ○|● <cards>: a child plays 1–4 cards, declaring that all succeed in order (○) or
    that each would fail as the next card (●)."""

    declaration: str
    cards: tuple[str, ...]

    def canonical(self) -> str:
        return f"PLAY {self.declaration} {' '.join(self.cards)}"


@dataclass(frozen=True)
class Judge:
    """JUDGE ○|●|○●: the parent (hand-judged rule) or a prophet judges the pending play."""

    judgment: str

    def canonical(self) -> str:
        return f"JUDGE {self.judgment}"


@dataclass(frozen=True)
class Prophet:
    """PROPHET: the child whose turn just ended declares that they know the rule."""

    def canonical(self) -> str:
        return "PROPHET"


@dataclass(frozen=True)
class Hint:
    """HINT <words>: the parent's hint after the 10th, 20th and 30th card."""

    text: str

    def canonical(self) -> str:
        return f"HINT {self.text}"


@dataclass(frozen=True)
class SealRule:
    """RULE <expression> (formal: the bot judges) or RULE TEXT <words> (the parent judges);
    only through the sealed endpoint."""

    mode: RuleMode
    text: str

    def canonical(self) -> str:
        if self.mode == FORMAL:
            return f"RULE {self.text}"
        return f"RULE TEXT {self.text}"


@dataclass(frozen=True)
class EndRound:
    """ENDROUND: the GM ends the round by the players' agreement."""

    def canonical(self) -> str:
        return "ENDROUND"


@dataclass(frozen=True)
class ChooseParent:
    """PARENT <name>: the GM names this round's parent before its rule is sealed."""

    name: str

    def canonical(self) -> str:
        return f"PARENT {self.name}"


GameCommand = Play | Judge | Prophet | Hint | SealRule | EndRound | ChooseParent
GAME_COMMANDS = (Play, Judge, Prophet, Hint, SealRule, EndRound, ChooseParent)
