"""新新エリューシス conformance tests: one test per clause of docs/rules/eleusis.md.

R = the source (seeds/002_…txt, 改良案), I = interpretation fixed by the project, D = our
decision. Each docstring quotes the clause. States are arranged with the `rig_*` helpers, which
move cards between the deck and the other places so that all 104 cards stay accounted for.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from itertools import count
from typing import Any

import pytest

from app.games.base import Rng, RuleError, State
from app.games.eleusis import game
from app.games.eleusis.cards import full_deck, sort_cards
from app.games.eleusis.rules import card_census, needs_seal
from app.games.eleusis.scoring import round_scores

NAMES = ["A", "B", "C", "D", "E", "F"]
ALTERNATE = "card.color != prev.color"

_seq = count(1)


# --------------------------------------------------------------------------- helpers


def act(
    state: State, actor: int | str, line: str, *, sealed: bool | None = None
) -> tuple[State, list[dict[str, Any]]]:
    """Apply one line (sealed when the game requires it, unless told); cards stay conserved."""
    command = game.parse(line)
    if sealed is None:
        sealed = bool(needs_seal(state, command))
    new_state, events = game.apply(state, actor, command, Rng("t", next(_seq)), sealed=sealed)  # type: ignore[arg-type]
    assert card_census(new_state) == Counter(full_deck())
    return new_state, events


def rejected(state: State, actor: int | str, line: str, *, sealed: bool | None = None) -> RuleError:
    command = game.parse(line)
    if sealed is None:
        sealed = bool(needs_seal(state, command))
    with pytest.raises(RuleError) as caught:
        game.apply(state, actor, command, Rng("t", 0), sealed=sealed)  # type: ignore[arg-type]
    return caught.value


def begin(rule: str = ALTERNATE, players: int = 4, *, text: bool = False, **options: Any) -> State:
    """A game whose first round has started with this rule (sealed by the parent)."""
    state = game.setup(NAMES[:players], options, Rng("begin", 0))
    line = f"RULE TEXT {rule}" if text else f"RULE {rule}"
    state, _ = act(state, state["parent"], line)
    return state


def _take(state: State, cards: list[str]) -> None:
    """Take these cards out of the deck. A card that is not there is fetched from another
    hand, which gets a deck card (not one of `cards`) in exchange."""
    for card in cards:
        if card not in state["deck"]:
            holder = next(p for p in state["players"] if card in p["hand"])
            spare = next(c for c in state["deck"] if c not in cards)
            state["deck"].remove(spare)
            holder["hand"].remove(card)
            holder["hand"] = sort_cards([*holder["hand"], spare])
            state["deck"].append(card)
        state["deck"].remove(card)


def rig_hand(state: State, seat: int, cards: list[str]) -> None:
    """Give a player exactly these cards (the old hand goes back into the deck)."""
    state["deck"].extend(state["players"][seat]["hand"])
    state["players"][seat]["hand"] = []
    _take(state, cards)
    state["players"][seat]["hand"] = sort_cards(cards)
    assert card_census(state) == Counter(full_deck())


def rig_line(state: State, cards: list[str]) -> None:
    """Make the main line exactly these cards (no failed strings)."""
    for entry in state["line"]:
        state["deck"].append(entry["card"])
        for run in entry["failed"]:
            state["deck"].extend(run)
    _take(state, cards)
    state["line"] = [{"card": card, "failed": []} for card in cards]
    assert card_census(state) == Counter(full_deck())


def rig_deck(state: State, size: int, top: list[str] | None = None) -> None:
    """Leave `size` cards in the deck (the rest go into a failed string under the first card,
    which the rule never reads); `top` are drawn first."""
    top = top or []
    _take(state, top)
    extra = state["deck"][: len(state["deck"]) - (size - len(top))]
    del state["deck"][: len(extra)]
    if extra:
        state["line"][0]["failed"].append(extra)
    state["deck"].extend(reversed(top))  # the end of the list is the top of the deck
    assert len(state["deck"]) == size
    assert card_census(state) == Counter(full_deck())


def set_turn(state: State, seat: int) -> None:
    state["turn"] = seat
    state["window"] = None


def hands(state: State) -> list[int]:
    return [len(player["hand"]) for player in state["players"]]


# --------------------------------------------------------------------------- setup


def test_components_104_cards_two_decks_no_jokers() -> None:
    """R 準備 1「使用するカードはトランプ2組」: 52 kinds twice, 104 cards."""
    deck = full_deck()
    assert len(deck) == 104
    assert len(set(deck)) == 52
    assert all(n == 2 for n in Counter(deck).values())
    assert card_census(game.setup(NAMES[:4], {}, Rng("x", 0))) == Counter(deck)


@pytest.mark.parametrize("players", [3, 7])
def test_setup_players_4_to_6(players: int) -> None:
    """R 準備 3「人数は4〜6人」."""
    with pytest.raises(RuleError):
        game.setup([f"P{i}" for i in range(players)], {}, Rng("n", 0))
    assert game.min_players == 4 and game.max_players == 6
    for ok in (4, 6):
        assert len(game.setup(NAMES[:ok], {}, Rng("n", 0))["players"]) == ok


def test_setup_rejects_unknown_options_duplicates_and_unknown_parent() -> None:
    with pytest.raises(ValueError):
        game.setup(NAMES[:4], {"weeks": 3}, Rng("o", 0))
    with pytest.raises(ValueError):
        game.setup(NAMES[:4], {"rules": "telepathy"}, Rng("o", 0))
    with pytest.raises(RuleError):
        game.setup(["A", "A", "B", "C"], {}, Rng("o", 0))
    with pytest.raises(RuleError):
        game.setup(NAMES[:4], {"parent": "Z"}, Rng("o", 0))


def test_option_parent_default_first_seat() -> None:
    """I: the parent is chosen by the GM (option `parent`, default: the first to join)."""
    assert game.setup(NAMES[:4], {}, Rng("p", 0))["parent"] == 0
    state = game.setup(NAMES[:4], {"parent": "C"}, Rng("p", 0))
    assert state["parent"] == 2
    assert game.waiting_for(state) == [2]
    assert game.view(state, None)["parent"] == "C"


def test_option_rounds_default_number_of_players() -> None:
    """I: rounds rotate the parent; option `rounds`, default = players."""
    assert game.setup(NAMES[:5], {}, Rng("r", 0))["rounds"] == 5
    assert game.setup(NAMES[:5], {"rounds": 2}, Rng("r", 0))["rounds"] == 2


def test_round_waits_for_parents_sealed_rule() -> None:
    """R 準備 5「親プレイヤーはルールを決め紙に記録しておく」: nothing happens before the rule."""
    state = game.setup(NAMES[:4], {}, Rng("w", 0))
    assert state["phase"] == "rule" and game.waiting_for(state) == [0]
    # The rule is the parent's own free text, sent sealed: the thread is offered nothing, the
    # sealed endpoint lists nothing enumerable, and the examples show the parent the form.
    assert game.legal(state, 0) == [] and game.sealed_legal(state, 0) == []
    assert game.examples(state, 0) == [
        ("RULE card.color != prev.color", True),
        ("RULE TEXT 前のカードと色が違う", True),
    ]
    assert game.legal(state, 1) == [] and game.examples(state, 1) == []
    assert "RULE" in rejected(state, 1, "PLAY ○ S7").message
    assert "親" in rejected(state, 1, "RULE card.face").message


def test_deal_12_cards_to_each_child_and_turn_up_a_starter() -> None:
    """R 準備 4「初期手札12枚」; I「One starter card is turned face up to begin the line」."""
    for players in (4, 5, 6):
        state = begin(players=players)
        assert hands(state) == [0] + [12] * (players - 1)
        assert len(state["line"]) == 1 and state["line"][0]["failed"] == []
        assert len(state["deck"]) == 104 - 12 * (players - 1) - 1
        assert state["played"] == 0


def test_first_turn_is_the_child_after_the_parent() -> None:
    """D: the child after the parent plays first, then seat order."""
    state = begin(players=5, parent="D")
    assert state["parent"] == 3 and state["turn"] == 4
    assert game.waiting_for(state) == [4]


def test_rule_hash_is_published_when_the_round_starts() -> None:
    """I: the SHA-256 of the sealed rule is a public event when the round starts (D: of
    "<salt>:<text>", the salt revealed with the text)."""
    state = game.setup(NAMES[:4], {}, Rng("h", 0))
    state, events = act(state, 0, "RULE card.rank>prev.rank or card.suit==prev.suit")
    text = "card.rank > prev.rank or card.suit == prev.suit"
    digest = hashlib.sha256(f"{state['salt']}:{text}".encode()).hexdigest()
    assert state["rule_hash"] == digest == game.view(state, None)["rule_hash"]
    public = [e for e in events if not e.get("private")]
    assert any(digest in e["text"] for e in public)
    assert not any(text in e["text"] or state["salt"] in e["text"] for e in public)
    private = [e for e in events if e.get("private")]
    assert private and all(e["seat"] == 0 for e in private)
    assert text in private[0]["text"] and state["salt"] in private[0]["text"]


def test_rule_text_revealed_at_round_end() -> None:
    """I: the rule text is revealed at the round's end, so anyone can check the hash."""
    state = begin()
    salt, digest = state["salt"], state["rule_hash"]
    state, events = act(state, "gm", "ENDROUND")
    end = next(e for e in events if e["type"] == "round_end")
    assert ALTERNATE in end["text"] and salt in end["text"]
    # The hash itself was published when the round started (round_start): the revealed text
    # and salt must give it.
    assert hashlib.sha256(f"{salt}:{ALTERNATE}".encode()).hexdigest() == digest
    record = game.view(state, None)["history"][0]
    assert (record["rule"], record["salt"], record["rule_hash"]) == (ALTERNATE, salt, digest)
    assert hashlib.sha256(f"{salt}:{ALTERNATE}".encode()).hexdigest() == digest


def test_a_house_rule_revealed_at_round_end_is_said_in_its_own_words_too() -> None:
    """The house list's rule (content/house_rules.toml) is revealed as sealed, for the hash,
    and in its list's words beside it; a rule a person wrote is shown only as written."""
    _state, events = act(begin(), "gm", "ENDROUND")
    end = next(e for e in events if e["type"] == "round_end")
    assert f"ルール「{ALTERNATE}」(前のカードと違う色)" in end["text"], end["text"]
    own = "card.suit != prev.suit and card.rank > 3"
    _state, events = act(begin(own), "gm", "ENDROUND")
    end = next(e for e in events if e["type"] == "round_end")
    assert f"ルール「{own}」、ソルト" in end["text"], end["text"]


def test_option_rules_formal_only_refuses_text_rule() -> None:
    """I: the rule is given in one of two ways; the option `rules` may allow only one."""
    state = game.setup(NAMES[:4], {"rules": "formal"}, Rng("f", 0))
    assert "形式ルール" in rejected(state, 0, "RULE TEXT 赤と黒").message
    assert game.examples(state, 0) == [("RULE card.color != prev.color", True)]
    state = game.setup(NAMES[:4], {"rules": "hand"}, Rng("f", 0))
    assert "文章のルール" in rejected(state, 0, "RULE card.face").message
    act(state, 0, "RULE TEXT 赤と黒")


def test_rule_cannot_be_changed_once_sealed() -> None:
    state = begin()
    assert "変えられません" in rejected(state, 0, "RULE card.face").message


def test_gm_names_the_parent_before_the_rule() -> None:
    """I: the parent is a seat chosen by the GM (PARENT <name> before the rule is sealed)."""
    state = game.setup(NAMES[:4], {}, Rng("g", 0))
    assert game.legal(state, "gm") == ["ENDROUND", "PARENT B", "PARENT C", "PARENT D"]
    state, events = act(state, "gm", "PARENT C")
    assert state["parent"] == 2 and game.waiting_for(state) == [2]
    assert "C" in events[0]["text"]
    assert "GM" in rejected(state, 1, "PARENT B").message
    assert "Z" in rejected(state, "gm", "PARENT Z").message
    state, _ = act(state, 2, f"RULE {ALTERNATE}")
    assert "封" in rejected(state, "gm", "PARENT B").message


# --------------------------------------------------------------------------- a child's turn


def test_play_1_to_4_cards_from_hand() -> None:
    """R「手札より1枚以上4枚以下のカード」: the cards must be in the hand (two copies for two)."""
    state = begin()
    rig_hand(state, 1, ["♥2", "♥3", "♠4", "♠5", "♣6"])
    assert "♦9" in rejected(state, 1, "PLAY ○ ♦9").message
    assert "♥2 ♥2 のうち手札にないカードがあります" in rejected(state, 1, "PLAY ○ ♥2 ♥2").message
    act(state, 1, "PLAY ○ ♥2 ♠4 ♥3 ♠5")


def test_play_only_on_your_turn_and_never_by_the_parent() -> None:
    state = begin()
    assert "Bさんの手番" in rejected(state, 2, "PLAY ○ " + state["players"][2]["hand"][0]).message
    assert "親" in rejected(state, 0, "PLAY ○ ♠7").message
    assert "AS" in rejected(state, "gm", "PLAY ○ ♠7").message


def test_play_success_goes_on_the_main_line_in_order() -> None:
    """R ○: all succeed in order; I: ○ puts the cards on the main line in order."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♣3", "♦4", "♦9"])
    state, events = act(state, 1, "PLAY ○ ♥2 ♣3 ♦4")
    assert [entry["card"] for entry in state["line"]] == ["♠Q", "♥2", "♣3", "♦4"]
    assert state["played"] == 3 and state["players"][1]["hand"] == ["♦9"]
    assert any(e["type"] == "judgment" and e["judgment"] == "○" for e in events)


def test_play_order_matters_for_success() -> None:
    """R「(全部)〇成功(順番も)」: ♣3 ♥2 after ♠Q is not ○ although ♥2 ♣3 is."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♣3", "♠9"])
    state, events = act(state, 1, "PLAY ○ ♣3 ♥2")
    judgment = next(e for e in events if e["type"] == "judgment")
    assert judgment["judgment"] == "○●"
    assert state["line"][0]["failed"] == [["♣3", "♥2"]]


def test_play_failure_is_one_failed_string_under_the_last_card() -> None:
    """R ●: each would fail as the next card; I: ● and ○● put them as one failed string under
    the last main-line card."""
    state = begin()
    rig_line(state, ["♠Q", "♥2"])
    rig_hand(state, 1, ["♦3", "♥4", "♠9"])
    state, events = act(state, 1, "PLAY ● ♦3 ♥4")
    assert next(e for e in events if e["type"] == "judgment")["judgment"] == "●"
    assert state["line"][-1] == {"card": "♥2", "failed": [["♦3", "♥4"]]}
    assert state["played"] == 2 and state["players"][1]["hand"] == ["♠9"]
    assert state["last_play"]["penalty"] == 0


def test_mixed_judgment_is_a_failed_string_and_a_penalty() -> None:
    """R「○●(混在)」: neither all succeed nor all fail; any declaration is then wrong."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♣2", "♥3", "♠9"])
    state, events = act(state, 1, "PLAY ● ♣2 ♥3")  # ♥3 alone would succeed
    assert next(e for e in events if e["type"] == "judgment")["judgment"] == "○●"
    assert state["line"] == [{"card": "♠Q", "failed": [["♣2", "♥3"]]}]
    assert len(state["players"][1]["hand"]) == 1 + 4


@pytest.mark.parametrize("played", [1, 2, 3, 4])
def test_penalty_draws_2_per_card_played(played: int) -> None:
    """R「ペナルティとして出したカード枚数×2枚のカードを山札より引き手札に加える」."""
    state = begin()
    rig_line(state, ["♠Q"])
    cards = ["♥2", "♦3", "♥4", "♦5"][:played]
    rig_hand(state, 1, [*cards, "♠9"])
    deck = len(state["deck"])
    state, events = act(state, 1, "PLAY ● " + " ".join(cards))  # red after ♠Q: ○, not ●
    assert len(state["players"][1]["hand"]) == 1 + 2 * played
    assert len(state["deck"]) == deck - 2 * played
    assert state["last_play"]["penalty"] == 2 * played
    drawn = [e for e in events if e["type"] == "drawn"]
    assert drawn and drawn[0]["private"] and drawn[0]["seat"] == 1
    assert not state["players"][1]["disqualified"]


def test_turns_pass_in_seat_order_skipping_parent_and_disqualified() -> None:
    """D: children in seat order after the parent, skipping the parent and disqualified ones."""
    state = begin(players=5, parent="C")
    assert state["turn"] == 3
    state["players"][4]["disqualified"] = True
    rig_line(state, ["♠Q"])
    rig_hand(state, 3, ["♥2", "♠9"])
    state, events = act(state, 3, "PLAY ○ ♥2")
    assert state["turn"] == 0  # E (seat 4) is out
    assert events[-1]["type"] == "turn"


# --------------------------------------------------------------------------- hand-judged rules


def test_hand_judged_parent_judges_each_play() -> None:
    """I 2. Hand-judged: the parent judges each play with JUDGE ○|●|○●; without prophets the
    judgment is public (it may come either way)."""
    state = begin("赤と黒を交互に", text=True)
    assert state["mode"] == "hand"
    rig_hand(state, 1, ["♥2", "♠9"])
    state, events = act(state, 1, "PLAY ○ ♥2")
    assert state["phase"] == "judge" and game.waiting_for(state) == [0]
    assert game.legal(state, 0) == ["JUDGE ○", "JUDGE ●", "JUDGE ○●"]
    assert "判定待ち" in rejected(state, 2, "PLAY ○ " + state["players"][2]["hand"][0]).message
    assert needs_seal(state, game.parse("JUDGE ○")) is None
    state, events = act(state, 0, "JUDGE ●")
    assert state["phase"] == "play" and state["turn"] == 2
    assert state["line"][0]["failed"] == [["♥2"]]
    assert len(state["players"][1]["hand"]) == 1 + 2
    assert any("判定 ●" in e["text"] for e in events)


def test_formal_rule_parent_does_not_judge() -> None:
    """I 1. Formal rule: the bot judges every play itself."""
    state = begin()
    rig_hand(state, 1, ["♥2", "♠9"])
    rig_line(state, ["♠Q"])
    state, _ = act(state, 1, "PLAY ○ ♥2")
    assert state["phase"] == "play" and state["pending"] is None
    assert "判定を待っているプレイはありません" in rejected(state, 0, "JUDGE ○").message
    state, _ = act(state, 1, "PROPHET")
    rig_hand(state, 2, ["♠5", "♠6"])
    state, _ = act(state, 2, "PLAY ○ ♠5")
    assert game.waiting_for(state) == [1] and game.legal(state, 0) == []
    assert "ボット" in rejected(state, 0, "JUDGE ○").message


# --------------------------------------------------------------------------- prophets


def _prophet_after_turn(state: State, seat: int) -> State:
    """`seat` plays ♥/♠ correctly, then declares PROPHET in its window."""
    rig_hand(state, seat, ["♥2", "♠3", "♥4", "♠5", "♥6", "♠7"])
    prev = state["line"][-1]["card"]
    card = "♥2" if prev[0] in "♠♣" else "♠3"
    state, _ = act(state, seat, f"PLAY ○ {card}")
    if state["pending"] is not None:  # earlier prophets judge as the parent does
        verdict = state["pending"]["parent_judgment"]
        for judge in game.waiting_for(state):
            state, _ = act(state, judge, f"JUDGE {verdict}")
    state, events = act(state, seat, "PROPHET")
    assert state["players"][seat]["prophet"] and events[0]["type"] == "prophet"
    return state


def test_prophet_declared_at_the_end_of_the_turn() -> None:
    """R「手番の最後に預言者の宣言ができる(何人でも)」; D the window runs from the judgment to the
    next child's PLAY."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    assert "手番の最後" in rejected(state, 1, "PROPHET").message  # before playing
    state, _ = act(state, 1, "PLAY ○ ♥2")
    assert state["window"] == 1 and game.legal(state, 1) == ["PROPHET"]
    assert game.view(state, None)["prophet_window"] == "B"
    assert "手番の最後" in rejected(state, 3, "PROPHET").message
    rig_hand(state, 2, ["♠5", "♠6"])
    state, _ = act(state, 2, "PLAY ○ ♠5")
    assert state["window"] == 2
    assert "手番の最後" in rejected(state, 1, "PROPHET").message  # closed by C's play
    state, _ = act(state, 2, "PROPHET")
    assert "もう預言者" in rejected(state, 2, "PROPHET").message or state["window"] is None


def test_prophet_allowed_right_after_a_penalty() -> None:
    """R「(直前にペナルティを受けた場合でも予言者宣言は可能)」."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    state, _ = act(state, 1, "PLAY ● ♥2")
    assert state["last_play"]["penalty"] == 2
    state, _ = act(state, 1, "PROPHET")
    assert state["players"][1]["prophet"]


def test_any_number_of_prophets_but_never_the_parent() -> None:
    """R「(何人でも)」; the parent is no child."""
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    for seat in (1, 2, 3):
        state = _prophet_after_turn(state, seat)
    assert [p["prophet"] for p in state["players"]] == [False, True, True, True, False]
    state["window"] = 0
    assert "親は預言者になれません" in rejected(state, 0, "PROPHET").message


def test_prophets_judge_secretly_and_are_revealed_together() -> None:
    """R with prophets: the parent and every prophet other than the player judge secretly; I the
    bot reveals them together once all are in."""
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)
    state = _prophet_after_turn(state, 2)
    rig_hand(state, 3, ["♥8", "♠9"])
    state, events = act(state, 3, "PLAY ○ ♥8")  # after ♥2/♠3 … the bot knows the verdict
    assert state["phase"] == "judge" and state["pending"]["secret"]
    assert sorted(game.waiting_for(state)) == [1, 2]
    state, events = act(state, 2, "JUDGE ○●")
    assert [e for e in events if e["type"] == "reveal"] == []
    public = [e for e in events if not e.get("private")]
    assert all("○●" not in e["text"] for e in public)
    assert [e["seat"] for e in events if e.get("private")] == [2]
    assert game.waiting_for(state) == [1]
    state, events = act(state, 1, "JUDGE ○")
    reveal = next(e for e in events if e["type"] == "reveal")
    assert "B ○" in reveal["text"] and "C ○●" in reveal["text"]


def test_prophet_who_differs_from_parent_is_disqualified() -> None:
    """R「親プレイヤーと預言者プレイヤーの判定が異なっていた場合には預言者プレイヤーは失格」;
    the cards follow the parent's judgment and a wrong declaration still costs the penalty."""
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)  # line: ♠Q ♥2
    rig_hand(state, 2, ["♦8", "♠9"])
    state, _ = act(state, 2, "PLAY ○ ♦8")  # red after ♥2: the parent's judgment is ●
    state, events = act(state, 1, "JUDGE ○")
    assert state["players"][1]["disqualified"] and state["players"][1]["prophet_failed"]
    assert state["line"][-1]["failed"] == [["♦8"]]
    assert len(state["players"][2]["hand"]) == 1 + 2
    assert state["players"][2]["caused"] == 1
    assert any(e["type"] == "prophet_failed" for e in events)


def test_prophet_playing_with_a_wrong_declaration_is_disqualified_at_once() -> None:
    """R「もし宣言が親の判定と異なっていた場合にはカードのペナルティを受け取り、そのラウンドは即失格と
    なります(併せて預言者失格のペナルティも受けます)」."""
    state = begin()
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)
    set_turn(state, 1)
    state, events = act(state, 1, "PLAY ○ ♥4")  # red after ♥2
    player = state["players"][1]
    assert player["disqualified"] and player["prophet_failed"]
    assert state["last_play"]["penalty"] == 2
    assert player["caused"] == 0
    assert any(e["type"] == "disqualified" for e in events)


def test_disqualified_prophet_no_longer_judges() -> None:
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)
    state["players"][1]["disqualified"] = True
    rig_hand(state, 2, ["♠8", "♠9"])
    state, _ = act(state, 2, "PLAY ○ ♠8")
    assert state["pending"] is None and state["phase"] == "play"


# --------------------------------------------------------------------------- disqualification


def test_after_40_cards_a_failed_declaration_disqualifies() -> None:
    """R「全体でカードが40枚出された以降、子プレイヤーが宣言に失敗したら…ペナルティ分のカードを引いて
    そのラウンドは失格」; D counting the play being judged."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    state["played"] = 39
    state, events = act(state, 1, "PLAY ● ♥2")
    assert state["played"] == 40
    player = state["players"][1]
    assert player["disqualified"] and len(player["hand"]) == 1 + 2
    assert any("40枚" in e["text"] for e in events if e["type"] == "disqualified")


def test_before_40_cards_a_failed_declaration_costs_only_the_penalty() -> None:
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    state["played"] = 38
    state, _ = act(state, 1, "PLAY ● ♥2")
    assert state["played"] == 39 and not state["players"][1]["disqualified"]


def test_after_40_cards_a_correct_declaration_is_fine() -> None:
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    state["played"] = 45
    state, _ = act(state, 1, "PLAY ○ ♥2")
    assert not state["players"][1]["disqualified"]


def test_short_deck_child_draws_the_rest_and_is_disqualified() -> None:
    """R「引くべき枚数の山札が足りない状態となったらその子プレイヤーは今ある山札のカードを引き切って
    そのラウンドは失格」."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♥3", "♠9"])
    rig_deck(state, 3)
    state, events = act(state, 1, "PLAY ● ♥2 ♥3")  # owes 4
    player = state["players"][1]
    assert state["deck"] == [] and len(player["hand"]) == 1 + 3
    assert player["disqualified"]
    assert any("山札が足りない" in e["text"] for e in events)


def test_empty_deck_failing_child_is_disqualified() -> None:
    """R「山札が無い状態で、子プレイヤーが宣言に失敗した場合、子プレイヤーはそのラウンドは失格」."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    rig_deck(state, 0)
    state, events = act(state, 1, "PLAY ● ♥2")
    assert state["players"][1]["disqualified"] and state["players"][1]["hand"] == ["♠9"]
    assert any("山札が無い" in e["text"] for e in events)


def test_deck_with_exactly_the_penalty_is_enough() -> None:
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9"])
    rig_deck(state, 2)
    state, _ = act(state, 1, "PLAY ● ♥2")
    assert state["deck"] == [] and not state["players"][1]["disqualified"]


def test_empty_hand_after_a_short_deck_does_not_end_the_round() -> None:
    """D: a child left with no cards because the deck could not supply the penalty is
    disqualified; the round goes on."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2"])
    rig_deck(state, 0)
    state, _ = act(state, 1, "PLAY ● ♥2")
    assert state["players"][1]["hand"] == [] and state["players"][1]["disqualified"]
    assert state["round"] == 1 and state["phase"] == "play"


# --------------------------------------------------------------------------- hints


def test_hint_after_the_10th_20th_and_30th_card() -> None:
    """R「それぞれ10枚目、20枚目、30枚目のカードが出された後、親プレイヤーはルールに関するヒントを
    出すことができる」; D one hint per threshold reached, usable later in the round."""
    state = begin()
    state["played"] = 9
    assert "10枚目" in rejected(state, 0, "HINT 色").message
    state["played"] = 10
    state, events = act(state, 0, "HINT 色に注目")
    assert events[0]["type"] == "hint" and "色に注目" in events[0]["text"]
    assert game.view(state, None)["hints"] == [{"played": 10, "text": "色に注目"}]
    assert "出したヒント 1 回" in rejected(state, 0, "HINT もう一つ").message
    state["played"] = 35  # 20th and 30th reached: two more
    state, _ = act(state, 0, "HINT 二つ目")
    state, _ = act(state, 0, "HINT 三つ目")
    assert game.view(state, None)["hints_left"] == 0
    with pytest.raises(RuleError):
        act(state, 0, "HINT 四つ目")


def test_hint_only_by_the_parent() -> None:
    state = begin()
    state["played"] = 10
    assert "親だけ" in rejected(state, 1, "HINT 色").message


def test_no_hint_when_a_prophet_exists_and_the_round_is_about_to_end() -> None:
    """R「但し預言者が存在していて間もなくラウンドが終了しそうな状態であればこの限りではない」;
    D about to end = a child still in the round holds 4 cards or fewer."""
    state = begin()
    state["played"] = 10
    rig_hand(state, 2, ["♠2", "♠3", "♠4", "♠5"])
    assert game.view(state, None)["hint_allowed"]  # no prophet yet
    state["players"][3]["prophet"] = True
    assert not game.view(state, None)["hint_allowed"]
    assert "間もなく" in rejected(state, 0, "HINT 色").message
    rig_hand(state, 2, ["♠2", "♠3", "♠4", "♠5", "♠6"])
    state, _ = act(state, 0, "HINT 色")


# --------------------------------------------------------------------------- round end


def test_round_ends_when_a_child_empties_the_hand() -> None:
    """R ラウンド終了条件「子プレイヤーの誰かの手札が無くなる」."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2"])
    state, events = act(state, 1, "PLAY ○ ♥2")
    assert state["round"] == 2 and state["phase"] == "rule"
    record = state["history"][0]
    assert record["ended_by"] == "emptied" and record["emptied"] == 1
    assert any(e["type"] == "round_end" for e in events)


def test_round_ends_when_all_children_are_disqualified() -> None:
    """R「全員の子プレイヤーが失格となる」."""
    state = begin()
    rig_line(state, ["♠Q"])
    state["players"][2]["disqualified"] = True
    state["players"][3]["disqualified"] = True
    rig_hand(state, 1, ["♥2", "♠9"])
    rig_deck(state, 0)
    state, _ = act(state, 1, "PLAY ● ♥2")
    assert state["history"][0]["ended_by"] == "all_disqualified"


def test_round_ends_by_agreement_gm_endround() -> None:
    """R「プレイヤー間の協議によるw」; I the GM posts ENDROUND. D a play being judged goes back
    to the hand, its judgments unseen."""
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)
    state = _prophet_after_turn(state, 2)
    rig_hand(state, 3, ["♦8", "♠9"])
    state, _ = act(state, 3, "PLAY ○ ♦8")
    state, _ = act(state, 1, "JUDGE ●")
    assert state["phase"] == "judge"
    assert "GM" in rejected(state, 1, "ENDROUND").message
    ended, events = act(state, "gm", "ENDROUND")
    assert ended["history"][0]["ended_by"] == "agreement"
    assert ended["history"][0]["hands"][3] == ["♠9", "♦8"]
    assert not any("●" in e["text"] for e in events)  # B's sealed ● stays unseen
    assert any(e["type"] == "play_withdrawn" for e in events)


def test_endround_before_the_rule_voids_the_round() -> None:
    """D: ENDROUND while no rule is sealed voids the round; nobody scores; next parent."""
    state = game.setup(NAMES[:4], {}, Rng("v", 0))
    state, events = act(state, "gm", "ENDROUND")
    assert state["round"] == 2 and state["parent"] == 1
    assert state["history"][0]["ended_by"] == "void"
    assert all(line["total"] == 0 for line in state["history"][0]["scores"])
    assert any(e["type"] == "round_void" for e in events)


def test_next_round_rotates_the_parent_and_deals_anew() -> None:
    """I: rounds rotate the parent (the next seat); all 104 cards are dealt again."""
    state = begin(players=4)
    state, events = act(state, "gm", "ENDROUND")
    assert state["parent"] == 1 and state["phase"] == "rule"
    assert len(state["deck"]) == 104 and state["line"] == []
    assert all(not p["prophet"] and not p["disqualified"] for p in state["players"])
    assert events[-1]["type"] == "round_next" and events[-1]["seat"] == 1
    state, _ = act(state, 1, "RULE card.face")
    assert hands(state) == [12, 0, 12, 12] and state["turn"] == 2


def test_game_over_after_the_last_round() -> None:
    state = begin(players=4, rounds=2)
    state, _ = act(state, "gm", "ENDROUND")
    state, _ = act(state, 1, f"RULE {ALTERNATE}")
    state, events = act(state, "gm", "ENDROUND")
    assert game.is_over(state) and game.turn_key(state) == "over"
    assert events[-1]["type"] == "game_over"
    assert game.waiting_for(state) == [] and game.legal(state, 0) == []
    assert "終了" in rejected(state, "gm", "ENDROUND").message
    result = game.result(state)
    assert result is not None and len(result.ranking) == 4


# --------------------------------------------------------------------------- scoring


def _scores(
    state: State, ended_by: str = "agreement", emptied: int | None = None
) -> list[dict[str, int]]:
    return round_scores(state, ended_by, emptied)


def test_score_child_minus_1_per_card_left() -> None:
    """R 子「残った手札1枚につき−1vpt」 (disqualified children too)."""
    state = begin()
    rig_hand(state, 1, ["♠2", "♠3", "♠4"])
    state["players"][2]["disqualified"] = True
    scores = _scores(state)
    assert [s["cards_left"] for s in scores] == [0, -3, -12, -12]
    assert scores[1]["total"] == -3


def test_score_child_plus_4_for_emptying_the_hand() -> None:
    """R 子「手札0で終了したプレイヤーに+4vpt」."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2"])
    state, _ = act(state, 1, "PLAY ○ ♥2")
    scores = state["history"][0]["scores"]
    assert scores[1]["emptied"] == 4 and scores[1]["total"] == 4
    assert scores[2]["emptied"] == 0


def test_score_prophet_plus_1_per_correct_judgment_at_most_5() -> None:
    """R「預言者になり他の子プレイヤーの出したカードを正しく判断した回数1回につき+1vpt(但し1ラウンド中
    Max5vptまで)」."""
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)
    rig_hand(state, 1, [])
    for turn in range(7):
        seat = state["turn"]
        if seat == 1:
            set_turn(state, 2)
            seat = 2
        prev = state["line"][-1]["card"]
        card = {"♠": "♥", "♣": "♥", "♥": "♠", "♦": "♠"}[prev[0]] + str(2 + turn)
        rig_hand(state, seat, [card, "♣K"])
        state, _ = act(state, seat, f"PLAY ○ {card}")
        state, _ = act(state, 1, "JUDGE ○")
    assert state["players"][1]["correct"] == 7
    assert _scores(state)[1]["prophet"] == 5


def test_score_prophet_failure_minus_5_and_points_reset() -> None:
    """R「預言者で預言失敗により失格した場合−5vpt(上項の予言成功で得た+ポイントも0リセット)」."""
    state = begin(players=5)
    state["players"][1].update(prophet=True, correct=3)
    assert _scores(state)[1]["prophet"] == 3
    state["players"][1].update(prophet_failed=True, disqualified=True)
    scores = _scores(state)
    assert scores[1]["prophet"] == 0 and scores[1]["prophet_failure"] == -5
    assert scores[1]["total"] == -5 - 12


def test_score_plus_2_for_the_play_that_disqualified_a_prophet() -> None:
    """R「他の預言者を失格させるカードを出した子プレイヤーに+2vpt」 (D: per prophet)."""
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)
    state = _prophet_after_turn(state, 2)
    rig_hand(state, 3, ["♦8", "♠9"])
    state, _ = act(state, 3, "PLAY ● ♦8")  # red after ♠3: the parent's judgment is ○
    state, _ = act(state, 1, "JUDGE ●")
    state, _ = act(state, 2, "JUDGE ●")
    assert state["players"][3]["caused"] == 2
    scores = _scores(state)
    assert scores[3]["caused_disqualification"] == 4
    assert scores[0]["parent_prophet_failures"] == 6


def test_score_parent_plus_4_when_a_prophet_empties_the_hand() -> None:
    """R 親「預言者となった子プレイヤーが手札を0にしてラウンドが終了した場合+4vpt」."""
    state = begin()
    rig_line(state, ["♠Q"])
    state = _prophet_after_turn(state, 1)
    rig_hand(state, 1, ["♠8"])
    set_turn(state, 1)
    state, _ = act(state, 1, "PLAY ○ ♠8")  # after ♥2
    scores = state["history"][0]["scores"]
    assert scores[0]["parent_emptied"] == 4 and scores[0]["parent"] == 4
    assert scores[1]["emptied"] == 4


def test_score_parent_plus_2_when_a_non_prophet_empties_the_hand() -> None:
    """R 親「預言者でない子プレイヤーが手札を0にしてラウンドが終了した場合+2vpt」."""
    state = begin()
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2"])
    state, _ = act(state, 1, "PLAY ○ ♥2")
    assert state["history"][0]["scores"][0]["parent_emptied"] == 2


def test_score_parent_plus_3_per_failed_prophet() -> None:
    """R 親「預言者が預言に失敗して失格した場合、1人につき+3vpt」."""
    state = begin(players=5)
    for seat in (1, 2, 3):
        state["players"][seat].update(prophet=True, prophet_failed=True, disqualified=True)
    assert _scores(state)[0]["parent_prophet_failures"] == 9


def test_score_parent_minus_fewest_hand_when_all_children_are_disqualified() -> None:
    """R 親「全員の子プレイヤーが失格でラウンドが終了となった場合、一番手札の枚数の少ない
    子プレイヤーの手札1枚につき−1vpt」."""
    state = begin()
    rig_hand(state, 1, ["♠2", "♠3", "♠4"])
    rig_hand(state, 2, ["♠5", "♠6", "♠7", "♠8", "♠9"])
    scores = _scores(state, "all_disqualified")
    assert scores[0]["parent_all_disqualified"] == -3
    assert scores[0]["total"] == -3
    assert _scores(state, "agreement")[0]["parent_all_disqualified"] == 0


def test_result_sums_rounds_and_ties_share_the_rank() -> None:
    """Scores add up over the rounds; the breakdown has every line and each round's total."""
    state = begin(players=4, rounds=2)
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2"])
    state, _ = act(state, 1, "PLAY ○ ♥2")  # B +4, A (parent) +2, C and D −12
    state, _ = act(state, 1, f"RULE {ALTERNATE}")
    state, _ = act(state, "gm", "ENDROUND")  # A, C, D −12; B (parent) 0
    result = game.result(state)
    assert result is not None
    by_name = {entry.name: entry for entry in result.ranking}
    assert by_name["B"].score == 4 and by_name["B"].rank == 1
    assert by_name["A"].score == 2 - 12
    assert by_name["C"].score == by_name["D"].score == -24
    assert by_name["C"].rank == by_name["D"].rank == 3
    assert by_name["A"].breakdown["round_1"] == 2 and by_name["A"].breakdown["round_2"] == -12
    assert by_name["A"].breakdown["parent_emptied"] == 2
    assert set(by_name["A"].breakdown) >= {
        "cards_left",
        "emptied",
        "prophet",
        "prophet_failure",
        "caused_disqualification",
        "parent",
        "total",
    }
    assert [p["score"] for p in state["players"]] == [by_name[n].score for n in NAMES[:4]]


# --------------------------------------------------------------------------- deadlines


def test_default_commands_play_the_first_card() -> None:
    """D: the rules know no pass; an absent child plays its first card declared ○."""
    state = begin()
    rig_hand(state, 1, ["♣5", "♠2"])
    assert game.default_commands(state, 1) == ["PLAY ○ ♠2"]
    assert game.default_commands(state, 2) == []
    act(state, 1, game.default_commands(state, 1)[0])


def test_default_commands_judge_takes_the_player_at_their_word() -> None:
    """D: an absent judge (parent of a hand-judged rule, prophet) judges as declared."""
    state = begin("赤黒交互", text=True)
    rig_hand(state, 1, ["♥2", "♠9"])
    state, _ = act(state, 1, "PLAY ● ♥2")
    assert game.default_commands(state, 0) == ["JUDGE ●"]
    state, _ = act(state, 0, "JUDGE ●")
    assert state["last_play"]["penalty"] == 0


def test_default_commands_none_for_the_parents_rule() -> None:
    """D: nobody can invent the parent's rule; the GM's ENDROUND voids the round instead."""
    state = game.setup(NAMES[:4], {}, Rng("d", 0))
    assert game.waiting_for(state) == [0]
    assert game.default_commands(state, 0) == []


def test_turn_key_changes_when_the_turn_moves() -> None:
    state = game.setup(NAMES[:4], {}, Rng("k", 0))
    keys = [game.turn_key(state)]
    state, _ = act(state, 0, f"RULE {ALTERNATE}")
    keys.append(game.turn_key(state))
    state, _ = act(state, 1, game.default_commands(state, 1)[0])
    keys.append(game.turn_key(state))
    state["players"][2]["prophet"] = False
    same = game.turn_key(state)
    assert len(set(keys)) == 3 and same == keys[-1]
