"""掲示板進行カードゲーム's battle commands (docs/rules/cardbattle.md, "Command syntax"). Each
is a frozen dataclass whose `canonical()` is the English line, with
``game.parse(cmd.canonical()) == cmd``. Card names are words of the game's card pool, checked by
the rules."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GAME_COMMANDS", "Attack", "Deck", "GameCommand", "Magic", "Pass"]


@dataclass(frozen=True)
class Deck:
    """DECK <c1> <c2> <c3> [MAGIC <m1> …]: three normal cards and up to three magic cards,
    sealed before the start (R デッキ, マジックカード 規定枚数 3枚以下)."""

    cards: tuple[str, ...]
    magic: tuple[str, ...] = ()

    def canonical(self) -> str:
        line = "DECK " + " ".join(self.cards)
        return line + (" MAGIC " + " ".join(self.magic) if self.magic else "")


@dataclass(frozen=True)
class Attack:
    """ATTACK [<a>><t> …]: the turn's attacks. Alone, the automatic rule (D): attackers in deck
    order, each at the opposing card with the lowest durability left. With pairs, attacker
    number > target number (1–3 by deck order), in the order written."""

    pairs: tuple[tuple[int, int], ...] = ()

    def canonical(self) -> str:
        return " ".join(["ATTACK", *(f"{a}>{t}" for a, t in self.pairs)])


@dataclass(frozen=True)
class Magic:
    """MAGIC <card> [<target>]: declare a magic card in the response window (R マジックカード使用
    の宣言); the target is a card number 1–3 (the opponent's for harm, your own for help), or
    chosen by the automatic rule."""

    card: str
    target: int | None = None

    def canonical(self) -> str:
        return f"MAGIC {self.card}" + (f" {self.target}" if self.target is not None else "")


@dataclass(frozen=True)
class Pass:
    """PASS: nothing to declare now; the window closes when both players have passed since the
    last magic."""

    def canonical(self) -> str:
        return "PASS"


GameCommand = Deck | Attack | Magic | Pass
GAME_COMMANDS = (Deck, Attack, Magic, Pass)
