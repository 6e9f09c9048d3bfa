"""えいつく (eitsuku): make a film by filling its roles with budget, release it, compete at
the box office. Rules: docs/rules/eitsuku.md (from えいつくルールブック バージョン5).

    from app.games.eitsuku import game
    state = game.setup(["A", "B"], {}, Rng(seed, 0))
    state, events = game.apply(state, 0, game.parse("END"), Rng(seed, 1))
"""

from __future__ import annotations

from typing import Any

from app.games.base import Actor, Game, Rng, State, Viewer, phase_or_turn
from app.games.eitsuku import bot as _bot
from app.games.eitsuku import rules, scoring, svg
from app.games.eitsuku import zombie as _zombie
from app.games.eitsuku.commands import GAME_COMMANDS, GM_COMMANDS, Shuffle
from app.games.eitsuku.grammar import PARSER
from app.games.eitsuku.view import view as _view

__all__ = ["Eitsuku", "game"]


class Eitsuku(Game):
    kind = "eitsuku"
    wording = 2  # issue 43: a closing ranking leaves out what scored 0 (app/gm/results.py)
    title_ja = "えいつく"
    title_en = "Eitsuku"
    aliases = ("eitsuku", "えいつく", "エイツク")
    # D: the rulebook gives no player count; its piles scale with PL数 and its example has one
    # player (Aさん) among others. Two to six keeps a 60-card deck per role sufficient.
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    parser = PARSER
    commands = GAME_COMMANDS
    gm_commands = GM_COMMANDS
    breakdown_labels = scoring.BREAKDOWN_LABELS
    Options = rules.EitsukuOptions
    edition = rules.EDITION

    def deal(self, players: list[str], options: Any, rng: Rng) -> State:
        state, _ = rules.setup(players, rng, options.edition)
        return state

    def must_be_public_message(self, state: State, command: Any) -> str:
        # Everything in a stock is public (R 2−1); a week's moves have nothing to hide.
        return (
            "えいつくには封印する命令がないので、スレッドに書き込んでください"
            "(ストック場のカードはすべて公開)。"
        )

    copy_state = staticmethod(rules.copy_state)

    def execute(
        self, state: State, actor: Actor, command: Any, rng: Rng, sealed: bool
    ) -> list[dict[str, Any]]:
        if actor == "gm":  # the guard let the GM give only its own command, SHUFFLE
            assert isinstance(command, Shuffle)
            return rules.shuffle(state, command, rng)
        return rules.execute(state, actor, command, rng)

    def gm_command_note(self, command: Any) -> str:
        return "(山の切り直しは GM の道具。UNDO のあとはボットが行います)"

    undo_lines = staticmethod(rules.undo_lines)

    legal_commands = staticmethod(rules.legal_commands)

    view = staticmethod(_view)
    board_svg = staticmethod(svg.board_svg)
    result = staticmethod(scoring.result)
    waiting_for = staticmethod(rules.waiting_for)
    zombie = staticmethod(_zombie.zombie)

    bot = staticmethod(_bot.bot)

    default_commands = staticmethod(rules.default_commands)

    def turn_key(self, state: State) -> str:
        return "over" if state["over"] else f"week{state['week']}"

    def turn_label(self, state: State) -> str:
        return phase_or_turn(state, "第{week}週")

    reveals = staticmethod(rules.reveals)

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        # Nothing but the order of the closed decks, which no one ever sees (R 2−2).
        return [list(cards) for cards in state["decks"].values() if len(cards) > 1]


game = Eitsuku()
