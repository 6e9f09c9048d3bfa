"""A dropped player (kicked, nobody in their seat) plays on by the game's own heuristic
(Game.autoplay → Game.zombie), which sees only what that seat sees: its own view and its legal
lines. えいつく: the film still gets made; エリューシス: the child plays cards the line suggests,
not always the first card of the hand; and the choice never depends on another's secret."""

from __future__ import annotations

import copy
from collections.abc import Callable
from random import Random
from typing import Any

import pytest

from app.config import get_settings
from app.games import find_game
from app.games.base import Rng, State
from app.gm.text import render_board_summary
from app.web.templating import make_templates
from tests.games.test_eitsuku_piles import _purposeful_line
from tests.support.fuzz_states import _OPTIONS, PLAYERS, script


def _eitsuku_with_a_dropped_seat(seed: str, dropped: int, *, zombie: bool) -> State:
    impl = find_game("eitsuku")
    assert impl is not None
    state = impl.setup(["太郎", "花子", "次郎"], {}, Rng(seed, 0))
    choices = Random(seed)
    for seq in range(1, 3000):
        if impl.is_over(state):
            break
        seat = impl.waiting_for(state)[0]
        if seat == dropped:
            lines = impl.autoplay(state, seat) if zombie else impl.default_commands(state, seat)
            line = lines[0]
        else:
            line = _purposeful_line(state, seat, impl.legal(state, seat), choices)
        state, _ = impl.apply(state, seat, impl.parse(line), Rng(seed, seq))
    assert impl.is_over(state)
    return state


def test_a_dropped_eitsuku_player_still_makes_and_releases_a_film() -> None:
    seeds = [f"zombie-{n}" for n in range(8)]
    made = [
        _eitsuku_with_a_dropped_seat(seed, 2, zombie=True)["players"][2]["status"] for seed in seeds
    ]
    passed = [
        _eitsuku_with_a_dropped_seat(seed, 2, zombie=False)["players"][2]["status"]
        for seed in seeds
    ]
    assert all(status == "unfinished" for status in passed)  # END every week makes nothing
    assert sum(status != "unfinished" for status in made) >= 6, made


def test_the_dropped_child_plays_what_the_line_suggests() -> None:
    """A line of accepted cards all of one colour after each other, refused plays of the
    other colour: the zombie plays a card of the last card's colour, declared ○."""
    impl = find_game("eleusis")
    assert impl is not None
    view = {
        "seat": 1,
        "line": [
            {"card": "♥3", "failed": [["♠5"]]},
            {"card": "♦9", "failed": [["♣2"], ["♠K"]]},
            {"card": "♥Q", "failed": []},
        ],
    }
    legal = [f"PLAY {mark} {card}" for card in ("♠4", "♣7", "♦5") for mark in "○●"]
    assert impl.zombie(view, legal) == "PLAY ○ ♦5"
    assert impl.zombie(view, ["PLAY ○ ♠4", "PLAY ● ♠4", "PLAY ○ ♣7", "PLAY ● ♣7"]) in (
        "PLAY ● ♠4",
        "PLAY ● ♣7",
    )


def test_a_dropped_seat_s_choice_never_depends_on_another_s_secret() -> None:
    """Two states differing only in another child's hand: the dropped seat plays the same."""
    impl = find_game("eleusis")
    assert impl is not None
    played = script("eleusis", ["A", "B", "C", "D"])
    state = played.stop("第1ラウンドのプレイ中").state
    seat = impl.waiting_for(state)[0]
    other = next(s for s in range(4) if s not in (seat, state["parent"]))
    swapped = impl.copy_state(state)
    hand = swapped["players"][other]["hand"]
    swapped["deck"], swapped["players"][other]["hand"] = (
        list(hand) + swapped["deck"][len(hand) :],
        swapped["deck"][: len(hand)],
    )
    assert swapped["players"][other]["hand"] != state["players"][other]["hand"]
    assert impl.autoplay(state, seat) == impl.autoplay(swapped, seat)
    assert impl.autoplay(state, seat)[0] in impl.legal(state, seat)


# --------------------------------------------------------------------------- every kind


def _with_a_dropped_seat(kind: str, seed: str, dropped: int, *, zombie: bool) -> State:
    """A whole game of ``kind``: the dropped seat played by the bot (Game.autoplay, each line
    applied sealed when the rules want it, as the pipeline does; or the default moves), the
    others by random legal lines (random sealed lines where the thread has none)."""
    impl = find_game(kind)
    assert impl is not None
    names = [f"p{seat}" for seat in range(PLAYERS[kind])]
    state = impl.setup(names, dict(_OPTIONS[kind]), Rng(seed, 0))
    choices = Random(seed)
    seq = 0
    while not impl.is_over(state) and seq < 5000:
        waiting = impl.waiting_for(state)
        if dropped in waiting:
            seat = dropped
            lines = impl.autoplay(state, seat) if zombie else impl.default_commands(state, seat)
            assert lines, (kind, seed, state.get("phase"))
        else:
            seat = choices.choice(waiting)
            legal = impl.legal(state, seat) or impl.sealed_legal(state, seat)
            lines = [choices.choice(legal)]
        for line in lines:
            seq += 1
            command = impl.parse(line)
            sealed = impl.needs_seal(state, command) is True
            state, _ = impl.apply(state, seat, command, Rng(seed, seq), sealed=sealed)
    assert impl.is_over(state), (kind, seed)
    return state


def _score(kind: str, state: State, seat: int) -> int:
    impl = find_game(kind)
    assert impl is not None
    result = impl.result(state)
    assert result is not None
    entry = next(entry for entry in result.ranking if entry.name == f"p{seat}")
    assert entry.score is not None
    return entry.score


ZOMBIE_KINDS = ("populous", "idolwp", "cardbattle")


@pytest.mark.parametrize("kind", ZOMBIE_KINDS)
@pytest.mark.parametrize("n", range(3))
def test_a_game_with_a_dropped_seat_always_ends(kind: str, n: int) -> None:
    """The zombie makes progress: one seat played by Game.autoplay, the others at random."""
    _with_a_dropped_seat(kind, f"zombie-{kind}-{n}", n % PLAYERS[kind], zombie=True)


@pytest.mark.parametrize("kind", ("populous", "idolwp"))
def test_the_zombie_plays_better_than_the_default_moves(kind: str) -> None:
    """Sensible moves, not only the defaults: the dropped seat scores more by its heuristic
    (populous: areas, workers, cards for what it needs, generation changes; idolwp: events it
    passes, 特訓) than by the deadline's default moves, in each game."""
    for n in range(3):
        seed = f"zombie-{kind}-{n}"
        smart = _score(kind, _with_a_dropped_seat(kind, seed, 0, zombie=True), 0)
        plain = _score(kind, _with_a_dropped_seat(kind, seed, 0, zombie=False), 0)
        assert smart > plain, (kind, seed, smart, plain)


def _swap_hand_with_deck(state: State, seat: int, hand_key: str, deck_key: str) -> State:
    """The state with another seat's hidden hand traded for cards of the deck."""
    swapped = copy.deepcopy(state)
    player = swapped["players"][seat]
    hand, deck = list(player[hand_key]), list(swapped[deck_key])
    player[hand_key], swapped[deck_key] = deck[: len(hand)], hand + deck[len(hand) :]
    return swapped


def _blind_cases() -> list[tuple[str, str, Callable[[State, int], State]]]:
    def populous(state: State, other: int) -> State:
        return _swap_hand_with_deck(state, other, "hand", "deck")

    def idolwp(state: State, other: int) -> State:
        return _swap_hand_with_deck(state, other, "hand", "card_deck")

    def cardbattle(state: State, other: int) -> State:
        swapped = copy.deepcopy(state)
        player = swapped["players"][other]
        spare = sorted(
            name
            for name, card in swapped["pool"].items()
            if card["kind"] == "magic" and name not in player["magic"] + player["magic_used"]
        )
        player["magic"] = spare[: len(player["magic"])]
        return swapped

    return [
        ("populous", "第7ラウンド", populous),
        ("populous", "神の怒りか配置を待つ手番の途中", populous),
        ("populous", "戦争か調停の選択待ち", populous),
        ("idolwp", "第4ラウンド", idolwp),
        ("idolwp", "イベント参加待ち", idolwp),
        ("idolwp", "最後の特訓", idolwp),
        ("cardbattle", "公開後の宣言受付", cardbattle),
        ("cardbattle", "結果の後の宣言受付", cardbattle),
    ]


@pytest.mark.parametrize(("kind", "label", "swap"), _blind_cases())
def test_the_dropped_seat_is_blind_to_others_secrets(
    kind: str, label: str, swap: Callable[[State, int], State]
) -> None:
    """Two states differing only in another player's secret (a hand, undeclared magic): the
    seat's own view and legal lines are the same, and so is what the bot plays for it."""
    played = script(kind, [f"p{seat}" for seat in range(PLAYERS[kind])])
    impl, state = played.impl, played.stop(label).state
    seat = impl.waiting_for(state)[0]
    swapped = next(
        changed
        for other in range(PLAYERS[kind])
        if other != seat
        and (changed := swap(state, other))["players"][other] != state["players"][other]
    )
    assert impl.view(swapped, seat) == impl.view(state, seat)
    assert impl.legal(swapped, seat) == impl.legal(state, seat)
    chosen = impl.autoplay(state, seat)
    assert chosen == impl.autoplay(swapped, seat)
    assert chosen and chosen[0] in impl.legal(state, seat) + impl.default_commands(state, seat)
    # A pure choice: the same own view and lines give the same line, whatever else exists.
    view, legal = impl.view(state, seat), impl.legal(state, seat)
    assert impl.zombie(copy.deepcopy(view), list(legal)) == impl.zombie(view, legal)


# --------------------------------------------------------------------------- single choices


def _cardbattle_view(field: list[tuple[int, int, int]], magic: list[str]) -> dict[str, Any]:
    """A cardbattle seat-0 view: own cards attack 100 / 60 / 30; the opponent's
    (attack, durability left, shield) as given; magic in hand with the pool's costs."""

    def card(attack: int, left: int, shield: int) -> dict[str, Any]:
        return {"attack": attack, "durability": left, "shield": shield, "state": "active"}

    return {
        "seat": 0,
        "phase": "attack",
        "players": [
            {
                "field": [card(100, 300, 0), card(60, 300, 0), card(30, 300, 0)],
                "total_cost": 900,
                "magic": magic,
            },
            {"field": [card(*stats) for stats in field], "total_cost": 1000},
        ],
        "pool": {"火の玉": {"cost": 100}, "大嵐": {"cost": 150}},
    }


def test_the_dropped_duellist_attacks_to_destroy() -> None:
    """The automatic rule sends the first attacker at the lowest durability (90, shielded 40:
    100 − 40 leaves 30, the others finish it and the rest is wasted); the zombie aims its 100
    at the 100-durability card and destroys both."""
    impl = find_game("cardbattle")
    assert impl is not None
    view = _cardbattle_view([(50, 90, 40), (50, 100, 0), (50, 500, 0)], [])
    legal = ["ATTACK"] + [f"ATTACK {a}>{t}" for a in (1, 2, 3) for t in (1, 2, 3)]
    assert impl.zombie(view, legal) == "ATTACK 1>2"
    # The 30 finishes the 10 left, so the 100 and the 60 are not wasted on it.
    view = _cardbattle_view([(50, 10, 0), (50, 900, 0), (50, 900, 0)], [])
    assert impl.zombie(view, legal) == "ATTACK 3>1"
    # Nothing better than the automatic rule: the plain ATTACK.
    view = _cardbattle_view([(50, 900, 0)] * 3, [])
    assert impl.zombie(view, legal) == "ATTACK"


def test_the_dropped_duellist_declares_magic_only_within_the_cost() -> None:
    """Total 900 of 1,000: 火の玉 (100) fits, 大嵐 (150) would lose the game."""
    impl = find_game("cardbattle")
    assert impl is not None
    view = dict(_cardbattle_view([(50, 90, 0)] * 3, ["火の玉", "大嵐"]), phase="window")
    assert impl.zombie(view, ["MAGIC 大嵐", "MAGIC 火の玉", "PASS"]) == "MAGIC 火の玉"
    assert impl.zombie(view, ["MAGIC 大嵐", "PASS"]) == "PASS"


def test_the_dropped_producer_enters_the_event_it_passes() -> None:
    """Abilities Vo4 Da3 Vi2: level 2 (4, 3, 2) passes, level 3 (5, 4, 3) does not; with a
    思い出 chip the EVP is doubled; nothing passes → SKIP."""
    impl = find_game("idolwp")
    assert impl is not None
    levels = [
        {"level": 1, "kind": "any", "target": [2, 1, 1]},
        {"level": 2, "kind": "any", "target": [4, 3, 2]},
        {"level": 3, "kind": "any", "target": [5, 4, 3]},
    ]
    me = {"idols": {}, "abilities": {"Vo": 4, "Da": 3, "Vi": 2}, "chips": {}}
    view = {
        "seat": 0,
        "phase": "play",
        "pending": {"kind": "event", "seat": 0},
        "event": {"levels": levels},
        "players": [me],
    }
    plain = ["EVENT LV1", "EVENT LV2", "EVENT LV3", "SKIP"]
    assert impl.zombie(view, plain) == "EVENT LV2"
    doubled = [*plain, "EVENT LV1 DOUBLE", "EVENT LV2 DOUBLE", "EVENT LV3 DOUBLE"]
    assert impl.zombie(view, doubled) == "EVENT LV2 DOUBLE"
    weak = dict(view, players=[dict(me, abilities={"Vo": 1, "Da": 1, "Vi": 1})])
    assert impl.zombie(weak, plain) == "SKIP"


# --------------------------------------------------------------------------- エリューシス's parent


def _eleusis_round(seed: str, rule: str) -> tuple[State, int]:
    """One round whose parent drops once the rule is sealed: the bot plays the parent's seat
    (Game.autoplay) whenever the game waits for it; the children play random lines. Returns
    the final state and how many lines the bot played for the parent."""
    impl = find_game("eleusis")
    assert impl is not None
    state = impl.setup(["A", "B", "C", "D"], {"rounds": 1}, Rng(seed, 0))
    parent = state["parent"]
    state, _ = impl.apply(state, parent, impl.parse(rule), Rng(seed, 1), sealed=True)
    choices = Random(seed)
    played = 0
    for seq in range(2, 3000):
        if impl.is_over(state):
            break
        seat = impl.waiting_for(state)[0]
        if seat == parent:
            lines = impl.autoplay(state, seat)
            pending = impl.view(state, seat)["pending"]
            assert lines == [f"JUDGE {pending['declaration']}"]  # the player's word stands
            played += 1
        else:
            legal = impl.legal(state, seat) or impl.sealed_legal(state, seat)
            lines = [choices.choice([line for line in legal if line != "PROPHET"])]
        command = impl.parse(lines[0])
        sealed = impl.needs_seal(state, command) is True
        state, _ = impl.apply(state, seat, command, Rng(seed, seq), sealed=sealed)
    assert impl.is_over(state)
    return state, played


def test_a_dropped_parent_s_round_goes_on_to_its_end() -> None:
    """A formal rule needs no parent (the bot judges it); a hand-judged rule's parent judges
    by the player's declaration. Either way the round ends and is scored."""
    for n in range(3):
        state, played = _eleusis_round(f"dealer-{n}", "RULE card.color != prev.color")
        assert played == 0 and state["history"][-1]["ended_by"] != "agreement"
        state, played = _eleusis_round(f"dealer-{n}", "RULE TEXT 前のカードより大きい数")
        assert played > 0 and state["history"][-1]["ended_by"] == "emptied"


def test_a_parent_dropped_before_the_rule_waits_for_the_gm() -> None:
    """Nobody may invent a parent's secret rule: the bot plays nothing for a parent dropped
    before sealing it; the GM hands the round to another player (PARENT) or voids it."""
    impl = find_game("eleusis")
    assert impl is not None
    state = impl.setup(["A", "B", "C", "D"], {"rounds": 2}, Rng("dealer", 0))
    assert state["phase"] == "rule" and impl.waiting_for(state) == [0]
    assert impl.autoplay(state, 0) == []
    handed, _ = impl.apply(state, "gm", impl.parse("PARENT B"), Rng("dealer", 1))
    assert handed["parent"] == 1 and impl.waiting_for(handed) == [1]
    voided, _ = impl.apply(state, "gm", impl.parse("ENDROUND"), Rng("dealer", 1))
    assert voided["round"] == 2 and voided["parent"] == 1


# --------------------------------------------------------------------------- ポピュラス's tie-break


def _populous_tied_end() -> State:
    """The scripted game's end with 花子 and 太郎 tied at 50, 花子 holding more towns."""
    played = script("populous", ["太郎", "花子", "次郎"])
    state = copy.deepcopy(played.stops[-1].state)
    for seat, (score, towns) in enumerate([(50, 1), (50, 2), (40, 0)]):
        state["final"][seat].update(score=score, towns_left=towns)
        state["players"][seat]["towns"] = towns
    return state


def test_populous_says_why_tied_scores_rank_apart() -> None:
    """Tied scores rank by the towns left on the race board (R): the thread's last board
    says so with each tied player's towns, the page's result table shows every player's, and
    the result's breakdown keeps its five keys summing to the score."""
    impl = find_game("populous")
    assert impl is not None
    state = _populous_tied_end()
    result = impl.result(state)
    assert result is not None
    assert [(e.name, e.rank, e.score) for e in result.ranking] == [
        ("花子", 1, 50),
        ("太郎", 2, 50),
        ("次郎", 3, 40),
    ]
    for entry in result.ranking:
        assert set(entry.breakdown) == {"play", "workers", "towns", "generations", "skills"}
    text = render_board_summary(impl, impl.view(state, None))
    assert "同点は種族ボードに残ったタウンの多い方が上位です(同じ数なら同順位)。" in text
    assert "・50点: 花子 タウン2個、太郎 タウン1個" in text.splitlines()
    assert "次郎 タウン" not in text and "1位" not in text
    html = (
        make_templates(get_settings())
        .env.get_template("games/populous/board.html.j2")
        .render(view=impl.view(state, None))
    )
    for name, towns in (("花子", 2), ("太郎", 1), ("次郎", 0)):
        assert f"<td>{name}</td>" in html
        assert f'<td class="populous-towns-left">{towns}</td>' in html
    assert "残りタウン(同点時)" in html
    untied = _populous_tied_end()
    untied["final"][0]["score"] = 49
    assert "同点は" not in render_board_summary(impl, impl.view(untied, None))
