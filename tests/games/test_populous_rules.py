"""ポピュラス 草案21: one test per clause of the rules page (/work/shared/rules/populous.md, kept as
docs/rules/populous.md), named after the clause, and every case of "Tests the source fixes
exactly" with the numbers as written.

A situation is built by playing a game into the play phase (races by seat, drafts taking the
first card of the pack, CUBES 情熱 2 食料 3 信仰 2 for everyone), then editing a copy of the
plain-JSON state: the active seat, resources, hands, generations and pieces. Seats 0–4 take the
races 人間 (aptitude 平地), ドワーフ (山岳), 砂漠の民 (砂漠), 雪の民 (凍土), 海の民 (海).
Tiles used (house content): 2-4 = 凍土 山岳 平地, 3-5 = 平地 砂漠 山岳, 1-3 = 砂漠 平地 凍土,
1-5 = 山岳 砂漠 海.
"""

from __future__ import annotations

import copy
import functools
import re
from collections import Counter
from typing import Any

import pytest

from app.games.base import Rng, RuleError, State
from app.games.populous import board, game, rules
from app.games.populous.commands import Area
from app.games.populous.content import load
from app.games.populous.scoring import final_scores

NAMES = ["A", "B", "C", "D", "E"]
RACES = ["人間", "ドワーフ", "砂漠の民", "雪の民", "海の民"]
WRATH = "神の怒り"
Events = list[dict[str, Any]]


# --------------------------------------------------------------------------- helpers


@functools.cache
def _ready(players: int, seed: str) -> State:
    state = game.setup(NAMES[:players], {}, Rng(seed, 0))
    seq = 1
    while state["phase"] == "race":
        seat = state["turn"]
        state, _ = game.apply(state, seat, game.parse(f"RACE {RACES[seat]}"), Rng(seed, seq))
        seq += 1
    while state["phase"] == "draft":
        for seat in game.waiting_for(state):
            line = f"PICK {state['draft']['packs'][seat][0]}"
            state, _ = game.apply(state, seat, game.parse(line), Rng(seed, seq), sealed=True)
            seq += 1
    for seat in range(players):
        line = "CUBES 情熱 2 食料 3 信仰 2"
        state, _ = game.apply(state, seat, game.parse(line), Rng(seed, seq), sealed=True)
        seq += 1
    assert state["phase"] == "play" and state["step"] == "area"
    return state


def ready(players: int = 3, seed: str = "t") -> State:
    """A fresh copy of a game at the first turn of the play phase."""
    return copy.deepcopy(_ready(players, seed))


def situation(
    seat: int = 0,
    *,
    players: int = 3,
    res: dict[str, int] | None = None,
    hand: list[str] | None = None,
    gens: list[list[Any]] | None = None,
    pieces: dict[str, list[list[Any]]] | None = None,
    round_: int = 1,
    others: dict[int, dict[str, int]] | None = None,
) -> State:
    """`seat`'s turn at the area step, with the given resources (the rest as dealt), hand,
    generations (a card is a kind, or (kind, "down") for a face-down one) and pieces; every
    player's workers at home are 10 minus those on the map, towns 5 minus those on it."""
    state = ready(players)
    state["turn"] = seat
    state["round"] = round_
    player = state["players"][seat]
    if res:
        player["res"].update(res)
    for other, values in (others or {}).items():
        state["players"][other]["res"].update(values)
    if hand is not None:
        player["hand"] = list(hand)
    if gens is not None:
        player["gens"] = [[card_of(card) for card in gen] for gen in gens]
    state["pieces"] = copy.deepcopy(pieces or {})
    for index, entry in enumerate(state["players"]):
        on_map = Counter(p[1] for sq in state["pieces"].values() for p in sq if p[0] == index)
        entry["workers"] = 10 - on_map["w"]
        entry["towns"] = 5 - on_map["t"] - on_map["x"]
    return state


def card_of(card: Any) -> dict[str, Any]:
    if isinstance(card, str):
        return {"kind": card, "down": False, "action": card}
    kind, _ = card
    return {"kind": kind, "down": True, "action": kind}


def go(state: State, seat: int, line: str, seq: int = 1, *, seed: str = "play") -> State:
    return play(state, seat, line, seq, seed=seed)[0]


def play(
    state: State, seat: int, line: str, seq: int = 1, *, seed: str = "play", sealed: bool = False
) -> tuple[State, Events]:
    return game.apply(state, seat, game.parse(line), Rng(seed, seq), sealed=sealed)


def refused(state: State, seat: int, line: str, *, sealed: bool = False) -> str:
    with pytest.raises(RuleError) as caught:
        play(state, seat, line, sealed=sealed)
    return caught.value.message


def texts(events: Events) -> str:
    return "\n".join(str(e["text"]) for e in events)


def res(state: State, seat: int) -> dict[str, int]:
    return dict(state["players"][seat]["res"])


def on(state: State, square: str) -> list[list[Any]]:
    return sorted(list(p) for p in state["pieces"].get(square, []))


def near(state: State) -> dict[str, tuple[str, ...]]:
    return dict(board.adjacency(board.map_key(state["map"])))


def outside(state: State, square: str, area: str) -> str:
    """A square adjacent to `square` that is not in `area`."""
    prefix = area.replace("-", "")
    return next(sq for sq in near(state)[square] if not sq.startswith(prefix))


def fighter(state: State, seat: int) -> dict[str, Any]:
    war = state["last_war"]
    assert war is not None
    found: dict[str, Any] = next(f for f in war["fighters"] if f["seat"] == seat)
    return found


def actions(events: Events) -> int:
    """The number of actions the engine reports for the hand play."""
    found = re.findall(r"アクション(\d+)回", texts(events))
    assert len(found) == 1, texts(events)
    return int(found[0])


def rolled(events: Events, name: str) -> int | None:
    """The die face the engine reports having rolled for `name` in a war (None: no roll)."""
    match = re.search(rf"^{name}: 駒\d+\+サイコロ(\d)", texts(events), re.MULTILINE)
    return int(match[1]) if match else None


# --------------------------------------------------------------------------- components, setup


def test_map_3_4_5_players_10_12_14_tiles() -> None:
    data = load()
    singles = {tid for tid, tile in data.tiles.items() if not tile.double}
    for players, total, doubles in ((3, 10, 0), (4, 12, 2), (5, 14, 4)):
        for seed in ("m1", "m2", "m3"):
            tiles = game.setup(NAMES[:players], {}, Rng(seed, 0))["map"]
            ids = [t["id"] for t in tiles]
            assert len(tiles) == total
            assert len(set(ids)) == total
            # the ten non-doubles always; 4 players add 2 doubles, 5 players 4
            assert singles <= set(ids)
            assert sum(1 for t in ids if t not in singles) == doubles
            positions = {(t["q"], t["r"]) for t in tiles}
            assert len(positions) == total
            # one in the centre, six around it (the base), all non-doubles
            base = {(0, 0), *board.ring(1)}
            assert base <= positions
            assert all(t["id"] in singles for t in tiles if (t["q"], t["r"]) in base)
            # everything else touches the base's outer ring
            assert all(
                (t["q"], t["r"]) in board.ring(2) for t in tiles if (t["q"], t["r"]) not in base
            )


def test_map_doubles_are_removed_for_3_players() -> None:
    for seed in ("d1", "d2"):
        ids = [t["id"] for t in game.setup(NAMES[:3], {}, Rng(seed, 0))["map"]]
        assert not {"1-1", "2-2", "3-3", "4-4", "5-5"} & set(ids)


def test_fifteen_tiles_of_three_squares_five_terrains() -> None:
    data = load()
    assert sorted(data.tiles) == sorted(f"{a}-{b}" for a in range(1, 6) for b in range(a, 6))
    assert all(len(tile.squares) == 3 for tile in data.tiles.values())
    terrains = {sq for tile in data.tiles.values() for sq in tile.squares}
    assert terrains == {"平地", "山岳", "砂漠", "凍土", "海"}


def test_epic_cards_90_of_five_kinds_18_each() -> None:
    state = game.setup(NAMES[:3], {}, Rng("e", 0))
    cards = Counter(state["deck"] + [c for p in state["players"] for c in p["hand"]])
    assert cards == dict.fromkeys(("祝福", "労働", "奇跡", "啓示", "繁栄"), 18)


def test_hands_of_4_epic_cards() -> None:
    state = ready(4)
    assert [len(p["hand"]) for p in state["players"]] == [4, 4, 4, 4]
    assert len(state["deck"]) == 90 - 16
    assert rules.hand_size(state, 0) == 4


def test_each_race_10_workers_5_towns() -> None:
    state = ready(3)
    assert [(p["workers"], p["towns"]) for p in state["players"]] == [(10, 5)] * 3


def test_two_genesis_markers_start_on_free() -> None:
    assert ready()["markers"] == ["F", "F"]


def test_ring_supply_sea_8_others_3() -> None:
    assert ready()["rings"] == {"平地": 3, "山岳": 3, "砂漠": 3, "凍土": 3, "海": 8}


def test_race_pick_takes_basic_skills_and_a_taken_race_is_refused() -> None:
    state = game.setup(NAMES[:3], {}, Rng("r", 0))
    first = state["turn"]
    state = go(state, first, "RACE ドワーフ")
    assert state["players"][first]["race"] == "ドワーフ"
    assert state["players"][first]["skills"] == list(load().races["ドワーフ"].basic)
    assert "選ばれています" in refused(state, state["turn"], "RACE ドワーフ")


def test_draft_pick_one_pass_left() -> None:
    state = game.setup(NAMES[:3], {}, Rng("dr", 0))
    for seat in range(3):
        state = go(state, state["turn"], f"RACE {RACES[state['turn']]}", seat + 1)
    assert state["phase"] == "draft"
    packs = copy.deepcopy(state["draft"]["packs"])
    assert [len(p) for p in packs] == [5, 5, 5]
    # unsealed PICK is refused (the pick is secret)
    assert "封印" in refused(state, 0, f"PICK {packs[0][0]}")
    for pick in range(5):
        packs = copy.deepcopy(state["draft"]["packs"])
        assert [len(p) for p in packs] == [5 - pick] * 3
        chosen = {seat: packs[seat][-1] for seat in range(3)}
        for seat in range(3):
            state, _ = play(state, seat, f"PICK {chosen[seat]}", 10 + seat, sealed=True)
        for seat in range(3):
            assert chosen[seat] in state["players"][seat]["skills"]
        if pick < 4:
            # the rest goes to the left neighbour: seat s now holds what seat s-1 kept
            for seat in range(3):
                left_of = (seat - 1) % 3
                rest = [s for s in packs[left_of] if s != chosen[left_of]]
                assert sorted(state["draft"]["packs"][seat]) == sorted(rest)
    assert state["phase"] == "cubes"
    assert all(len(p["skills"]) == 7 for p in state["players"])
    drafted = [s for p in state["players"] for s in p["skills"][2:]]
    assert len(set(drafted)) == 15


def test_pick_outside_the_pack_is_refused() -> None:
    state = game.setup(NAMES[:3], {}, Rng("dr", 0))
    for seat in range(3):
        state = go(state, state["turn"], f"RACE {RACES[state['turn']]}", seat + 1)
    other = state["draft"]["packs"][1][0]
    assert "ありません" in refused(state, 0, f"PICK {other}", sealed=True)


def test_basic_skills_start_face_down() -> None:
    state = ready(5)
    for seat, player in enumerate(state["players"]):
        assert player["skills"][:2] == list(load().races[RACES[seat]].basic)
        assert len(player["skills"]) == 7
        assert player["revealed"] == []
        assert rules.active_skills(state, seat) == []
    # the race's aptitude is on the race board, always on (D)
    assert rules.aptitudes(state, 1) == {"山岳"}


def at_the_cubes(state: State) -> State:
    """``state`` taken through the race choice and the draft (each seat its first pick)."""
    seq = 1
    while state["phase"] == "race":
        state = go(state, state["turn"], f"RACE {RACES[state['turn']]}", seq)
        seq += 1
    while state["phase"] == "draft":
        for seat in game.waiting_for(state):
            pick = f"PICK {state['draft']['packs'][seat][0]}"
            state, _ = play(state, seat, pick, seq, sealed=True)
            seq += 1
    return state


def test_cubes_must_total_7_max_6() -> None:
    state = at_the_cubes(game.setup(NAMES[:3], {}, Rng("cb", 0)))
    assert "合計7" in refused(state, 0, "CUBES 情熱 2 食料 2 信仰 2", sealed=True)
    assert "合計7" in refused(state, 0, "CUBES 情熱 3 食料 3 信仰 2", sealed=True)
    assert "6個まで" in refused(state, 0, "CUBES 情熱 7 食料 0 信仰 0", sealed=True)
    assert "封印" in refused(state, 0, "CUBES 情熱 2 食料 3 信仰 2")
    state, _ = play(state, 0, "CUBES 情熱 6 食料 1 信仰 0", 1, sealed=True)
    state, _ = play(state, 1, "CUBES 情熱 0 食料 1 信仰 6", 2, sealed=True)
    state, _ = play(state, 2, "CUBES 情熱 2 食料 3 信仰 2", 3, sealed=True)
    assert state["phase"] == "play"
    assert res(state, 0) == {"情熱": 6, "食料": 1, "信仰": 0, WRATH: 0}
    assert res(state, 1) == {"情熱": 0, "食料": 1, "信仰": 6, WRATH: 0}
    assert res(state, 2) == {"情熱": 2, "食料": 3, "信仰": 2, WRATH: 0}


def test_start_player_is_decided_by_the_seed() -> None:
    starts = {game.setup(NAMES[:4], {}, Rng(f"st{i}", 0))["start"] for i in range(20)}
    assert len(starts) > 1
    again = game.setup(NAMES[:4], {}, Rng("st3", 0))
    assert again["start"] == game.setup(NAMES[:4], {}, Rng("st3", 0))["start"]
    assert ready()["turn"] == ready()["start"]


# --------------------------------------------------------------------------- 1. area


def test_area_4_and_2_names_area_2_4() -> None:
    command = game.parse("AREA 4 2")
    assert isinstance(command, Area)
    assert command.numbers == (2, 4)
    state, events = play(situation(0), 0, "AREA 4 2")
    assert state["t"]["area"] == "2-4"
    assert sorted(state["markers"]) == ["2", "4"]
    assert "2−4" in texts(events)
    assert res(state, 0)["信仰"] == 2  # numbered cards cost nothing


def test_free_costs_1_faith_and_is_refused_at_0() -> None:
    state = go(situation(0, res={"信仰": 1}), 0, "AREA F3 2")
    assert state["t"]["area"] == "2-3"
    assert res(state, 0)["信仰"] == 0
    assert sorted(state["markers"]) == ["2", "F"]
    message = refused(situation(0, res={"信仰": 0}), 0, "AREA F3 2")
    assert "信仰1" in message
    assert "AREA 2 F3" not in game.legal(situation(0, res={"信仰": 0}), 0)


def test_both_free_cost_3_faith() -> None:
    state = go(situation(0, res={"信仰": 3}), 0, "AREA F2 F4")
    assert state["t"]["area"] == "2-4"
    assert res(state, 0)["信仰"] == 0
    assert state["markers"] == ["F", "F"]
    assert "信仰3" in refused(situation(0, res={"信仰": 2}), 0, "AREA F2 F4")


def test_numbered_card_marked_last_turn_is_refused() -> None:
    state = go(situation(0), 0, "AREA 2 4")
    state = go(state, 0, "END")
    nxt = state["turn"]
    assert nxt == 1 and state["step"] == "area"
    assert "マーカー" in refused(state, nxt, "AREA 2 3")
    assert "マーカー" in refused(state, nxt, "AREA 4 5")
    assert "AREA 2 3" not in game.legal(state, nxt)
    assert "AREA 1 4" not in game.legal(state, nxt)
    state = go(state, nxt, "AREA 1 3")
    assert state["t"]["area"] == "1-3"
    assert sorted(state["markers"]) == ["1", "3"]


def test_both_markers_move_at_once() -> None:
    # the two markers leave 2 and 4 together: 2 and 4 come back, 1 and 3 are marked
    state = situation(0)
    state["markers"] = ["2", "4"]
    state = go(state, 0, "AREA 1 3")
    assert sorted(state["markers"]) == ["1", "3"]
    state = go(state, 0, "END")
    assert state["turn"] == 1
    assert go(state, 1, "AREA 2 4")["t"]["area"] == "2-4"


def test_free_is_never_blocked_by_its_markers() -> None:
    state = situation(0, res={"信仰": 3})
    assert state["markers"] == ["F", "F"]
    state = go(state, 0, "AREA F1 F3")
    assert state["markers"] == ["F", "F"]
    state = go(state, 0, "END")
    nxt = state["turn"]
    state["players"][nxt]["res"]["信仰"] = 3
    after = go(state, nxt, "AREA F2 F5")
    assert after["t"]["area"] == "2-5"
    assert res(after, nxt)["信仰"] == 0
    assert go(state, nxt, "AREA 3 F4")["t"]["area"] == "3-4"


def test_area_f_3_free_and_3() -> None:
    """The rules page's `AREA F 3`: Free and 【3】. Free stands for the one number that makes
    an area the player may choose; with several the bot asks which, naming the lines (D)."""
    state = situation(0, res={"信仰": 1})
    asked = refused(state, 0, "AREA F 3")
    choices = [line for line in game.legal(state, 0) if re.fullmatch(r"AREA 3 F[0-9]", line)]
    assert len(choices) > 1
    for line in choices:
        assert line in asked
    assert "どの数字" in asked
    # Only one fits when the map has one area with a 3 (a map no setup deals: 1−3, 2−3, 3−4
    # taken off; 3−3 is not on a 3-player map): 3−5.
    state["map"] = [tile for tile in state["map"] if tile["id"] not in ("1-3", "2-3", "3-4")]
    after, events = play(state, 0, "AREA F 3")
    assert after["t"]["area"] == "3-5"
    assert res(after, 0)["信仰"] == 0
    assert "【フリー】(5)" in texts(events)
    state["players"][0]["res"]["信仰"] = 0  # then paid for as any Free
    assert "信仰1" in refused(state, 0, "AREA F 3")


def test_same_number_twice_needs_free() -> None:
    assert "フリー" in refused(situation(0, players=4), 0, "AREA 2 2")


def test_area_must_be_on_the_map() -> None:
    state = situation(0, res={"信仰": 3})
    assert "ありません" in refused(state, 0, "AREA 1 F1")  # 1-1 is not used by 3 players


# --------------------------------------------------------------------------- 2. wrath


def test_wrath_buy_3_faith_gives_1_wrath() -> None:
    state = go(situation(0, res={"信仰": 3, WRATH: 0}), 0, "AREA 2 4")
    assert state["step"] == "wrath"
    state = go(state, 0, "WRATH BUY")
    assert res(state, 0)["信仰"] == 0
    assert res(state, 0)[WRATH] == 1
    # 2 信仰 cannot buy
    low = go(situation(0, res={"信仰": 2, WRATH: 3}), 0, "AREA 2 4")
    assert low["step"] == "wrath"
    assert "信仰3" in refused(low, 0, "WRATH BUY")


def test_wrath_is_capped_at_6() -> None:
    state = go(situation(0, res={"信仰": 6, WRATH: 6}), 0, "AREA 2 4")
    assert "6個" in refused(state, 0, "WRATH BUY")
    assert "WRATH BUY" not in game.legal(state, 0)


def test_catastrophe_with_2_is_refused() -> None:
    state = go(situation(0, res={WRATH: 6}), 0, "AREA 2 4")
    assert "神の怒り2個ではできません(3個以上" in refused(state, 0, "WRATH 2 RING 海")
    assert "神の怒り1個ではできません(3個以上" in refused(state, 0, "WRATH 1 RING 海")
    assert not any(line.startswith(("WRATH 1", "WRATH 2")) for line in game.legal(state, 0))
    short = go(situation(0, res={WRATH: 3}), 0, "AREA 2 4")
    assert "足りません" in refused(short, 0, "WRATH 4 SQUARE 24a RING 海")


CATASTROPHE_PIECES: dict[str, list[list[Any]]] = {
    "24a": [[0, "w"], [1, "w"], [1, "t"]],
    "24b": [[0, "w"], [2, "t"], [1, "x"]],
    "24c": [[1, "w"], [2, "w"], [0, "t"]],
    "13a": [[0, "w"]],
}


def hit_result(square: str) -> list[list[Any]]:
    """What a catastrophe leaves on `square` of CATASTROPHE_PIECES: no workers, every town
    destroyed (the active player's own too)."""
    return sorted([seat, "x"] for seat, kind in CATASTROPHE_PIECES[square] if kind in ("t", "x"))


def check_hit(before: State, after: State, hit: set[str]) -> None:
    for square in ("24a", "24b", "24c", "13a"):
        if square in hit:
            assert on(after, square) == hit_result(square)
        else:
            assert on(after, square) == on(before, square)
    for seat in range(3):
        home = sum(1 for sq in hit for p in CATASTROPHE_PIECES[sq] if p == [seat, "w"])
        assert after["players"][seat]["workers"] == before["players"][seat]["workers"] + home


def test_catastrophe_3_die_picks_square_and_hits_every_piece_there_own_too() -> None:
    state = go(situation(0, res={WRATH: 3}, pieces=CATASTROPHE_PIECES), 0, "AREA 2 4")
    assert "神の怒り3個ではマスを選べません" in refused(state, 0, "WRATH 3 SQUARE 24a RING 海")
    letters = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    seen: set[int] = set()
    for i in range(200):
        after, events = play(state, 0, "WRATH 3 RING 海", seed=f"s{i}")
        match = re.search(r"サイコロ(\d)", texts(events))
        assert match is not None
        face = int(match[1])
        check_hit(state, after, {"24" + letters[face]})
        assert res(after, 0)[WRATH] == 0
        seen.add(face)
        if seen == set(letters):
            break
    assert seen == set(letters)


def test_catastrophe_4_chosen_square() -> None:
    state = go(situation(0, res={WRATH: 4}, pieces=CATASTROPHE_PIECES), 0, "AREA 2 4")
    assert "1つ選びます" in refused(state, 0, "WRATH 4 RING 海")
    assert "1つ選びます" in refused(state, 0, "WRATH 4 SQUARE 24a 24b RING 海")
    for seed in ("k1", "k2", "k3"):
        after = go(state, 0, "WRATH 4 SQUARE 24b RING 海", seed=seed)
        check_hit(state, after, {"24b"})
        assert res(after, 0)[WRATH] == 0


def test_catastrophe_5_one_or_two_squares() -> None:
    state = go(situation(0, res={WRATH: 6}, pieces=CATASTROPHE_PIECES), 0, "AREA 2 4")
    two = go(state, 0, "WRATH 5 SQUARE 24a 24c RING 海")
    check_hit(state, two, {"24a", "24c"})
    assert res(two, 0)[WRATH] == 1
    one = go(state, 0, "WRATH 5 SQUARE 24c RING 海")
    check_hit(state, one, {"24c"})
    six = go(state, 0, "WRATH 6 SQUARE 24a 24b RING 山岳")
    check_hit(state, six, {"24a", "24b"})
    assert res(six, 0)[WRATH] == 0
    assert "1つか2つ" in refused(state, 0, "WRATH 5 SQUARE 24a 24b 24c RING 海")
    assert "1つか2つ" in refused(state, 0, "WRATH 5 RING 海")


def test_catastrophe_ring_makes_every_square_of_the_area_that_terrain() -> None:
    state = go(situation(0, res={WRATH: 4}), 0, "AREA 2 4")
    assert [rules.terrain(state, sq) for sq in ("24a", "24b", "24c")] == ["凍土", "山岳", "平地"]
    state = go(state, 0, "WRATH 4 SQUARE 24a RING 海")
    assert [rules.terrain(state, sq) for sq in ("24a", "24b", "24c")] == ["海", "海", "海"]
    assert state["rings"]["海"] == 7
    # 24c (平地) now costs 人間 1 食料
    food = res(state, 0)["食料"]
    state = go(state, 0, "PLACE 24c")
    assert res(state, 0)["食料"] == food - 1


def test_new_ring_replaces_old_and_returns_to_supply() -> None:
    state = go(situation(0, res={WRATH: 6}), 0, "AREA 2 4")
    state = go(state, 0, "WRATH 3 RING 海")
    assert state["rings"]["海"] == 7
    state = go(state, 0, "END")
    # next turn on the same area (the markers only block the next player's numbered cards)
    state["turn"] = 0
    state["t"] = copy.deepcopy(ready()["t"])
    state["step"] = "area"
    state["markers"] = ["F", "F"]
    state["players"][0]["res"][WRATH] = 3
    state = go(state, 0, "AREA 2 4")
    state = go(state, 0, "WRATH 3 RING 山岳")
    assert [rules.terrain(state, sq) for sq in ("24a", "24b", "24c")] == ["山岳"] * 3
    assert state["rings"] == {"平地": 3, "山岳": 2, "砂漠": 3, "凍土": 3, "海": 8}
    tile = next(t for t in state["map"] if t["id"] == "2-4")
    assert tile["ring"] == "山岳"


def test_ring_colour_run_out_is_refused_unless_already_on_the_area() -> None:
    state = go(situation(0, res={WRATH: 6}), 0, "AREA 2 4")
    state["rings"]["平地"] = 0
    assert "残っていません" in refused(state, 0, "WRATH 3 RING 平地")
    assert not any(line.endswith("RING 平地") for line in game.legal(state, 0))
    # the ring already on the area comes back as the new one goes on
    state["map"] = [{**t, "ring": "平地"} if t["id"] == "2-4" else t for t in state["map"]]
    again = go(state, 0, "WRATH 3 RING 平地")
    assert again["rings"]["平地"] == 0
    assert rules.terrain(again, "24a") == "平地"


def test_wrath_once_a_turn_one_or_the_other() -> None:
    state = go(situation(0, res={"信仰": 6, WRATH: 5}), 0, "AREA 2 4")
    bought = go(state, 0, "WRATH BUY")
    assert res(bought, 0)[WRATH] == 6
    assert "1手番1回" in refused(bought, 0, "WRATH BUY")
    assert "1手番1回" in refused(bought, 0, "WRATH 3 RING 海")
    assert not any(line.startswith("WRATH") for line in game.legal(bought, 0))
    struck = go(state, 0, "WRATH 3 RING 海")
    assert "1手番1回" in refused(struck, 0, "WRATH BUY")
    assert "1手番1回" in refused(struck, 0, "WRATH 3 RING 凍土")


def test_wrath_comes_before_placement() -> None:
    state = go(situation(0, res={"信仰": 6}), 0, "AREA 2 4")
    state = go(state, 0, "PLACE 24c")
    assert "1手番1回" in refused(state, 0, "WRATH BUY")


# --------------------------------------------------------------------------- 2. placement


def test_placement_free_on_plain_and_aptitude_else_1_food() -> None:
    base = go(situation(0, res={"食料": 3}), 0, "AREA 2 4")
    # 人間: 24c 平地 free, 24a 凍土 and 24b 山岳 1 食料
    assert res(go(base, 0, "PLACE 24c"), 0)["食料"] == 3
    assert res(go(base, 0, "PLACE 24a"), 0)["食料"] == 2
    assert res(go(base, 0, "PLACE 24b"), 0)["食料"] == 2
    placed = go(base, 0, "PLACE 24a")
    assert on(placed, "24a") == [[0, "w"]]
    assert placed["players"][0]["workers"] == 9
    # ドワーフ: 24b 山岳 is its aptitude
    dwarf = go(situation(1, res={"食料": 3}), 1, "AREA 2 4")
    assert res(go(dwarf, 1, "PLACE 24b"), 1)["食料"] == 3
    assert res(go(dwarf, 1, "PLACE 24c"), 1)["食料"] == 3
    assert res(go(dwarf, 1, "PLACE 24a"), 1)["食料"] == 2
    # with no 食料 only the free squares
    broke = go(situation(0, res={"食料": 0}), 0, "AREA 2 4")
    assert "食料1" in refused(broke, 0, "PLACE 24a")
    assert res(go(broke, 0, "PLACE 24c"), 0)["食料"] == 0


def test_placement_on_squares_with_other_players_pieces() -> None:
    pieces = {"24c": [[1, "w"], [2, "t"]]}
    state = go(situation(0, pieces=pieces), 0, "AREA 2 4")
    state = go(state, 0, "PLACE 24c")
    assert on(state, "24c") == [[0, "w"], [1, "w"], [2, "t"]]


def test_placement_only_on_the_genesis_area() -> None:
    state = go(situation(0), 0, "AREA 2 4")
    assert "創世エリア" in refused(state, 0, "PLACE 13b")


def test_extra_workers_1_3_6_food_and_fourth_refused() -> None:
    base = go(situation(0, res={"食料": 6}), 0, "AREA 2 4")
    assert res(go(base, 0, "PLACE 24c 24c"), 0)["食料"] == 5
    assert res(go(base, 0, "PLACE 24c 24c 24c"), 0)["食料"] == 3
    four = go(base, 0, "PLACE 24c 24c 24c 24c")
    assert res(four, 0)["食料"] == 0
    assert four["players"][0]["workers"] == 6
    assert "3個まで" in refused(base, 0, "PLACE 24c 24c 24c 24c 24c")
    # plus the terrain costs: one extra (1) + 24a (1) + 24b (1)
    assert res(go(base, 0, "PLACE 24c 24a 24b"), 0)["食料"] == 6 - 3 - 2
    assert res(go(base, 0, "PLACE 24c 24a"), 0)["食料"] == 6 - 1 - 1
    # 3 extras need 6 食料
    five = go(situation(0, res={"食料": 5}), 0, "AREA 2 4")
    assert "食料6" in refused(five, 0, "PLACE 24c 24c 24c 24c")


def test_placement_limited_by_workers_at_home() -> None:
    state = go(situation(0, res={"食料": 6}), 0, "AREA 2 4")
    state["players"][0]["workers"] = 1
    assert "1個" in refused(state, 0, "PLACE 24c 24c")
    assert go(state, 0, "PLACE 24c")["players"][0]["workers"] == 0


def test_first_worker_mandatory_when_placeable() -> None:
    state = go(situation(0, hand=["祝福"] * 4), 0, "AREA 2 4")
    assert state["step"] == "place"
    assert "ワーカー配置" in refused(state, 0, "PLAY 祝福")
    ended = go(state, 0, "END")
    assert on(ended, "24c") == [[0, "w"]]  # the default: one worker on the cheapest square
    # 人間 with no 食料 on 1-5 (山岳 砂漠 海): no worker can be placed, the step is skipped
    stuck = go(situation(0, res={"食料": 0}, hand=["祝福"] * 4), 0, "AREA 1 5")
    assert stuck["step"] == "play"
    assert res(go(stuck, 0, "PLAY 祝福"), 0)["情熱"] == 3
    # no worker left at home: skipped too
    none_home = situation(0, hand=["祝福"] * 4)
    none_home["players"][0]["workers"] = 0
    assert go(none_home, 0, "AREA 2 4")["step"] == "play"


# --------------------------------------------------------------------------- 2. hand play


def placed(state: State, seat: int = 0, area: str = "2-4", square: str = "24c") -> State:
    low, high = area.split("-")
    state = go(state, seat, f"AREA {low} {high}")
    if state["step"] in ("wrath", "place"):
        state = go(state, seat, f"PLACE {square}")
    assert state["step"] == "play"
    return state


def test_present_play_actions_equal_cards_in_present_after_placing() -> None:
    first = placed(situation(0, res={"食料": 0}, hand=["労働"] * 4))
    after = go(first, 0, "PLAY 労働")
    assert res(after, 0)["食料"] == 1
    assert after["players"][0]["gens"] == [[card_of("労働")]]
    third = placed(situation(0, res={"食料": 0}, hand=["労働"] * 4, gens=[["祝福", "奇跡"]]))
    after = go(third, 0, "PLAY 労働")
    assert res(after, 0)["食料"] == 3
    assert len(after["players"][0]["gens"][-1]) == 3


def test_passion_extras_1_3_6_give_1_2_3_actions() -> None:
    for extra, cost in ((1, 1), (2, 3), (3, 6)):
        state = placed(situation(0, res={"情熱": 6, "信仰": 0}, hand=["奇跡"] * 4))
        after = go(state, 0, f"PLAY 奇跡 EXTRA {extra}")
        assert res(after, 0)["信仰"] == 1 + extra
        assert res(after, 0)["情熱"] == 6 - cost
    poor = placed(situation(0, res={"情熱": 2}, hand=["奇跡"] * 4))
    assert "情熱3" in refused(poor, 0, "PLAY 奇跡 EXTRA 2")
    # EXTRA also works face down and on a generation change
    down = placed(situation(0, res={"情熱": 1, "信仰": 0}, hand=["祝福"] * 4))
    assert res(go(down, 0, "FACEDOWN 奇跡 EXTRA 1"), 0)["信仰"] == 2


def test_inheritance_example_3_and_2_blessing_gives_3_actions() -> None:
    gens = [["労働", "奇跡", "祝福"], ["啓示", "祝福"]]
    state = placed(situation(0, res={"情熱": 1}, hand=["祝福"] * 4, gens=gens, round_=2))
    after, events = play(state, 0, "NEWGEN 祝福")
    assert actions(events) == 3
    assert res(after, 0)["情熱"] == 1 + 3
    assert len(after["players"][0]["gens"]) == 3
    assert after["players"][0]["gens"][-1] == [card_of("祝福")]
    assert "継承力3" in texts(events)


def test_inheritance_only_from_a_larger_old_generation_topped_by_the_same_kind() -> None:
    # old generation of 2 topped by 祝福, present of 2: the present's 3 wins
    gens = [["労働", "祝福"], ["奇跡", "奇跡"]]
    state = placed(situation(0, res={"情熱": 0}, hand=["祝福"] * 4, gens=gens, round_=2))
    assert actions(play(state, 0, "PLAY 祝福")[1]) == 3
    # an old generation topped by another kind gives nothing
    gens = [["祝福", "祝福", "労働"], ["奇跡"]]
    state = placed(situation(0, res={"情熱": 0}, hand=["祝福"] * 4, gens=gens, round_=2))
    assert actions(play(state, 0, "PLAY 祝福")[1]) == 2
    # the largest counts, with a normal play too: 4 > present 2
    gens = [["労働", "労働", "労働", "祝福"], ["奇跡"]]
    state = placed(situation(0, res={"情熱": 0}, hand=["祝福"] * 4, gens=gens, round_=2))
    after, events = play(state, 0, "PLAY 祝福")
    assert actions(events) == 4
    assert res(after, 0)["情熱"] == 4


def test_facedown_top_generation_gives_no_inheritance() -> None:
    gens: list[list[Any]] = [["祝福", "祝福", ("祝福", "down")], ["労働"]]
    state = placed(situation(0, res={"情熱": 0}, hand=["祝福"] * 4, gens=gens, round_=2))
    after, events = play(state, 0, "PLAY 祝福")
    assert actions(events) == 2
    assert res(after, 0)["情熱"] == 2


def test_blessing_3_actions_at_passion_5_gives_6() -> None:
    state = placed(situation(0, res={"情熱": 5}, hand=["祝福"] * 4, gens=[["祝福", "祝福"]]))
    after, events = play(state, 0, "PLAY 祝福")
    assert actions(events) == 3
    assert res(after, 0)["情熱"] == 6
    assert "ストック" in texts(events)


def test_labour_and_miracle_add_food_and_faith_per_action() -> None:
    state = placed(situation(0, res={"食料": 1}, hand=["労働"] * 4, gens=[["奇跡"]]))
    assert res(go(state, 0, "PLAY 労働"), 0)["食料"] == 3
    state = placed(situation(0, res={"信仰": 1}, hand=["奇跡"] * 4, gens=[["労働"]]))
    assert res(go(state, 0, "PLAY 奇跡"), 0)["信仰"] == 3


def test_prosperity_3_actions_at_faith_2_gives_2_vp_then_faith_1() -> None:
    state = placed(situation(0, res={"信仰": 2}, hand=["繁栄"] * 4, gens=[["祝福", "労働"]]))
    after, events = play(state, 0, "PLAY 繁栄")
    assert actions(events) == 3
    assert after["players"][0]["vp"] == 2
    assert res(after, 0)["信仰"] == 1
    # at 信仰 0: nothing, and nothing to lose
    zero = placed(situation(0, res={"信仰": 0}, hand=["繁栄"] * 4, gens=[["祝福", "労働"]]))
    after = go(zero, 0, "PLAY 繁栄")
    assert after["players"][0]["vp"] == 0
    assert res(after, 0)["信仰"] == 0


def test_prosperity_may_discard_one_hand_card_per_action() -> None:
    hand = ["繁栄", "祝福", "労働", "奇跡", "啓示"]
    state = placed(situation(0, res={"信仰": 6}, hand=hand, gens=[["祝福", "労働"]]))
    state = go(state, 0, "PLAY 繁栄")
    assert state["step"] == "after"
    assert "3枚" in refused(state, 0, "DISCARD 祝福 労働 奇跡 啓示")
    after = go(state, 0, "DISCARD 祝福 労働")
    assert sorted(after["players"][0]["hand"]) == sorted(["奇跡", "啓示"])
    assert Counter(after["discard"]) == Counter(["祝福", "労働"])
    # optional: the turn may go on without discarding
    assert go(state, 0, "END")["players"][0]["vp"] == 3


def test_discard_refused_after_a_plain_play() -> None:
    # a contested 24c keeps the turn waiting at the war choice after PLAY 祝福
    hand = ["祝福", "労働", "奇跡", "啓示"]
    state = situation(0, hand=hand, pieces={"24c": [[1, "w"]]})
    state = go(placed(state), 0, "PLAY 祝福")
    assert state["step"] == "war"
    assert "DISCARD 労働" not in game.legal(state, 0)
    with pytest.raises(RuleError):
        play(state, 0, "DISCARD 労働")


def revelation(count: int, food: int = 0) -> State:
    """人間's turn on 2-4, own workers on 24a (and 13b outside the area), one placed on 24c,
    a 啓示 played with `count` actions."""
    gens = [["啓示"] * (count - 1)] if count > 1 else None
    pieces = {"24a": [[0, "w"]], "13b": [[0, "w"]]}
    state = situation(0, res={"食料": food}, hand=["啓示"] * 4, gens=gens, pieces=pieces)
    state, events = play(placed(state), 0, "PLAY 啓示")
    assert actions(events) == count
    return state


def test_revelation_moves_own_genesis_workers_one_step_per_action() -> None:
    state = revelation(2)
    assert state["step"] == "after"
    path_out = outside(state, "24a", "2-4")
    # two steps for two actions, out of the area and on, ignoring terrain and 食料 (0 held)
    beyond = next(sq for sq in near(state)[path_out] if not sq.startswith("24"))
    after = go(state, 0, f"MOVE 24a {path_out} {beyond}")
    assert on(after, "24a") == []
    assert [0, "w"] in on(after, beyond)
    assert res(after, 0)["食料"] == 0
    # three steps are too many
    far = next(sq for sq in near(state)[beyond] if sq != path_out)
    assert "残りのアクションは2回" in refused(state, 0, f"MOVE 24a {path_out} {beyond} {far}")


def test_revelation_split_among_workers_and_only_genesis_workers() -> None:
    state = revelation(2)
    # 13b is not in the genesis area: it cannot move
    assert "13b" in refused(state, 0, f"MOVE 13b {near(state)['13b'][0]}")
    # only adjacent steps
    assert "隣接" in refused(state, 0, "MOVE 24a 35a")
    once = go(state, 0, "MOVE 24a 24b")
    assert once["t"]["moves"] == 1
    twice = go(once, 0, "MOVE 24c 24b")
    assert on(twice, "13b") == [[0, "w"]]
    # both moved; then the end phase keeps one own worker on 24b
    assert on(twice, "24a") == [] and on(twice, "24c") == []
    assert on(twice, "24b") == [[0, "w"]]


def test_revelation_may_stop_before_using_every_action() -> None:
    state = revelation(3)
    once = go(state, 0, "MOVE 24a 24b")
    ended = go(once, 0, "END")
    assert on(ended, "24b") == [[0, "w"]]
    assert on(ended, "24c") == [[0, "w"]]
    assert ended["turn"] == 1


def test_facedown_play_any_action_kind() -> None:
    state = placed(situation(0, res={"信仰": 0}, hand=["祝福", "労働"]))
    assert "封印" in refused(state, 0, "FACEDOWN 奇跡 CARD 祝福")
    after, _ = play(state, 0, "FACEDOWN 奇跡 CARD 祝福", sealed=True)
    assert res(after, 0)["信仰"] == 1
    assert after["players"][0]["hand"][:1] == ["労働"]
    assert after["players"][0]["gens"] == [[{"kind": "祝福", "down": True, "action": "奇跡"}]]
    # in the thread, without CARD: the newest card of the hand
    public = go(state, 0, "FACEDOWN 奇跡")
    assert public["players"][0]["gens"] == [[{"kind": "労働", "down": True, "action": "奇跡"}]]


def test_generation_change_from_round_2_then_discard_any() -> None:
    hand = ["祝福", "労働", "奇跡", "啓示"]
    first = placed(situation(0, hand=hand, gens=[["祝福"]]))
    assert "2ラウンド目" in refused(first, 0, "NEWGEN 祝福")
    state = placed(situation(0, hand=hand, gens=[["祝福"]], round_=2))
    state = go(state, 0, "NEWGEN 労働")
    assert [len(g) for g in state["players"][0]["gens"]] == [1, 1]
    assert state["step"] == "after"
    after = go(state, 0, "DISCARD 祝福 奇跡 啓示")
    assert Counter(after["discard"]) == Counter(["祝福", "奇跡", "啓示"])
    # nothing left to discard: the end phase refilled the hand, the 決算 waits for REVEAL
    assert after["step"] == "reveal"
    assert len(after["players"][0]["hand"]) == 4
    down = go(placed(situation(0, hand=hand, gens=[["祝福"]], round_=2)), 0, "NEWGEN FACEDOWN 奇跡")
    assert [len(g) for g in down["players"][0]["gens"]] == [1, 1]
    assert down["players"][0]["gens"][1][0]["down"] is True


def test_generation_change_needs_a_card_in_the_present() -> None:
    state = placed(situation(0, hand=["祝福"] * 4, gens=[], round_=2))
    assert "現代" in refused(state, 0, "NEWGEN 祝福")


def test_end_takes_the_default_for_every_step_left() -> None:
    # area: the first legal one (2 and 4 marked → 1 3); placement: the cheapest square
    # (1-3 is 砂漠 平地 凍土 → 13b); play: the first card of the hand face up
    state = situation(0, res={"食料": 0}, hand=["労働", "祝福", "奇跡", "啓示"])
    state["markers"] = ["2", "4"]
    state, events = play(state, 0, "END")
    assert "AREA 1 3" in texts(events)
    assert on(state, "13b") == [[0, "w"]]
    assert res(state, 0)["食料"] == 1
    assert state["players"][0]["gens"] == [[card_of("労働")]]
    assert state["turn"] == 1


# --------------------------------------------------------------------------- 3. war


def at_war(
    pieces: dict[str, list[list[Any]]],
    square: str,
    *,
    area: str = "2-4",
    card: str = "労働",
    seat: int = 0,
    res0: dict[str, int] | None = None,
    others: dict[int, dict[str, int]] | None = None,
) -> State:
    """`seat` places on `square` of `area` and plays `card`; the state waits at the war
    choice (or the war already ran when forced)."""
    state = situation(seat, res=res0, hand=[card] * 4, pieces=pieces, others=others)
    state = go(placed(state, seat, area, square), seat, f"PLAY {card}")
    return state


def test_contested_squares_are_genesis_squares_with_several_players() -> None:
    # 13b holds A and B but is outside the genesis area: no war there
    state = at_war({"13b": [[0, "w"], [1, "w"]], "24a": [[0, "w"]]}, "24c")
    assert state["turn"] == 1
    assert state["last_war"] is None
    assert on(state, "13b") == [[0, "w"], [1, "w"]]


def test_war_die_capped_by_passion_2_rolling_5_gives_2() -> None:
    state = at_war({"24a": [[1, "w"]]}, "24a", res0={"情熱": 2, "食料": 3}, others={1: {"情熱": 0}})
    assert state["step"] == "war"
    faces: set[int] = set()
    for i in range(200):
        after, events = play(state, 0, "WAR", seed=f"s{i}")
        face = rolled(events, "A")
        assert face is not None
        faces.add(face)
        assert fighter(after, 0)["die"] == min(face, 2)
        assert fighter(after, 0)["strength"] == 1 + min(face, 2)
        if face == 5:
            assert fighter(after, 0)["die"] == 2
            assert fighter(after, 0)["strength"] == 3
            assert fighter(after, 1)["strength"] == 1
            break
    assert 5 in faces


def test_war_aptitude_at_passion_4_gives_4_without_roll() -> None:
    # 24c is 平地, 人間's aptitude; 24a (凍土) is contested too: one aptitude square is enough
    pieces = {"24a": [[0, "w"], [1, "w"]], "24c": [[1, "w"]]}
    state = at_war(pieces, "24c", res0={"情熱": 4, "食料": 6}, others={1: {"情熱": 0}})
    assert state["step"] == "war"
    for i in range(12):
        after, events = play(state, 0, "WAR", seed=f"s{i}")
        assert rolled(events, "A") is None
        assert fighter(after, 0)["die"] == 4
        assert fighter(after, 0)["strength"] == 2 + 4


def test_war_passion_0_gives_0() -> None:
    state = at_war({"24a": [[1, "w"]]}, "24a", res0={"情熱": 0, "食料": 3}, others={1: {"情熱": 0}})
    for i in range(12):
        after, events = play(state, 0, "WAR", seed=f"s{i}")
        assert rolled(events, "A") is None
        assert fighter(after, 0)["die"] == 0
        assert fighter(after, 0)["strength"] == 1
        assert fighter(after, 1)["die"] == 0


def test_war_strength_counts_own_pieces_on_and_adjacent_once() -> None:
    base = ready()
    out_a = outside(base, "24a", "2-4")
    far = next(
        sq
        for sq in rules.all_squares(base)
        if not sq.startswith("24")
        and sq not in near(base)["24a"]
        and sq not in near(base)["24b"]
        and sq not in near(base)["24c"]
    )
    pieces = {
        "24a": [[1, "w"], [1, "x"]],
        "24c": [[1, "w"]],
        "24b": [[0, "t"]],  # adjacent to both contested squares: counted once
        out_a: [[0, "w"]],  # adjacent, outside the genesis area: counted
        far: [[0, "w"], [1, "w"]],  # not adjacent: not counted
    }
    state = at_war(pieces, "24a", res0={"情熱": 0, "食料": 6}, others={1: {"情熱": 0}})
    state = go(state, 0, "WAR")
    # A stands on 24a only: 24c (B alone) is not contested, but adjacent
    assert state["last_war"]["contested"] == ["24a"]
    assert fighter(state, 0)["pieces"] == 3  # 24a worker, 24b town, the outside worker
    assert fighter(state, 1)["pieces"] == 2  # 24a worker, 24c worker (the ruin adds nothing)


def test_war_a7_b3_c7_a_and_c_draw_b_loses() -> None:
    # 3-5 is 平地 砂漠 山岳: 人間 (A) and 砂漠の民 (C) have an aptitude square, so their dice
    # are their 情熱 4 without rolling; ドワーフ (B) has 情熱 0.
    pieces = {
        "35a": [[1, "t"], [2, "w"]],
        "35b": [[0, "w"], [1, "w"], [2, "w"]],
        "35c": [[0, "w"], [1, "w"], [2, "w"]],
    }
    state = at_war(
        pieces,
        "35a",
        area="3-5",
        card="奇跡",
        res0={"情熱": 4, "食料": 6},
        others={1: {"情熱": 0, WRATH: 0}, 2: {"情熱": 4}},
    )
    assert state["step"] == "war"
    for i in range(5):
        after = go(state, 0, "WAR", seed=f"s{i}")
        assert {f["seat"]: f["strength"] for f in after["last_war"]["fighters"]} == {
            0: 7,
            1: 3,
            2: 7,
        }
        assert after["last_war"]["outcome"] == {"0": "draw", "1": "lose", "2": "draw"}
        # A and C keep their 情熱 and pieces
        assert res(after, 0)["情熱"] == 4 and res(after, 2)["情熱"] == 4
        # B: workers home, town destroyed, 1 神の怒り
        assert on(after, "35a") == [[0, "w"], [1, "x"], [2, "w"]]
        assert on(after, "35b") == [[0, "w"], [2, "w"]]
        assert on(after, "35c") == [[0, "w"], [2, "w"]]
        assert after["players"][1]["workers"] == state["players"][1]["workers"] + 2
        assert res(after, 1)[WRATH] == 1


def test_war_single_winner_loses_1_passion() -> None:
    # A: 1 piece + 3 (aptitude 平地, 情熱 3) = 4; B: 1 + 0 = 1
    state = at_war({"24c": [[1, "w"]]}, "24c", res0={"情熱": 3, "食料": 3}, others={1: {"情熱": 0}})
    after = go(state, 0, "WAR")
    assert fighter(after, 0)["strength"] == 4
    assert after["last_war"]["outcome"] == {"0": "win", "1": "lose"}
    assert res(after, 0)["情熱"] == 2
    assert res(after, 1)["情熱"] == 0


def test_loser_workers_go_home_towns_destroyed_gain_1_wrath() -> None:
    # contested 24a and 24c (A placed on both); B's worker on 24b is not contested
    pieces = {"24a": [[1, "w"]], "24b": [[1, "w"]], "24c": [[1, "t"]]}
    state = situation(
        0,
        res={"情熱": 6, "食料": 6},
        hand=["労働"] * 4,
        pieces=pieces,
        others={1: {"情熱": 0, WRATH: 2}},
    )
    state = go(go(go(state, 0, "AREA 2 4"), 0, "PLACE 24a 24c"), 0, "PLAY 労働")
    assert state["step"] == "war"
    after = go(state, 0, "WAR")
    assert after["last_war"]["outcome"] == {"0": "win", "1": "lose"}
    assert on(after, "24a") == [[0, "w"]]
    assert on(after, "24b") == [[1, "w"]]
    assert on(after, "24c") == [[0, "w"], [1, "x"]]
    assert after["players"][1]["workers"] == state["players"][1]["workers"] + 1
    assert res(after, 1)[WRATH] == 3
    # the winner's pieces stay; the winner paid 1 情熱
    assert res(after, 0)["情熱"] == 5


def test_destroyed_towns_neither_contest_nor_add_strength() -> None:
    state = at_war({"24c": [[1, "x"]]}, "24c")
    assert state["last_war"] is None
    assert state["turn"] == 1
    assert on(state, "24c") == [[0, "w"], [1, "x"]]
    # a ruin next to a contested square adds nothing to its owner's strength
    pieces = {"24a": [[1, "w"]], "24b": [[1, "x"]]}
    fought = at_war(pieces, "24a", res0={"情熱": 0, "食料": 3}, others={1: {"情熱": 0}})
    fought = go(fought, 0, "WAR")
    assert fighter(fought, 1)["pieces"] == 1


def test_forced_war_when_active_player_not_on_contested_squares() -> None:
    # B and C on 24a; A places on 24c: A cannot mediate, the war runs by itself
    pieces = {"24a": [[1, "w"], [2, "w"]], "24b": [[1, "w"]]}
    state = at_war(
        pieces,
        "24c",
        res0={"食料": 6},
        others={1: {"情熱": 0}, 2: {"情熱": 0, WRATH: 0}},
    )
    assert state["turn"] == 1  # the turn is over
    war = state["last_war"]
    assert war is not None and war["contested"] == ["24a"]
    assert {f["seat"] for f in war["fighters"]} == {1, 2}
    # B: 24a + 24b (adjacent) = 2, C: 1
    assert war["outcome"] == {"1": "win", "2": "lose"}
    assert on(state, "24a") == [[1, "w"]]
    assert res(state, 2)[WRATH] == 1
    # MEDIATE is not offered and refused at the step before
    before = situation(0, res={"食料": 6}, hand=["繁栄"] * 4, pieces=pieces)
    before = go(placed(before, 0, "2-4", "24c"), 0, "PLAY 繁栄")
    assert before["step"] == "after"
    assert "MEDIATE" not in game.legal(before, 0)
    with pytest.raises(RuleError):
        play(before, 0, "MEDIATE")


def test_war_and_mediate_refused_when_there_is_no_choice() -> None:
    state = placed(situation(0, hand=["祝福"] * 4))
    state = go(state, 0, "FACEDOWN 繁栄")  # no contested square
    assert state["step"] == "after"
    assert "END" in refused(state, 0, "WAR")
    assert "END" in refused(state, 0, "MEDIATE")


def test_active_player_chooses_war_or_mediation() -> None:
    state = at_war({"24c": [[1, "w"]]}, "24c", res0={"食料": 3})
    assert state["step"] == "war"
    legal = game.legal(state, 0)
    assert "WAR" in legal and "MEDIATE" in legal


def test_mediation_pays_3_food_each_and_receivers_take_workers_home() -> None:
    pieces = {
        "24a": [[0, "w"], [2, "w"]],
        "24c": [[1, "w"], [2, "t"]],
    }
    state = at_war(
        pieces,
        "24c",
        res0={"食料": 5},
        others={1: {"食料": 3}, 2: {"食料": 5}},
    )
    assert state["step"] == "war"
    assert res(state, 0)["食料"] == 5 + 1  # 24c is 平地 (free); 労働 gave 1
    after = go(state, 0, "MEDIATE")
    assert res(after, 0)["食料"] == 0
    assert res(after, 1)["食料"] == 6
    assert res(after, 2)["食料"] == 6  # 5 + 3, capped at 6
    assert after["last_war"] is None
    # receivers take their workers home from every contested square; towns stay
    assert on(after, "24a") == [[0, "w"]]
    assert on(after, "24c") == [[0, "w"], [2, "t"]]
    assert after["players"][1]["workers"] == state["players"][1]["workers"] + 1
    assert after["players"][2]["workers"] == state["players"][2]["workers"] + 1
    assert res(after, 1)[WRATH] == 0 and res(after, 2)[WRATH] == 0


def test_mediation_only_when_affordable() -> None:
    # 2 others involved: 6 食料 needed, A has 2 after the play
    pieces = {"24c": [[1, "w"], [2, "w"]]}
    state = at_war(
        pieces,
        "24c",
        res0={"食料": 1},
        others={1: {"情熱": 0}, 2: {"情熱": 0}},
    )
    assert state["turn"] == 1
    assert state["last_war"] is not None


# --------------------------------------------------------------------------- 4. end


def test_refill_to_hand_size_reshuffles_discard() -> None:
    state = situation(0, hand=["祝福", "祝福"])
    state["deck"] = ["啓示"]
    state["discard"] = ["労働", "奇跡", "繁栄", "労働", "奇跡"]
    before = Counter(state["deck"] + state["discard"] + state["players"][0]["hand"])
    state = go(placed(state), 0, "PLAY 祝福")
    assert state["turn"] == 1
    hand = state["players"][0]["hand"]
    assert len(hand) == 4
    assert "啓示" in hand
    assert state["discard"] == []
    assert len(state["deck"]) == 3
    assert Counter(state["deck"] + hand) + Counter(["祝福"]) == before


def test_refill_when_cards_run_out_draws_what_is_left() -> None:
    state = situation(0, hand=["祝福", "祝福"])
    state["deck"] = ["啓示"]
    state["discard"] = []
    state = go(placed(state), 0, "PLAY 祝福")
    assert sorted(state["players"][0]["hand"]) == ["啓示", "祝福"]


def test_rebuild_destroyed_town_where_own_worker_stands() -> None:
    pieces = {"24a": [[0, "x"]], "24b": [[1, "x"]], "13a": [[0, "x"]]}
    state = situation(0, res={"食料": 6}, hand=["労働"] * 4, pieces=pieces)
    workers = state["players"][0]["workers"]
    towns = state["players"][0]["towns"]
    before_play = go(go(state, 0, "AREA 2 4"), 0, "PLACE 24a 24b")
    kept = copy.deepcopy(before_play)
    state = go(before_play, 0, "PLAY 労働")
    assert before_play == kept  # the state before is left as it was (pieces are shared)
    assert state["turn"] == 1
    assert on(state, "24a") == [[0, "t"]]  # rebuilt, the worker went home
    assert on(state, "24b") == [[0, "w"], [1, "x"]]  # not own: no rebuild
    assert on(state, "13a") == [[0, "x"]]  # no worker: stays destroyed
    assert state["players"][0]["workers"] == workers - 1
    assert state["players"][0]["towns"] == towns


def test_one_own_piece_per_square_town_beats_worker() -> None:
    pieces = {"24c": [[0, "t"]], "24a": [[1, "w"], [1, "w"]]}
    state = situation(0, res={"食料": 6}, hand=["労働"] * 4, pieces=pieces)
    workers = state["players"][0]["workers"]
    state = go(go(go(state, 0, "AREA 2 4"), 0, "PLACE 24c 24b 24b"), 0, "PLAY 労働")
    assert state["turn"] == 1
    assert on(state, "24c") == [[0, "t"]]
    assert on(state, "24b") == [[0, "w"]]
    assert state["players"][0]["workers"] == workers - 1
    # only the active player's pieces are adjusted
    assert on(state, "24a") == [[1, "w"], [1, "w"]]


SETTLE_PIECES: dict[str, list[list[Any]]] = {
    "13a": [[0, "w"]],
    "13b": [[0, "w"]],
    "25a": [[0, "t"]],
}


def settlement(skills: list[str] | None = None, gens: list[list[Any]] | None = None) -> State:
    """Round 2: A's present is 3 cards; A places on 24c and changes generation."""
    state = situation(
        0,
        hand=["労働"] * 4,
        gens=gens or [["祝福", "労働", "奇跡"]],
        pieces=SETTLE_PIECES,
        round_=2,
    )
    if skills is not None:
        state["players"][0]["skills"] = skills
    state = go(placed(state), 0, "NEWGEN 労働")
    return state


def test_settlement_previous_present_3_cards_times_2_majorities_gives_6_vp() -> None:
    state = settlement()
    state = go(state, 0, "TOWN 13a")
    assert state["step"] == "reveal"
    skill = state["players"][0]["skills"][0]
    state, events = play(state, 0, f"REVEAL {skill}")
    # majorities: 1-3 (the new town) and 2-5 (a town); 2-4 has one worker only
    assert state["players"][0]["vp"] == 6
    assert "6VP" in texts(events)
    assert state["players"][0]["revealed"] == [skill]
    assert state["turn"] == 1


def test_settlement_town_replaces_an_own_worker() -> None:
    state = settlement()
    assert sorted(rules.town_options(state, 0)) == ["13a", "13b", "24c"]
    workers = state["players"][0]["workers"]
    towns = state["players"][0]["towns"]
    state = go(state, 0, "TOWN 13b")
    assert on(state, "13b") == [[0, "t"]]
    assert state["players"][0]["workers"] == workers + 1
    assert state["players"][0]["towns"] == towns - 1


def test_town_not_on_square_with_any_town() -> None:
    pieces = {
        "13a": [[0, "w"], [1, "t"]],
        "13b": [[0, "w"], [2, "x"]],
        "13c": [[0, "w"]],
    }
    state = situation(0, hand=["労働"] * 4, gens=[["祝福"]], pieces=pieces, round_=2)
    state = go(placed(state), 0, "NEWGEN 労働")
    assert state["step"] == "after"
    assert "建てられません" in refused(state, 0, "TOWN 13a")
    closed = go(state, 0, "TOWN 13c")
    assert on(closed, "13c") == [[0, "t"]]
    waiting = go(state, 0, "DISCARD 労働 労働 労働")
    assert waiting["step"] == "town"
    assert "建てられません" in refused(waiting, 0, "TOWN 13a")
    assert "建てられません" in refused(waiting, 0, "TOWN 13b")
    assert sorted(rules.town_options(waiting, 0)) == ["13c", "24c"]


def test_settlement_only_after_a_generation_change() -> None:
    state = situation(0, hand=["労働"] * 4, gens=[["祝福", "労働", "奇跡"]], pieces=SETTLE_PIECES)
    state = go(placed(state), 0, "PLAY 労働")
    assert state["turn"] == 1
    assert state["players"][0]["vp"] == 0
    assert state["players"][0]["revealed"] == []
    assert state["players"][0]["towns"] == 4


def test_majority_needs_two_squares_or_an_intact_town() -> None:
    state = situation(
        0,
        pieces={
            "13a": [[0, "w"], [1, "t"]],
            "13b": [[0, "w"]],  # 1-3: two squares with workers (others' pieces don't matter)
            "24a": [[0, "w"]],  # 2-4: one square only
            "25a": [[0, "t"]],  # 2-5: an intact town
            "35a": [[0, "x"]],
            "35b": [[0, "w"]],  # 3-5: a ruin and one worker: none
        },
    )
    assert sorted(rules.majorities(state, 0)) == ["1-3", "2-5"]
    assert rules.majorities(state, 1) == ["1-3"]


def test_skill_revealed_at_settlement_works_from_next_turn() -> None:
    # 凱旋: every later 決算 gives 2 VP more
    skills = ["開拓", "交易", "凱旋", "大図書館", "軍神", "山の王", "平原の覇者"]
    state = settlement(skills=skills)
    state = go(go(state, 0, "TOWN 13a"), 0, "REVEAL 凱旋")
    assert state["players"][0]["vp"] == 6  # not 8: it works from the end of this turn
    assert state["players"][0]["revealed"] == ["凱旋"]
    assert [s.name for s in rules.active_skills(state, 0)] == ["凱旋"]
    # A's next turn with a new settlement: 3 × 2 + 2
    again = copy.deepcopy(state)
    again["turn"] = 0
    again["round"] = 3
    again["markers"] = ["F", "F"]
    again["pieces"] = copy.deepcopy(SETTLE_PIECES)
    again["players"][0]["gens"] = [
        [card_of("労働")],
        [card_of(k) for k in ("祝福", "労働", "奇跡")],
    ]
    again["players"][0]["hand"] = ["労働"] * 4
    again = go(placed(again), 0, "NEWGEN 労働")
    again = go(again, 0, "TOWN 13a")
    again = go(again, 0, f"REVEAL {skills[0]}")
    assert again["players"][0]["vp"] == 6 + 6 + 2


# --------------------------------------------------------------------------- rounds, resources


def test_twelve_rounds() -> None:
    state = ready(3)
    turns = 0
    rounds_seen = set()
    while not game.is_over(state):
        rounds_seen.add(state["round"])
        state = go(state, state["turn"], "END", turns + 1)
        turns += 1
    assert turns == 36
    assert rounds_seen == set(range(1, 13))
    assert state["round"] == 12
    assert state["final"] == final_scores(state)
    assert game.legal(state, 0) == []


def test_resources_capped_at_6() -> None:
    # 労働 3 actions at 食料 5 → 6
    state = placed(situation(0, res={"食料": 5}, hand=["労働"] * 4, gens=[["労働", "労働"]]))
    assert res(go(state, 0, "PLAY 労働"), 0)["食料"] == 6
    # 奇跡 at 6 stays 6
    state = placed(situation(0, res={"信仰": 6}, hand=["奇跡"] * 4))
    state = go(state, 0, "PLACE 24c") if state["step"] == "place" else state
    assert res(go(state, 0, "PLAY 奇跡"), 0)["信仰"] == 6
    # a loser at 6 神の怒り stays at 6
    lost = at_war(
        {"24c": [[1, "w"]]},
        "24c",
        res0={"情熱": 3, "食料": 3},
        others={1: {"情熱": 0, WRATH: 6}},
    )
    lost = go(lost, 0, "WAR")
    assert lost["last_war"]["outcome"]["1"] == "lose"
    assert res(lost, 1)[WRATH] == 6


# --------------------------------------------------------------------------- final scoring


def final_state() -> State:
    state = ready(3)
    state["pieces"] = {
        "13a": [[0, "w"]],
        "13b": [[0, "w"], [1, "x"]],
        "13c": [[0, "t"]],
        "24a": [[0, "x"]],
        "24b": [[1, "w"]],
        "24c": [[1, "t"]],
        "25a": [[1, "t"]],
    }
    gens: dict[int, list[list[Any]]] = {
        # columns after the face-down cards go: A 2, 1, 0; B 2, 0; C 1
        0: [["祝福", "祝福", ("労働", "down")], ["奇跡"], [("繁栄", "down")]],
        1: [["労働", "労働"], [("労働", "down")]],
        2: [["奇跡", ("祝福", "down"), ("祝福", "down"), ("祝福", "down")]],
    }
    for seat, player in enumerate(state["players"]):
        player["gens"] = [[card_of(c) for c in gen] for gen in gens[seat]]
        player["vp"] = [5, 3, 10][seat]
        player["revealed"] = []
    state["players"][0]["towns"] = 3
    state["players"][1]["towns"] = 3
    state["players"][2]["towns"] = 5
    return state


def test_final_1_per_worker_3_per_town_4_per_generation_column_after_facedown_discarded() -> None:
    scores = final_scores(final_state())
    picked = [
        {k: s[k] for k in ("play", "workers", "towns", "generations", "skills")} for s in scores
    ]
    assert picked == [
        {"play": 5, "workers": 2, "towns": 3, "generations": 8, "skills": 0},
        {"play": 3, "workers": 1, "towns": 6, "generations": 4, "skills": 0},
        {"play": 10, "workers": 0, "towns": 0, "generations": 0, "skills": 0},
    ]
    assert [s["score"] for s in scores] == [18, 14, 10]


def test_final_end_of_game_skills_only_when_revealed() -> None:
    state = final_state()
    state["players"][0]["skills"] = ["鉱山都市", *state["players"][0]["skills"][1:]]
    assert final_scores(state)[0]["skills"] == 0
    state["players"][0]["revealed"] = ["鉱山都市"]  # +1 per intact town
    assert final_scores(state)[0]["skills"] == 1
    assert final_scores(state)[0]["score"] == 19


def test_tie_broken_by_more_towns_left_on_race_board() -> None:
    state = final_state()
    state["players"][1]["vp"] = 7  # B: 7 + 1 + 6 + 4 = 18, as A
    state["players"][0]["towns"] = 3
    state["players"][1]["towns"] = 4
    state["over"] = True
    state["phase"] = "over"
    state["final"] = final_scores(state)
    result = game.result(state)
    assert result is not None
    ranking = [(e.name, e.rank, e.score) for e in result.ranking]
    assert ranking == [("B", 1, 18), ("A", 2, 18), ("C", 3, 10)]
    # equal towns left too: a draw
    state["players"][0]["towns"] = 4
    state["final"] = final_scores(state)
    result = game.result(state)
    assert result is not None
    assert [(e.name, e.rank) for e in result.ranking] == [("A", 1), ("B", 1), ("C", 3)]


def test_result_breakdown_sums_to_score() -> None:
    state = final_state()
    state["over"] = True
    state["final"] = final_scores(state)
    result = game.result(state)
    assert result is not None
    for entry in result.ranking:
        assert entry.score == sum(int(v or 0) for v in entry.breakdown.values())
        assert set(entry.breakdown) == {"play", "workers", "towns", "generations", "skills"}


# --------------------------------------------------------------------------- views


def test_view_public_and_private() -> None:
    state = placed(situation(0, hand=["祝福", "労働"]))
    state, _ = play(state, 0, "FACEDOWN 奇跡 CARD 祝福", sealed=True)
    mine = game.view(state, 0)
    theirs = game.view(state, 1)
    assert mine["players"][0]["hand"]
    assert "hand" not in theirs["players"][0]
    assert theirs["players"][0]["hand_size"] == len(state["players"][0]["hand"])
    assert theirs["players"][0]["generations"][0][0] == {"down": True, "action": "奇跡"}
    assert "skills" not in theirs["players"][0]
    assert theirs["players"][0]["skills_face_down"] == 7
    assert 1 <= theirs["round"] <= 12
    assert set(theirs["players"][1]["resources"]) == {"情熱", "食料", "信仰", WRATH}
    assert len(theirs["map"]) == 10


# --------------------------------------------------------------------------- the thread's lines


def public(events: Events) -> list[dict[str, Any]]:
    return [e for e in events if e.get("text") and not e.get("private")]


def test_a_sealed_choice_says_in_one_line_whom_the_step_still_waits_for() -> None:
    """Issue #43: 「Aが選択(残り: B、C)」 carries waiting=[seats], so the reply adds no
    「手番待ち: B、C」 beneath it; the last choice of a pick opens the next one for everyone."""
    state = game.setup(NAMES[:3], {}, Rng("th", 0))
    seq = 1
    while state["phase"] == "race":
        state = go(state, state["turn"], f"RACE {RACES[state['turn']]}", seq)
        seq += 1
    state, events = play(state, 0, f"PICK {state['draft']['packs'][0][0]}", 2, sealed=True)
    [said] = public(events)
    assert said["text"] == "Aが選択(残り: B、C)" and said["waiting"] == [1, 2]
    state, _ = play(state, 1, f"PICK {state['draft']['packs'][1][0]}", 3, sealed=True)
    state, events = play(state, 2, f"PICK {state['draft']['packs'][2][0]}", 4, sealed=True)
    [said] = public(events)
    assert "ドラフト(2/5): 全員 封印して PICK <スキル>" in said["text"]
    assert said["waiting"] == game.waiting_for(state) == [0, 1, 2]


def test_the_cubes_reveal_is_one_line_and_the_first_turn_is_left_to_the_board() -> None:
    """Every split on one line; the round's first turn names nobody (the reply carries the
    board of the new phase, which says whose turn it is)."""
    state = at_the_cubes(game.setup(NAMES[:3], {}, Rng("cu", 0)))
    state, events = play(state, 0, "CUBES 情熱 6 食料 1 信仰 0", sealed=True)
    assert [e["text"] for e in public(events)] == ["Aが配分(残り: B、C)"]
    state, _ = play(state, 1, "CUBES 情熱 0 食料 1 信仰 6", sealed=True)
    state, events = play(state, 2, "CUBES 情熱 2 食料 3 信仰 2", sealed=True)
    texts_said = [e["text"] for e in public(events)]
    assert texts_said == [
        "配分: A 情熱6 食料1 信仰0、B 情熱0 食料1 信仰6、C 情熱2 食料3 信仰2。",
        "準備完了。",
    ]
    turn = [e for e in events if e["type"] == "turn"]
    assert turn and turn[0]["text"] == "" and "waiting" not in turn[0]


def test_each_step_ends_with_one_prompt_line_naming_whom_the_game_waits_for() -> None:
    """「次: A…」 after every step, with waiting=[the active seat]; the turn passed in the
    middle of a round names the next player the same way."""
    state, events = play(situation(0), 0, "AREA 2 4")
    last = public(events)[-1]
    assert last["text"] == "次: Aの配置 PLACE <マス>…(24a/b/c)" and last["waiting"] == [0]
    state, events = play(state, 0, "PLACE 24c")
    last = public(events)[-1]
    assert last["text"] == "次: Aの手札 PLAY / FACEDOWN / NEWGEN" and last["waiting"] == [0]
    state = situation(0, hand=["祝福"])
    state["start"] = 0
    state = go(go(state, 0, "AREA 2 4"), 0, "PLACE 24c")
    state, events = play(state, 0, "PLAY 祝福")
    assert state["turn"] == 1
    last = public(events)[-1]
    assert last["type"] == "turn" and last["waiting"] == [1]
    assert last["text"] == "次: Bのエリア AREA <数> <数>(2・4以外)"
