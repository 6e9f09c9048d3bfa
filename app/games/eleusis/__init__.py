"""新新エリューシス (eleusis): the parent invents a secret rule about which card may follow;
the children play cards onto a line and try to work the rule out. Rules:
docs/rules/eleusis.md (from くぼたやブログ「新新エリューシス(エリウシス)」改良案).

    from app.games.eleusis import game
    state = game.setup(["A", "B", "C", "D"], {}, Rng(seed, 0))
    state, events = game.apply(state, 0, game.parse("RULE card.color != prev.color"),
                               Rng(seed, 1), sealed=True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from app.games.base import Actor, Result, Rng, State, Viewer
from app.games.eleusis import rules, scoring
from app.games.eleusis.grammar import PARSER
from app.games.eleusis.grammar import parse as _parse
from app.games.eleusis.rules import EleusisOptions
from app.games.eleusis.view import epilogue as _epilogue
from app.games.eleusis.view import view as _view

__all__ = ["Eleusis", "EleusisOptions", "game"]


class Eleusis:
    kind = "eleusis"
    title_ja = "新新エリューシス"
    title_en = "New New Eleusis"
    aliases: tuple[str, ...] = (
        "eleusis",
        "新新エリューシス",
        "新エリューシス",
        "エリューシス",
        "エリウシス",
        "New Eleusis",
    )
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    Options: type[BaseModel] = EleusisOptions
    grammar = "eleusis.lark"

    def is_command_line(self, line: str) -> bool:
        return PARSER.is_command_line(line)

    def parse(self, line: str) -> Any:
        return _parse(line)

    def verbs(self) -> list[str]:
        return PARSER.verb_words

    def setup(self, players: list[str], options: Mapping[str, Any], rng: Rng) -> State:
        return rules.setup(list(players), options, rng)

    def apply(
        self, state: State, actor: Actor, command: Any, rng: Rng, *, sealed: bool = False
    ) -> tuple[State, list[dict[str, Any]]]:
        return rules.apply(state, actor, command, rng, sealed=sealed)

    def legal(self, state: State, actor: Actor) -> list[str]:
        return rules.legal(state, actor)

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        return _view(state, viewer)

    def epilogue(self, state: State) -> list[str]:
        return _epilogue(state)

    def result(self, state: State) -> Result | None:
        return scoring.result(state)

    def is_over(self, state: State) -> bool:
        return bool(state["over"])

    def waiting_for(self, state: State) -> list[int]:
        return rules.waiting_for(state)

    def default_commands(self, state: State, seat: int) -> list[str]:
        return rules.default_commands(state, seat)

    def turn_key(self, state: State) -> str:
        return rules.turn_key(state)

    def needs_seal(self, state: State, command: Any) -> bool | None:
        """True: `command` must come sealed now; False: public; None: either (rules.py)."""
        return rules.needs_seal(state, command)


game = Eleusis()
