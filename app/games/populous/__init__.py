"""ポピュラス 草案21 (populous): 3–5 gods build a world of hex tiles post by post — genesis
areas chosen with markers, god's wrath and catastrophes, workers placed and moved, epic cards
played in generations with inheritance, wars and mediation, settlements (決算) and a final
scoring. Rules: docs/rules/populous.md (from ポピュラス 草案21).

    from app.games.populous import game
    state = game.setup(["A", "B", "C"], {}, Rng(seed, 0))
    state, events = game.apply(state, state["turn"], game.parse("RACE ドワーフ"), Rng(seed, 1))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.games.base import Actor, Game, Rng, State, Viewer, phase_or_turn
from app.games.kit import seats
from app.games.populous import bot as _bot
from app.games.populous import content, rules, scoring, svg
from app.games.populous import zombie as _zombie
from app.games.populous.commands import GAME_COMMANDS, Discard, Pick, Play, Reveal
from app.games.populous.grammar import PARSER
from app.games.populous.rules import PopulousOptions
from app.games.populous.view import view as _view

__all__ = ["Populous", "PopulousOptions", "game"]

# The phases `turn_label` names by their own words, not by the round.
PHASE_LABELS = {"race": "種族選択", "draft": "スキルのドラフト", "cubes": "リソースの配分"}


class Populous(Game):
    kind = "populous"
    wording = 2  # issue 43's shorter replies (docs/rules/populous.md)
    title_ja = "ポピュラス 草案21"
    title_en = "Populous draft 21"
    aliases = ("populous", "ポピュラス", "ポピュラス草案21", "草案21")
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    Options = PopulousOptions
    parser = PARSER
    commands = GAME_COMMANDS
    # Hand plays and discards name the cards of the hand, REVEAL lines the face-down skills:
    # a refusal is posted in the thread, for everyone to read.
    secret_commands = (Play, Discard, Reveal)

    def check_content(self) -> None:
        content.load()

    deal = staticmethod(rules.setup)
    copy_state = staticmethod(rules.copy_state)

    def execute(
        self, state: State, actor: Actor, command: Any, rng: Rng, sealed: bool
    ) -> list[dict[str, Any]]:
        assert isinstance(actor, int)  # the GM gives no game command (gm_commands is empty)
        return rules.execute(state, actor, command, rng, sealed)

    legal_commands = staticmethod(rules.legal_commands)
    needs_seal = staticmethod(rules.needs_seal)

    def must_be_sealed_message(self, state: State, command: Any) -> str:
        if isinstance(command, Play):
            return (
                "伏せるカードを書いた FACEDOWN は封印して送ってください(スレッドでは CARD を"
                "書かずに FACEDOWN <アクション> と書けば、手札の一番新しいカードを伏せます)。"
            )
        if isinstance(command, Pick):
            return "スキルのドラフトは秘密なので、封印して PICK <スキル> を送ってください。"
        return "リソースの配分は秘密なので、封印して CUBES 情熱 a 食料 b 信仰 c を送ってください。"

    view = staticmethod(_view)
    board_svg = staticmethod(svg.board_svg)

    reveals = staticmethod(rules.reveals)

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        """Every hand but the viewer's, the deck's order, others' face-down skills, the cards
        under others' face-down cards, and the draft packs."""
        if viewer == "gm":
            return []
        secrets: list[Any] = []
        for seat, player in seats.others(state["players"], viewer):
            if len(player["hand"]) > 1:
                secrets.append(sorted(player["hand"]))
            face_down = [name for name in player["skills"] if name not in player["revealed"]]
            secrets.extend(face_down)
            if state["draft"] is not None:
                secrets.extend(state["draft"]["packs"][seat])
        if len(state["deck"]) > 1:
            secrets.append(list(state["deck"]))
        return secrets

    breakdown_labels = scoring.BREAKDOWN_LABELS
    result = staticmethod(scoring.result)

    def revealed(self, player: Mapping[str, Any]) -> str:
        hand = "、".join(player["hand"]) or "なし"
        hidden = [n for n in player["skills"] if n not in player["revealed"]]
        down = [c["kind"] for gen in player["gens"] for c in gen if c["down"]]
        return (
            f": 手札 {hand}"
            f" / 伏せたままのスキル {'、'.join(hidden) or 'なし'}"
            f" / 裏面配置のカード {'、'.join(down) or 'なし'}"
        )

    waiting_for = staticmethod(rules.waiting_for)
    turn_key = staticmethod(rules.turn_key)

    def turn_label(self, state: State) -> str:
        return phase_or_turn(state, "第{round}ラウンド", PHASE_LABELS)

    default_commands = staticmethod(rules.default_commands)
    zombie = staticmethod(_zombie.zombie)

    bot = staticmethod(_bot.bot)


game = Populous()
