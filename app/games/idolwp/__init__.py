"""IM@S x Workerplacement (idolwp): two idols each race across nine round boards, collecting
lesson chips, training, and taking part in events; results after rounds 1, 3, 6 and 9, then a
final ranking of abilities. Rules: docs/rules/idolwp.md (from IM@S x Workerplacement alpha).

    from app.games.idolwp import game
    state = game.setup(["A", "B"], {}, Rng(seed, 0))
    state, events = game.apply(state, state["turn"], game.parse("PICK 春香"), Rng(seed, 1))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.games.base import Game, State, Viewer, phase_or_turn
from app.games.idolwp import bot as _bot
from app.games.idolwp import content, rules, scoring, svg
from app.games.idolwp import zombie as _zombie
from app.games.idolwp.commands import GAME_COMMANDS, CardPlay, Discard
from app.games.idolwp.grammar import PARSER
from app.games.idolwp.rules import IdolwpOptions
from app.games.idolwp.view import view as _view
from app.games.kit import decks

__all__ = ["Idolwp", "IdolwpOptions", "game"]

# The phases `turn_label` names by their own words, not by the round.
PHASE_LABELS = {"draft": "アイドル指名", "final": "最後の特訓"}


class Idolwp(Game):
    kind = "idolwp"
    wording = 2  # issue 43's shorter replies (docs/rules/idolwp.md)
    title_ja = "IM@S x Workerplacement"
    title_en = "IM@S x Workerplacement"
    aliases = ("idolwp", "imas", "アイマス", "IM@S", "アイマスワーカープレイスメント")
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    player_count_note = "。最後のボードのゴールは1〜5番"
    Options = IdolwpOptions
    parser = PARSER
    commands = GAME_COMMANDS
    # CARD and DISCARD lines name the face-down cards of the hand.
    secret_commands = (CardPlay, Discard)

    def check_content(self) -> None:
        content.load()

    deal = staticmethod(rules.setup)
    copy_state = staticmethod(rules.copy_state)
    play = staticmethod(rules.execute)
    legal_commands = staticmethod(rules.legal_commands)
    examples = staticmethod(rules.examples)

    def must_be_public_message(self, state: State, command: Any) -> str:
        return (
            "IM@S x Workerplacement には封印する命令がないので、スレッドに書き込んでください"
            "(アイドルの指名も公開のカタン取り)。"
        )

    view = staticmethod(_view)
    board_svg = staticmethod(svg.board_svg)

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        """Every hand but the viewer's, and the decks' order."""
        if viewer == "gm":
            return []
        secrets: list[Any] = decks.others_hands(state["players"], viewer)
        for deck in ("card_deck", "event_deck"):
            if len(state[deck]) > 1:
                secrets.append(list(state[deck]))
        return secrets

    breakdown_labels = scoring.BREAKDOWN_LABELS
    result = staticmethod(scoring.result)

    def revealed(self, player: Mapping[str, Any]) -> str:
        return f" の手札(伏せたカード): {'、'.join(player['hand']) or 'なし'}"

    default_commands = staticmethod(rules.default_commands)
    zombie = staticmethod(_zombie.zombie)

    bot = staticmethod(_bot.bot)

    waiting_for = staticmethod(rules.waiting_for)
    turn_key = staticmethod(rules.turn_key)

    def turn_label(self, state: State) -> str:
        return phase_or_turn(state, "第{round}ラウンド", PHASE_LABELS)


game = Idolwp()
