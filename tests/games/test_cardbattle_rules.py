"""掲示板進行カードゲーム: one test per clause of docs/rules/cardbattle.md, named after it. The
source has no worked example, so each decision the page marks D has its own test: cost at
exactly 1,000 and at 1,001, the wipe-out at 1,001 still losing, the second player's timeout
win, damage past 0, each ability once, the die choosing among several, magic in レス番 order."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.games.base import Rng, RuleError, State
from app.games.cardbattle import game
from app.games.cardbattle import rules as battle
from app.games.cardbattle.cards import CardSpec
from tests.support.cardbattle import ability, magic, normal

NAMES = ["A", "B"]


def pool_of(*cards: CardSpec) -> dict[str, CardSpec]:
    return {card.name: card for card in cards}


# A plain pool: weak attackers that cannot decide a battle quickly, and dummies.
PLAIN = pool_of(
    normal("壁1", 300, 10, 900),
    normal("壁2", 300, 10, 900),
    normal("壁3", 300, 10, 900),
    normal("高価", 400, 10, 900),
    normal("安価", 100, 10, 900),
    normal("強打", 300, 500, 100),
    magic("火の玉", 100, ability("damage", 300)),
    magic("小石", 1, ability("damage", 1)),
    magic("癒し", 50, ability("heal", 100)),
    magic("追放", 10, ability("remove")),
)


def seated(pool: dict[str, CardSpec] | None = None, seed: str = "t") -> State:
    return game.setup(NAMES, {"pool": pool or PLAIN}, Rng(seed, 0))


def do(state: State, seat: int, line: str, seq: int = 1) -> tuple[State, list[dict[str, Any]]]:
    command = game.parse(line)
    sealed = game.needs_seal(state, command) is True
    return game.apply(state, seat, command, Rng("do", seq), sealed=sealed)


def refused(state: State, seat: int, line: str) -> str:
    command = game.parse(line)
    with pytest.raises(RuleError) as caught:
        game.apply(
            state, seat, command, Rng("do", 0), sealed=game.needs_seal(state, command) is True
        )
    return caught.value.message


def texts(events: list[dict[str, Any]]) -> str:
    return "\n".join(entry["text"] for entry in events)


def battle_with(decks: tuple[str, str], pool: dict[str, CardSpec] | None = None) -> State:
    state = seated(pool)
    state, _ = do(state, 0, decks[0], 1)
    state, _ = do(state, 1, decks[1], 2)
    return state


def pass_window(state: State, seq: int = 10) -> State:
    for seat in list(battle.waiting_for(state)):
        state, _ = do(state, seat, "PASS", seq)
    return state


# --------------------------------------------------------------------------- decks and the start


def test_first_player_decided_by_the_dice_before_the_decks() -> None:
    """D: each rolls a die (again on a tie), the higher moves first, told before the decks."""
    for seed in ("a", "b", "c", "d"):
        state = seated(seed=seed)
        dice = state["dice"]
        assert dice[0] != dice[1] and state["first"] == (0 if dice[0] > dice[1] else 1)
        assert state["phase"] == "deck"
        assert game.view(state, None)["first"] == NAMES[state["first"]]


def test_a_deck_is_sealed_and_both_are_revealed_at_once() -> None:
    """R: decks of 3 normal cards and up to 3 magic cards, prepared in secret; both shown at
    once."""
    state = seated()
    with pytest.raises(RuleError, match="封印"):  # written in the thread: refused
        game.apply(state, 0, game.parse("DECK 壁1 壁2 壁3"), Rng("do", 0), sealed=False)
    state, events = do(state, 0, "DECK 壁1 壁2 壁3 MAGIC 火の玉")
    for viewer in (None, 1):
        shown = game.view(state, viewer)
        assert "sealed_deck" not in json.dumps(shown) and shown["players"][0]["field"] == []
        assert shown["players"][0]["sealed"] and not shown["players"][1]["sealed"]
    assert game.view(state, 0)["players"][0]["sealed_deck"]["cards"] == ["壁1", "壁2", "壁3"]
    assert battle.waiting_for(state) == [1]
    state, events = do(state, 1, "DECK 壁1 壁2 高価", 2)
    assert "デッキ公開" in texts(events) and state["phase"] == "window"
    shown = game.view(state, None)
    assert [card["name"] for card in shown["players"][0]["field"]] == ["壁1", "壁2", "壁3"]
    assert shown["players"][0]["magic_left"] == 1 and "magic" not in shown["players"][0]


def test_a_deck_of_unknown_or_wrong_cards_is_refused() -> None:
    state = seated()
    assert "カードプールにありません" in refused(state, 0, "DECK 壁1 壁2 幻")
    assert "マジックカード" in refused(state, 0, "DECK 壁1 壁2 火の玉")
    assert "通常カード" in refused(state, 0, "DECK 壁1 壁2 壁3 MAGIC 高価")


def test_deck_cost_exactly_1000_is_accepted_and_1001_refused() -> None:
    """R 総コストが1000を超えている → 敗北 (exactly 1,000 does not lose); D: a deck whose
    normal cards already cost more than 1,000 is refused when sealed."""
    pool = pool_of(
        normal("三百", 300, 10, 900),
        normal("四百", 400, 10, 900),
        normal("四百一", 401, 10, 900),
        normal("三百B", 300, 10, 900),
    )
    state = seated(pool)
    do(state, 0, "DECK 三百 三百B 四百")  # 1,000: accepted
    assert "1001" in refused(state, 0, "DECK 三百 三百B 四百一")


# --------------------------------------------------------------------------- turns


def test_ten_turns_each_and_the_second_player_wins_when_both_stand() -> None:
    """R 後攻のプレイヤー: 10ターン経過時、両陣営に、戦闘不能になっていない通常カードが存在する."""
    state = battle_with(("DECK 壁1 壁2 壁3", "DECK 壁1 壁2 壁3"))
    state = pass_window(state, 3)
    seq = 4
    while not state["over"]:
        seat = battle.turn_player(state)
        state, _ = do(state, seat, "ATTACK", seq)
        seq += 1
        state = pass_window(state, seq)
        seq += 1
    assert state["turn"] == 20
    second = 1 - state["first"]
    assert state["winner"] == second and "後攻" in state["reason"]
    result = game.result(state)
    assert result is not None and result.ranking[0].name == NAMES[second]
    assert result.ranking[0].breakdown["reason"] == state["reason"]


def test_automatic_attack_targets_the_lowest_durability_left() -> None:
    """D: attackers in deck order, each at the opposing card with the lowest durability left
    (ties: the lower number)."""
    pool = pool_of(
        normal("打1", 100, 100, 900),
        normal("打2", 100, 100, 900),
        normal("打3", 100, 100, 900),
        normal("高", 100, 1, 500),
        normal("低", 100, 1, 150),
        normal("中", 100, 1, 300),
    )
    state = battle_with(("DECK 打1 打2 打3", "DECK 高 低 中"), pool)
    state["first"] = 0
    state = pass_window(state)
    state, events = do(state, 0, "ATTACK", 20)
    rows = state["log"]
    assert [(r["attacker"], r["target"]) for r in rows] == [
        ("打1", "低"),
        ("打2", "低"),
        ("打3", "中"),
    ]
    assert [r["left"] for r in rows] == [50, 0, 200] and rows[1]["destroyed"]
    # Each attack one line: attacker → target, the damage, what is left or 破壊.
    assert "1.打1 → 相手2.低 100、残り 50\n2.打2 → 相手2.低 100、破壊" in texts(events)


def test_written_attacks_go_first_and_the_rest_attack_automatically() -> None:
    """D: ATTACK 2>3 — card 2 attacks card 3; the others by the automatic rule."""
    pool = pool_of(
        normal("打1", 100, 100, 900),
        normal("打2", 100, 100, 900),
        normal("打3", 100, 100, 900),
        normal("的1", 100, 1, 500),
        normal("的2", 100, 1, 450),
        normal("的3", 100, 1, 600),
    )
    state = battle_with(("DECK 打1 打2 打3", "DECK 的1 的2 的3"), pool)
    state["first"] = 0
    state = pass_window(state)
    state, _ = do(state, 0, "ATTACK 2>3", 20)
    assert [(r["attacker_number"], r["target_number"]) for r in state["log"]] == [
        (2, 3),
        (1, 2),
        (3, 2),
    ]
    fresh = pass_window(battle_with(("DECK 打1 打2 打3", "DECK 的1 的2 的3"), pool))
    assert "1回" in refused(fresh, battle.turn_player(fresh), "ATTACK 1>1 1>2")


def test_durability_below_zero_counts_as_zero() -> None:
    """R 耐久力: 0以下は0として扱う — damage past 0 leaves 0, and the card is destroyed."""
    pool = {**PLAIN, "紙": normal("紙", 100, 1, 120)}
    state = battle_with(("DECK 強打 壁1 壁2", "DECK 紙 壁1 壁2"), pool)
    state["first"] = 0
    state = pass_window(state)
    state, _ = do(state, 0, "ATTACK 1>1", 20)
    hit = state["players"][1]["field"][0]
    assert hit["left"] == 0 and hit["state"] == "destroyed"
    assert state["log"][0]["damage"] == 500 and state["log"][0]["left"] == 0


def test_only_the_player_on_turn_attacks_and_only_once() -> None:
    state = pass_window(battle_with(("DECK 壁1 壁2 壁3", "DECK 壁1 壁2 壁3")))
    other = 1 - battle.turn_player(state)
    assert "手番" in refused(state, other, "ATTACK")
    state, _ = do(state, battle.turn_player(state), "ATTACK", 20)
    assert "宣言受付" in refused(state, battle.turn_player(state), "ATTACK")


# --------------------------------------------------------------------------- abilities


def test_each_ability_fires_once_a_game() -> None:
    """R 通常カードによる特殊能力行使: ゲーム中に、一枚毎に1回."""
    pool = dict(PLAIN)
    pool["火力"] = normal("火力", 100, 10, 900, ability("damage", 100, "turn_start"))
    state = battle_with(("DECK 火力 壁1 壁2", "DECK 壁1 壁2 壁3"), pool)
    state["first"] = 0
    state = pass_window(state)  # turn 1: 火力's turn_start fires
    hits = [card["left"] for card in state["players"][1]["field"]]
    assert sorted(hits) == [800, 900, 900]
    state, _ = do(state, 0, "ATTACK", 20)
    state = pass_window(state, 21)
    state, _ = do(state, 1, "ATTACK", 22)
    state = pass_window(state, 23)  # turn 3: no second firing
    assert state["players"][0]["field"][0]["ability_used"]
    assert sum(900 - card["left"] for card in state["players"][1]["field"]) == 100 + 10 * 3


def test_the_die_picks_one_of_several_abilities() -> None:
    """R 複数記載されている場合、ランダムで実行される内容が選ばれる (追記: 選出方法はダイス)."""
    several = normal(
        "多芸",
        100,
        10,
        900,
        ability("damage", 100, "entry"),
        ability("heal", 100, "entry"),
        ability("cost", -50, "entry"),
    )
    pool = {**PLAIN, "多芸": several}
    picked = set()
    for seed in range(12):
        state = game.setup(NAMES, {"pool": pool}, Rng(f"die{seed}", 0))
        state, _ = do(state, 0, "DECK 多芸 壁1 壁2", 1)
        state, events = game.apply(
            state, 1, game.parse("DECK 壁1 壁2 壁3"), Rng(f"reveal{seed}", 2), sealed=True
        )
        chosen = state["players"][0]["field"][0]["ability"]
        assert chosen in [a.model_dump(mode="json") for a in several.abilities]
        assert "ダイス" in texts(events)
        picked.add(chosen["effect"])
    assert len(picked) > 1


def test_a_destroyed_card_fires_its_destroyed_ability() -> None:
    pool = {
        **PLAIN,
        "道連れ": normal("道連れ", 100, 1, 100, ability("damage_all", 50, "destroyed")),
    }
    state = battle_with(("DECK 強打 壁1 壁2", "DECK 道連れ 壁1 壁2"), pool)
    state["first"] = 0
    state = pass_window(state)
    state, events = do(state, 0, "ATTACK 1>1", 20)
    assert "(破壊時) →" in texts(events)
    assert [card["left"] for card in state["players"][0]["field"]] == [50, 850, 850]


# --------------------------------------------------------------------------- magic


def test_magic_is_declared_in_the_window_and_costs_join_the_total() -> None:
    """R マジックカード使用の宣言 (I: in answer to the last result); R 総コスト."""
    state = battle_with(("DECK 壁1 壁2 壁3 MAGIC 火の玉", "DECK 壁1 壁2 壁3"))
    seat = 0
    assert battle.total_cost(state, seat) == 900
    state, _events = do(state, seat, "MAGIC 火の玉 2", 5)
    assert state["players"][1]["field"][1]["left"] == 600
    assert battle.total_cost(state, seat) == 1000
    assert game.view(state, None)["players"][0]["magic_used"] == ["火の玉"]
    assert "もう宣言" in refused(state, seat, "MAGIC 火の玉")


def test_the_window_closes_when_both_pass_since_the_last_magic() -> None:
    state = battle_with(("DECK 壁1 壁2 壁3 MAGIC 火の玉 小石", "DECK 壁1 壁2 壁3"))
    state, _ = do(state, 1, "PASS", 3)
    state, _ = do(state, 0, "MAGIC 小石", 4)  # a magic reopens the window for both
    assert state["passed"] == [] and state["phase"] == "window"
    state, _ = do(state, 0, "PASS", 5)
    state, _ = do(state, 1, "PASS", 6)
    assert state["phase"] == "attack" and state["turn"] == 1


def test_magic_in_one_window_resolves_in_post_order() -> None:
    """I: magic in one window resolves in レス番 order — the first posted acts first: 小石
    (1 damage) then 癒し leaves the card whole; 癒し then 小石 leaves it one short."""
    decks = ("DECK 壁1 壁2 壁3 MAGIC 小石", "DECK 壁1 壁2 壁3 MAGIC 癒し")
    state = battle_with(decks)
    state, _ = do(state, 0, "MAGIC 小石 1", 3)
    state, _ = do(state, 1, "MAGIC 癒し 1", 4)
    assert state["players"][1]["field"][0]["left"] == 900
    state = battle_with(decks)
    state, _ = do(state, 1, "MAGIC 癒し 1", 3)
    state, _ = do(state, 0, "MAGIC 小石 1", 4)
    assert state["players"][1]["field"][0]["left"] == 899


def test_a_removed_card_cannot_be_targeted() -> None:
    """R 除外 = {陣営,場}に存在していない状態: out of action, and no magic reaches it."""
    state = battle_with(("DECK 壁1 壁2 壁3 MAGIC 追放", "DECK 強打 壁2 壁3 MAGIC 癒し"))
    state, _ = do(state, 0, "MAGIC 追放 1", 3)
    assert state["players"][1]["field"][0]["state"] == "removed"
    assert "除外" in refused(state, 1, "MAGIC 癒し 1")


# --------------------------------------------------------------------------- winning and losing


def test_wiping_out_the_opponent_wins() -> None:
    """R 勝利: 相手通常カードすべてを、10ターン以内に、戦闘不能にする."""
    pool = pool_of(
        normal("剛1", 300, 900, 900),
        normal("剛2", 300, 900, 900),
        normal("剛3", 300, 900, 900),
        normal("弱1", 100, 1, 100),
        normal("弱2", 100, 1, 100),
        normal("弱3", 100, 1, 100),
    )
    state = battle_with(("DECK 剛1 剛2 剛3", "DECK 弱1 弱2 弱3"), pool)
    state["first"] = 0
    state = pass_window(state)
    state, _events = do(state, 0, "ATTACK", 20)
    assert state["over"] and state["winner"] == 0 and "全て戦闘不能" in state["reason"]


def wiped_out_by(magic_cost: int) -> State:
    """The first player declares a magic card of this cost (deck cost 900), then wipes the
    opponent out on turn 1."""
    pool = pool_of(
        normal("剛1", 300, 900, 900),
        normal("剛2", 300, 900, 900),
        normal("剛3", 300, 900, 900),
        normal("弱1", 100, 1, 100),
        normal("弱2", 100, 1, 100),
        normal("弱3", 100, 1, 100),
        magic("呪文", magic_cost, ability("damage", 1)),
    )
    state = battle_with(("DECK 剛1 剛2 剛3 MAGIC 呪文", "DECK 弱1 弱2 弱3"), pool)
    state["first"] = 0
    state, _ = do(state, 0, "MAGIC 呪文", 3)
    assert battle.total_cost(state, 0) == 900 + magic_cost
    state = pass_window(state, 4)
    state, _ = do(state, 0, "ATTACK", 20)
    assert state["over"]
    return state


def test_wiping_out_at_a_total_of_1001_still_loses() -> None:
    """R 敗北条件を満たした場合は、これが優先される: wiping out the opponent at 1,001 loses."""
    state = wiped_out_by(101)
    assert state["winner"] == 1
    assert "1001" in state["reason"] and "優先" in state["reason"]


def test_a_total_of_exactly_1000_does_not_lose() -> None:
    """R 総コストが1000を「超えている」: exactly 1,000 does not lose."""
    assert wiped_out_by(100)["winner"] == 0


def test_both_over_1000_is_a_draw() -> None:
    """D: both totals over 1,000 at the end — a draw (both rank 1)."""
    state = battle_with(
        ("DECK 壁1 壁2 壁3 MAGIC 火の玉 小石", "DECK 壁1 壁2 壁3 MAGIC 火の玉 小石")
    )
    for seq, seat in enumerate((0, 1), start=3):
        state, _ = do(state, seat, "MAGIC 火の玉", seq)
        state, _ = do(state, seat, "MAGIC 小石", seq + 10)
    events: list[dict[str, Any]] = []
    battle._finish(state, [], events)
    assert state["winner"] is None and "引き分け" in state["reason"]
    result = game.result(state)
    assert result is not None and [entry.rank for entry in result.ranking] == [1, 1]


# --------------------------------------------------------------------------- whole battles


def test_whole_battles_by_random_legal_lines_replay_and_name_the_winner() -> None:
    """Random decks from the pool and random legal lines: every battle ends, its replay from the
    log equals its state, and the winner is the one the rules name."""
    pool = {
        **PLAIN,
        "回復役": normal("回復役", 250, 120, 400, ability("heal", 150, "turn_start")),
        "盾役": normal("盾役", 250, 100, 500, ability("shield", 200, "entry")),
        "復活役": normal("復活役", 250, 150, 300, ability("revive", 200, "destroyed")),
        "強化役": normal("強化役", 250, 150, 300, ability("attack_up", 100, "attack")),
        "節約": normal("節約", 250, 150, 300, ability("cost", -100, "entry")),
    }
    normals = [name for name, card in pool.items() if card.kind == "normal"]
    magics = [name for name, card in pool.items() if card.kind == "magic"]
    for number in range(15):
        chooser = random.Random(number)
        seed = f"whole{number}"
        state = game.setup(NAMES, {"pool": pool}, Rng(seed, 0))
        log: list[tuple[int, str]] = []
        for seq in range(1, 400):
            if state["over"]:
                break
            seat = chooser.choice(battle.waiting_for(state))
            if state["phase"] == "deck":
                while True:
                    cards = chooser.sample(normals, 3)
                    if sum(pool[name].cost for name in cards) <= 1000:
                        break
                extra = chooser.sample(magics, chooser.randint(0, 3))
                line = "DECK " + " ".join(cards) + (" MAGIC " + " ".join(extra) if extra else "")
            else:
                line = chooser.choice(game.legal(state, seat))
            state, _ = game.apply(
                state, seat, game.parse(line), Rng(seed, seq), sealed=line.startswith("DECK")
            )
            log.append((seat, line))
        assert state["over"], "the battle did not end"
        replayed = game.setup(NAMES, {"pool": pool}, Rng(seed, 0))
        for seq, (seat, line) in enumerate(log, start=1):
            replayed, _ = game.apply(
                replayed, seat, game.parse(line), Rng(seed, seq), sealed=line.startswith("DECK")
            )
        assert replayed == state
        over = [seat for seat in (0, 1) if battle.total_cost(state, seat) > 1000]
        standing = [seat for seat in (0, 1) if battle.active(state["players"][seat])]
        if len(over) == 1:
            assert state["winner"] == 1 - over[0]
        elif not over and len(standing) == 1:
            assert state["winner"] == standing[0]
        elif not over and len(standing) == 2:
            assert state["winner"] == 1 - state["first"] and state["turn"] == 20


def test_the_bot_plays_a_missing_player() -> None:
    """D: past the deadline the bot seals a suggested deck, attacks automatically, passes."""
    state = seated()
    for seq in range(1, 200):
        if state["over"]:
            break
        seat = battle.waiting_for(state)[0]
        (line,) = game.default_commands(state, seat)
        state, _ = do(state, seat, line, seq)
    assert state["over"]


def test_a_magic_that_takes_the_total_cost_over_1000_says_the_battle_is_then_lost() -> None:
    """R 敗北条件 (総コスト > 1000 loses at the end): said where the total goes over, not
    left to the board's 「(超過)」 until the 【決着】."""
    state = battle_with(("DECK 壁1 壁2 壁3 MAGIC 火の玉 小石", "DECK 壁1 壁2 壁3"))
    state, events = do(state, 0, "MAGIC 火の玉 2", 5)
    assert battle.total_cost(state, 0) == 1000
    assert not any("1000超過" in str(e["text"]) for e in events)
    state, events = do(state, 0, "MAGIC 小石 1", 6)
    assert battle.total_cost(state, 0) > 1000
    said = [str(e["text"]) for e in events if e["type"] == "magic"]
    assert said and "1000超過(このまま決着すると負け)" in said[0], said
