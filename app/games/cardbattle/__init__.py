"""掲示板進行カードゲーム (cardbattle): 1-on-1 battles of three normal cards and up to three
magic cards under a 1,000 cost limit, with cards the players design and register by post
(app/gm/cards.py). Rules: docs/rules/cardbattle.md (from 掲示板進行カードゲーム i言語版).

    from app.games.cardbattle import game
    state = game.setup(["A", "B"], {"pool": pool}, Rng(seed, 0))
    state, events = game.apply(state, 0, game.parse("DECK 舞踏子 ホープ MAKI"), Rng(seed, 1),
                               sealed=True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.games.base import Game, State, Viewer, phase_or_turn
from app.games.cardbattle import bot as _bot
from app.games.cardbattle import rules, scoring, svg
from app.games.cardbattle import zombie as _zombie
from app.games.cardbattle.commands import GAME_COMMANDS, Magic
from app.games.cardbattle.content import starter_cards, starter_pool
from app.games.cardbattle.grammar import PARSER
from app.games.cardbattle.rules import CardbattleOptions
from app.games.cardbattle.view import view as _view
from app.games.kit import seats

__all__ = ["Cardbattle", "CardbattleOptions", "game"]

# The phases `turn_label` names by their own words, not by the turn.
PHASE_LABELS = {"deck": "デッキ封印", "window": "魔法の宣言"}


class Cardbattle(Game):
    kind = "cardbattle"
    wording = 2  # issue 43's shorter replies (docs/rules/cardbattle.md)
    title_ja = "掲示板進行カードゲーム"
    title_en = "Bulletin Board Card Game"
    aliases = ("cardbattle", "掲示板進行カードゲーム", "カードゲーム", "カードバトル")
    min_players = rules.PLAYERS
    max_players = rules.PLAYERS
    player_count_note = "。1対1の対戦です"
    Options = CardbattleOptions
    parser = PARSER
    commands = GAME_COMMANDS
    # MAGIC lines name undeclared magic cards; DECK lines are sealed anyway.
    secret_commands = (Magic,)
    uses_card_registry = True

    def check_content(self) -> None:
        starter_pool()
        starter_cards()

    deal = staticmethod(rules.setup)
    copy_state = staticmethod(rules.copy_state)
    play = staticmethod(rules.execute)
    legal_commands = staticmethod(rules.legal_commands)
    needs_seal = staticmethod(rules.needs_seal)

    def must_be_sealed_message(self, state: State, command: Any) -> str:
        return (
            "デッキは相手に見えないよう、ゲームのページの封印コマンドの欄から送ります"
            "(スレッドに書いたデッキは相手に見えてしまいます)。"
        )

    view = staticmethod(_view)
    board_svg = staticmethod(svg.board_svg)

    reveals = staticmethod(rules.reveals)

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        """The other side's sealed deck before the reveal and its undeclared magic."""
        if viewer == "gm":
            return []
        secrets: list[Any] = []
        for seat, player in seats.others(state["players"], viewer):
            step = state["step"]
            if step is not None and str(seat) in step["sealed"]:
                secrets.append(step["sealed"][str(seat)]["cards"])
            if len(player["magic"]) > 1:
                secrets.append(list(player["magic"]))
        return secrets

    breakdown_labels = scoring.BREAKDOWN_LABELS
    result = staticmethod(scoring.result)

    def breakdown_words(self, value: Any) -> Any:
        # Games decided before issue 43 stored their reason with 「(R 敗北条件が優先)」.
        if isinstance(value, str):
            return value.replace(rules.STORED_OVER_NOTE, rules.SHOWN_OVER_NOTE)
        return value

    def revealed(self, player: Mapping[str, Any]) -> str:
        return f" の宣言しなかったマジックカード: {'、'.join(player['magic']) or 'なし'}"

    default_commands = staticmethod(rules.default_commands)
    zombie = staticmethod(_zombie.zombie)

    bot = staticmethod(_bot.bot)

    waiting_for = staticmethod(rules.waiting_for)
    turn_key = staticmethod(rules.turn_key)

    def turn_label(self, state: State) -> str:
        return phase_or_turn(state, "第{turn}手番", PHASE_LABELS)


game = Cardbattle()
