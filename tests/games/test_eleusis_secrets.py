"""Sealed commands and hidden information (docs/rules/eleusis.md, "Sealed commands and hidden
information", "View", "Epilogue").

The non-interference test plays random games and, at every step, changes everything a viewer
may not know (other hands, the deck, the rule and its salt, other judges' secret judgments,
past rounds' hands): that viewer's view and legal lines must not change.
"""

from __future__ import annotations

from random import Random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.games.base import Rng, RuleError, State, Viewer
from app.games.eleusis import game
from app.games.eleusis.cards import suited
from app.games.eleusis.commands import SealRule
from app.games.eleusis.rules import copy_state, needs_seal
from tests.games.test_eleusis_property import Table
from tests.games.test_eleusis_rule_language import Expr, rules_with_meaning
from tests.games.test_eleusis_rules import (
    ALTERNATE,
    NAMES,
    act,
    begin,
    rejected,
    rig_hand,
    rig_line,
)

# --------------------------------------------------------------------------- sealing


def test_rule_must_come_sealed() -> None:
    """I: the parent seals the rule (RULE as a sealed command); a public one is refused."""
    state = game.setup(NAMES[:4], {}, Rng("s", 0))
    error = rejected(state, 0, f"RULE {ALTERNATE}", sealed=False)
    assert "封印して" in error.message and ALTERNATE not in error.message
    assert "封印して RULE で送り" in rejected(state, 0, "RULE TEXT 赤黒", sealed=False).message
    assert needs_seal(state, game.parse("RULE card.face")) is True
    state, _ = act(state, 0, f"RULE {ALTERNATE}", sealed=True)
    assert state["rule"] == ALTERNATE


@pytest.mark.parametrize(
    ("actor", "line"),
    [(1, "PLAY ○ ♥2"), (1, "PROPHET"), (0, "HINT 色"), ("gm", "ENDROUND"), ("gm", "PARENT C")],
)
def test_public_acts_may_not_be_sealed(actor: int | str, line: str) -> None:
    """D: PLAY, PROPHET, HINT, ENDROUND and PARENT are acts in the thread; sealed, refused."""
    state = begin() if line != "PARENT C" else game.setup(NAMES[:4], {}, Rng("s", 0))
    assert needs_seal(state, game.parse(line)) is False
    error = rejected(state, actor, line, sealed=True)
    assert "スレッドに書き込んで" in error.message


def _secret_judging() -> State:
    """B is a prophet; D has played: the bot (parent) and B judge, B in secret."""
    state = begin(players=4)
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    state, _ = act(state, 1, "PLAY ○ ♥2")
    state, _ = act(state, 1, "PROPHET")
    rig_hand(state, 2, ["♠3", "♠8"])
    state, _ = act(state, 2, "PLAY ○ ♠3")
    assert state["pending"]["secret"] and game.waiting_for(state) == [1]
    return state


def test_secret_judgment_must_come_sealed() -> None:
    """R「判定マーカーを秘密裏に握って判定を行う」: while prophets judge, JUDGE is sealed."""
    state = _secret_judging()
    assert needs_seal(state, game.parse("JUDGE ○")) is True
    assert "封印して JUDGE" in rejected(state, 1, "JUDGE ○", sealed=False).message
    state, events = act(state, 1, "JUDGE ○", sealed=True)
    assert any(e["type"] == "reveal" for e in events)


def test_open_judgment_may_come_either_way() -> None:
    """D: the parent of a hand-judged rule with no prophet judging may seal JUDGE or not; its
    content is public once applied."""
    state = begin("色が交互", text=True)
    rig_hand(state, 1, ["♥2", "♠9"])
    state, _ = act(state, 1, "PLAY ○ ♥2")
    assert needs_seal(state, game.parse("JUDGE ○")) is None
    public, events = act(state, 0, "JUDGE ○", sealed=False)
    sealed, sealed_events = act(state, 0, "JUDGE ○", sealed=True)
    assert public == sealed
    assert any(e.get("private") for e in sealed_events)
    assert not any(e.get("private") for e in events)


def test_sealed_formal_rule_that_does_not_parse_is_refused_at_once() -> None:
    """I: a parse error in a sealed rule is rejected with a message at once (position and what
    was expected), so a round never starts on a broken rule — also for a command object that
    did not come through the parser."""
    state = game.setup(NAMES[:4], {}, Rng("s", 0))
    with pytest.raises(RuleError) as caught:
        game.apply(state, 0, SealRule("formal", "card.rank =="), Rng("s", 1), sealed=True)
    assert "途中で終わっています(13文字目)" in caught.value.message
    assert "ここに書けるのは次のどれかです" in caught.value.message
    with pytest.raises(RuleError) as caught:
        game.apply(state, 0, SealRule("formal", "card.suit + 1"), Rng("s", 1), sealed=True)
    assert "6文字目" in caught.value.message
    assert state["phase"] == "rule"


def test_private_events_are_for_the_actor_only() -> None:
    """Contract: an event with "private" is shown only to the actor (and the GM)."""
    state = game.setup(NAMES[:4], {}, Rng("s", 0))
    state, events = act(state, 0, f"RULE {ALTERNATE}")
    private = [e for e in events if e.get("private")]
    assert [e["type"] for e in private] == ["rule_sealed"] and private[0]["seat"] == 0
    state = _secret_judging()
    _, events = act(state, 1, "JUDGE ●")
    assert all(e["seat"] == 1 for e in events if e.get("private"))


def test_rule_errors_never_show_the_hand() -> None:
    """Rule errors are answered in the thread: no hand cards in the message or in `legal`."""
    state = begin()
    rig_hand(state, 1, ["♥2", "♥3", "♠9"])
    error = rejected(state, 1, "PLAY ○ ♦K")
    hand = state["players"][1]["hand"]
    assert not any(card in error.message for card in hand)
    assert not any(line.startswith("PLAY") for line in error.legal)
    assert any(line.startswith("PLAY") for line in game.legal(state, 1))
    error = rejected(state, 1, "PLAY ○ ♥2 ♥2")
    assert "♥3" not in error.message and "♠9" not in error.message


# --------------------------------------------------------------------------- views


def test_seat_view_adds_its_own_hand_only() -> None:
    state = begin()
    view = game.view(state, 2)
    assert view["hand"] == state["players"][2]["hand"] and view["seat"] == 2
    assert "rule" not in view and "rule" not in game.view(state, None)
    assert all("hand" not in p for p in view["players"])
    assert "hand" not in game.view(state, None)


def test_parent_view_adds_the_rule() -> None:
    """Rules page: the parent's view adds the rule (text and mode)."""
    state = begin()
    view = game.view(state, 0)
    assert view["rule"] == {"mode": "formal", "text": ALTERNATE, "salt": state["salt"]}
    assert view["hand"] == []


def test_gm_view_sees_every_hand_the_rule_and_secret_judgments() -> None:
    state = _secret_judging()
    state["pending"]["judges"][0]["judgment"] = "○●"
    view = game.view(state, "gm")
    assert [p["hand"] for p in view["players"]] == [p["hand"] for p in state["players"]]
    assert view["rule"]["text"] == ALTERNATE
    assert view["pending"]["judges"][0]["judgment"] == "○●"
    assert view["pending"]["parent_judgment"] == state["pending"]["parent_judgment"]
    public = game.view(state, None)["pending"]
    assert public["judges"][0] == {"seat": 1, "name": "B", "judged": True}
    assert "parent_judgment" not in public
    assert game.view(state, 1)["my_judgment"] == "○●"
    assert "my_judgment" not in game.view(state, 3)


def test_epilogue_reveals_every_rule_and_every_hand() -> None:
    """Contract: epilogue(state) reveals every hidden part once the game is over."""
    state = begin(players=4, rounds=2)
    assert game.epilogue(state) == []
    state, _ = act(state, "gm", "ENDROUND")
    state, _ = act(state, 1, "RULE TEXT 数が増える")
    state, _ = act(state, "gm", "ENDROUND")
    lines = game.epilogue(state)
    text = "\n".join(lines)
    assert ALTERNATE in text and "数が増える" in text
    for record in state["history"]:
        # The hash was public from the round's start; the epilogue reveals what was hidden.
        assert f"「{record['rule']}」ソルト {record['salt']}" in text
        for seat, hand in enumerate(record["hands"]):
            if seat != record["parent"]:
                assert f"・{NAMES[seat]}: {suited(hand)}\n" in text + "\n"


def test_a_revealed_hand_names_each_suit_once_before_its_ranks() -> None:
    assert suited(["♣2", "♠Q", "♥10", "♠J", "♥6", "♥10"]) == "♠J Q ♥6 10 10 ♣2"
    assert suited([]) == ""


def _scramble(state: State, viewer: Viewer, rng: Random) -> State:
    """Change everything `viewer` may not know."""
    changed = copy_state(state)
    players = changed["players"]
    hidden = [seat for seat in range(len(players)) if seat != viewer]
    pool = list(changed["deck"])
    for seat in hidden:
        pool += players[seat]["hand"]
    rng.shuffle(pool)
    for seat in hidden:
        size = len(players[seat]["hand"])
        players[seat]["hand"] = sorted(pool[:size])
        del pool[:size]
    changed["deck"] = pool
    sees_rule = viewer == changed["parent"] and not changed["over"]
    if changed["rule"] is not None and not sees_rule:
        changed["rule"] = "true" if changed["mode"] == "formal" else "別のルール"
        changed["salt"] = "0" * 16
    pending = changed["pending"]
    if pending is not None:
        if not (viewer == changed["parent"] and changed["mode"] == "hand"):
            pending["parent_judgment"] = rng.choice(["○", "●", "○●"])
        for entry in pending["judges"]:
            if entry["seat"] != viewer and entry["judgment"] is not None:
                entry["judgment"] = rng.choice(["○", "●", "○●"])
    if not changed["over"]:
        history = []
        for record in changed["history"]:
            hands = [list(reversed(hand)) for hand in record["hands"]]
            hands.reverse()
            history.append({**record, "hands": hands})
        changed["history"] = history
    return changed


class WatchedTable(Table):
    """A random game whose every step is checked for non-interference."""

    def apply(self, actor: int | str, line: str) -> list[dict[str, Any]]:
        events = super().apply(actor, line)
        if not game.is_over(self.state):
            rng = Random(len(self.log))
            viewers: list[Viewer] = [None, *range(len(self.names))]
            for viewer in viewers:
                changed = _scramble(self.state, viewer, rng)
                assert game.view(changed, viewer) == game.view(self.state, viewer), viewer
                if viewer is not None:
                    assert game.legal(changed, viewer) == game.legal(self.state, viewer)
                    assert game.default_commands(changed, viewer) == game.default_commands(
                        self.state, viewer
                    )
            assert game.waiting_for(_scramble(self.state, None, rng)) == game.waiting_for(
                self.state
            )
        return events


@given(
    players=st.integers(4, 6),
    rules=st.lists(rules_with_meaning, min_size=2, max_size=2),
    hand_round=st.sampled_from([set(), {1}, {2}]),
    moves=st.integers(0, 2**32),
)
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_views_and_legal_lines_never_depend_on_hidden_information(
    players: int, rules: list[Expr], hand_round: set[int], moves: int
) -> None:
    """Hands, the rule before its reveal, secret judgments before theirs, deck order: none
    appears in the public view, another seat's view, or another seat's legal lines (public
    events are checked at every step by the Table itself)."""
    table = WatchedTable(players, "watch", rules, hand_round, Random(moves))
    table.play()
    assert game.is_over(table.state)


def test_scramble_changes_what_it_hides() -> None:
    """The non-interference test would notice a leak: scrambling does change hidden parts."""
    state = _secret_judging()
    state["pending"]["judges"][0]["judgment"] = "○"
    changed = _scramble(state, 3, Random(1))
    assert changed["rule"] != state["rule"]
    assert [p["hand"] for p in changed["players"]] != [p["hand"] for p in state["players"]]
    assert game.view(changed, "gm") != game.view(state, "gm")
