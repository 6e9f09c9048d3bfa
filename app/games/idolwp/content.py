"""IM@S x Workerplacement's house content: idols, round boards, events, appeal cards and the
tables the source leaves out (docs/rules/idolwp.md, "House content"). The files are
``app/games/idolwp/content/*.toml``; a group may replace any of them without touching code.
Each is validated once, at start-up (`load`), with the file and line of a bad entry.

The source gives three idols (春香, 千早, 美希), one event (Rookies) and no boards or cards;
everything else here is house content, marked so in its file.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.games.kit.content import EntryError, content_dir, load_content, require_unique

__all__ = [
    "ABILITY_NAMES",
    "Board",
    "Card",
    "Content",
    "Event",
    "Idol",
    "Level",
    "Space",
    "Tables",
    "load",
]

Ability = Literal["Vo", "Da", "Vi"]
ABILITY_NAMES: tuple[Ability, ...] = ("Vo", "Da", "Vi")
SpaceType = Literal["start", "goal", "lesson", "training", "daily", "sales", "event"]
# Ability chips gained or counted: {Vo = 2}, {Da = 1, Vi = 1} (never a negative number).
Chips = dict[Ability, Annotated[int, Field(ge=0, le=5)]]
# An event target number (Vo2, the 4 of (4, 2, 2)).
Target = Annotated[int, Field(ge=1, le=20)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --------------------------------------------------------------------------- idols


class IdolPower(_Frozen):
    """An idol's own ability (固有アビリティ), from a small vocabulary:

    - ``daily_bonus`` (amount): at ある日の日常, that many more 思い出 chips (春香);
    - ``lesson_vo``: at a レッスン giving Da or Vi chips, may take Vo chips instead (千早): the
      MOVE line says so with ``VO`` (``MOVE 千早 L2 VO``);
    - ``pre_turn_training`` (rate): may TRAIN at that rate before the turn's move (美希);
    - ``lesson_bonus`` (ability, amount): at every レッスン, that many more chips of that
      ability;
    - ``event_bonus`` (ability, amount): that ability counts that much higher in every event
      check;
    - ``sales_bonus`` (amount): at 営業, that many more cards;
    - ``start_chips`` (chips): at game start (タイミング: ゲーム開始時), these chips;
    - ``start_money`` / ``start_memory`` (amount): at game start, these chips.

    The parameter a kind names must be given (an amount of 1 or more, the ability, the rate,
    some chips): a power that could do nothing is refused at start-up.
    """

    kind: Literal[
        "daily_bonus",
        "lesson_vo",
        "pre_turn_training",
        "lesson_bonus",
        "event_bonus",
        "sales_bonus",
        "start_chips",
        "start_money",
        "start_memory",
    ]
    amount: int = Field(default=0, ge=0, le=5)
    ability: Ability | None = None
    rate: int = Field(default=0, ge=0, le=5)
    chips: Chips = Field(default_factory=dict)

    @model_validator(mode="after")
    def _what_the_kind_needs(self) -> IdolPower:
        # Caught at start-up, not when the power first fires in someone's game.
        if self.kind in _POWER_AMOUNT and self.amount < 1:
            raise ValueError(f"a {self.kind} power gives an amount (amount = 1)")
        if self.kind in ("lesson_bonus", "event_bonus") and self.ability is None:
            raise ValueError(f'a {self.kind} power names its ability (ability = "Vo")')
        if self.kind == "pre_turn_training" and self.rate < 1:
            raise ValueError("a pre_turn_training power gives its rate (rate = 2: chips a level)")
        if self.kind == "start_chips" and not any(self.chips.values()):
            raise ValueError("a start_chips power gives chips (chips = {Vo = 1})")
        return self


_POWER_AMOUNT = (
    "daily_bonus",
    "lesson_bonus",
    "event_bonus",
    "sales_bonus",
    "start_money",
    "start_memory",
)


class Idol(_Frozen):
    name: str = Field(min_length=1, max_length=8, pattern=r"^\S+$")  # what players type
    full_name: str
    source: bool = False  # one of the source's three (R A1), the rest are house content
    Vo: int = Field(ge=0, le=5)
    Da: int = Field(ge=0, le=5)
    Vi: int = Field(ge=0, le=5)
    memory: int = Field(default=0, ge=0, le=3)
    power: IdolPower | None = None
    text: str  # the ability as the card reads (Japanese)


class Idols(_Frozen):
    idols: list[Idol]


# --------------------------------------------------------------------------- boards


class Space(_Frozen):
    """A space of a round board. ``id`` is what players type (``L3``, ``E1``, ``G``)."""

    id: str = Field(pattern=r"^[A-Z][0-9]{0,2}$")
    type: SpaceType
    chips: Chips = Field(default_factory=dict)  # レッスン: chips gained
    rate: int = Field(default=0, ge=0, le=5)  # 特訓: chips per ability level
    amount: int = Field(default=0, ge=0, le=5)  # ある日の日常: 思い出; 営業: cards
    col: int = Field(ge=0, le=12)  # where the picture draws it
    row: int = Field(ge=0, le=8)

    @model_validator(mode="after")
    def _printed_amount(self) -> Space:
        if self.type == "lesson" and not any(self.chips.values()):
            raise ValueError("a lesson space prints the chips it gives (chips = {Vo = 1})")
        if self.type == "training" and self.rate < 1:
            raise ValueError("a training space prints its rate (rate = 2: chips a level)")
        if self.type in ("daily", "sales") and self.amount < 1:
            raise ValueError(f"a {self.type} space prints its amount (amount = 1)")
        return self


class Board(_Frozen):
    id: int = Field(ge=1)
    name: str
    role: Literal["first", "middle", "last"]
    spaces: list[Space]
    edges: list[tuple[str, str]]


class Boards(_Frozen):
    boards: list[Board]


def _check_board(board: Board, at: tuple[str | int, ...]) -> None:
    """R 4.2: one start, one goal, no loop, and every space on a path from start to goal;
    no two spaces drawn in one place (col, row)."""
    require_unique(board.spaces, "id", (*at, "spaces"))
    ids = [space.id for space in board.spaces]
    starts = [space.id for space in board.spaces if space.type == "start"]
    goals = [space.id for space in board.spaces if space.type == "goal"]
    if len(starts) != 1 or len(goals) != 1:
        # A second start or goal is blamed on its own line; a missing one on the board's.
        extra = starts[1:] or goals[1:]
        where = (*at, "spaces", ids.index(extra[0])) if extra else at
        raise EntryError(where, f"board {board.id}: one start and one goal (has {starts}, {goals})")
    drawn: dict[tuple[int, int], str] = {}
    for index, space in enumerate(board.spaces):
        other = drawn.setdefault((space.col, space.row), space.id)
        if other != space.id:
            raise EntryError(
                (*at, "spaces", index),
                f"board {board.id}: {space.id} is drawn on {other} (col {space.col}, "
                f"row {space.row})",
            )
    following: dict[str, list[str]] = {space: [] for space in ids}
    for index, (source, target) in enumerate(board.edges):
        if source not in following or target not in following:
            raise EntryError((*at, "edges", index), f"edge {source}->{target}: no such space")
        following[source].append(target)
    order = _topological(following)
    if order is None:
        raise EntryError((*at, "edges"), f"board {board.id}: a path comes back to a space")
    start, goal = starts[0], goals[0]
    reach = _reachable(following, start) | {start}
    for space in board.spaces:
        if space.id not in reach:
            raise EntryError(
                (*at, "spaces", ids.index(space.id)),
                f"board {board.id}: {space.id} cannot be reached from the start",
            )
        if goal not in _reachable(following, space.id) | {space.id}:
            raise EntryError(
                (*at, "spaces", ids.index(space.id)),
                f"board {board.id}: {space.id} cannot reach the goal",
            )


def _topological(following: Mapping[str, list[str]]) -> list[str] | None:
    incoming = {space: 0 for space in following}
    for targets in following.values():
        for target in targets:
            incoming[target] += 1
    ready = [space for space, count in incoming.items() if count == 0]
    order: list[str] = []
    while ready:
        space = ready.pop()
        order.append(space)
        for target in following[space]:
            incoming[target] -= 1
            if incoming[target] == 0:
                ready.append(target)
    return order if len(order) == len(following) else None


def _reachable(following: Mapping[str, list[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in following[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def _check_boards(boards: Boards) -> None:
    require_unique(boards.boards, "id", "boards")
    for index, board in enumerate(boards.boards):
        _check_board(board, ("boards", index))
    roles = [board.role for board in boards.boards]
    if roles.count("first") != 1 or roles.count("last") != 1 or roles.count("middle") < 7:
        raise EntryError(("boards",), "one first board, one last board, 7 or more others")


# --------------------------------------------------------------------------- events


class Level(_Frozen):
    """A level of an event. ``fixed``: each named ability must reach its number (Vo2 Da2 Vi2,
    Vo5); ``any``: the numbers are given to Vo/Da/Vi freely ((4, 2, 2)). Exactly one; every
    number is 1 or more."""

    level: int = Field(ge=1, le=3)
    fixed: dict[Ability, Target] = Field(default_factory=dict)
    any: list[Target] = Field(default_factory=list, max_length=3)
    evp: int = Field(ge=0, le=10)
    memory: int = Field(default=0, ge=0, le=3)
    cards: int = Field(default=0, ge=0, le=3)

    @model_validator(mode="after")
    def _one_kind_of_target(self) -> Level:
        if bool(self.fixed) == bool(self.any):
            raise ValueError("a level has either fixed (Vo = 2) or any ([4, 2, 2]) targets")
        return self


class Event(_Frozen):
    name: str = Field(pattern=r"^\S+$")
    first: bool = False  # Rookies: always the first event (R 3.1)
    source: bool = False
    levels: list[Level] = Field(min_length=3, max_length=3)
    rewards: list[int] = Field(min_length=5, max_length=5)  # by rank 1..5 (R 5.2)
    modifier: bool = True  # whether the round modifier applies (D: not to Rookies)


class Events(_Frozen):
    events: list[Event]


def _check_events(events: Events) -> None:
    require_unique(events.events, "name", "events")
    firsts = [index for index, event in enumerate(events.events) if event.first]
    if len(firsts) != 1:
        raise EntryError(("events",), "exactly one first event (Rookies)")
    if len(events.events) < 4:
        raise EntryError(("events",), "the first event and at least 3 more (results 3, 6, 9)")
    for index, event in enumerate(events.events):
        if [level.level for level in event.levels] != [1, 2, 3]:
            raise EntryError(("events", index), "levels 1, 2, 3 in order")


# --------------------------------------------------------------------------- cards


class Card(_Frozen):
    """An appeal card (the source's イベントカード). Timing: ``turn`` — played on your turn,
    then discarded; ``event`` — played with an EVENT line (CARD before it in the same post),
    for that check; ``keep`` — played face up and stays (it counts to the hold limit) with a
    lasting effect. Effects (one a card):

    - ``chips`` (chips): gain those chips; ``choice`` (amount): that many chips of your choice
      (``CARD 名 Vo Da``);
    - ``memory`` / ``money`` / ``draw`` (amount): gain 思い出, マニー, or draw cards;
    - ``ability`` (amount): raise abilities of your choice by that many levels in all;
    - ``event_now``: take part in the event now (R 5.1, 「特定のアピールカード」);
    - ``free_idol``: this turn, move either idol (lifts the A/B alternation, R 4.3);
    - ``boost`` (chips): those abilities count higher in this event check (timing event);
    - ``lesson_plus`` (amount): keep — at every レッスン, that many more chips of its kind;
    - ``evp_plus`` (amount): keep — each successful event gives that much more EVP.

    Each effect has one timing — ``boost`` event, ``lesson_plus`` and ``evp_plus`` keep, the
    rest turn — and the parameter it names (chips or an amount of 1 or more): a card that
    could do nothing is refused at start-up.
    """

    name: str = Field(pattern=r"^\S+$", max_length=16)
    text: str
    count: int = Field(default=1, ge=1, le=4)
    timing: Literal["turn", "event", "keep"]
    effect: Literal[
        "chips",
        "choice",
        "memory",
        "money",
        "draw",
        "ability",
        "event_now",
        "free_idol",
        "boost",
        "lesson_plus",
        "evp_plus",
    ]
    amount: int = Field(default=0, ge=0, le=5)
    chips: Chips = Field(default_factory=dict)

    @model_validator(mode="after")
    def _what_the_effect_needs(self) -> Card:
        timing = _CARD_TIMING.get(self.effect, "turn")
        if self.timing != timing:
            raise ValueError(f'effect = "{self.effect}" is played with timing = "{timing}"')
        if self.effect in ("chips", "boost") and not any(self.chips.values()):
            raise ValueError(f"a {self.effect} card gives chips (chips = {{Vo = 2}})")
        if self.effect not in ("chips", "boost", "event_now", "free_idol") and self.amount < 1:
            raise ValueError(f"a {self.effect} card gives an amount (amount = 1)")
        return self


# The effects played at another time than on your turn (the rest: timing "turn").
_CARD_TIMING = {"boost": "event", "lesson_plus": "keep", "evp_plus": "keep"}


class Cards(_Frozen):
    cards: list[Card]


def _check_cards(cards: Cards) -> None:
    require_unique(cards.cards, "name", "cards")
    if sum(card.count for card in cards.cards) < 20:
        raise EntryError(("cards",), "at least 20 cards (the rule book: アピールカード 20枚程度)")


# --------------------------------------------------------------------------- tables


class Tables(_Frozen):
    """The numbers the source announces but never gives."""

    # Added to every target number of an event with `modifier`, by round 1..9 (R 5.1
    # 「目標値はプレイしているラウンドや、イベントごとに変動する」).
    round_modifier: list[int] = Field(min_length=9, max_length=9)
    # Final ability ranking: points by rank, per player count ("2" … "5") (R 6).
    final_points: dict[str, list[int]]
    # The final 特訓 and 美希's: chips of an ability per level of it (R A1 「2 Chips」).
    training_rate: int = Field(ge=1, le=5)
    hold_limit: int = Field(ge=1, le=5)  # R 4.6: 3
    results_rounds: list[int]  # R 4.1: 1, 3, 6, 9

    @model_validator(mode="after")
    def _every_count(self) -> Tables:
        for count in ("2", "3", "4", "5"):
            points = self.final_points.get(count)
            if points is None or len(points) != int(count):
                raise ValueError(f"final_points.{count}: one number per rank, {count} ranks")
        rounds = self.results_rounds
        if rounds != sorted(set(rounds)) or not rounds or rounds[0] < 1 or rounds[-1] != 9:
            raise ValueError("results_rounds: rounds 1..9 in order, the last one 9 (R 6)")
        return self


# --------------------------------------------------------------------------- all of it


@dataclass(frozen=True)
class Content:
    idols: dict[str, Idol]
    boards: dict[int, Board]
    events: dict[str, Event]
    cards: dict[str, Card]
    tables: Tables

    @property
    def first_board(self) -> Board:
        return next(b for b in self.boards.values() if b.role == "first")

    @property
    def last_board(self) -> Board:
        return next(b for b in self.boards.values() if b.role == "last")

    @property
    def first_event(self) -> Event:
        return next(e for e in self.events.values() if e.first)


def _check_idols(idols: Idols) -> None:
    require_unique(idols.idols, "name", "idols")
    if len(idols.idols) < 10:
        raise EntryError(("idols",), "10 idols or more: 5 players draft 2 each")


@functools.cache
def load() -> Content:
    """Every content file, validated (raises kit.content.ContentError naming file and line)."""
    folder = content_dir("idolwp")
    idols = load_content(folder / "idols.toml", Idols, _check_idols)
    boards = load_content(folder / "boards.toml", Boards, _check_boards)
    events = load_content(folder / "events.toml", Events, _check_events)
    cards = load_content(folder / "cards.toml", Cards, _check_cards)
    tables = load_content(folder / "tables.toml", Tables)
    return Content(
        idols={idol.name: idol for idol in idols.idols},
        boards={board.id: board for board in boards.boards},
        events={event.name: event for event in events.events},
        cards={card.name: card for card in cards.cards},
        tables=tables,
    )
