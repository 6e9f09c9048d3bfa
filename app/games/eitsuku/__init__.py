"""えいつく (eitsuku): make a film by filling its roles with budget, release it, compete at
the box office. Rules: docs/rules/eitsuku.md (from えいつくルールブック バージョン5).

    from app.games.eitsuku import game
    state = game.setup(["A", "B"], {}, Rng(seed, 0))
    state, events = game.apply(state, 0, game.parse("END"), Rng(seed, 1))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from app.games.base import Actor, Game, Result, Rng, RuleError, State, Viewer
from app.games.eitsuku import rules, scoring
from app.games.eitsuku.grammar import PARSER
from app.games.eitsuku.view import view as _view

__all__ = ["Eitsuku", "EitsukuOptions", "game"]


class EitsukuOptions(BaseModel):
    """えいつく has no options: the rulebook fixes piles, decks and the 12 weeks."""

    model_config = ConfigDict(extra="forbid")


class Eitsuku:
    kind = "eitsuku"
    title_ja = "えいつく"
    title_en = "Eitsuku"
    aliases: tuple[str, ...] = ("eitsuku", "えいつく", "エイツク")
    # D: the rulebook gives no player count; its piles scale with PL数 and its example has one
    # player (Aさん) among others. Two to six keeps a 60-card deck per role sufficient.
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    Options: type[BaseModel] = EitsukuOptions
    grammar = "eitsuku.lark"

    def is_command_line(self, line: str) -> bool:
        return PARSER.is_command_line(line)

    def parse(self, line: str) -> Any:
        return PARSER.parse(line)

    def verbs(self) -> list[str]:
        return PARSER.verb_words

    def setup(self, players: list[str], options: Mapping[str, Any], rng: Rng) -> State:
        self.Options.model_validate(dict(options))
        state, _ = rules.setup(list(players), rng)
        return state

    def apply(
        self, state: State, actor: Actor, command: Any, rng: Rng, *, sealed: bool = False
    ) -> tuple[State, list[dict[str, Any]]]:
        if sealed:
            # Everything in a stock is public (R 2−1); a week's moves have nothing to hide.
            raise RuleError(
                "えいつくには秘密にする命令はありません。スレッドに書き込んでください。"
                "(R: ストック場のカードはすべて公開)",
                rules.legal(state, actor),
            )
        return rules.apply(state, actor, command, rng)

    def needs_seal(self, state: State, command: Any) -> bool | None:
        return False  # nothing in えいつく is secret

    def epilogue(self, state: State) -> list[str]:
        # Nothing is hidden but the order of the closed decks, which no one ever sees.
        return []

    def legal(self, state: State, actor: Actor) -> list[str]:
        return rules.legal(state, actor)

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return _view(state, viewer)

    def result(self, state: State) -> Result | None:
        return scoring.result(state)

    def is_over(self, state: State) -> bool:
        return bool(state["over"])

    def waiting_for(self, state: State) -> list[int]:
        return rules.waiting_for(state)

    def default_commands(self, state: State, seat: int) -> list[str]:
        return rules.default_commands(state, seat)

    def turn_key(self, state: State) -> str:
        return "over" if state["over"] else f"week{state['week']}"


game: Game = Eitsuku()
