"""IM@S x Workerplacement: one test per clause of docs/rules/idolwp.md, named after it, and the
source's cases exactly (R 3.2's starting levels, R 5.2's results example, A2's targets and
Rookies' levels)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.games.base import Rng, RuleError, State
from app.games.idolwp import game
from app.games.idolwp import rules as idolwp_rules
from app.games.idolwp.content import Idol, load
from app.games.idolwp.rules import Events, initial_abilities, meets

NAMES = ["A", "B", "C", "D", "E"]
# Idols with no power that changes the checks below, two each.
PLAIN = {"A": ["春香", "千早"], "B": ["伊織", "律子"], "C": ["雪歩", "やよい"], "D": ["響", "真美"]}


def dealt(players: int = 2, seed: str = "t", idols: dict[str, list[str]] | None = None) -> State:
    names = NAMES[:players]
    chosen = idols or {name: PLAIN[name] for name in names}
    return game.setup(names, {"idols": chosen}, Rng(seed, 0))


def play(state: State, seat: int, line: str, seq: int = 1) -> tuple[State, list[dict[str, Any]]]:
    return game.apply(state, seat, game.parse(line), Rng("play", seq))


def refused(state: State, seat: int, line: str) -> RuleError:
    with pytest.raises(RuleError) as caught:
        play(state, seat, line)
    return caught.value


def texts(events: list[dict[str, Any]]) -> str:
    return "\n".join(entry["text"] for entry in events)


def free_space(state: State, types: tuple[str, ...]) -> str:
    """A space of one of `types` that the turn player's due idol can reach and nobody holds."""
    seat = state["turn"]
    board = idolwp_rules.board_of(state)
    idol = idolwp_rules.due_idols(state, seat)[0]
    taken = {space for player in state["players"] for space in player["positions"].values()}
    for space_id in idolwp_rules.reachable(board, state["players"][seat]["positions"][idol]):
        space = idolwp_rules.space_of(board, space_id)
        assert space is not None
        if space.type in types and space_id not in taken:
            return space_id
    raise AssertionError(f"no free {types} space")


# --------------------------------------------------------------------------- setup (R 3)


def test_setup_nine_rounds_first_board_first_last_board_last() -> None:
    """R 3.1: board 1, seven of the others shuffled, the last board."""
    content = load()
    for seed in ("a", "b", "c"):
        state = dealt(seed=seed)
        boards = state["boards"]
        assert len(boards) == 9 and len(set(boards)) == 9
        assert boards[0] == content.first_board.id and boards[-1] == content.last_board.id
        assert all(content.boards[b].role == "middle" for b in boards[1:-1])
    assert dealt(seed="a")["boards"] != dealt(seed="b")["boards"] or (
        dealt(seed="a")["boards"] != dealt(seed="c")["boards"]
    )


def test_setup_first_event_is_rookies_and_the_others_a_deck() -> None:
    """R 3.1: イベントカードから、初期イベント(Rookies)を取り出し…残りは山札."""
    state = dealt()
    assert state["event"] == "Rookies"
    assert sorted(state["event_deck"]) == sorted(n for n in load().events if n != "Rookies")


def test_starting_levels_are_the_sums_2_0_1_plus_1_1_1_is_3_1_2() -> None:
    """R 3.2 例: アビリティVo/Da/Vi = 2/0/1 とアビリティ 1/1/1 → 3/1/2."""
    first = Idol(name="x", full_name="x", Vo=2, Da=0, Vi=1, text="")
    second = Idol(name="y", full_name="y", Vo=1, Da=1, Vi=1, text="")
    assert initial_abilities([first, second]) == ({"Vo": 3, "Da": 1, "Vi": 2}, 0)


def test_haruka_and_chihaya_start_at_5_2_2_with_one_memory() -> None:
    """I (shared/rules/idolwp.md): 春香 + 千早 → 5/2/2 and 1 思い出."""
    state = dealt()
    player = state["players"][0]
    assert player["abilities"] == {"Vo": 5, "Da": 2, "Vi": 2} and player["memory"] == 1


def test_open_snake_draft_seat_order_then_back() -> None:
    """I: カタン取り — an open snake draft from the start player, then back; PICK in public."""
    state = game.setup(NAMES[:3], {}, Rng("draft", 0))
    first = state["start_player"]
    order = [(first + k) % 3 for k in (0, 1, 2, 2, 1, 0)]
    assert state["draft"]["order"] == order
    picks = ["春香", "千早", "美希", "雪歩", "真", "響"]
    for seq, (seat, idol) in enumerate(zip(order, picks, strict=True), start=1):
        assert game.waiting_for(state) == [seat]
        if seq == 1:
            other = (seat + 1) % 3
            assert "さんです" in refused(state, other, f"PICK {idol}").message
        state, _ = play(state, seat, f"PICK {idol}", seq)
    assert state["phase"] == "play"
    assert state["players"][first]["idols"] == ["春香", "響"]
    assert game.needs_seal(state, game.parse("PICK 春香")) is False


def test_a_taken_idol_cannot_be_picked() -> None:
    state = game.setup(NAMES[:2], {}, Rng("draft", 0))
    seat = state["turn"]
    state, _ = play(state, seat, "PICK 春香")
    assert "選べません" in refused(state, state["turn"], "PICK 春香").message


# --------------------------------------------------------------------------- turns (R 4)


def test_move_along_one_or_more_arrows_to_a_reachable_space() -> None:
    """R 4.3: パスを1つ以上(好きな数だけ)経由することでたどり着けるスペース."""
    state = dealt()
    seat = state["turn"]
    idol = state["players"][seat]["idols"][0]
    assert "行けません" in refused(state, seat, f"MOVE {idol} S").message
    far = free_space(state, ("training",))  # two arrows away on board 1
    state, _events = play(state, seat, f"MOVE {idol} {far} TRAIN")
    assert state["players"][seat]["positions"][idol] == far


def test_no_idol_goes_where_another_stands_but_the_goal() -> None:
    """R 4.3: 既に他のアイドルがいるゴール以外のスペースを選び…できない."""
    state = dealt()
    seat = state["turn"]
    space = free_space(state, ("lesson",))
    state, _ = play(state, seat, f"MOVE {state['players'][seat]['idols'][0]} {space}")
    other = state["turn"]
    idol = state["players"][other]["idols"][0]
    assert "もう" in refused(state, other, f"MOVE {idol} {space}").message


def test_idols_alternate_turn_by_turn() -> None:
    """I: 「1つ前のラウンドで動かしたアイドル」 is the previous turn's: A, then B, then A."""
    state = dealt()
    seat = state["turn"]
    first, second = state["players"][seat]["idols"]
    state, _ = play(state, seat, f"MOVE {second} {free_space(state, ('lesson', 'daily'))}")
    assert state["players"][seat]["idols"][0] == second  # the first move fixed A
    other = state["turn"]
    state, _ = play(state, other, f"MOVE {state['players'][other]['idols'][1]} G")
    assert state["turn"] == seat
    assert idolwp_rules.due_idols(state, seat) == [first]
    message = refused(state, seat, f"MOVE {second} G").message
    assert "交互" in message and first in message


def test_one_idol_at_the_goal_the_other_must_go_to_the_goal() -> None:
    """R 4.3: 既に一方のアイドルがゴールスペースに居る場合、ゴールスペース以外…できない."""
    state = dealt()
    seat = state["turn"]
    first, second = state["players"][seat]["idols"]
    state, _ = play(state, seat, f"MOVE {first} G", 1)
    other = state["turn"]
    state, _ = play(state, other, f"MOVE {state['players'][other]['idols'][0]} G", 2)
    space = free_space(state, ("lesson",))
    assert "ゴール" in refused(state, seat, f"MOVE {second} {space}").message
    assert game.legal(state, seat) == [
        line
        for line in game.legal(state, seat)
        if not line.startswith("MOVE") or line.endswith(" G")
    ]


def test_both_idols_at_the_goal_take_a_money_chip_instead() -> None:
    """R 4.3: 自分のアイドルが全てゴールスペースに置かれている場合…マニーチップを1枚得ます."""
    state = dealt()
    seat = state["turn"]
    other = 1 - seat
    first, second = state["players"][seat]["idols"]
    state, _ = play(state, seat, f"MOVE {first} G", 1)
    state, _ = play(
        state,
        other,
        f"MOVE {state['players'][other]['idols'][0]} {free_space(state, ('daily',))}",
        2,
    )
    state, _ = play(state, seat, f"MOVE {second} G", 3)
    money = state["players"][seat]["money"]
    state, _ = play(
        state,
        other,
        f"MOVE {state['players'][other]['idols'][1]} {free_space(state, ('lesson',))}",
        4,
    )
    # The seat with both idols home is passed: the bot gave it a money chip.
    assert state["turn"] == other
    assert state["players"][seat]["money"] == money + 1


def everyone_home() -> tuple[State, Events, int]:
    """A first round played to its end, every idol moved home (G) in turn: the state, the
    last move's events, and the seat that started (and came home first)."""
    state = dealt()
    seat = state["turn"]
    other = 1 - seat
    events: Events = []
    for seq, mover in enumerate((seat, other, seat, other), start=1):
        idol = idolwp_rules.due_idols(state, mover)[0]
        state, events = play(state, mover, f"MOVE {idol} G", seq)
    return state, events, seat


def test_round_ends_when_every_idol_is_home_and_the_first_home_starts_the_next() -> None:
    """R 4.5: 次のラウンドのスタートプレイヤーは、前のラウンドで最も最初にゴールしたプレイヤー."""
    state, events, seat = everyone_home()
    assert state["round"] == 2
    assert state["finished"] == [] and state["turn"] == seat
    assert "第1ラウンド イベント結果発表" in texts(events)
    start = idolwp_rules.board_of(state).spaces[0].id
    assert all(space == start for space in state["players"][0]["positions"].values())


# --------------------------------------------------------------------------- spaces (R 4.4)


def test_lesson_gives_the_printed_chips() -> None:
    state = dealt()
    seat = state["turn"]
    space_id = free_space(state, ("lesson",))
    space = idolwp_rules.space_of(idolwp_rules.board_of(state), space_id)
    assert space is not None
    idol = idolwp_rules.due_idols(state, seat)[0]
    before = dict(state["players"][seat]["chips"])
    state, _ = play(state, seat, f"MOVE {idol} {space_id}")
    for ability, count in space.chips.items():
        assert state["players"][seat]["chips"][ability] == before[ability] + count


def test_chihaya_takes_vo_chips_instead_of_da_or_vi_at_a_lesson() -> None:
    """R A1 千早: レッスンDa/Viのアクションを実行するときに、Da/Viのチップの代わりにVoのチップ."""
    state = dealt()
    seat = 0
    state["turn"] = seat
    board = idolwp_rules.board_of(state)
    lesson = next(
        s
        for s in board.spaces
        if s.type == "lesson"
        and (s.chips.get("Da") or s.chips.get("Vi"))
        and s.id in idolwp_rules.reachable(board, "S")
    )
    moved = lesson.chips.get("Da", 0) + lesson.chips.get("Vi", 0)
    state, _ = play(state, seat, f"MOVE 千早 {lesson.id} VO")
    chips = state["players"][seat]["chips"]
    assert chips["Vo"] == lesson.chips.get("Vo", 0) + moved and chips["Da"] == chips["Vi"] == 0
    without = dealt(idols={"A": ["伊織", "律子"], "B": ["雪歩", "真美"]})
    without["turn"] = 0
    assert "千早" in refused(without, 0, f"MOVE 伊織 {lesson.id} VO").message


def test_haruka_takes_one_more_memory_at_a_daily() -> None:
    """R A1 春香: 「ある日の日常」において思い出を取得する場合、思い出チップを1つ追加で獲得する."""
    state = dealt()
    state["turn"] = 0
    board = idolwp_rules.board_of(state)
    daily = next(
        s for s in board.spaces if s.type == "daily" and s.id in idolwp_rules.reachable(board, "S")
    )
    before = state["players"][0]["memory"]
    state, _ = play(state, 0, f"MOVE 千早 {daily.id}")
    assert state["players"][0]["memory"] == before + daily.amount + 1


def test_miki_may_train_at_two_chips_a_level_before_her_move() -> None:
    """R A1 美希: 自分の手番を始める前に「特訓: Ability / 2 Chips」のアクションを行うことが
    できる."""
    state = dealt(idols={"A": ["美希", "伊織"], "B": ["雪歩", "真美"]})
    state["turn"] = 0
    state["players"][0]["chips"]["Vi"] = 4
    before = state["players"][0]["abilities"]["Vi"]
    assert before == 3 + 2  # 美希 Vi3, 伊織 Vi2
    state, _ = play(state, 0, "TRAIN Vi2")
    assert state["players"][0]["abilities"]["Vi"] == before + 2
    assert state["players"][0]["chips"]["Vi"] == 0
    assert "もう" in refused(state, 0, "TRAIN").message
    other = dealt()
    assert "特訓" in refused(other, other["turn"], "TRAIN").message


def test_training_space_raises_abilities_at_its_printed_rate() -> None:
    state = dealt()
    seat = state["turn"]
    space_id = free_space(state, ("training",))
    space = idolwp_rules.space_of(idolwp_rules.board_of(state), space_id)
    assert space is not None
    state["players"][seat]["chips"]["Da"] = space.rate
    idol = idolwp_rules.due_idols(state, seat)[0]
    state, events = play(state, seat, f"MOVE {idol} {space_id}")
    assert state["turn"] == seat and state["pending"]["kind"] == "training"
    assert "TRAIN" in texts(events)
    # The prompt names the player it waits for (the reply adds no 手番待ち line again).
    prompt = events[-1]
    assert prompt["waiting"] == [seat] == idolwp_rules.waiting_for(state)
    assert f"{NAMES[seat]}さん、続けて TRAIN" in prompt["text"]
    before = state["players"][seat]["abilities"]["Da"]
    assert "チップが" in refused(state, seat, "TRAIN Da2").message
    state, _ = play(state, seat, "TRAIN Da1")
    assert state["players"][seat]["abilities"]["Da"] == before + 1
    assert state["players"][seat]["chips"]["Da"] == 0 and state["turn"] != seat


# --------------------------------------------------------------------------- resources (R 4.6)


def test_memory_gives_three_chips_and_money_two() -> None:
    """R 4.6: 思い出 — 好きなアビリティチップを3個; マニー — 2個."""
    state = dealt()
    seat = 0
    state["turn"] = seat
    state["players"][seat]["money"] = 1
    state, _ = play(state, seat, "CONVERT MEMORY Vo Vo Da")
    state, _ = play(state, seat, "CONVERT MONEY Vi Vi")
    player = state["players"][seat]
    assert player["chips"] == {"Vo": 2, "Da": 1, "Vi": 2}
    assert player["memory"] == 0 and player["money"] == 0
    assert "持っていません" in refused(state, seat, "CONVERT MEMORY Vo Vo Vo").message


def test_money_right_after_the_move_enters_the_event_instead() -> None:
    """R 4.6 / 5.1: スタート、ゴール以外のアクションスペースにアイドルを置き、マニーチップを
    1枚使用."""
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["money"] = 1
    space = free_space(state, ("lesson",))
    idol = idolwp_rules.due_idols(state, seat)[0]
    state, events = play(state, seat, f"MOVE {idol} {space} MONEY EVENT LV1")
    assert state["players"][seat]["money"] == 0
    assert state["players"][seat]["chips"] == {"Vo": 0, "Da": 0, "Vi": 0}  # no lesson
    # Rookies Lv1 (the round's event, named on the round's board): the target and the outcome.
    assert "Lv1 目標 (2, 1, 1)" in texts(events) and "成功" in texts(events)
    assert state["players"][seat]["evp"] == 1


def test_money_cannot_enter_the_event_from_the_goal() -> None:
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["money"] = 1
    idol = idolwp_rules.due_idols(state, seat)[0]
    assert "ゴール以外" in refused(state, seat, f"MOVE {idol} G MONEY").message


def test_hold_at_most_three_cards_and_discard_the_rest_by_choice() -> None:
    """R 4.6: イベントカードの所持上限は３枚…所持上限を超えて取得した場合、好きなカードを捨てて."""
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["hand"] = ["マイク", "自由行動", "臨時収入"]
    space = free_space(state, ("sales",))
    idol = idolwp_rules.due_idols(state, seat)[0]
    state, events = play(state, seat, f"MOVE {idol} {space}")
    over = len(state["players"][seat]["hand"]) - 3
    assert over >= 1 and state["pending"] == {"kind": "discard", "seat": seat, "count": over}
    assert state["turn"] == seat and "DISCARD" in texts(events)
    asked = [entry for entry in events if "DISCARD" in entry["text"]]
    assert asked[0]["waiting"] == [seat] == idolwp_rules.waiting_for(state)
    assert "捨てる" in refused(state, seat, "CONVERT MEMORY Vo Vo Vo").message
    for seq in range(over):
        assert state["turn"] == seat
        state, _ = play(state, seat, f"DISCARD {state['players'][seat]['hand'][0]}", seq + 2)
    assert len(state["players"][seat]["hand"]) == 3 and state["turn"] != seat


# --------------------------------------------------------------------------- events (R 5)


@pytest.mark.parametrize(
    ("abilities", "target", "passes"),
    [
        ({"Vo": 2, "Da": 2, "Vi": 2}, {"Vo": 2, "Da": 2, "Vi": 2}, True),
        ({"Vo": 2, "Da": 1, "Vi": 9}, {"Vo": 2, "Da": 2, "Vi": 2}, False),
        ({"Vo": 5, "Da": 0, "Vi": 0}, {"Vo": 5}, True),
        ({"Vo": 4, "Da": 9, "Vi": 9}, {"Vo": 5}, False),
    ],
)
def test_a2_fixed_targets_vo2_da2_vi2_and_vo5(
    abilities: dict[str, int], target: dict[str, int], passes: bool
) -> None:
    """A2 例1: Vo2, Da2, Vi2 — all three ≥ 2; 例2: Vo5 — Vo ≥ 5, the others anything."""
    assert meets(abilities, "fixed", target) is passes


def test_a2_any_target_4_2_2_either_way() -> None:
    """A2 例3: (4, 2, 2) — Vo=4, Da=2, Vi=2 でも良いし、Vo=2, Da=2, Vi=4 でも良い."""
    assert meets({"Vo": 4, "Da": 2, "Vi": 2}, "any", [4, 2, 2])
    assert meets({"Vo": 2, "Da": 2, "Vi": 4}, "any", [4, 2, 2])
    assert not meets({"Vo": 3, "Da": 3, "Vi": 3}, "any", [4, 2, 2])
    assert not meets({"Vo": 4, "Da": 4, "Vi": 1}, "any", [4, 2, 2])


def entered(level: int, abilities: dict[str, int], line: str = "") -> tuple[State, str]:
    """A player with these abilities takes part in Rookies at `level` through a マニー chip."""
    state = dealt()
    seat = state["turn"]
    player = state["players"][seat]
    player["abilities"] = dict(abilities)
    player["money"] = 1
    player["memory"] = 1
    space = free_space(state, ("lesson", "daily"))
    idol = idolwp_rules.due_idols(state, seat)[0]
    state, events = play(state, seat, f"MOVE {idol} {space} MONEY EVENT LV{level}{line}")
    return state, texts(events)


def test_rookies_lv1_2_1_1_gives_1_evp() -> None:
    """A2 Rookies Lv1: 目標値 (2, 1, 1)、成功時報酬 1EVP."""
    state, said = entered(1, {"Vo": 2, "Da": 1, "Vi": 1})
    seat = next(
        i for i, p in enumerate(state["players"]) if p["money"] == 0 and p["abilities"]["Vo"] == 2
    )
    assert state["players"][seat]["evp"] == 1 and "成功" in said
    state, said = entered(1, {"Vo": 1, "Da": 1, "Vi": 1})
    assert "失敗" in said


def test_rookies_lv2_3_2_1_gives_2_evp_and_a_memory() -> None:
    """A2 Rookies Lv2: (3, 2, 1) → 2EVP, 思い出+1."""
    state, said = entered(2, {"Vo": 1, "Da": 2, "Vi": 3})
    seat = next(
        i for i, p in enumerate(state["players"]) if p["money"] == 0 and p["abilities"]["Vi"] == 3
    )
    player = state["players"][seat]
    assert player["evp"] == 2 and player["memory"] == 2 and "成功" in said


def test_rookies_lv3_4_3_2_gives_2_evp_a_memory_and_a_card() -> None:
    """A2 Rookies Lv3: (4, 3, 2) → 2EVP, 思い出+1, イベントカード+1."""
    state, _said = entered(3, {"Vo": 4, "Da": 3, "Vi": 2})
    seat = next(
        i for i, p in enumerate(state["players"]) if p["money"] == 0 and p["abilities"]["Vo"] == 4
    )
    player = state["players"][seat]
    assert player["evp"] == 2 and player["memory"] == 2 and len(player["hand"]) == 1


def test_rookies_lv2_doubled_with_a_memory_gives_4_evp() -> None:
    """R 4.6 / I: Rookies Lv2 with a 思い出 doubling → 4 EVP (one chip per event)."""
    state, said = entered(2, {"Vo": 3, "Da": 2, "Vi": 1}, " DOUBLE")
    seat = next(
        i for i, p in enumerate(state["players"]) if p["money"] == 0 and p["abilities"]["Vo"] == 3
    )
    player = state["players"][seat]
    # 思い出: 1 spent on the doubling, 1 gained from Lv2.
    assert player["evp"] == 4 and player["memory"] == 1 and "2倍" in said


def test_boost_chips_raise_abilities_for_this_check_only() -> None:
    """R 5.1: 好きな数だけのVo/Da/Viチップを使用できる…今回参加したイベントに限り…一時的に上昇."""
    state = dealt()
    seat = state["turn"]
    player = state["players"][seat]
    player["abilities"] = {"Vo": 1, "Da": 1, "Vi": 1}
    player["chips"] = {"Vo": 1, "Da": 0, "Vi": 0}
    player["money"] = 1
    space = free_space(state, ("daily",))
    idol = idolwp_rules.due_idols(state, seat)[0]
    state, events = play(state, seat, f"MOVE {idol} {space} MONEY EVENT LV1 BOOST Vo1")
    assert "成功" in texts(events)
    assert state["players"][seat]["abilities"] == {"Vo": 1, "Da": 1, "Vi": 1}
    assert state["players"][seat]["chips"]["Vo"] == 0


def test_a_failed_event_gives_nothing_and_keeps_the_memory() -> None:
    """R 5.1: イベントが失敗で終わった場合、何も得られない (D: DOUBLE spends nothing then)."""
    state, said = entered(3, {"Vo": 1, "Da": 1, "Vi": 1}, " DOUBLE")
    seat = next(
        i for i, p in enumerate(state["players"]) if p["money"] == 0 and p["abilities"]["Vo"] == 1
    )
    assert "失敗" in said and state["players"][seat]["evp"] == 0
    assert state["players"][seat]["memory"] == 1


def test_results_example_a_13_b_5_c_5_d_1() -> None:
    """R 5.2 例: 1位=10点、2位=5点、3位=2点; A 3EVP, B と C 2EVP, D 1EVP → 順位報酬 A 10,
    B 3, C 3, D 0; so the whole gain is A +13, B +5, C +5, D +1."""
    state = dealt(4)
    for seat, evp in enumerate((3, 2, 2, 1)):
        state["players"][seat]["evp"] = evp
    assert load().events["Rookies"].rewards[:3] == [10, 5, 2]
    events: list[dict[str, Any]] = []
    idolwp_rules._results(state, events)
    gains = [player["points"] for player in state["players"]]
    assert gains == [13, 5, 5, 1]
    rows = {row["name"]: (row["evp"], row["reward"]) for row in state["results"][0]["rows"]}
    assert rows == {"A": (3, 10), "B": (2, 3), "C": (2, 3), "D": (1, 0)}
    assert all(player["evp"] == 0 for player in state["players"])


def test_results_a_player_with_no_evp_takes_no_reward() -> None:
    """D: a player with 0 EVP took no part and takes no rank reward."""
    state = dealt(2)
    state["players"][0]["evp"] = 2
    idolwp_rules._results(state, [])
    assert [p["points"] for p in state["players"]] == [12, 0]


def test_results_after_rounds_1_3_6_9() -> None:
    """R 4.1: 1, 3, 6, 9ラウンド目の終了時にイベントの結果発表."""
    assert load().tables.results_rounds == [1, 3, 6, 9]
    state = whole_game(3, "results")
    assert [entry["round"] for entry in state["results"]] == [1, 3, 6, 9]
    assert state["results"][0]["event"] == "Rookies"


# --------------------------------------------------------------------------- the end (R 6)


def whole_game(players: int, seed: str) -> State:
    """Random legal lines to the end: resources within bounds, never two idols on one space
    but the goal, and the state equal to its replay from the log."""
    state = game.setup(NAMES[:players], {}, Rng(seed, 0))
    chooser = random.Random(seed)
    log: list[tuple[int, str]] = []
    for seq in range(1, 3000):
        if game.is_over(state):
            replayed = game.setup(NAMES[:players], {}, Rng(seed, 0))
            for number, (seat, line) in enumerate(log, start=1):
                replayed, _ = game.apply(replayed, seat, game.parse(line), Rng(seed, number))
            assert replayed == state
            return state
        seat = game.waiting_for(state)[0]
        line = chooser.choice(game.legal(state, seat))
        state, _ = game.apply(state, seat, game.parse(line), Rng(seed, seq))
        log.append((seat, line))
        if state["phase"] == "play":
            board = idolwp_rules.board_of(state)
            shared = (idolwp_rules._start(board), idolwp_rules._goal(board))
            spaces = [
                space
                for player in state["players"]
                for space in player["positions"].values()
                if space not in shared
            ]
            assert len(spaces) == len(set(spaces)), "two idols on one space"
        for player in state["players"]:
            assert all(
                v >= 0 for v in (*player["chips"].values(), player["memory"], player["money"])
            )
            assert len(player["hand"]) + len(player["kept"]) <= 3 or state["pending"] is not None
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_whole_games_end_after_nine_rounds_and_replay(players: int) -> None:
    state = whole_game(players, f"whole-{players}")
    assert state["over"] and state["round"] == 9 and state["phase"] == "over"
    assert sorted(p["finish_rank"] for p in state["players"]) == list(range(1, players + 1))
    result = game.result(state)
    assert result is not None
    for entry in result.ranking:
        events, abilities = entry.breakdown["events"], entry.breakdown["abilities"]
        assert isinstance(events, int) and isinstance(abilities, int), entry.breakdown
        assert entry.score == events + abilities
    assert json.loads(json.dumps(state)) == state


def test_final_training_latest_finisher_first() -> None:
    """R 6: イベント結果発表の終了後、「後からゴールしたプレイヤーから順番」に「特訓」."""
    state = game.setup(NAMES[:3], {}, Rng("final", 0))
    chooser = random.Random("final")
    seq = 0
    while state["phase"] != "final":
        seq += 1
        seat = game.waiting_for(state)[0]
        state, _ = play(state, seat, chooser.choice(game.legal(state, seat)), seq)
    assert state["final_order"] == list(reversed(state["finished"]))
    for seat in state["final_order"]:
        assert game.waiting_for(state) == [seat]
        # Resources may still be used; the event is over (no MOVE, no EVENT).
        assert not [line for line in game.legal(state, seat) if line.startswith(("MOVE", "EVENT"))]
        seq += 1
        state, _ = play(state, seat, "TRAIN", seq)
    assert state["over"]


def test_final_ability_ranking_ties_add_and_split_rounding_down() -> None:
    """R 6: 同点の場合は合算の後折半（端数切捨て）, each ability ranked on its own (I)."""
    state = dealt(3)
    for player, levels in zip(
        state["players"],
        ({"Vo": 5, "Da": 1, "Vi": 3}, {"Vo": 5, "Da": 2, "Vi": 3}, {"Vo": 1, "Da": 3, "Vi": 3}),
        strict=True,
    ):
        player["abilities"] = levels
    table = load().tables.final_points["3"]
    idolwp_rules._finish(state, [])
    vo = (table[0] + table[1]) // 2
    da = {0: table[2], 1: table[1], 2: table[0]}
    vi = sum(table) // 3
    assert [p["ability_points"] for p in state["players"]] == [
        vo + da[0] + vi,
        vo + da[1] + vi,
        table[2] + da[2] + vi,
    ]


def test_ties_share_the_win() -> None:
    """R 6: 同点の場合はその全てのプレイヤーが勝利者."""
    state = dealt(3)
    for player, points in zip(state["players"], (10, 10, 3), strict=True):
        player["points"] = points
    state["over"] = True
    result = game.result(state)
    assert result is not None
    assert [(e.name, e.rank) for e in result.ranking] == [("A", 1), ("B", 1), ("C", 3)]


# --------------------------------------------------------------------------- hidden, deadlines


def test_a_hand_is_seen_by_its_owner_only() -> None:
    state = dealt()
    state["players"][0]["hand"] = ["マイク", "自由行動"]
    assert "hand" not in game.view(state, None)["players"][0]
    assert game.view(state, None)["players"][0]["cards"] == 2
    assert game.view(state, 0)["players"][0]["hand"] == ["マイク", "自由行動"]
    assert "hand" not in game.view(state, 1)["players"][0]
    assert not any(line.startswith("CARD") for line in game.refusal_lines({**state, "turn": 0}, 0))


def test_default_moves_finish_a_missing_players_turn() -> None:
    """D: past the deadline the bot moves the due idol to the first free space and declines
    what it offers; every default line is accepted."""
    state = game.setup(NAMES[:3], {}, Rng("defaults", 0))
    for seq in range(1, 400):
        if game.is_over(state):
            break
        seat = game.waiting_for(state)[0]
        lines = game.default_commands(state, seat)
        assert lines, (state["phase"], state["pending"])
        for line in lines:
            if seat not in game.waiting_for(state):
                break
            state, _ = play(state, seat, line, seq)
    assert game.is_over(state)


def test_a_refused_card_line_never_lists_the_face_down_hand() -> None:
    """A refusal is posted in the thread: CARD or DISCARD of a card not held names no card of
    the hand (the owner sees it on the game page)."""
    state = dealt()
    seat = state["turn"]
    state["players"][seat]["hand"] = ["マイク", "自由行動"]
    for line in ("CARD 臨時収入", "DISCARD 臨時収入"):
        message = refused(state, seat, line).message
        assert "マイク" not in message and "自由行動" not in message, message


def test_a_round_in_which_nobody_scored_says_so_in_one_line_not_a_ranking_of_ties() -> None:
    """R 5 (イベント結果発表): with no EVP and no reward for anyone, one line says nobody
    scored and each total; a ranking of 1位 at +0 for every player said nothing more."""
    _state, events, _seat = everyone_home()
    said = texts(events)
    assert "今回は誰も得点しませんでした(計 " in said, said
    assert "位 " not in said.split("イベント結果発表", 1)[1].split("\n", 2)[1], said
