"""新新エリューシス (eleusis): the parent invents a secret rule about which card may follow;
the children play cards onto a line and try to work the rule out. Rules:
docs/rules/eleusis.md (from くぼたやブログ「新新エリューシス(エリウシス)」改良案).

    from app.games.eleusis import game
    state = game.setup(["A", "B", "C", "D"], {}, Rng(seed, 0))
    state, events = game.apply(state, 0, game.parse("RULE card.color != prev.color"),
                               Rng(seed, 1), sealed=True)
"""

from __future__ import annotations

from typing import Any

from app.games.base import Actor, Game, Rng, State, Viewer, phase_or_turn
from app.games.eleusis import bot as _bot
from app.games.eleusis import rules, scoring, svg
from app.games.eleusis import zombie as _zombie
from app.games.eleusis.commands import GAME_COMMANDS, ChooseParent, EndRound, Play, SealRule
from app.games.eleusis.grammar import PARSER
from app.games.eleusis.grammar import parse as _parse
from app.games.eleusis.rules import EleusisOptions
from app.games.eleusis.view import epilogue as _epilogue
from app.games.eleusis.view import view as _view
from app.games.kit import decks

__all__ = ["Eleusis", "EleusisOptions", "game"]


class Eleusis(Game):
    kind = "eleusis"
    wording = 2  # issue 43's shorter replies (docs/rules/eleusis.md)
    title_ja = "新新エリューシス"
    title_en = "New New Eleusis"
    aliases = (
        "eleusis",
        "新新エリューシス",
        "新エリューシス",
        "エリューシス",
        "エリウシス",
        "New Eleusis",
    )
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    Options = EleusisOptions
    parser = PARSER
    commands = GAME_COMMANDS
    gm_commands = (EndRound, ChooseParent)
    # PLAY lines name the cards of the player's hand; a refusal is read by everyone.
    secret_commands = (Play,)
    breakdown_labels = scoring.BREAKDOWN_LABELS

    def parse(self, line: str) -> Any:
        # A broken rule expression is explained by the rule grammar (grammar.parse).
        return _parse(line)

    def deal(self, players: list[str], options: Any, rng: Rng) -> State:
        return rules.setup(players, options, rng)

    needs_seal = staticmethod(rules.needs_seal)

    def check_content(self) -> None:
        _bot.house_rules()  # the bot parent's list of formal rules (content/house_rules.toml)

    bot = staticmethod(_bot.bot)

    def gm_command_note(self, command: Any) -> str:
        return rules.GM_COMMAND_NOTE

    def must_be_sealed_message(self, state: State, command: Any) -> str:
        return rules.MUST_BE_SEALED["rule" if isinstance(command, SealRule) else "judge"]

    copy_state = staticmethod(rules.copy_state)

    def execute(
        self, state: State, actor: Actor, command: Any, rng: Rng, sealed: bool
    ) -> list[dict[str, Any]]:
        return rules.execute(state, actor, command, rng, sealed)

    legal_commands = staticmethod(rules.legal_commands)

    def examples(self, state: State, actor: Actor) -> list[tuple[str, bool]]:
        shown: list[tuple[str, bool]] = []
        if not state["over"] and state["phase"] == "rule" and actor == state["parent"]:
            modes = ("formal", "hand") if state["rules"] == "any" else (state["rules"],)
            shown += [(rules.EXAMPLE_RULES[mode], True) for mode in modes]
        if isinstance(actor, int) and rules.hint_allowed(state) and actor == state["parent"]:
            shown.append(("HINT 色が交互", False))
        return shown

    view = staticmethod(_view)

    reveals = staticmethod(rules.reveals)

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        """Every hand but the viewer's, the deck's order and the sealed rule, while hidden."""
        if viewer == "gm":
            return []
        secrets: list[Any] = decks.others_hands(state["players"], viewer)
        if len(state["deck"]) > 1:
            secrets.append(list(state["deck"]))
        if state["rule"] is not None and not state["over"] and viewer != state["parent"]:
            secrets += [state["rule"], state["salt"]]
        return secrets

    board_svg = staticmethod(svg.board_svg)

    epilogue = staticmethod(_epilogue)
    result = staticmethod(scoring.result)
    waiting_for = staticmethod(rules.waiting_for)
    zombie = staticmethod(_zombie.zombie)
    default_commands = staticmethod(rules.default_commands)
    turn_key = staticmethod(rules.turn_key)

    def turn_label(self, state: State) -> str:
        return phase_or_turn(state, "第{round}ラウンド")


game = Eleusis()
