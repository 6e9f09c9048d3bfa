"""えいつく's budget piles over whole games (docs/rules/eitsuku.md, "Components").

R 2−1: each budget pile holds PL数×6 cards; R 2−2 スタートフェイズ takes one 予算・小 a week,
one 予算・中 once the 予算・小 pile is empty; R 2−3: the game lasts 12 weeks. I: the starting
budget cards (R 2−2 ゲームの開始) do not come out of the piles, so every rule of the rulebook that
touches the piles can fire: the scout phase's 「コスト0分の【予算カード】を『裏返し』にし、
【予算・小】を『ストック場』に配置する」 (BUY 小), the start phase's 予算・中 fallback, and a
start-phase card in each of the 12 weeks.
"""

from __future__ import annotations

from collections import Counter
from random import Random

import pytest

from app.games.base import Rng, State
from app.games.eitsuku import game
from app.games.eitsuku.cards import (
    MEDIUM,
    PILE_PER_PLAYER,
    REQUIRED_SLOTS,
    SLOT_DECK,
    SMALL,
    WEEKS,
    role_deck_of,
)
from app.games.eitsuku.rules import card_census, full_census

EAGER = ("SET", "RELEASE", "CHOOSE", "BUY", "EVENT")


def _random_line(lines: list[str], choices: Random) -> str:
    """As the property test plays: eager to make films, otherwise any legal line."""
    eager = [line for line in lines if line.startswith(EAGER)]
    return choices.choice(eager if eager and choices.random() < 0.6 else lines)


def _purposeful_line(state: State, seat: int, lines: list[str], choices: Random) -> str:
    """A player who wants a film: release when possible, place a required role, scout a deck
    whose role is still missing from slots and stock, else buy the largest budget card."""
    for verb in ("RELEASE", "CHOOSE"):
        found = [line for line in lines if line.startswith(verb)]
        if found:
            return found[0]
    sets = [line for line in lines if line.startswith("SET") and line.split()[1] in REQUIRED_SLOTS]
    if sets:
        return choices.choice(sets)
    player = state["players"][seat]
    held = {role_deck_of(card) for card in player["stock"]}
    missing = [
        SLOT_DECK[slot]
        for slot in REQUIRED_SLOTS
        if player["slots"][slot] is None and SLOT_DECK[slot] not in held
    ]
    scouts = [line for line in lines if line.startswith("SCOUT") and line.split()[1] in missing]
    if scouts:
        return scouts[0]
    for line in ("BUY 大", "BUY 中", "BUY 小"):
        if line in lines:
            return line
    return "END"


def _play(seed: int, players: int, purposeful: bool) -> tuple[State, Counter[str]]:
    """One seeded game; counts what happened: legal BUY 小 steps, lines taken by verb,
    start-phase cards by kind, start phases that found both piles empty."""
    choices = Random(seed)
    state = game.setup([f"P{i}" for i in range(players)], {}, Rng(f"piles{seed}", 0))
    seen: Counter[str] = Counter()
    seq = 0
    while not game.is_over(state):
        seq += 1
        seat = choices.choice(game.waiting_for(state))
        lines = game.legal(state, seat)
        seen["BUY 小 legal"] += "BUY 小" in lines
        if purposeful:
            line = _purposeful_line(state, seat, lines, choices)
        else:
            line = _random_line(lines, choices)
        seen[" ".join(line.split()[:2]) if line.startswith("BUY") else line.split()[0]] += 1
        state, events = game.apply(state, seat, game.parse(line), Rng(f"piles{seed}", seq))
        for event in events:
            if event["type"] == "start":
                for card in (SMALL, MEDIUM):
                    seen[f"start {card}"] += f"{card} を得ました" in event["text"]
                seen["start nothing"] += "尽きて" in event["text"]
    assert card_census(state) == full_census(players)
    return state, seen


def test_scout_buy_small_for_cost_0_is_legal_in_random_games() -> None:
    """R 2−2 スカウトフェイズ:「コスト0分の【予算カード】を『裏返し』にし、【予算・小】を
    『ストック場』に配置する」 — `BUY 小` is offered (and taken) in every random game, and the
    other pile rules fire too: BUY 中, BUY 大 and the start phase's 予算・中 fallback."""
    total: Counter[str] = Counter()
    for seed in range(40):
        _, seen = _play(seed, 2 + seed % 5, purposeful=False)
        assert seen["BUY 小 legal"] > 0, f"game {seed}: BUY 小 was never legal"
        total += seen
    assert total["BUY 小"] > 0
    assert total["BUY 中"] > 0 and total["BUY 大"] > 0
    # 「【予算・小】が0枚になっている場合、代わりに【予算・中】」
    assert total["start 予算・中"] > 0


def _gained(old: dict[str, int], new: dict[str, int]) -> str | None:
    return next((card for card in (SMALL, MEDIUM) if new.get(card, 0) > old.get(card, 0)), None)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_start_phase_income_lasts_all_12_weeks_when_nothing_is_bought(players: int) -> None:
    """R 2−1 PL数×6 per pile, R 2−2 スタートフェイズ (予算・小, else 予算・中), R 2−3 12ターン:
    with nothing bought, the piles pay every player's start phase of every week — 予算・小 in
    weeks 1–6, 予算・中 in weeks 7–12 — and are empty only when the game ends."""
    state = game.setup([f"P{i}" for i in range(players)], {}, Rng("income", 0))
    for player in state["players"]:
        player["pending_choices"] = 0  # a 6 at the deal would add a role card, no budget
    gained: list[list[str]] = []
    before = [dict(p["stock"]) for p in state["players"]]
    seq = 0
    while not game.is_over(state):
        week = state["week"]
        for seat in game.waiting_for(state):
            seq += 1
            state, _ = game.apply(state, seat, game.parse("END"), Rng("income", seq))
        after = [dict(p["stock"]) for p in state["players"]]
        if not game.is_over(state):
            assert state["week"] == week + 1
            gained.append([_gained(old, new) for old, new in zip(before, after, strict=True)])
        before = after
    # Week 1's start phase ran in setup (予算・小 for everyone); weeks 2–12 were recorded here.
    assert len(gained) == WEEKS - 1
    weeks_small = PILE_PER_PLAYER  # 6 weeks of 予算・小 (week 1 included), then 予算・中
    for week, cards in enumerate(gained, start=2):
        assert cards == [SMALL if week <= weeks_small else MEDIUM] * players, f"week {week}"
    assert state["piles"][SMALL] == 0 and state["piles"][MEDIUM] == 0
    for player in state["players"]:
        assert player["stock"][SMALL] == 5 + 6 and player["stock"][MEDIUM] == 2 + 6


def test_players_set_on_films_finish_them_and_never_miss_a_start_card() -> None:
    """R 2−3 えいつくの終了 and I 未完成: with budget income lasting the game, players who scout
    the roles they lack, place a required role whenever they can pay and otherwise buy budget
    all release their films (none ends 未完成) and no start phase finds the piles empty.
    (Taking the starting cards from the piles emptied the 予算・中 pile after week 5: then most
    of these players ended 未完成.)"""
    statuses: Counter[str] = Counter()
    empty_starts = 0
    for seed in range(60):
        state, seen = _play(seed, 2 + seed % 5, purposeful=True)
        statuses.update(player["status"] for player in state["players"])
        empty_starts += seen["start nothing"]
    assert statuses["released"] > 0
    assert statuses["unfinished"] <= statuses["released"] // 20
    assert empty_starts == 0


def test_a_game_keeps_the_edition_it_was_made_with() -> None:
    """Editions (docs/rules/eitsuku.md): new games are edition 2 (starting cards not from the
    piles); a game made under edition 1 (its options say so) is dealt and replayed as it was
    then, starting cards out of the piles, so recorded games keep replaying identically."""
    from app.games.eitsuku.rules import START_MEDIUM, START_SMALL

    names = ["A", "B", "C"]
    new = game.setup(names, {}, Rng("editions", 0))
    old = game.setup(names, {"edition": 1}, Rng("editions", 0))
    full = len(names) * PILE_PER_PLAYER
    assert game.edition == 2 and new["edition"] == 2 and old["edition"] == 1
    assert new["piles"][MEDIUM] == full
    assert old["piles"][MEDIUM] == full - len(names) * START_MEDIUM
    # Week 1's start phase took one 予算・小 each in both.
    assert new["piles"][SMALL] == full - len(names)
    assert old["piles"][SMALL] == max(0, full - len(names) * START_SMALL - len(names))
    assert card_census(new) == full_census(len(names))
    assert card_census(old) == full_census(len(names), edition=1)
    with pytest.raises(ValueError):
        game.setup(names, {"edition": 3}, Rng("editions", 0))
