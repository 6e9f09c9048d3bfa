"""えいつく conformance tests: one test per clause of docs/rules/eitsuku.md.

R = rulebook (seeds/000_…txt), I = interpretation fixed by the project, D = our decision.
Each docstring quotes the clause. States are set up with `rig`, which moves cards between the
piles/decks and a player's fields so that every card stays in exactly one place.
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from app.games.base import Rng, RuleError, State
from app.games.commands import Join
from app.games.eitsuku import game
from app.games.eitsuku.cards import (
    BUDGET_CARDS,
    DIE_DECK,
    EVENT_DECK,
    LARGE,
    MEDIUM,
    ROLE_DECKS,
    SMALL,
    is_role_card,
    role_deck_of,
)
from app.games.eitsuku.commands import End, SetRole
from app.games.eitsuku.events import EVENT_NAMES, EVENTS
from app.games.eitsuku.rules import auto_flip, auto_pay, card_census, full_census

NAMES = ["A", "B", "C", "D", "E", "F"]
ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- helpers


def start(players: int = 2, seed: str = "rules") -> State:
    """A game after setup (week 1, start phase done) with every role/event card taken back:
    each player holds 予算・小 ×6 and 予算・中 ×2 only, and nobody has a pending choice."""
    state = game.setup(NAMES[:players], {}, Rng(seed, 0))
    for seat in range(players):
        rig(state, seat, roles=[], events=[])
    return state


def rig(
    state: State,
    seat: int,
    *,
    budget: dict[str, int] | None = None,
    roles: list[str] | None = None,
    events: list[str] | None = None,
    slots: dict[str, str] | None = None,
    field: list[dict[str, Any]] | None = None,
) -> None:
    """Give a player exactly these stock cards / slots / event field, conserving cards."""
    player = state["players"][seat]
    if budget is not None:
        for card in BUDGET_CARDS:
            state["piles"][card] += player["stock"].pop(card, 0)
        for card, count in budget.items():
            assert state["piles"][card] >= count, f"not enough {card} in the pile"
            state["piles"][card] -= count
            player["stock"][card] = count
    if roles is not None:
        for card in [c for c in player["stock"] if is_role_card(c)]:
            deck = role_deck_of(card)
            assert deck is not None
            state["decks"][deck].extend([card] * player["stock"].pop(card))
        for card in roles:
            deck = role_deck_of(card)
            assert deck is not None
            state["decks"][deck].remove(card)
            player["stock"][card] = player["stock"].get(card, 0) + 1
        player["pending_choices"] = 0
    if events is not None:
        for card in [c for c in player["stock"] if c in EVENTS]:
            state["decks"][EVENT_DECK].extend([card] * player["stock"].pop(card))
        for card in events:
            state["decks"][EVENT_DECK].remove(card)
            player["stock"][card] = player["stock"].get(card, 0) + 1
    if slots is not None:
        for slot, card in slots.items():
            old = player["slots"][slot]
            if old is not None:
                state["decks"][role_deck_of(old)].append(old)  # type: ignore[index]
            deck = role_deck_of(card)
            assert deck is not None
            state["decks"][deck].remove(card)
            player["slots"][slot] = card
    if field is not None:
        for entry in player["events"]:
            state["decks"][EVENT_DECK].append(entry["name"])
        player["events"] = []
        for entry in field:
            state["decks"][EVENT_DECK].remove(entry["name"])
            player["events"].append({"week": 1, **entry})
    assert card_census(state) == full_census(len(state["players"]))


_seq = iter(range(1, 10**9))


def play(state: State, seat: int, *lines: str) -> tuple[State, list[dict[str, Any]]]:
    """Apply lines for a seat; checks that cards are conserved after each."""
    events: list[dict[str, Any]] = []
    for line in lines:
        state, new_events = game.apply(state, seat, game.parse(line), Rng("t", next(_seq)))
        events += new_events
        assert card_census(state) == full_census(len(state["players"]))
    return state, events


def rejected(state: State, seat: int, line: str) -> RuleError:
    with pytest.raises(RuleError) as caught:
        game.apply(state, seat, game.parse(line), Rng("t", 0))
    return caught.value


def empty_piles(state: State, *cards: str) -> None:
    """Move what is left of these budget piles to the discard (as if bought and spent)."""
    for card in cards:
        state["discard"][card] = state["discard"].get(card, 0) + state["piles"][card]
        state["piles"][card] = 0
    assert card_census(state) == full_census(len(state["players"]))


def end_week(state: State) -> State:
    """Everyone still to move posts END."""
    for seat in game.waiting_for(state):
        state, _ = play(state, seat, "END")
    return state


def full_slots(
    lead: str = "役者1", screen: str = "脚本家2", music: str = "音楽家3", director: str = "演出家4"
) -> dict[str, str]:
    return {"主演": lead, "脚本家": screen, "音楽家": music, "演出家": director}


# --------------------------------------------------------------------------- setup


@pytest.mark.parametrize("players", [2, 3, 6])
def test_setup_stock_small5_mid2_roles2_events2(players: int) -> None:
    """R 2−2 ゲームの開始: 【予算・小】5枚、【予算・中】2枚、【役割カード】2枚、
    【イベントカード】2枚 — plus week 1's start phase adds one 予算・小 (so 6 in the stock)."""
    state = game.setup(NAMES[:players], {}, Rng("setup", 0))
    for player in state["players"]:
        stock = player["stock"]
        assert stock[SMALL] == 5 + 1 and stock[MEDIUM] == 2 and LARGE not in stock
        roles = sum(n for card, n in stock.items() if is_role_card(card))
        assert roles + player["pending_choices"] == 2
        assert sum(n for card, n in stock.items() if card in EVENTS) == 2
        assert player["slots"] == dict.fromkeys(["主演", "助演", "脚本家", "音楽家", "演出家"])


@pytest.mark.parametrize("players", [2, 4, 6])
def test_setup_budget_piles_players_times_6_starting_cards_not_from_piles(players: int) -> None:
    """R 2−1: each budget pile PL数×6; I: the starting budget cards (R 2−2 ゲームの開始
    【予算・小】5枚、【予算・中】2枚) do not come out of the piles — only week 1's start phase
    has taken one 予算・小 from the pile per player."""
    state = game.setup(NAMES[:players], {}, Rng("piles", 0))
    assert state["piles"] == {
        SMALL: 6 * players - players,
        MEDIUM: 6 * players,
        LARGE: 6 * players,
    }
    assert card_census(state) == full_census(players)
    census = full_census(players)
    assert (census[SMALL], census[MEDIUM], census[LARGE]) == (
        11 * players,
        8 * players,
        6 * players,
    )


def test_setup_role_decks_1_to_3_x3_and_4_to_6_x2() -> None:
    """R 2−1: 『役者1〜3』×各3枚 『役者4〜6』×各2枚 (likewise 脚本家, 音楽家, 演出家)."""
    census = full_census(2)
    for deck in ROLE_DECKS:
        assert [census[f"{deck}{n}"] for n in range(1, 7)] == [3, 3, 3, 2, 2, 2]
    assert sum(census[f"{d}{n}"] for d in ROLE_DECKS for n in range(1, 7)) == 60


def test_setup_event_deck_15_kinds_x4() -> None:
    """R 2−1: 【イベント】カード:1山(クローズ):15種 × 4枚."""
    census = full_census(2)
    assert len(EVENT_NAMES) == 15
    assert all(census[name] == 4 for name in EVENT_NAMES)


def test_setup_die_decides_role_deck() -> None:
    """R 2−2: ダイスを振って決定する。1・2役者、3音楽、4演出、5脚本、6任意."""
    seen_faces: set[int] = set()
    for seed in range(30):
        state = game.setup(NAMES[:3], {}, Rng(f"dice{seed}", 0))
        for player in state["players"]:
            dice = player["dice"]
            seen_faces.update(dice)
            expected = Counter(DIE_DECK[face] for face in dice if face != 6)
            held = Counter(
                role_deck_of(card)
                for card, n in player["stock"].items()
                if is_role_card(card)
                for _ in range(n)
            )
            assert held == expected
            assert player["pending_choices"] == dice.count(6)
    assert seen_faces == {1, 2, 3, 4, 5, 6}


def _seed_with_a_six() -> State:
    for seed in range(100):
        state = game.setup(["A", "B"], {}, Rng(f"six{seed}", 0))
        if state["players"][0]["pending_choices"]:
            return state
    raise AssertionError("no seed with a 6")


def test_setup_die_6_is_answered_by_choose_before_other_commands() -> None:
    """R 2−2「6任意」; I: a 6 leaves a pending choice; the player answers with CHOOSE <deck>
    before their first week's other commands."""
    state = _seed_with_a_six()
    assert game.legal(state, 0) == [f"CHOOSE {deck}" for deck in ROLE_DECKS]
    error = rejected(state, 0, "END")
    assert "CHOOSE" in error.message and error.legal[0] == "CHOOSE 役者"
    before = sum(n for c, n in state["players"][0]["stock"].items() if role_deck_of(c) == "演出家")
    state, events = play(state, 0, "CHOOSE 演出家")
    after = sum(n for c, n in state["players"][0]["stock"].items() if role_deck_of(c) == "演出家")
    assert after == before + 1
    assert events[0]["type"] == "choose"
    if not state["players"][0]["pending_choices"]:
        assert "END" in game.legal(state, 0)
        assert "CHOOSE 役者" not in game.legal(state, 0)
        assert "CHOOSE" in rejected(state, 0, "CHOOSE 役者").message


@pytest.mark.parametrize("count", [0, 1, 7])
def test_setup_player_count_2_to_6(count: int) -> None:
    """D: えいつく is played by 2–6 players."""
    with pytest.raises(RuleError):
        game.setup(NAMES[:count] + ["X"] * max(0, count - 6), {}, Rng("n", 0))


def test_setup_rejects_unknown_options_and_duplicate_names() -> None:
    with pytest.raises(ValueError):
        game.setup(["A", "B"], {"weeks": 3}, Rng("o", 0))
    with pytest.raises(RuleError):
        game.setup(["A", "A"], {}, Rng("o", 0))
    with pytest.raises(RuleError):
        game.setup(["A", "B C"], {}, Rng("o", 0))


def test_setup_is_deterministic_for_seed() -> None:
    """DESIGN.md: a game replays exactly from its seed."""
    assert game.setup(NAMES[:4], {}, Rng("same", 0)) == game.setup(NAMES[:4], {}, Rng("same", 0))
    assert game.setup(NAMES[:4], {}, Rng("same", 0)) != game.setup(NAMES[:4], {}, Rng("other", 0))


# --------------------------------------------------------------------------- start phase


def test_start_phase_adds_small_budget() -> None:
    """R 2−2 スタートフェイズ:『ストック場』に【予算・小】のカード1枚を追加する。"""
    state = start(2)
    rig(state, 1, budget={SMALL: 4, MEDIUM: 2})  # frees two 予算・小 into the pile
    state = end_week(state)
    assert state["week"] == 2
    assert state["players"][0]["stock"][SMALL] == 7
    assert state["players"][1]["stock"][SMALL] == 5


def test_start_phase_adds_medium_when_small_pile_empty() -> None:
    """R 2−2:【予算・小】が0枚になっている場合、代わりに【予算・中】のカード1枚を追加する。"""
    state = start(2)
    empty_piles(state, SMALL)
    state = end_week(state)
    for player in state["players"]:
        assert player["stock"][SMALL] == 6 and player["stock"][MEDIUM] == 3


def test_start_phase_adds_nothing_when_both_piles_empty() -> None:
    """I: if both 予算・小 and 予算・中 piles are empty, the start phase adds nothing."""
    state = start(2)
    empty_piles(state, SMALL, MEDIUM)
    stocks = [dict(p["stock"]) for p in state["players"]]
    state = end_week(state)
    assert [p["stock"] for p in state["players"]] == stocks


# --------------------------------------------------------------------------- the week


def test_week_ends_when_every_unreleased_player_has_ended() -> None:
    """R 2−2: すべてのプレイヤーのエンドフェイズが終了したらそのターンを終了する。"""
    state = start(3)
    state, _ = play(state, 0, "END")
    state, _ = play(state, 2, "END")
    assert state["week"] == 1 and game.waiting_for(state) == [1]
    state, events = play(state, 1, "END")
    assert state["week"] == 2 and game.waiting_for(state) == [0, 1, 2]
    assert [e["type"] for e in events][:3] == ["end", "week_end", "week"]
    # One line for the turn of the week and one for a start phase that gave all the same
    # (issue #43): the week's and the other players' events say nothing more.
    texts = [e["text"] for e in events]
    assert texts[:3] == ["B: 第1週を終えました。", "第1週が終わり、第2週が始まりました。", ""]
    assert texts[3:] == ["制作中の全員: 予算・小 を得ました。", "", ""]


def test_start_phase_gains_are_said_one_line_an_outcome() -> None:
    """The start phase's gains, grouped by what each got, in the players' order: a line names
    every player it befell; a released player has no start phase and is not named."""
    state = start(3)
    rig(state, 1, slots=full_slots())
    state, _ = play(state, 1, "RELEASE")
    state, _ = play(state, 0, "END")
    empty_piles(state, SMALL)
    state["piles"][SMALL] = 1
    state["discard"][SMALL] -= 1
    state, events = play(state, 2, "END")
    said = [e["text"] for e in events if e["type"] == "start" and e["text"]]
    assert said == ["A: 予算・小 を得ました。", "C: 予算・中 を得ました。"]
    empty_piles(state, SMALL, MEDIUM)
    state = end_week(state)
    state, events = play(state, 0, "END")
    state, events = play(state, 2, "END")
    said = [e["text"] for e in events if e["type"] == "start" and e["text"]]
    assert said == ["制作中の全員: 予算の山が尽きていて何も得られません。"]


def test_player_who_ended_waits_for_others() -> None:
    """R 2−2: the week ends when every player has ended it; until then the ended player waits."""
    state = start(3)
    state, _ = play(state, 0, "END")
    error = rejected(state, 0, "DRAW")
    assert "第1週をすでに終えた" in error.message and "B、C" in error.message
    assert error.legal == []
    assert game.legal(state, 0) == []


def test_commands_in_phase_order_earlier_phase_after_later_is_error() -> None:
    """Rules page: "Commands must come in phase order; a command of an earlier phase after a
    later one is a rule error"."""
    state = start(2)
    rig(state, 0, roles=["役者1"], events=["タイアップキャンペーン"])
    state, _ = play(state, 0, "SCOUT 役者")
    error = rejected(state, 0, "EVENT タイアップキャンペーン")
    assert "アクションフェイズ" in error.message and "スカウトフェイズ" in error.message
    assert "EVENT タイアップキャンペーン" not in error.legal and "DRAW" in error.legal
    state, _ = play(state, 0, "DRAW")
    error = rejected(state, 0, "BUY 中")
    assert "スカウトフェイズ" in error.message and "セットフェイズ" in error.message


def test_phases_may_be_skipped_post_only_end() -> None:
    """Rules page: "A player may skip the action, scout and set phases (post only END)"."""
    state = start(2)
    state, events = play(state, 0, "END")
    assert state["players"][0]["done"] and events[-1]["type"] == "end"


def test_flipped_cards_turn_face_up_at_end_of_week() -> None:
    """I: flipped budget cards turn face up again at the end of the week."""
    state = start(2)
    state, _ = play(state, 0, "BUY 中 WITH 小 小 小")
    player = state["players"][0]
    assert player["flipped"] == {SMALL: 3} and player["stock"][SMALL] == 3
    assert player["stock"][MEDIUM] == 3
    state = end_week(state)
    assert state["players"][0]["flipped"] == {}
    assert state["players"][0]["stock"][SMALL] == 6 + 1  # + week 2's start phase


def test_turn_key_changes_with_week() -> None:
    state = start(2)
    key = game.turn_key(state)
    state, _ = play(state, 0, "END")
    assert game.turn_key(state) == key
    state = end_week(state)
    assert game.turn_key(state) != key


# --------------------------------------------------------------------------- scout


def test_scout_draws_role_card_into_stock() -> None:
    """R 2−2 スカウトフェイズ:『役割カード山』より1枚ドローして『ストック場』に配置する."""
    state = start(2)
    left = len(state["decks"]["音楽家"])
    state, events = play(state, 0, "SCOUT 音楽家")
    assert len(state["decks"]["音楽家"]) == left - 1
    drawn = [c for c in state["players"][0]["stock"] if is_role_card(c)]
    assert len(drawn) == 1 and drawn[0].startswith("音楽家")
    assert events[0]["type"] == "scout"


def test_scout_exactly_one_action_per_week() -> None:
    """R 2−2: スカウトフェイズでは次のうちいずれか1つの行動を行うことができる."""
    state = start(2)
    state, _ = play(state, 0, "SCOUT 役者")
    error = rejected(state, 0, "BUY 中")
    assert "いずれか1つ" in error.message
    assert not any(line.startswith(("SCOUT", "BUY")) for line in error.legal)
    assert "いずれか1つ" in rejected(state, 0, "SCOUT 役者").message


@pytest.mark.parametrize(
    ("card", "flip", "ok"),
    [
        ("中", "小 小 小", True),
        ("中", "中 小", True),
        ("中", "中", False),
        ("大", "中 中 小 小", True),
        ("大", "中 中 小", False),
        ("大", "大 大", True),
    ],
)
def test_buy_flip_cost_3_for_medium_6_for_large(card: str, flip: str, ok: bool) -> None:
    """R 2−3: 【予算・中】: 3コスト, 【予算・大】: 6コスト; R 2−2: コスト3分/6分の【予算カード】を
    『裏返し』にし … を『ストック場』に配置する."""
    state = start(2)
    rig(state, 0, budget={SMALL: 6, MEDIUM: 2, LARGE: 2})
    line = f"BUY {card} WITH {flip}"
    if not ok:
        assert "にしかなりません" in rejected(state, 0, line).message
        return
    state, _ = play(state, 0, line)
    player = state["players"][0]
    assert sum(player["flipped"].values()) == len(flip.split())
    assert player["budget_used"] == len(flip.split())


def test_buy_small_costs_0() -> None:
    """R 2−3: 【予算・小】: 0コスト — nothing needs flipping."""
    state = start(2)
    rig(state, 1, budget={SMALL: 5, MEDIUM: 2})  # one 予算・小 back to the pile
    assert "BUY 小" in game.legal(state, 0)
    assert "余分なカード" in rejected(state, 0, "BUY 小 WITH 小").message
    state, _ = play(state, 0, "BUY 小")
    assert state["players"][0]["stock"][SMALL] == 7 and state["players"][0]["flipped"] == {}
    assert state["players"][0]["budget_used"] == 0
    assert state["players"][0]["moves"] == ["BUY 小"]


def test_buy_from_empty_pile_rejected() -> None:
    """R 2−2: a card is taken from the pile, so an empty pile gives nothing to buy."""
    state = start(2)
    empty_piles(state, SMALL)
    assert "BUY 小" not in game.legal(state, 0)
    assert "残っていません" in rejected(state, 0, "BUY 小").message


def test_buy_with_superfluous_card_rejected() -> None:
    """D: a payment may not contain a card it does not need."""
    state = start(2)
    error = rejected(state, 0, "BUY 中 WITH 中 中 小")
    assert "余分なカード" in error.message
    assert "BUY 中" in error.legal


def test_buy_without_with_wastes_least_and_prefers_small() -> None:
    """Rules page: "Without WITH the bot chooses the flip that wastes least value, preferring
    small cards"."""
    assert auto_flip({SMALL: 6, MEDIUM: 2, LARGE: 0}, 3, 5) == {SMALL: 3}
    assert auto_flip({SMALL: 1, MEDIUM: 2, LARGE: 1}, 3, 5) == {SMALL: 1, MEDIUM: 1}
    assert auto_flip({SMALL: 0, MEDIUM: 2, LARGE: 1}, 3, 5) == {LARGE: 1}
    assert auto_flip({SMALL: 0, MEDIUM: 2, LARGE: 0}, 3, 5) == {MEDIUM: 2}  # waste 1
    assert auto_flip({SMALL: 6, MEDIUM: 2, LARGE: 0}, 6, 5) == {SMALL: 4, MEDIUM: 1}
    assert auto_flip({SMALL: 6, MEDIUM: 2, LARGE: 0}, 6, 4) == {SMALL: 2, MEDIUM: 2}
    assert auto_flip({SMALL: 6, MEDIUM: 0, LARGE: 0}, 6, 5) is None  # five cards make 5 only
    assert auto_flip({SMALL: 6, MEDIUM: 2, LARGE: 0}, 0, 5) == {}
    state = start(2)
    state, _ = play(state, 0, "BUY 中")
    assert state["players"][0]["flipped"] == {SMALL: 3}
    assert state["players"][0]["moves"] == ["BUY 中 WITH 予算・小 予算・小 予算・小"]


def test_buy_flipped_cards_stay_out_of_stock_and_cannot_pay() -> None:
    """R 2−2:『裏返し』にされた【予算カード】はコストとして『捨て札場』に移動させることは
    できない."""
    state = start(2)
    rig(state, 0, budget={SMALL: 3, MEDIUM: 1}, roles=["役者1"])
    state, _ = play(state, 0, "BUY 中 WITH 小 小 小")
    error = rejected(state, 0, "SET 主演 役者1 PAY 小 小 小")
    assert "表向きの予算・小は 0 枚" in error.message
    assert error.legal.count("SET 主演 役者1") == 1  # 中 + 中 still pay 3
    state, _ = play(state, 0, "SET 主演 役者1")
    assert state["discard"] == {MEDIUM: 2}


# --------------------------------------------------------------------------- set


def test_draw_event_card_into_stock() -> None:
    """R 2−2 セットフェイズ:『イベントカード山』より1枚ドローして『ストック場』に配置する."""
    state = start(2)
    left = len(state["decks"][EVENT_DECK])
    state, events = play(state, 0, "DRAW")
    assert len(state["decks"][EVENT_DECK]) == left - 1
    assert sum(n for c, n in state["players"][0]["stock"].items() if c in EVENTS) == 1
    assert events[0]["type"] == "draw"


def test_set_costs_number_plus_2_to_discard() -> None:
    """R 2−2:【役割カード】の『数字+2』のコストを『ストック場』より『捨て札場』へ移動し
    …配置する."""
    state = start(2)
    rig(state, 0, roles=["脚本家3"])
    state, events = play(state, 0, "SET 脚本家 脚本家3 PAY 中 中 小")
    player = state["players"][0]
    assert player["slots"]["脚本家"] == "脚本家3"
    assert player["stock"] == {SMALL: 5}
    assert state["discard"] == {SMALL: 1, MEDIUM: 2}
    assert "脚本家3" not in player["stock"]
    assert events[0]["type"] == "set"


def test_set_payment_short_is_rejected_with_legal() -> None:
    state = start(2)
    rig(state, 0, roles=["脚本家3"])
    error = rejected(state, 0, "SET 脚本家 脚本家3 PAY 中 中")
    assert "コストは 5" in error.message
    assert "SET 脚本家 脚本家3" in error.legal


def test_set_budget_cards_at_most_5_per_week() -> None:
    """R 2−2: セットフェイズに使用できる【予算カード】は『裏返し』にしたものと『捨て札場』を合わせて
    5枚までとし … (flipped + discarded this week ≤ 5)."""
    state = start(2)
    rig(state, 0, roles=["役者2"])
    state, _ = play(state, 0, "BUY 中 WITH 小 小 小")  # 3 of the week's 5 cards
    error = rejected(state, 0, "SET 主演 役者2 PAY 中 小 小")
    assert "5枚まで" in error.message and "あと 2 枚" in error.message
    state, _ = play(state, 0, "SET 主演 役者2 PAY 中 中")  # 2 more: exactly 5
    assert state["players"][0]["budget_used"] == 5


def test_set_at_most_5_cards_even_with_enough_value() -> None:
    """R 2−2: 5枚まで — six 予算・小 worth 6 cannot pay a cost of 6 (役者4)."""
    state = start(2)
    rig(state, 0, budget={SMALL: 6}, roles=["役者4"])
    assert not any(line.startswith("SET") for line in game.legal(state, 0))
    error = rejected(state, 0, "SET 主演 役者4")
    assert "5枚まで" in error.message
    assert "SET 主演 役者4" not in error.legal


def test_set_without_pay_overpays_least_then_fewest_cards() -> None:
    """Rules page: "Without PAY the bot pays with the combination that overpays least, then
    uses fewest cards"."""
    assert auto_pay({SMALL: 6, MEDIUM: 2, LARGE: 0}, 5, 5) == {SMALL: 1, MEDIUM: 2}
    assert auto_pay({SMALL: 6, MEDIUM: 2, LARGE: 1}, 5, 5) == {MEDIUM: 1, LARGE: 1}
    assert auto_pay({SMALL: 0, MEDIUM: 3, LARGE: 0}, 3, 5) == {MEDIUM: 2}  # overpays 1
    assert auto_pay({SMALL: 1, MEDIUM: 3, LARGE: 0}, 3, 5) == {SMALL: 1, MEDIUM: 1}
    assert auto_pay({SMALL: 1, MEDIUM: 2, LARGE: 1}, 4, 5) == {MEDIUM: 2}  # keeps 大
    assert auto_pay({SMALL: 6, MEDIUM: 2, LARGE: 0}, 8, 5) is None
    state = start(2)
    rig(state, 0, roles=["役者3"])
    state, _ = play(state, 0, "SET 主演 役者3")
    assert state["players"][0]["moves"] == ["SET 主演 役者3 PAY 予算・中 予算・中 予算・小"]


def test_set_actor_goes_to_lead_or_support_only() -> None:
    """I: 役者 cards go to 主演 or 助演."""
    state = start(2)
    rig(state, 0, roles=["役者1"])
    assert [line for line in game.legal(state, 0) if line.startswith("SET")] == [
        "SET 主演 役者1",
        "SET 助演 役者1",
    ]
    assert "主演か助演" in rejected(state, 0, "SET 脚本家 役者1").message
    state, _ = play(state, 0, "SET 助演 役者1")
    assert state["players"][0]["slots"]["助演"] == "役者1"


def test_set_other_roles_only_to_own_slot() -> None:
    """I: every other role card only to its own slot."""
    state = start(2)
    rig(state, 0, roles=["演出家1"])
    assert [line for line in game.legal(state, 0) if line.startswith("SET")] == [
        "SET 演出家 演出家1"
    ]
    assert "演出家の役割場にだけ" in rejected(state, 0, "SET 主演 演出家1").message


def test_set_occupied_slot_cannot_be_set_again() -> None:
    """I: an occupied slot cannot be set again (only an event can change it)."""
    state = start(2)
    rig(state, 0, roles=["役者1"], slots={"主演": "役者2"})
    error = rejected(state, 0, "SET 主演 役者1")
    assert "すでに 役者2" in error.message and "方針転換" in error.message
    assert "SET 助演 役者1" in error.legal


def test_set_card_not_in_stock_rejected() -> None:
    state = start(2)
    rig(state, 0, roles=["役者1"])
    error = rejected(state, 0, "SET 主演 役者5")
    assert "役者5 はありません" in error.message and "役者1" in error.message


def test_set_phase_one_action_set_or_draw_is_an_interpretation() -> None:
    """I: one set-phase action a week — draw an event card or place one role card. R 2−2 says
    only 「セットフェイズでは次の行動を行うことができる」 (no 「いずれか1つ」 as in the scout
    phase), so the refusal names the rule as the project's reading, not the rulebook's."""
    state = start(2)
    rig(state, 0, roles=["役者1"])
    state, _ = play(state, 0, "DRAW")
    error = rejected(state, 0, "SET 主演 役者1")
    assert "セットフェイズの行動をもう行いました" in error.message
    assert "(I:" not in error.message and "R 2−2" not in error.message  # issue #43: no labels
    assert "「次の行動を行うことができる」" in error.message
    assert "コストが支払えないため、イベントカードを1枚引きます" in error.message
    assert game.legal(state, 0) == ["END"]


def test_rules_page_marks_set_phase_one_action_as_interpretation() -> None:
    """docs/rules/eitsuku.md: the set phase's one action is I, quoting the rulebook's words;
    only the scout phase's heading cites R for 「いずれか1つ」."""
    page = (ROOT / "docs" / "rules" / "eitsuku.md").read_text(encoding="utf-8")
    headings = {line.split(" — ")[0]: line for line in page.splitlines() if line.startswith("### ")}
    set_heading = headings["### 4. Set"]
    assert "(I:" in set_heading and "「次の行動を行うことができる」" in set_heading
    assert "R;" not in set_heading and "いずれか" not in set_heading
    assert "R「次のうちいずれか1つの行動」" in headings["### 3. Scout"]


# --------------------------------------------------------------------------- end


def test_release_requires_lead_screenwriter_composer_director() -> None:
    """R 2−2 エンドフェイズ:『主演』『脚本家』『音楽家』『演出家』の4つの『役割場』に
    役割が配置されている場合、公開を宣言する."""
    state = start(2)
    slots = full_slots()
    del slots["音楽家"]
    rig(state, 0, slots=slots)
    assert "RELEASE" not in game.legal(state, 0)
    error = rejected(state, 0, "RELEASE")
    assert "音楽家が空" in error.message and error.legal[-1] == "END"
    rig(state, 0, slots={"音楽家": "音楽家5"})
    assert game.legal(state, 0)[-2:] == ["RELEASE", "END"]
    state, events = play(state, 0, "RELEASE")
    assert state["players"][0]["released_week"] == 1
    assert events[0]["type"] == "release"


def test_released_player_takes_no_more_weeks() -> None:
    """R 2−2: 宣言を行った場合、次の週より行動することはできない。すべてのプレイヤーが終わるまで
    待機すること。"""
    state = start(2)
    rig(state, 0, slots=full_slots())
    state, _ = play(state, 0, "RELEASE")
    state = end_week(state)
    assert state["week"] == 2 and game.waiting_for(state) == [1]
    assert game.legal(state, 0) == []
    assert "公開を宣言した" in rejected(state, 0, "END").message
    before = dict(state["players"][0]["stock"])
    state, _ = play(state, 1, "END")
    assert state["players"][0]["stock"] == before  # no start phase for a released player


def test_game_ends_when_everyone_released() -> None:
    """R 2−3: すべてのプレイヤーが公開を宣言したとき (ゲームを終了する)."""
    state = start(2)
    rig(state, 0, slots=full_slots())
    rig(state, 1, slots=full_slots("役者2", "脚本家3", "音楽家4", "演出家5"))
    state, _ = play(state, 0, "RELEASE")
    state, events = play(state, 1, "RELEASE")
    assert game.is_over(state) and state["week"] == 1
    assert events[-1]["type"] == "game_over"
    assert game.waiting_for(state) == [] and game.turn_key(state) == "over"
    assert "終了しています" in rejected(state, 0, "END").message


def test_game_ends_after_week_12() -> None:
    """R 2−3: 12ターンが経過したとき (ゲームを終了する)."""
    state = start(3)
    for week in range(1, 13):
        assert state["week"] == week and not game.is_over(state)
        state = end_week(state)
    assert game.is_over(state) and state["week"] == 12
    assert game.result(state) is not None


def test_week_12_complete_player_released_in_week_12() -> None:
    """I: at the end of week 12, every unreleased player who has the four required slots filled
    is released in week 12; one who has not is ranked last with no score (未完成)."""
    state = start(3)
    for _ in range(11):
        state = end_week(state)
    rig(state, 0, slots=full_slots())
    rig(state, 2, slots={"主演": "役者6"})
    for seat in game.waiting_for(state):
        state, events = play(state, seat, "END")
    players = state["players"]
    assert players[0]["released_week"] == 12 and players[0]["status"] == "released"
    assert players[1]["status"] == "unfinished" and players[2]["status"] == "unfinished"
    assert [e["text"] for e in events if e["type"] in ("release", "unfinished")] == [
        "A: 第12週の終わりに公開しました(最終週)。",
        "B、C: 映画が完成しませんでした(未完成)。",
        "",
    ]
    result = game.result(state)
    assert result is not None
    assert [(e.name, e.rank, e.score) for e in result.ranking] == [
        ("A", 1, 1 + 2 + 3 + 4),
        ("B", 2, None),
        ("C", 2, None),
    ]


def test_unfinished_players_rank_below_every_finished_one() -> None:
    """D (Scoring): released players by score, ties sharing a rank (1, 2, 2), then every
    未完成 player below them all, sharing the next rank (4) with no score and no breakdown."""
    state = start(5)
    for _ in range(11):
        state = end_week(state)
    rig(state, 1, slots=full_slots())
    rig(state, 3, slots=full_slots())
    rig(state, 4, slots=full_slots("役者6", "脚本家6", "音楽家6", "演出家6"))
    state = end_week(state)
    result = game.result(state)
    assert result is not None
    assert [(e.name, e.rank, e.score) for e in result.ranking] == [
        ("E", 1, 24 + 50),
        ("B", 2, 10),
        ("D", 2, 10),
        ("A", 4, None),
        ("C", 4, None),
    ]
    finished_ranks = [e.rank for e in result.ranking if e.score is not None]
    for entry in result.ranking:
        if entry.score is None:
            assert entry.rank > max(finished_ranks)
            assert set(entry.breakdown.values()) == {None}


def test_when_nobody_releases_everyone_shares_rank_1_unscored() -> None:
    """D (Scoring): nobody released, so nobody is above anyone: all share rank 1 with no
    score (and the archive names no winner: it counts only a rank 1 with a score)."""
    state = start(3)
    while not game.is_over(state):
        state = end_week(state)
    result = game.result(state)
    assert result is not None
    assert [(e.name, e.rank, e.score) for e in result.ranking] == [
        ("A", 1, None),
        ("B", 1, None),
        ("C", 1, None),
    ]


# --------------------------------------------------------------------------- scoring


def _finish(state: State) -> State:
    while not game.is_over(state):
        state = end_week(state)
    return state


def _scores(state: State) -> dict[str, dict[str, int | str | None]]:
    result = game.result(state)
    assert result is not None
    return {entry.name: entry.breakdown for entry in result.ranking}


@pytest.mark.parametrize(
    ("slots", "base"),
    [
        (
            {
                "主演": "役者3",
                "助演": "役者3",
                "脚本家": "脚本家3",
                "音楽家": "音楽家3",
                "演出家": "演出家3",
            },
            15 + 70,
        ),
        (
            {
                "主演": "役者3",
                "助演": "役者3",
                "脚本家": "脚本家3",
                "音楽家": "音楽家3",
                "演出家": "演出家1",
            },
            13 + 50,
        ),
        (
            {
                "主演": "役者2",
                "助演": "役者1",
                "脚本家": "脚本家2",
                "音楽家": "音楽家2",
                "演出家": "演出家6",
            },
            13 + 30,
        ),
        (
            {
                "主演": "役者1",
                "助演": "役者1",
                "脚本家": "脚本家2",
                "音楽家": "音楽家3",
                "演出家": "演出家4",
            },
            11 + 10,
        ),
        (
            {
                "主演": "役者1",
                "助演": "役者2",
                "脚本家": "脚本家3",
                "音楽家": "音楽家4",
                "演出家": "演出家5",
            },
            15,
        ),
    ],
)
def test_scoring_base_sum_plus_70_50_30_10_0(slots: dict[str, str], base: int) -> None:
    """R 2−4 基礎点数: 5つ/4つ/3つ/2つの役割の数字が同じ: 合計の数字+70/+50/+30/+10;
    すべての役割の数字が異なる: 合計の数字."""
    state = start(2)
    rig(state, 0, slots=slots)
    state, _ = play(state, 0, "RELEASE")
    state = _finish(state)
    assert _scores(state)["A"]["base"] == base


def test_scoring_three_equal_plus_two_scores_30() -> None:
    """I: the largest group of equal numbers decides (3+2 scores +30)."""
    state = start(2)
    rig(
        state,
        0,
        slots={
            "主演": "役者2",
            "助演": "役者2",
            "脚本家": "脚本家2",
            "音楽家": "音楽家5",
            "演出家": "演出家5",
        },
    )
    state, _ = play(state, 0, "RELEASE")
    state = _finish(state)
    assert _scores(state)["A"]["base"] == 16 + 30


def test_scoring_two_pairs_score_10() -> None:
    """I: 2+2 scores +10."""
    state = start(2)
    rig(
        state,
        0,
        slots={
            "主演": "役者1",
            "助演": "役者1",
            "脚本家": "脚本家4",
            "音楽家": "音楽家4",
            "演出家": "演出家6",
        },
    )
    state, _ = play(state, 0, "RELEASE")
    state = _finish(state)
    assert _scores(state)["A"]["base"] == 16 + 10


def test_scoring_empty_support_contributes_nothing() -> None:
    """I: an empty 助演 simply contributes nothing (the other four still count)."""
    state = start(2)
    rig(state, 0, slots=full_slots("役者4", "脚本家4", "音楽家4", "演出家4"))
    state, _ = play(state, 0, "RELEASE")
    state = _finish(state)
    assert _scores(state)["A"]["base"] == 16 + 50


def test_release_week_correction_minus_5_per_week_late() -> None:
    """R 2−4 公開週補正: 最初に公開したプレイヤーから遅れた週の分 … 1週 −5点, 2週 −10点 …"""
    state = start(3)
    rig(state, 0, slots=full_slots())
    state, _ = play(state, 0, "RELEASE")
    state = end_week(state)  # week 2
    state = end_week(state)  # week 3
    rig(state, 1, slots=full_slots())
    state, _ = play(state, 1, "RELEASE")
    state = _finish(state)
    scores = _scores(state)
    assert scores["A"]["release"] == 0
    assert scores["B"]["release"] == -10
    assert scores["C"] == {"base": None, "release": None, "events": None, "total": None}


def test_scoring_breakdown_keys_base_release_events_total() -> None:
    """Rules page: result.ranking[*].breakdown = {"base", "release", "events", "total"}."""
    state = start(2)
    rig(state, 0, slots=full_slots(), field=[{"name": "タイアップキャンペーン"}])
    state, _ = play(state, 0, "RELEASE")
    state = _finish(state)
    result = game.result(state)
    assert result is not None
    first = result.ranking[0]
    assert set(first.breakdown) == {"base", "release", "events", "total"}
    assert first.score == first.breakdown["total"] == 10 + 0 + 10


def test_ties_share_the_rank() -> None:
    """Rules page: "Ties share the rank"."""
    state = start(3)
    rig(state, 0, slots=full_slots())
    rig(state, 1, slots=full_slots("役者4", "脚本家3", "音楽家2", "演出家1"))
    rig(state, 2, slots=full_slots("役者5", "脚本家5", "音楽家6", "演出家6"))
    for seat in range(3):
        state, _ = play(state, seat, "RELEASE")
    result = game.result(state)
    assert result is not None
    assert [(e.name, e.rank, e.score) for e in result.ranking] == [
        ("C", 1, 22 + 10),
        ("A", 2, 10),
        ("B", 2, 10),
    ]


def test_result_none_until_over() -> None:
    state = start(2)
    assert game.result(state) is None and not game.is_over(state)


# --------------------------------------------------------------------------- events


def test_event_only_from_stock_and_only_in_action_phase() -> None:
    """R 2−2 アクションフェイズ:『ストック場』に配置されている【イベントカード】を
    『イベント場』に配置する."""
    state = start(2)
    rig(state, 0, events=["タイアップキャンペーン"])
    error = rejected(state, 0, "EVENT 電撃発表")
    assert "電撃発表 はありません" in error.message and "タイアップキャンペーン" in error.message
    state, events = play(state, 0, "EVENT タイアップキャンペーン")
    assert state["players"][0]["events"] == [{"name": "タイアップキャンペーン", "week": 1}]
    assert "タイアップキャンペーン" not in state["players"][0]["stock"]
    assert events[0]["type"] == "event" and events[0]["card"] == "タイアップキャンペーン"


def test_event_any_number_per_week() -> None:
    """I: any number of events per week (action phase)."""
    state = start(2)
    rig(state, 0, events=["タイアップキャンペーン", "タイアップキャンペーン", "電撃発表"])
    state, _ = play(
        state, 0, "EVENT タイアップキャンペーン", "EVENT 電撃発表", "EVENT タイアップキャンペーン"
    )
    assert len(state["players"][0]["events"]) == 3


def test_event_tie_up_campaign_plus_10() -> None:
    """R 2−4 イベント修正:【タイアップキャンペーン】 最終得点+10点."""
    state = start(2)
    rig(state, 0, slots=full_slots(), events=["タイアップキャンペーン"])
    state, _ = play(state, 0, "EVENT タイアップキャンペーン", "RELEASE")
    state = _finish(state)
    assert _scores(state)["A"]["events"] == 10


def test_event_promoter_intervention_minus_declared_number() -> None:
    """R 2−4 イベント修正:【プロモーターの介入】 最終得点−宣言した数字; house rule: the
    declared number n brings budget worth exactly n from the piles, in as few cards as possible."""
    state = start(2)
    rig(state, 0, slots=full_slots(), events=["プロモーターの介入"])
    legal = [line for line in game.legal(state, 0) if "プロモーター" in line]
    assert legal == [f"EVENT プロモーターの介入 {n}" for n in range(1, 7)]
    state, _ = play(state, 0, "EVENT プロモーターの介入 5")
    assert state["players"][0]["stock"] == {SMALL: 6, MEDIUM: 3, LARGE: 1}
    assert state["players"][0]["events"] == [{"name": "プロモーターの介入", "week": 1, "number": 5}]
    state, _ = play(state, 0, "RELEASE")
    state = _finish(state)
    assert _scores(state)["A"]["events"] == -5


def test_event_promoter_needs_piles_to_make_the_number() -> None:
    state = start(2)
    rig(state, 0, events=["プロモーターの介入"])
    empty_piles(state, SMALL, MEDIUM, LARGE)
    error = rejected(state, 0, "EVENT プロモーターの介入 1")
    assert "用意できません" in error.message
    assert not any("プロモーター" in line for line in error.legal)


def test_event_rush_allows_a_second_set_action() -> None:
    """D (house rule) 巻きを入れる: one more set-phase action this week; the 5-card limit stays."""
    state = start(2)
    rig(state, 0, roles=["役者1", "脚本家1"], events=["巻きを入れる"])
    state, _ = play(state, 0, "EVENT 巻きを入れる", "SET 主演 役者1 PAY 中 小")
    state, _ = play(state, 0, "SET 脚本家 脚本家1 PAY 中 小")
    assert state["players"][0]["budget_used"] == 4
    assert "もう行いました" in rejected(state, 0, "DRAW").message


def test_event_new_chance_redraws_from_the_same_deck() -> None:
    """D (house rule) 新たなるチャンス: a stock role card goes back into its deck, which is
    shuffled, and one card is drawn from it."""
    state = start(2)
    rig(state, 0, roles=["脚本家6"], events=["新たなるチャンス"])
    assert "EVENT 新たなるチャンス 脚本家6" in game.legal(state, 0)
    deck_size = len(state["decks"]["脚本家"])
    state, events = play(state, 0, "EVENT 新たなるチャンス 脚本家6")
    roles = [c for c in state["players"][0]["stock"] if is_role_card(c)]
    assert len(roles) == 1 and roles[0].startswith("脚本家")
    assert len(state["decks"]["脚本家"]) == deck_size
    assert "新たなるチャンス" in events[0]["text"]


def test_event_ad_agency_buy_costs_3_less() -> None:
    """D (house rule, R スカウトフェイズ「【イベントカード】の効果が優先される」) 広告代理店の努力:
    this week a 予算・中 costs 0 and a 予算・大 costs 3."""
    state = start(2)
    rig(state, 0, events=["広告代理店の努力"])
    state, _ = play(state, 0, "EVENT 広告代理店の努力", "BUY 大")
    player = state["players"][0]
    assert player["flipped"] == {SMALL: 3} and player["stock"][LARGE] == 1
    state = end_week(state)
    assert state["players"][0]["buy_discount"] == 0  # this week only


def test_event_local_support_set_costs_2_less() -> None:
    """D (house rule) 地元の協力: this week a role card costs its number (not number + 2)."""
    state = start(2)
    rig(state, 0, roles=["役者6"], events=["地元の協力"])
    assert not any(line.startswith("SET") for line in game.legal(state, 0))  # 8 > 7 payable
    state, _ = play(state, 0, "EVENT 地元の協力", "SET 主演 役者6")
    assert state["players"][0]["slots"]["主演"] == "役者6"
    assert state["discard"] == {SMALL: 2, MEDIUM: 2}


def test_event_local_support_twice_makes_a_cheap_card_free() -> None:
    """D: event effects stack; a cost never drops below 0 (then nothing is paid)."""
    state = start(2)
    rig(state, 0, roles=["役者1"], events=["地元の協力", "地元の協力"])
    state, _ = play(state, 0, "EVENT 地元の協力", "EVENT 地元の協力", "SET 主演 役者1")
    assert state["players"][0]["moves"][-1] == "SET 主演 役者1"
    assert state["discard"] == {} and state["players"][0]["budget_used"] == 0


def test_event_surprise_announcement_cancels_release_correction() -> None:
    """D (house rule) 電撃発表: cancels up to 5 points of the release-week correction."""
    state = start(2)
    rig(state, 1, slots=full_slots())
    state, _ = play(state, 1, "RELEASE")
    state = end_week(state)
    state = end_week(state)
    rig(state, 0, slots=full_slots(), field=[{"name": "電撃発表"}])
    state, _ = play(state, 0, "RELEASE")
    scores = _scores(_finish(state))
    assert scores["A"]["release"] == -10 and scores["A"]["events"] == 5
    assert scores["A"]["total"] == 10 - 10 + 5


def test_event_surprise_announcement_never_above_zero() -> None:
    state = start(2)
    rig(state, 0, slots=full_slots(), field=[{"name": "電撃発表"}])
    state, _ = play(state, 0, "RELEASE")
    assert _scores(_finish(state))["A"]["events"] == 0


@pytest.mark.parametrize(
    ("award", "bonus"),
    [("役者大賞", 1), ("脚本家大賞", 2), ("音楽家大賞", 3), ("演出家大賞", 4)],
)
def test_event_awards_add_their_slot_number(award: str, bonus: int) -> None:
    """D (house rule) 役者大賞/脚本家大賞/音楽家大賞/演出家大賞: + the number in 主演/脚本家/
    音楽家/演出家."""
    state = start(2)
    rig(state, 0, slots=full_slots(), events=[award])
    state, _ = play(state, 0, f"EVENT {award}", "RELEASE")
    assert _scores(_finish(state))["A"]["events"] == bonus


def test_event_buzz_monopoly_plus_10_for_the_sole_first_releaser() -> None:
    """D (house rule) 話題の独占: +10 if nobody else released in the first release week."""
    state = start(3)
    rig(state, 0, slots=full_slots(), field=[{"name": "話題の独占"}])
    rig(state, 1, slots=full_slots(), field=[{"name": "話題の独占"}])
    state, _ = play(state, 0, "RELEASE")
    state = end_week(state)
    state, _ = play(state, 1, "RELEASE")
    scores = _scores(_finish(state))
    assert scores["A"]["events"] == 10 and scores["B"]["events"] == 0


def test_event_buzz_monopoly_shared_first_week_gives_nothing() -> None:
    state = start(2)
    rig(state, 0, slots=full_slots(), field=[{"name": "話題の独占"}])
    rig(state, 1, slots=full_slots())
    state, _ = play(state, 0, "RELEASE")
    state, _ = play(state, 1, "RELEASE")
    assert _scores(state)["A"]["events"] == 0


def test_event_own_network_takes_the_named_card_instead_of_scouting() -> None:
    """D (house rule, R スカウトフェイズ「【イベントカード】の効果が優先される」) 独自の情報網:
    take the named card from its deck; it replaces this week's scout action."""
    state = start(2)
    rig(state, 0, events=["独自の情報網"])
    legal = game.legal(state, 0)
    assert "EVENT 独自の情報網 演出家6" in legal
    state, _ = play(state, 0, "EVENT 独自の情報網 演出家6")
    assert state["players"][0]["stock"]["演出家6"] == 1
    assert state["decks"]["演出家"].count("演出家6") == 1
    assert not any(line.startswith(("SCOUT", "BUY")) for line in game.legal(state, 0))
    assert "いずれか1つ" in rejected(state, 0, "SCOUT 役者").message


def test_event_own_network_card_must_be_in_the_deck() -> None:
    state = start(2)
    rig(state, 0, events=["独自の情報網"], roles=["演出家6"], slots={"演出家": "演出家6"})
    error = rejected(state, 0, "EVENT 独自の情報網 演出家6")
    assert "山に残っていません" in error.message
    assert "EVENT 独自の情報網 演出家6" not in error.legal


def test_event_strike_blocks_the_targets_set_next_week() -> None:
    """D (house rule) ストライキ: the named other player cannot place a role card next week
    (drawing an event card is still allowed)."""
    state = start(2)
    rig(state, 0, events=["ストライキ"])
    rig(state, 1, roles=["役者1", "役者2"])
    assert "EVENT ストライキ B" in game.legal(state, 0)
    assert "EVENT ストライキ A" not in game.legal(state, 0)
    assert "自分には使えません" in rejected(state, 0, "EVENT ストライキ A").message
    assert "いません" in rejected(state, 0, "EVENT ストライキ Z").message
    state, _ = play(state, 0, "EVENT ストライキ B")
    state, _ = play(state, 1, "SET 主演 役者1")  # this week still allowed
    state = end_week(state)
    assert state["players"][1]["set_blocked"]
    assert not any(line.startswith("SET") for line in game.legal(state, 1))
    assert "DRAW" in game.legal(state, 1)
    assert "ストライキ" in rejected(state, 1, "SET 助演 役者2").message
    state = end_week(state)
    assert not state["players"][1]["set_blocked"]
    state, _ = play(state, 1, "SET 助演 役者2")


def test_event_strike_not_in_the_last_week_nor_on_released() -> None:
    state = start(3)
    rig(state, 0, events=["ストライキ"])
    rig(state, 2, slots=full_slots())
    state, _ = play(state, 2, "RELEASE")
    assert "公開している" in rejected(state, 0, "EVENT ストライキ C").message
    for _ in range(11):
        state = end_week(state)
    assert state["week"] == 12
    assert "最終週" in rejected(state, 0, "EVENT ストライキ B").message


def test_event_policy_change_swaps_a_slot_card_without_paying() -> None:
    """D (house rule; I「埋まった役割場はイベントでしか変えられない」) 方針転換: swap a slot's
    card with a stock role card that may go there; no payment; the old card goes to the stock."""
    state = start(2)
    rig(state, 0, slots={"主演": "役者1"}, roles=["役者6", "脚本家2"], events=["方針転換"])
    legal = [line for line in game.legal(state, 0) if "方針転換" in line]
    assert legal == ["EVENT 方針転換 主演 役者6"]
    assert "助演は空なので" in rejected(state, 0, "EVENT 方針転換 助演 役者6").message
    state, _ = play(state, 0, "EVENT 方針転換 主演 役者6")
    player = state["players"][0]
    assert player["slots"]["主演"] == "役者6" and player["stock"]["役者1"] == 1
    assert player["budget_used"] == 0 and state["discard"] == {}


def test_event_table_gives_every_card_an_effect_and_source() -> None:
    """Rules page D: every event has a short playable effect with its rulebook line or
    "house rule"."""
    assert set(EVENTS) == set(EVENT_NAMES) and len(EVENTS) == 15
    for card in EVENTS.values():
        assert card.effect and card.source
        assert card.source.startswith(("R ", "house rule"))


# --------------------------------------------------------------------------- view


def test_view_first_release_week_known_from_the_first_release() -> None:
    """R 2−4 公開週補正 counts from the first player to release: the view's
    `first_release_week` is set by the first RELEASE (null before), not only at the end, so a
    client can show each released player's running correction."""
    state = start(3)
    rig(state, 0, slots=full_slots())
    rig(state, 1, slots=full_slots("役者2", "脚本家3", "音楽家4", "演出家5"))
    state = end_week(state)
    assert game.view(state, None)["first_release_week"] is None
    state, _ = play(state, 0, "RELEASE")
    view = game.view(state, None)
    assert not view["over"] and view["first_release_week"] == 2
    assert state["first_release_week"] == 2
    saved_before = copy.deepcopy(state)  # a game saved while the field was set only at the end
    saved_before["first_release_week"] = None
    assert game.view(saved_before, None)["first_release_week"] == 2
    state, _ = play(state, 1, "END")
    state, _ = play(state, 2, "END")
    state, _ = play(state, 1, "RELEASE")
    view = game.view(state, 1)
    assert not view["over"] and view["first_release_week"] == 2
    released = {p["name"]: p["released_week"] for p in view["players"]}
    assert released == {"A": 2, "B": 3, "C": None}
    state = _finish(state)
    assert game.view(state, None)["first_release_week"] == 2
    assert _scores(state)["B"]["release"] == -5


def test_view_active_effects_this_week_with_the_week_they_came_from() -> None:
    """Event effects that bear on this week (timing this_week: placed this week; next_week:
    ストライキ placed on the player last week), each with the week it was placed and by whom;
    they are gone the week after."""
    state = start(2)
    rig(state, 0, events=["広告代理店の努力", "タイアップキャンペーン"])
    rig(state, 1, events=["ストライキ"])
    state, _ = play(state, 1, "EVENT ストライキ A", "END")
    state, _ = play(state, 0, "END")
    state, _ = play(state, 0, "EVENT 広告代理店の努力", "EVENT タイアップキャンペーン")
    view = game.view(state, None)
    assert view["week"] == 2
    assert view["players"][0]["active_effects"] == [
        {
            "name": "ストライキ",
            "week": 1,
            "by": "B",
            "by_seat": 1,
            "effect": EVENTS["ストライキ"].active,
        },
        {
            "name": "広告代理店の努力",
            "week": 2,
            "by": "A",
            "by_seat": 0,
            "effect": EVENTS["広告代理店の努力"].active,
        },
    ]
    assert view["players"][0]["set_blocked"] and view["players"][0]["buy_discount"] == 3
    assert view["players"][1]["active_effects"] == []
    state = end_week(state)
    assert game.view(state, None)["players"][0]["active_effects"] == []


def test_event_table_says_what_a_lasting_effect_does_while_active() -> None:
    """Every card whose effect lasts into the week (this_week, next_week) has a short text
    for the board while it is active; the others have none."""
    for card in EVENTS.values():
        assert bool(card.active) == (card.timing in ("this_week", "next_week")), card.name


# --------------------------------------------------------------------------- contract


def test_apply_does_not_mutate_its_input() -> None:
    """The contract: apply works on a deep copy and returns the new state."""
    state = start(2)
    rig(state, 0, roles=["役者1"], events=["新たなるチャンス", "ストライキ"])
    snapshot = copy.deepcopy(state)
    middle, _ = play(state, 0, "EVENT 新たなるチャンス 役者1", "EVENT ストライキ B", "BUY 中")
    middle_snapshot = copy.deepcopy(middle)
    final, _ = play(middle, 0, "DRAW", "END")
    final, _ = play(final, 1, "END")
    assert state == snapshot and middle == middle_snapshot
    assert final["week"] == 2 and final != middle


def test_rule_error_carries_legal_lines_for_that_actor() -> None:
    state = start(2)
    error = rejected(state, 0, "RELEASE")
    assert error.legal == game.legal(state, 0)
    assert error.legal[-1] == "END"


def test_gm_and_platform_commands_are_not_applied() -> None:
    """Only game commands reach apply; the GM acts through AS (handled by the app)."""
    state = start(2)
    with pytest.raises(RuleError):
        game.apply(state, "gm", End(), Rng("t", 1))
    with pytest.raises(RuleError):
        game.apply(state, 0, Join(), Rng("t", 1))
    with pytest.raises(RuleError):
        game.apply(state, 5, End(), Rng("t", 1))
    assert game.legal(state, "gm") == []


@pytest.mark.parametrize("deck", [*ROLE_DECKS, EVENT_DECK])
def test_gm_shuffle_shuffles_a_closed_deck_and_names_no_card(deck: str) -> None:
    """D: `SHUFFLE <deck>` is the GM's only command: it shuffles a closed deck with the move's
    Rng, its text names no card, and it is in nobody's legal lines, the GM's included."""
    state = start(2)
    shuffled, events = game.apply(state, "gm", game.parse(f"SHUFFLE {deck}"), Rng("t", 1))
    assert Counter(shuffled["decks"][deck]) == Counter(state["decks"][deck])
    assert shuffled["decks"][deck] != state["decks"][deck]
    assert {**shuffled, "decks": None} == {**state, "decks": None}
    assert [e["text"] for e in events] == [f"GM が{deck}の山を切り直しました。"]
    assert game.view(shuffled, None) == game.view(state, None)
    again, _ = game.apply(state, "gm", game.parse(f"切り直し {deck}"), Rng("t", 1))
    assert again == shuffled  # the move's Rng decides: it replays exactly
    error = rejected(state, 0, f"SHUFFLE {deck}")
    assert "GM の命令です" in str(error)
    for actor in (0, 1, "gm"):
        assert not any(line.startswith("SHUFFLE") for line in game.legal(state, actor))


def test_undo_lines_shuffle_every_deck_that_got_a_drawn_card_back() -> None:
    """D: after an UNDO, the bot shuffles every deck that got back a card the undone moves
    drew (the thread read its name); a deck that got nothing back is left as it is."""
    before = start(2)
    after = copy.deepcopy(before)
    assert game.undo_lines(before, after) == []
    before, _ = play(before, 0, "BUY 小", "END")  # nothing drawn
    assert game.undo_lines(before, after) == []
    before, _ = play(after, 0, "SCOUT 役者", "DRAW")
    assert game.undo_lines(before, after) == ["SHUFFLE 役者", f"SHUFFLE {EVENT_DECK}"]
    drawn, _ = play(after, 1, "SCOUT 脚本家")
    assert game.undo_lines(drawn, after) == ["SHUFFLE 脚本家"]
    over = {**after, "over": True}
    assert game.undo_lines(before, over) == []  # a game over takes no move


def test_legal_lines_parse_and_are_accepted() -> None:
    state = game.setup(NAMES[:4], {}, Rng("legal", 0))
    for seat in range(4):
        for line in game.legal(state, seat):
            command = game.parse(line)
            assert command.canonical() == line
            game.apply(state, seat, command, Rng("legal", 1))


def test_default_commands_end_or_choose_then_end() -> None:
    """The bot's pass for a player past the deadline: END, or CHOOSE 役者 then END."""
    state = _seed_with_a_six()
    pending = state["players"][0]["pending_choices"]
    assert game.default_commands(state, 0) == ["CHOOSE 役者"] * pending + ["END"]
    assert game.default_commands(state, 1)[-1] == "END"
    for line in game.default_commands(state, 0):
        state, _ = play(state, 0, line)
    assert game.default_commands(state, 0) == []


def test_default_commands_play_a_whole_game() -> None:
    state = game.setup(NAMES[:3], {}, Rng("defaults", 0))
    while not game.is_over(state):
        seat = game.waiting_for(state)[0]
        for line in game.default_commands(state, seat):
            state, _ = play(state, seat, line)
    assert state["week"] == 12
    result = game.result(state)
    assert result is not None and all(entry.score is None for entry in result.ranking)


def test_set_role_canonical_payment_is_recorded() -> None:
    """The move log keeps the payment the bot chose, so the record is explicit."""
    state = start(2)
    rig(state, 0, roles=["役者1"])
    state, _ = play(state, 0, "SET 主演 役者1")
    assert game.parse(state["players"][0]["moves"][0]) == SetRole(
        "主演", "役者1", ("予算・中", "予算・小")
    )
