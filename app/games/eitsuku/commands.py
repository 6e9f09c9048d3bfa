"""えいつく's game commands: frozen dataclasses with canonical English lines.

Arguments stay Japanese as the rules page writes them (``SET 主演 役者3 PAY 予算・中 予算・小``);
``game.parse(cmd.canonical()) == cmd`` for every command. Budget card lists are kept sorted
(largest first) so that equal payments are equal commands.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.games.eitsuku.cards import BUDGET_VALUE, SIZE


def _sorted_budget(cards: tuple[str, ...] | None) -> tuple[str, ...] | None:
    # An empty list cannot be written (`PAY` needs a card), so it means "nothing given".
    if not cards:
        return None
    return tuple(sorted(cards, key=lambda card: (-BUDGET_VALUE[card], card)))


@dataclass(frozen=True)
class PlayEvent:
    """EVENT <name> [args]: place an event card from the stock into the event field."""

    name: str
    number: int | None = None
    card: str | None = None
    slot: str | None = None
    player: str | None = None

    def canonical(self) -> str:
        parts = ["EVENT", self.name]
        if self.number is not None:
            parts.append(str(self.number))
        if self.slot is not None:
            parts.append(self.slot)
        if self.card is not None:
            parts.append(self.card)
        if self.player is not None:
            parts.append(self.player)
        return " ".join(parts)


@dataclass(frozen=True)
class Scout:
    """SCOUT <deck>: draw a role card into the stock."""

    deck: str

    def canonical(self) -> str:
        return f"SCOUT {self.deck}"


@dataclass(frozen=True)
class Buy:
    """BUY <小|中|大> [WITH <cards>]: flip budget cards to take one from the pile.

    `flip` is None when the bot chooses the cards to flip.
    """

    card: str
    flip: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "flip", _sorted_budget(self.flip))

    def canonical(self) -> str:
        line = f"BUY {SIZE[self.card]}"
        if self.flip is not None:
            line += " WITH " + " ".join(self.flip)
        return line


@dataclass(frozen=True)
class Draw:
    """DRAW: draw an event card into the stock (set phase)."""

    def canonical(self) -> str:
        return "DRAW"


@dataclass(frozen=True)
class SetRole:
    """SET <slot> <card> [PAY <cards>]: place a role card, paying number + 2.

    `pay` is None when the bot chooses the payment.
    """

    slot: str
    card: str
    pay: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "pay", _sorted_budget(self.pay))

    def canonical(self) -> str:
        line = f"SET {self.slot} {self.card}"
        if self.pay is not None:
            line += " PAY " + " ".join(self.pay)
        return line


@dataclass(frozen=True)
class Release:
    """RELEASE: end the week and release the film (needs 主演, 脚本家, 音楽家, 演出家)."""

    def canonical(self) -> str:
        return "RELEASE"


@dataclass(frozen=True)
class End:
    """END: end the week."""

    def canonical(self) -> str:
        return "END"


@dataclass(frozen=True)
class Choose:
    """CHOOSE <deck>: the deck for a starting role card whose die showed 6."""

    deck: str

    def canonical(self) -> str:
        return f"CHOOSE {self.deck}"


@dataclass(frozen=True)
class Shuffle:
    """SHUFFLE <deck>: the GM shuffles a closed deck (a role deck or イベント). The bot does it
    after an UNDO put back into a deck a card the thread saw drawn (docs/rules/eitsuku.md)."""

    deck: str

    def canonical(self) -> str:
        return f"SHUFFLE {self.deck}"


# The players' commands; the GM's only one is SHUFFLE.
GameCommand = PlayEvent | Scout | Buy | Draw | SetRole | Release | End | Choose
GM_COMMANDS = (Shuffle,)
GAME_COMMANDS = (PlayEvent, Scout, Buy, Draw, SetRole, Release, End, Choose, Shuffle)
