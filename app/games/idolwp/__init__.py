"""IM@S x Workerplacement (idolwp): two idols each race across nine round boards, collecting
lesson chips, training, and taking part in events; results after rounds 1, 3, 6 and 9, then a
final ranking of abilities. Rules: docs/rules/idolwp.md (from IM@S x Workerplacement alpha).

    from app.games.idolwp import game
    state = game.setup(["A", "B"], {}, Rng(seed, 0))
    state, events = game.apply(state, state["turn"], game.parse("PICK 春香"), Rng(seed, 1))
"""

from __future__ import annotations

from typing import Any

from app.games.base import Actor, Game, Rng, State, Viewer
from app.games.idolwp import content, rules, scoring, svg
from app.games.idolwp import zombie as _zombie
from app.games.idolwp.commands import GAME_COMMANDS
from app.games.idolwp.grammar import PARSER
from app.games.idolwp.rules import IdolwpOptions
from app.games.idolwp.view import view as _view

__all__ = ["Idolwp", "IdolwpOptions", "game"]


class Idolwp(Game):
    kind = "idolwp"
    title_ja = "IM@S x Workerplacement"
    title_en = "IM@S x Workerplacement"
    aliases = ("idolwp", "imas", "アイマス", "IM@S", "アイマスワーカープレイスメント")
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    player_count_note = "。最後のボードのゴールは1〜5番"
    Options = IdolwpOptions
    parser = PARSER
    commands = GAME_COMMANDS
    breakdown_labels = scoring.BREAKDOWN_LABELS

    def check_content(self) -> None:
        content.load()

    deal = staticmethod(rules.setup)

    def must_be_public_message(self, state: State, command: Any) -> str:
        return (
            "IM@S x Workerplacement に秘密の命令はありません(アイドルの指名も公開のカタン取り)。"
            "スレッドに書き込んでください。"
        )

    copy_state = staticmethod(rules.copy_state)

    def execute(
        self, state: State, actor: Actor, command: Any, rng: Rng, sealed: bool
    ) -> list[dict[str, Any]]:
        assert isinstance(actor, int)  # the GM gives no game command (gm_commands is empty)
        return rules.execute(state, actor, command, rng)

    def legal_commands(self, state: State, actor: Actor) -> list[Any]:
        return list(rules.legal_commands(state, actor))

    examples = staticmethod(rules.examples)

    def refusal_lines(self, state: State, actor: Actor) -> list[str]:
        # CARD and DISCARD lines name the face-down cards of the hand.
        return [
            line for line in self.legal(state, actor) if not line.startswith(("CARD ", "DISCARD "))
        ]

    view = staticmethod(_view)

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        """Every hand but the viewer's, and the decks' order."""
        if viewer == "gm":
            return []
        secrets: list[Any] = [
            list(player["hand"])
            for seat, player in enumerate(state["players"])
            if seat != viewer and len(player["hand"]) > 1
        ]
        for deck in ("card_deck", "event_deck"):
            if len(state[deck]) > 1:
                secrets.append(list(state[deck]))
        return secrets

    board_svg = staticmethod(svg.board_svg)

    def epilogue(self, state: State) -> list[str]:
        if not state["over"]:
            return []
        lines = ["【IM@S x Workerplacement 種明かし】"]
        for player in state["players"]:
            held = "、".join(player["hand"]) or "なし"
            lines.append(f"・{player['name']} の手札(伏せたカード): {held}")
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
        if phase == "draft":
            return "アイドル指名"
        if phase == "final":
            return "最後の特訓"
        return f"第{state['round']}ラウンド"


game = Idolwp()
