"""IM@S x Workerplacement, issue 40: the rules an independent reading of the seed found the bot
playing differently. One test per clause of docs/rules/idolwp.md, named after it."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.base import State
from app.games.idolwp import game
from app.games.idolwp import rules as idolwp_rules
from tests.games.test_idolwp_rules import dealt, free_space, play, refused, texts


def waiting_on(kind: str, hand: list[str]) -> State:
    """The turn player has moved onto an event (kind "event") or a 特訓 space ("training")
    and holds `hand`; the turn waits on that step."""
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["hand"] = list(hand)
    space = free_space(state, (kind,))
    idol = idolwp_rules.due_idols(state, seat)[0]
    state, _ = play(state, seat, f"MOVE {idol} {space}")
    assert state["turn"] == seat and state["pending"]["kind"] == kind
    return state


TURN_CARDS = [
    ("ファンレター", "CARD ファンレター", lambda a, b: b["memory"] == a["memory"] + 1),
    ("臨時収入", "CARD 臨時収入", lambda a, b: b["money"] == a["money"] + 1),
    ("差し入れ", "CARD 差し入れ Vo Vo", lambda a, b: b["chips"]["Vo"] == a["chips"]["Vo"] + 2),
    ("自主トレ", "CARD 自主トレ Da", lambda a, b: b["abilities"]["Da"] == a["abilities"]["Da"] + 1),
]


@pytest.mark.parametrize("kind", ["event", "training"])
@pytest.mark.parametrize(("card", "line", "took"), TURN_CARDS)
def test_a_turn_card_may_be_used_while_the_turn_waits_on_its_event_or_training(
    kind: str, card: str, line: str, took: Any
) -> None:
    """R 4.6 「タイミングを守っている限り、利用できるリソースの数に上限はありません」: a 「手番中に
    使用」 card is used any time on one's own turn — also while the turn waits on its event or
    its 特訓, like CONVERT — and `legal` offers it there; the step still waits afterwards."""
    state = waiting_on(kind, [card])
    seat = state["turn"]
    offered = game.legal(state, seat)
    assert line in offered, offered
    after, _ = play(state, seat, line)
    assert took(state["players"][seat], after["players"][seat])
    assert after["turn"] == seat and after["pending"]["kind"] == kind
    assert card not in after["players"][seat]["hand"]


def test_a_card_drawn_over_the_limit_while_an_event_waits_is_discarded_then_the_event_waits() -> (
    None
):
    """R 4.6: over the hold limit the player discards by choice — a 企画会議 played while the
    event waits asks for the discards first, then the event is still to be entered."""
    state = waiting_on("event", ["企画会議", "マイク", "ファンレター", "臨時収入"])
    seat = state["turn"]
    after, _ = play(state, seat, "CARD 企画会議")
    assert after["pending"]["kind"] == "discard" and after["pending"]["count"] == 2
    for name in list(after["players"][seat]["hand"])[-2:]:
        after, _ = play(after, seat, f"DISCARD {name}")
    assert after["turn"] == seat and after["pending"]["kind"] == "event"


def test_special_stage_is_refused_while_a_training_waits() -> None:
    """D: 特別ステージ (take part in the event now) cannot replace a 特訓 the turn still owes."""
    state = waiting_on("training", ["特別ステージ"])
    assert "特訓" in refused(state, state["turn"], "CARD 特別ステージ").message


def test_a_boost_card_belongs_to_the_check_it_was_played_for() -> None:
    """R 5.1 / the card 「この判定に限り」: a マイク played for an event that the player then
    SKIPs is spent with it; it does not raise a later check in the same turn."""
    state = dealt()
    seat = state["turn"]
    player = state["players"][seat]
    player["hand"] = ["特別ステージ", "マイク"]
    player["money"] = 1
    player["abilities"] = {"Vo": 0, "Da": 1, "Vi": 1}
    state, _ = play(state, seat, "CARD 特別ステージ")
    assert state["pending"]["kind"] == "event"
    state, _ = play(state, seat, "CARD マイク")
    state, _ = play(state, seat, "SKIP")
    assert state["turn"] == seat and state["pending"] is None
    # Rookies Lv1 wants (2, 1, 1): with マイク's Vo+2 it would succeed.
    space = free_space(state, ("lesson", "daily"))
    idol = idolwp_rules.due_idols(state, seat)[0]
    state, events = play(state, seat, f"MOVE {idol} {space} MONEY EVENT LV1")
    assert "失敗" in texts(events), texts(events)
