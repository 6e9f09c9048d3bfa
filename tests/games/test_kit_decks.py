"""Piles of cards (app/games/kit/decks.py): shuffles that replay from the seed, draws that
reshuffle the discards, deals, and no card ever lost or doubled."""

from __future__ import annotations

from collections import Counter

import pytest

from app.games.base import Rng, RuleError
from app.games.kit.decks import (
    DeckExhausted,
    deal,
    discard,
    draw,
    expand,
    make_deck,
    others_hands,
    put_on_bottom,
    put_on_top,
    refill,
    remove_cards,
    reshuffle,
)

CARDS = [f"c{number}" for number in range(20)]


def test_make_deck_is_a_shuffled_copy_holding_every_card_once() -> None:
    original = list(CARDS)
    deck = make_deck(original, Rng("seed", 0))
    assert original == CARDS
    assert sorted(deck) == sorted(CARDS)
    assert deck != CARDS


def test_make_deck_replays_with_the_same_seed_and_move() -> None:
    assert make_deck(CARDS, Rng("seed", 3)) == make_deck(CARDS, Rng("seed", 3))


def test_make_deck_shuffles_differently_for_another_seed_or_move() -> None:
    deck = make_deck(CARDS, Rng("seed", 3))
    assert make_deck(CARDS, Rng("other", 3)) != deck
    assert make_deck(CARDS, Rng("seed", 4)) != deck


def test_expand_lists_the_copies_in_the_mappings_order() -> None:
    assert expand({"祝福": 2, "労働": 1, "奇跡": 0, "啓示": 3}) == [
        "祝福",
        "祝福",
        "労働",
        "啓示",
        "啓示",
        "啓示",
    ]
    with pytest.raises(ValueError):
        expand({"祝福": -1})


def test_draw_takes_cards_from_the_top_which_is_the_end_of_the_list() -> None:
    pile = ["a", "b", "c", "d"]
    assert draw(pile, 2, Rng("s", 1)) == ["d", "c"]
    assert pile == ["a", "b"]


def test_draw_reshuffles_the_discard_pile_when_the_pile_runs_out() -> None:
    pile = ["a", "b"]
    discards = ["c", "d", "e", "f"]
    drawn = draw(pile, 4, Rng("s", 1), discards)
    # The pile's own cards come first; only then is the discard pile shuffled in.
    assert drawn[:2] == ["b", "a"]
    assert set(drawn[2:]) <= {"c", "d", "e", "f"}
    assert discards == []
    assert len(pile) == 2
    assert sorted(drawn + pile) == ["a", "b", "c", "d", "e", "f"]


def test_the_reshuffle_replays_with_the_same_seed_and_differs_with_another() -> None:
    def run(seed: str) -> tuple[list[str], list[str]]:
        pile = ["x"]
        discards = list(CARDS)
        drawn = draw(pile, 5, Rng(seed, 7), discards)
        return drawn, pile

    assert run("seed") == run("seed")
    assert run("seed") != run("another")


def test_draw_never_shuffles_back_the_cards_it_has_already_drawn() -> None:
    for number in range(50):
        pile = ["a"]
        drawn = draw(pile, 3, Rng("s", number), ["b", "c"])
        assert drawn[0] == "a"
        assert sorted(drawn) == ["a", "b", "c"]


def test_draw_returns_fewer_cards_when_the_pile_and_the_discards_run_out() -> None:
    pile = ["a"]
    discards = ["b"]
    drawn = draw(pile, 5, Rng("s", 1), discards)
    assert sorted(drawn) == ["a", "b"]
    assert (pile, discards) == ([], [])
    assert draw(pile, 2, Rng("s", 2), discards) == []


def test_draw_without_a_discard_pile_stops_at_the_empty_pile() -> None:
    pile = ["a", "b"]
    assert draw(pile, 3, Rng("s", 1)) == ["b", "a"]


def test_a_strict_draw_that_cannot_be_met_raises_and_moves_no_card() -> None:
    pile = ["a", "b"]
    discards = ["c"]
    with pytest.raises(DeckExhausted) as caught:
        draw(pile, 4, Rng("s", 1), discards, strict=True)
    assert isinstance(caught.value, RuleError)
    assert (caught.value.wanted, caught.value.available) == (4, 3)
    assert str(caught.value) == (
        "山札が足りません: 4枚引く必要がありますが、山札と捨て札を合わせても3枚しかありません。"
    )
    assert (pile, discards) == (["a", "b"], ["c"])


def test_a_strict_draw_that_can_be_met_reshuffles_like_any_draw() -> None:
    pile = ["a"]
    discards = ["b", "c"]
    assert sorted(draw(pile, 3, Rng("s", 1), discards, strict=True)) == ["a", "b", "c"]


def test_draw_refuses_a_negative_count_and_the_same_list_as_both_piles() -> None:
    pile = ["a"]
    with pytest.raises(ValueError):
        draw(pile, -1, Rng("s", 1))
    with pytest.raises(ValueError):
        draw(pile, 1, Rng("s", 1), pile)


def test_draws_and_discards_conserve_every_card() -> None:
    for number in range(30):
        rng = Rng("conservation", number)
        pile = make_deck(CARDS, rng)
        discards: list[str] = []
        hand: list[str] = []
        for _ in range(25):
            hand.extend(draw(pile, rng.randint(0, 4), rng, discards))
            if hand:
                discard(hand, discards, [rng.choice(hand)])
            assert Counter(pile + discards + hand) == Counter(CARDS)


def test_reshuffle_puts_the_shuffled_discards_under_the_remaining_pile() -> None:
    pile = ["top"]
    discards = ["a", "b", "c"]
    reshuffle(pile, discards, Rng("s", 1))
    assert pile[-1] == "top"
    assert sorted(pile[:-1]) == ["a", "b", "c"]
    assert discards == []


def test_refill_draws_up_to_the_hand_size_and_no_further() -> None:
    hand = ["h1"]
    pile = ["a", "b", "c", "d"]
    assert refill(hand, pile, 4, Rng("s", 1)) == ["d", "c", "b"]
    assert hand == ["h1", "d", "c", "b"]
    assert refill(hand, pile, 4, Rng("s", 2)) == []
    assert refill(hand, pile, 2, Rng("s", 3)) == []
    assert hand == ["h1", "d", "c", "b"]


def test_refill_reshuffles_the_discards_like_draw() -> None:
    hand: list[str] = []
    pile = ["a"]
    discards = ["b", "c"]
    refill(hand, pile, 3, Rng("s", 1), discards)
    assert sorted(hand) == ["a", "b", "c"]


def test_deal_gives_one_card_at_a_time_round_the_table() -> None:
    pile = ["1", "2", "3", "4", "5", "6", "7"]
    hands: list[list[str]] = [[], [], []]
    deal(pile, hands, 2)
    assert hands == [["7", "4"], ["6", "3"], ["5", "2"]]
    assert pile == ["1"]


def test_deal_with_too_few_cards_raises_and_deals_nothing() -> None:
    pile = ["1", "2", "3"]
    hands: list[list[str]] = [[], []]
    with pytest.raises(DeckExhausted):
        deal(pile, hands, 2)
    assert (pile, hands) == (["1", "2", "3"], [[], []])


def test_put_on_top_and_bottom_keep_the_cards_order_bottom_to_top() -> None:
    pile = ["m"]
    put_on_top(pile, ["t1", "t2"])
    put_on_bottom(pile, ["b1", "b2"])
    assert pile == ["b1", "b2", "m", "t1", "t2"]
    assert draw(pile, 1, Rng("s", 1)) == ["t2"]


def test_discard_moves_the_cards_from_the_hand_to_the_top_of_the_discard_pile() -> None:
    hand = ["a", "b", "a", "c"]
    discards = ["old"]
    discard(hand, discards, ["a", "c"])
    assert sorted(hand) == ["a", "b"]
    assert discards == ["old", "a", "c"]


def test_discarding_a_card_not_in_hand_is_refused_and_changes_nothing() -> None:
    hand = ["a", "b"]
    discards: list[str] = []
    with pytest.raises(RuleError) as caught:
        discard(hand, discards, ["a", "a"])
    assert str(caught.value) == "a を2枚は持っていません。"
    assert (hand, discards) == (["a", "b"], [])


def test_remove_cards_counts_copies() -> None:
    hand = ["a", "a", "b"]
    remove_cards(hand, ["a", "a"])
    assert hand == ["b"]
    with pytest.raises(RuleError):
        remove_cards(hand, ["b", "b"])
    assert hand == ["b"]


def test_others_hands_copies_every_hand_but_the_viewer_s_of_two_cards_or_more() -> None:
    players = [{"hand": ["a", "b"]}, {"hand": ["c"]}, {"hand": ["d", "e", "f"]}, {"hand": []}]
    hands = others_hands(players, 2)
    assert hands == [["a", "b"]]
    assert others_hands(players, None) == [["a", "b"], ["d", "e", "f"]]
    hands[0].append("z")
    assert players[0]["hand"] == ["a", "b"]
