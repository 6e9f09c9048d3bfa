"""掲示板進行カードゲーム (cardbattle): 1-on-1 battles of three normal cards and up to three
magic cards under a 1,000 cost limit, with cards the players design and register by post
(app/cards.py). Rules: docs/rules/cardbattle.md (from 掲示板進行カードゲーム i言語版).

    from app.games.cardbattle import game
    state = game.setup(["A", "B"], {"pool": pool}, Rng(seed, 0))
    state, events = game.apply(state, 0, game.parse("DECK 舞踏子 ホープ MAKI"), Rng(seed, 1),
                               sealed=True)
"""

from __future__ import annotations

from typing import Any

from app.games.base import Actor, Game, Rng, State, Viewer
from app.games.cardbattle import rules, scoring, svg
from app.games.cardbattle import zombie as _zombie
from app.games.cardbattle.commands import GAME_COMMANDS, Deck, Magic
from app.games.cardbattle.content import starter_pool
from app.games.cardbattle.grammar import PARSER
from app.games.cardbattle.rules import CardbattleOptions
from app.games.cardbattle.view import view as _view

__all__ = ["Cardbattle", "CardbattleOptions", "game"]


class Cardbattle(Game):
    kind = "cardbattle"
    title_ja = "掲示板進行カードゲーム"
    title_en = "Bulletin Board Card Game"
    aliases = ("cardbattle", "掲示板進行カードゲーム", "カードゲーム", "カードバトル")
    min_players = rules.PLAYERS
    max_players = rules.PLAYERS
    player_count_note = "。R プレイヤー対プレイヤーの1on1"
    Options = CardbattleOptions
    parser = PARSER
    commands = GAME_COMMANDS
    uses_card_registry = True
    breakdown_labels = scoring.BREAKDOWN_LABELS

    def check_content(self) -> None:
        starter_pool()

    deal = staticmethod(rules.setup)
    needs_seal = staticmethod(rules.needs_seal)

    def must_be_sealed_message(self, state: State, command: Any) -> str:
        return (
            "デッキは相手に見えないように封印して送ります(ゲームのページの封印コマンド、"
            "または POST /api/games/{id}/sealed)。スレッドに書いたデッキは相手に見えてしまいます。"
        )

    copy_state = staticmethod(rules.copy_state)

    def execute(
        self, state: State, actor: Actor, command: Any, rng: Rng, sealed: bool
    ) -> list[dict[str, Any]]:
        assert isinstance(actor, int)
        return rules.execute(state, actor, command, rng)

    def legal_commands(self, state: State, actor: Actor) -> list[Any]:
        return list(rules.legal_commands(state, actor))

    def refusal_lines(self, state: State, actor: Actor) -> list[str]:
        # MAGIC lines name undeclared magic cards; DECK lines are sealed anyway.
        return [
            command.canonical()
            for command in rules.legal_commands(state, actor)
            if not isinstance(command, Magic | Deck)
        ]

    view = staticmethod(_view)

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        """The other side's sealed deck before the reveal and its undeclared magic."""
        if viewer == "gm":
            return []
        secrets: list[Any] = []
        for seat, player in enumerate(state["players"]):
            if seat == viewer:
                continue
            step = state["step"]
            if step is not None and str(seat) in step["sealed"]:
                secrets.append(step["sealed"][str(seat)]["cards"])
            if len(player["magic"]) > 1:
                secrets.append(list(player["magic"]))
        return secrets

    board_svg = staticmethod(svg.board_svg)

    def epilogue(self, state: State) -> list[str]:
        if not state["over"]:
            return []
        lines = ["【掲示板進行カードゲーム 種明かし】"]
        for player in state["players"]:
            unused = "、".join(player["magic"]) or "なし"
            lines.append(f"・{player['name']} の宣言しなかったマジックカード: {unused}")
        return lines

    result = staticmethod(scoring.result)
    waiting_for = staticmethod(rules.waiting_for)
    default_commands = staticmethod(rules.default_commands)
    zombie = staticmethod(_zombie.zombie)
    turn_key = staticmethod(rules.turn_key)

    def turn_label(self, state: State) -> str:
        phase = state["phase"]
        if state["over"] or phase == "over":
            return ""
        if phase == "deck":
            return "デッキ封印"
        if phase == "window":
            return "魔法の宣言"
        return f"第{state['turn']}手番"


game = Cardbattle()
