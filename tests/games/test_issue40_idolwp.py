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


# --------------------------------------------------------------------------- offered lines


def offered(state: State) -> list[str]:
    return game.legal(state, state["turn"])


def accepted_all(state: State, lines: list[str]) -> None:
    for line in lines:
        play(state, state["turn"], line)


def test_chihayas_vo_lesson_is_offered() -> None:
    """R A1 千早 (Da/Vi のレッスンで Vo チップ): `MOVE 千早 <lesson> VO` is offered wherever a
    レッスン of Da or Vi chips is reachable, and accepted."""
    state = dealt(idols={"A": ["千早", "春香"], "B": ["伊織", "律子"]})
    state["turn"] = 0
    state["players"][0]["last_moved"] = None
    board = idolwp_rules.board_of(state)
    vo = [line for line in offered(state) if line.endswith(" VO")]
    lessons = {
        space.id
        for space in board.spaces
        if space.type == "lesson" and (space.chips.get("Da") or space.chips.get("Vi"))
    }
    assert vo and {line.split()[2] for line in vo} <= lessons
    accepted_all(state, vo)


def test_every_boost_that_makes_an_event_pass_most_cheaply_is_offered() -> None:
    """R 5.1 好きな数だけのVo/Da/Viチップを使用できる: besides each level without chips, `legal`
    offers for each level the cheapest boosts that make it pass (Rookies Lv3 wants (4, 3, 2):
    from 2/2/2 with chips Vo2 Da1, `EVENT LV3 BOOST Vo2 Da1`); each is accepted and passes."""
    state = waiting_on("event", [])
    seat = state["turn"]
    player = state["players"][seat]
    player["abilities"] = {"Vo": 2, "Da": 2, "Vi": 2}
    player["chips"] = {"Vo": 2, "Da": 1, "Vi": 0}
    player["memory"] = 0
    lines = offered(state)
    assert "EVENT LV3 BOOST Vo2 Da1" in lines
    boosts = [line for line in lines if "BOOST" in line]
    for line in boosts:
        _, events = play(state, seat, line)
        assert "成功" in texts(events), line


def test_training_any_number_of_levels_of_one_ability_is_offered() -> None:
    """R 4.4 特訓: raise an ability by as many levels as the chips pay for: `TRAIN Vo1`,
    `TRAIN Vo2` … up to the chips, for each ability; each is accepted."""
    state = waiting_on("training", [])
    seat = state["turn"]
    rate = int(state["pending"]["rate"])
    state["players"][seat]["chips"] = {"Vo": 3 * rate, "Da": rate, "Vi": 0}
    lines = [line for line in offered(state) if line.startswith("TRAIN ")]
    assert {"TRAIN Vo1", "TRAIN Vo2", "TRAIN Vo3", "TRAIN Da1"} <= set(lines)
    assert "TRAIN Vo4" not in lines and "TRAIN Vi1" not in lines
    accepted_all(state, lines)


def test_converting_into_any_mix_of_chips_is_offered() -> None:
    """R 4.6 思い出 → 好きなアビリティチップを3個, マニー → 2個: every mix is offered
    (`CONVERT MEMORY Vo Vo Da`, `CONVERT MONEY Da Vi`), each once."""
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["memory"] = 1
    state["players"][seat]["money"] = 1
    lines = offered(state)
    memory = [line for line in lines if line.startswith("CONVERT MEMORY")]
    money = [line for line in lines if line.startswith("CONVERT MONEY")]
    assert len(memory) == len(set(memory)) == 10 and "CONVERT MEMORY Vo Vo Da" in memory
    assert len(money) == len(set(money)) == 6 and "CONVERT MONEY Da Vi" in money
    accepted_all(state, memory + money)


def test_a_card_of_chips_of_your_choice_offers_every_mix() -> None:
    """The card 差し入れ (好きなアビリティチップを2つ): `CARD 差し入れ Vo Da` is offered too."""
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["hand"] = ["差し入れ"]
    lines = [line for line in offered(state) if line.startswith("CARD 差し入れ")]
    assert len(lines) == 6 and "CARD 差し入れ Vo Da" in lines
    accepted_all(state, lines)


def test_mixed_boosts_trainings_and_one_line_turns_are_shown_as_patterns() -> None:
    """What `legal` does not list one by one — a boost or a 特訓 mixing abilities, a whole turn
    on one line — is shown as an example line to follow (`examples`), itself accepted."""
    state = waiting_on("event", [])
    seat = state["turn"]
    state["players"][seat]["chips"] = {"Vo": 1, "Da": 1, "Vi": 0}
    shown = [line for line, sealed in game.examples(state, seat) if not sealed]
    assert any("BOOST Vo1 Da1" in line for line in shown), shown
    accepted_all(state, shown)
    fresh = dealt()
    shown = [line for line, _ in game.examples(fresh, fresh["turn"])]
    assert any(line.startswith("MOVE ") and " EVENT " in line for line in shown), shown
    accepted_all(fresh, shown)


def test_letting_a_held_card_go_at_will_is_offered() -> None:
    """R 4.6 (the hold limit; D a card may also be let go at will, `DISCARD <card>`): on one's
    own turn, each held card's DISCARD is offered, face-down and face-up, and accepted."""
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["hand"] = ["ファンレター"]
    state["players"][seat]["kept"] = ["ファンクラブ"]
    lines = [line for line in offered(state) if line.startswith("DISCARD")]
    assert lines == ["DISCARD ファンレター", "DISCARD ファンクラブ"]
    accepted_all(state, lines)
