"""Issue #39: every kind's bot (app/games/<kind>/bot.py, Game.bot_lines) decides from its own
seat's view and legal lines only, every line it gives is legal, and the エリューシス parent judges
by a rule of the house list (docs/bot-play.md)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from random import Random
from typing import Any

import pytest

from app.games import GAMES
from app.games.base import Rng, State
from app.games.eleusis.bot import HouseRules, _check_rules, house_rules
from app.games.eleusis.bot import bot as eleusis_bot
from app.games.eleusis.rule import accepts, judge, parse_rule
from app.games.kit import bot as kit_bot
from app.games.kit.bot import view_rng
from app.games.kit.content import ContentError, load_content
from tests.support.fuzz_states import _OPTIONS, PLAYERS, script


def _swap(state: State, other: int, hand_key: str, deck_key: str) -> None:
    """Another seat's hidden hand traded for cards of the deck (and the deck reversed)."""
    player = state["players"][other]
    hand, deck = list(player[hand_key]), list(state[deck_key])
    player[hand_key], state[deck_key] = deck[: len(hand)], (hand + deck[len(hand) :])[::-1]


def _blind_eitsuku(state: State, seat: int) -> None:
    for cards in state["decks"].values():
        cards.reverse()  # the closed decks' order: the only hidden thing (R 2−2)


def _blind_eleusis(state: State, seat: int) -> None:
    for other in range(len(state["players"])):
        if other != seat:
            _swap(state, other, "hand", "deck")
    if state["rule"] is not None and seat != state["parent"]:
        # The sealed rule (its hash stays as published: the view shows only the hash).
        state["rule"], state["salt"] = "card.rank > prev.rank", "another-salt"


def _blind_populous(state: State, seat: int) -> None:
    for other in range(len(state["players"])):
        if other != seat and state["players"][other]["hand"]:
            _swap(state, other, "hand", "deck")


def _blind_idolwp(state: State, seat: int) -> None:
    for other in range(len(state["players"])):
        if other != seat and state["players"][other]["hand"]:
            _swap(state, other, "hand", "card_deck")
    state["event_deck"].reverse()


def _blind_cardbattle(state: State, seat: int) -> None:
    other = 1 - seat
    player = state["players"][other]
    spare = sorted(
        name
        for name, card in state["pool"].items()
        if card["kind"] == "magic" and name not in player["magic"] + player["magic_used"]
    )
    player["magic"] = spare[: len(player["magic"])]
    sealed = state["step"]["sealed"] if state["step"] is not None else {}
    if str(other) in sealed:  # the other side's sealed deck, before the reveal
        normal = sorted(n for n, c in state["pool"].items() if c["kind"] == "normal")
        sealed[str(other)] = {"cards": normal[-3:], "magic": []}


BLIND: dict[str, tuple[Callable[[State, int], None], tuple[str, ...]]] = {
    "eitsuku": (_blind_eitsuku, ("第1週の始め", "第3週", "第7週")),
    "eleusis": (
        _blind_eleusis,
        ("第1ラウンドのルール待ち", "第1ラウンドのプレイ中", "預言者の判定待ち（封印）"),
    ),
    "populous": (_blind_populous, ("第1ラウンド", "第7ラウンド", "戦争か調停の選択待ち")),
    "idolwp": (_blind_idolwp, ("第2ラウンド", "イベント参加待ち", "第7ラウンド")),
    "cardbattle": (
        _blind_cardbattle,
        ("デッキ封印待ち", "片方のデッキ封印済み", "公開後の宣言受付"),
    ),
}


def assert_blind_bot(kind: str) -> None:
    """At several points of a scripted game, for every seat the game waits for: the state with
    what that seat cannot see changed (other hands, deck order, the sealed rule, other sealed
    decks and magic) gives that seat the same view, and its bot the same lines. The bot is
    handed no seed at all (`bot_lines(state, seat)`), so no seed can change its choice."""
    impl = GAMES[kind]
    blind, labels = BLIND[kind]
    played = script(kind, [f"p{seat}" for seat in range(PLAYERS[kind])])
    changed = 0
    for label in labels:
        state = played.stop(label).state
        for seat in impl.waiting_for(state):
            other = copy.deepcopy(state)
            blind(other, seat)
            assert impl.view(other, seat) == impl.view(state, seat), (kind, label)
            changed += other != state
            lines = impl.bot_lines(state, seat)
            assert lines, (kind, label, seat)
            assert impl.bot_lines(other, seat) == lines, (kind, label, seat)
    assert changed, f"{kind}: no hidden information was changed"


def _whole_game(kind: str, seed: str, bot_seat: int) -> State:
    """One whole game: the bot in `bot_seat`, random legal lines elsewhere (an エリューシス
    parent without a listed line seals a house rule at random; the GM ends a long round).
    Every bot line is applied as the pipeline would (sealed when the rules want it); a refusal
    raises RuleError and fails the test."""
    impl = GAMES[kind]
    state = impl.setup([f"p{s}" for s in range(PLAYERS[kind])], dict(_OPTIONS[kind]), Rng(seed, 0))
    if kind == "eleusis":
        state = impl.setup([f"p{s}" for s in range(4)], {"rounds": 2}, Rng(seed, 0))
    choices = Random(seed)
    seq = 0
    round_moves = 0
    while not impl.is_over(state) and seq < 6000:
        waiting = impl.waiting_for(state)
        seat = bot_seat if bot_seat in waiting else choices.choice(waiting)
        if seat == bot_seat:
            lines = impl.bot_lines(state, seat)
            assert lines, (kind, seed, state.get("phase"))
        else:
            thread, sealed = impl.legal_split(state, seat)
            if thread or sealed:
                lines = [choices.choice(thread or sealed)]
            else:
                lines = [f"RULE {choices.choice(house_rules()).text}"]
        if kind == "eleusis" and round_moves > 300:
            seat, lines, round_moves = "gm", ["ENDROUND"], 0  # type: ignore[assignment]
        for line in lines:
            seq += 1
            round_moves += 1
            command = impl.parse(line)
            sealed_way = seat != "gm" and impl.needs_seal(state, command) is True
            before = state.get("round")
            state, _ = impl.apply(state, seat, command, Rng(seed, seq), sealed=sealed_way)
            if state.get("round") != before:
                round_moves = 0
    assert impl.is_over(state), (kind, seed)
    return state


@pytest.mark.parametrize("kind", sorted(PLAYERS))
@pytest.mark.parametrize("n", range(2))
def test_every_line_a_bot_gives_is_accepted_over_whole_games(kind: str, n: int) -> None:
    _whole_game(kind, f"bots-{kind}-{n}", n % PLAYERS[kind])


def test_the_eleusis_parent_seals_a_house_rule_and_the_plays_are_judged_by_it() -> None:
    """The bot parent's RULE is a rule of the house list; every judgment of the round that
    follows is that rule's judgment of the cards on the line as it stood."""
    impl = GAMES["eleusis"]
    texts = {rule.text for rule in house_rules()}
    state = script("eleusis", ["A", "B", "C", "D"]).stop("第1ラウンドのルール待ち").state
    parent = state["parent"]
    lines = impl.bot_lines(state, parent)
    assert len(lines) == 1 and lines[0].startswith("RULE ")
    text = lines[0].removeprefix("RULE ")
    assert text in texts
    rule = parse_rule(text)
    seed = "bots-parent"
    state, _ = impl.apply(state, parent, impl.parse(lines[0]), Rng(seed, 1), sealed=True)
    choices = Random(seed)
    judged = 0
    for seq in range(2, 40):
        if state["phase"] != "play":
            break
        seat = state["turn"]
        line_before = [entry["card"] for entry in state["line"]]
        card = choices.choice(state["players"][seat]["hand"])
        round_before = state["round"]
        state, _ = impl.apply(state, seat, impl.parse(f"PLAY ○ {card}"), Rng(seed, seq))
        if state["round"] != round_before or state["over"]:
            break  # the hand emptied: the round is over
        assert state["last_play"]["judgment"] == judge(rule, line_before, [card])
        judged += 1
    assert judged >= 5


def _parent_view(rule: str, declaration: str, cards: list[str]) -> dict[str, object]:
    return {
        "seat": 0,
        "parent_seat": 0,
        "phase": "judge",
        "line": [{"card": "♠3", "failed": []}, {"card": "♥8", "failed": []}],
        "rule": {"mode": "formal", "text": rule, "salt": "s"},
        "pending": {"seat": 1, "declaration": declaration, "cards": cards},
    }


def test_an_eleusis_parent_asked_to_judge_judges_by_its_formal_rule() -> None:
    legal = ["JUDGE ○", "JUDGE ●", "JUDGE ○●"]
    rule = "card.color != prev.color"
    assert eleusis_bot(_parent_view(rule, "○", ["♥5"]), legal) == ["JUDGE ●"]
    assert eleusis_bot(_parent_view(rule, "●", ["♣5"]), legal) == ["JUDGE ○"]
    assert eleusis_bot(_parent_view(rule, "○", ["♣5", "♥4"]), legal) == ["JUDGE ○"]


def test_an_eleusis_child_plays_what_the_surviving_hypotheses_accept() -> None:
    """A line alternating colours with same-colour cards refused: the child sheds cards of the
    other colour declared ○, or same-colour cards declared ●, never a mix of them."""
    line = [
        {"card": "♠3", "failed": [["♣9"]]},
        {"card": "♥8", "failed": [["♦2"]]},
        {"card": "♣J", "failed": [["♠5"]]},
        {"card": "♦4", "failed": []},
        {"card": "♠10", "failed": [["♣2"]]},
        {"card": "♥K", "failed": []},
    ]
    hand = ["♠4", "♣7", "♥2", "♦9"]
    view = {"seat": 1, "parent_seat": 0, "phase": "play", "line": line, "hand": hand, "played": 8}
    legal = [f"PLAY {mark} {card}" for card in hand for mark in "○●"]
    (chosen,) = eleusis_bot(view, legal)
    words = chosen.split()
    assert words[0] == "PLAY" and len(words) >= 3
    if words[1] == "○":
        assert words[2] in ("♠4", "♣7")  # after ♥K, a black card
    else:
        assert set(words[2:]) <= {"♥2", "♦9"}  # each red card would be refused after ♥K


def test_an_eleusis_child_whose_every_hypothesis_fails_risks_one_card_at_a_time() -> None:
    """A parent's rule outside the house list (multiples of 3 refused): no listed rule agrees
    with the line, so the child believes in an unknown rule known only by the share of cards
    it accepts, and risks a single card (a wrong declaration of n cards draws 2n)."""
    rule = parse_rule("card.rank % 3 != 0")
    suits, ranks = "♠♥♦♣", ["A", *map(str, range(2, 11)), "J", "Q", "K"]
    deck = [suit + rank for suit in suits for rank in ranks]
    choices = Random(5)
    line: list[dict[str, Any]] = [{"card": "♠A", "failed": []}]
    for _ in range(30):
        card = choices.choice(deck)
        if accepts(rule, [entry["card"] for entry in line], card):
            line.append({"card": card, "failed": []})
        else:
            line[-1]["failed"].append([card])
    hand = ["♠4", "♥5", "♦7", "♣8", "♠2", "♥J"]
    view = {"seat": 1, "parent_seat": 0, "phase": "play", "line": line, "hand": hand, "played": 30}
    legal = [f"PLAY {mark} {card}" for card in hand for mark in "○●"]
    (chosen,) = eleusis_bot(view, legal)
    assert len(chosen.split()) == 3, chosen


def test_a_house_rule_that_does_not_parse_is_reported_with_its_file_and_line(
    tmp_path: Path,
) -> None:
    """The list is house content: checked at start-up (Game.check_content), a broken rule
    names its file and line instead of failing in a game."""
    path = tmp_path / "house_rules.toml"
    good = '[[rules]]\ntext = "card.color != prev.color"\ngrade = 2\nja = "違う色"\n\n'
    path.write_text(good + '[[rules]]\ntext = "card.colour != prev"\ngrade = 3\nja = "壊れた"\n')
    with pytest.raises(ContentError) as raised:
        load_content(path, HouseRules, _check_rules)
    assert str(raised.value).startswith("house_rules.toml:6: rules[1].text"), str(raised.value)
    GAMES["eleusis"].check_content()  # the shipped list passes


def test_the_eleusis_parent_s_rule_is_not_the_plain_digest_of_its_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The others see nearly all of the parent's view (its own part is only its seat, and a
    hand not yet dealt), and the code is open: a rule drawn from the plain digest of the view
    would be theirs to work out. The bot keys the digest with its process's secret: over many
    rounds its rule is the plain digest's pick no more often than chance would make it."""
    impl = GAMES["eleusis"]
    texts = [rule.text for rule in house_rules() if rule.grade in (2, 3, 4)]
    # A known key instead of the process's random one, so the count below is the same in
    # every run (one CI run once counted 30 of 30, which no run here repeated).
    monkeypatch.setattr(kit_bot, "_PROCESS_KEY", b"k" * 32)
    same = 0
    for n in range(30):
        state = impl.setup(["A", "B", "C", "D"], {}, Rng(f"secret-parent-{n}", 0))
        parent = state["parent"]
        view, legal = impl.view(state, parent), impl.legal(state, parent)
        (line,) = impl.bot_lines(state, parent)
        same += line == f"RULE {view_rng(view, legal).choice(texts)}"
    assert same < 10, same
