"""Issue 43, refusals that teach: a refusal's reason is one sentence naming what the player
wrote that is at fault — the card, the number, the square or space — and, where it helps, what
there is instead; never a hidden card (docs/gm.md, "A refusal teaches"). Each kind is refused
at a real point of a scripted game (tests/support/fuzz_states.py), then once through the thread.
"""

from __future__ import annotations

import copy
import re
from functools import cache

import pytest
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.games import find_game
from app.games.base import Actor, Rng, RuleError, State
from app.gm import service as gm
from tests.conftest import unique_name
from tests.support.fuzz_states import PLAYERS, Script, Table, script

SECRET = "refusals-secret"


@cache
def _script(kind: str) -> Script:
    return script(kind, [f"p{i}" for i in range(PLAYERS[kind])])


def at(kind: str, label: str) -> State:
    """A copy of the state of ``kind``'s scripted game at the stop ``label``."""
    return copy.deepcopy(_script(kind).stop(label).state)


def one_sentence(message: str) -> bool:
    """One sentence: a single 。, at the end, once what is in parentheses is set aside."""
    outside = message
    while True:
        inner = re.sub(r"\([^()]*\)|（[^（）]*）|「[^「」]*」", "", outside)
        if inner == outside:
            break
        outside = inner
    return outside.count("。") == 1 and outside.endswith("。")


def refusal(kind: str, state: State, seat: Actor, line: str, *, sealed: bool = False) -> str:
    """The reason ``line`` by ``seat`` is refused; it must be one sentence."""
    impl = find_game(kind)
    assert impl is not None
    with pytest.raises(RuleError) as caught:
        impl.apply(state, seat, impl.parse(line), Rng(SECRET, 1), sealed=sealed)
    message = caught.value.message
    assert one_sentence(message), message
    return message


def test_one_sentence_sets_aside_what_is_in_parentheses() -> None:
    assert one_sentence("2枚は捨てられません(捨てられるのはあと1枚。繁栄のアクション)。")
    assert not one_sentence("2枚は捨てられません。捨てられるのはあと1枚です。")
    assert not one_sentence("2枚は捨てられません")


# --- えいつく ----------------------------------------------------------------------------


def test_えいつく_a_payment_of_too_many_budget_cards_names_how_many_were_written() -> None:
    """R 2−2: 5 budget cards a week; the refusal says the 6 written, not only the rule."""
    state = at("eitsuku", "第1週の始め")
    message = refusal("eitsuku", state, 0, "BUY 中 WITH 小 小 小 小 小 小")
    assert "予算カード 6 枚は使えません" in message and "1週に5枚まで" in message


def test_えいつく_an_empty_deck_is_named_with_the_decks_that_are_left() -> None:
    """A deck's size is public (docs/rules/eitsuku.md); the decks with cards left are listed."""
    state = at("eitsuku", "第1週の始め")
    state["decks"]["役者"] = []
    message = refusal("eitsuku", state, 0, "SCOUT 役者")
    assert message.startswith("役者の山はもう残っていません")
    assert "残っている山: 脚本家・音楽家・演出家" in message
    chosen = refusal("eitsuku", state, 1, "CHOOSE 役者")
    assert chosen.startswith("役者の山は残っていない") and "脚本家・音楽家・演出家" in chosen


# --- ポピュラス ---------------------------------------------------------------------------


def test_ポピュラス_a_catastrophe_names_the_wrath_paid_and_held() -> None:
    state = at("populous", "神の怒りか配置を待つ手番の途中")
    assert "神の怒り2個ではできません" in refusal("populous", state, 0, "WRATH 2 RING 海")
    short = refusal("populous", state, 0, "WRATH 4 SQUARE 45a RING 海")
    assert "神の怒り4個には足りません" in short and "持っているのは1個" in short


def test_ポピュラス_a_step_already_past_is_named_with_what_to_write_next() -> None:
    state = at("populous", "神の怒りか配置を待つ手番の途中")
    message = refusal("populous", state, 0, "AREA 1 2")
    assert message.startswith("エリア選択はもう終わっています(次: ") and "PLACE" in message


def test_ポピュラス_a_square_chosen_twice_is_named() -> None:
    state = at("populous", "神の怒りか配置を待つ手番の途中")
    state["players"][0]["res"]["神の怒り"] = 6
    message = refusal("populous", state, 0, "WRATH 5 SQUARE 45b 45b RING 海")
    assert message.startswith("45bを2回選んでいます")


def test_ポピュラス_too_many_workers_names_the_number_written() -> None:
    state = at("populous", "神の怒りか配置を待つ手番の途中")
    message = refusal("populous", state, 0, "PLACE 45c 45c 45c 45c 45c")
    assert message.startswith("ワーカー5個は置けません") and "4個まで" in message


def test_ポピュラス_a_discard_names_the_cards_written_against_the_ones_allowed() -> None:
    state = at("populous", "啓示の移動か捨て札を待つ手番の途中")
    message = refusal("populous", state, 1, "DISCARD 労働 労働")
    assert message.startswith("2枚は捨てられません") and "あと1枚" in message


def test_ポピュラス_a_discard_of_several_cards_does_not_tell_which_is_not_in_the_hand() -> None:
    """The hand is secret and DISCARD is answered in the thread: naming the missing one of
    several written would tell everyone a card of it; one card written may be named."""
    state = at("populous", "啓示の移動か捨て札を待つ手番の途中")
    state["t"]["discards"] = 2
    assert sorted(state["players"][1]["hand"]) == ["労働", "労働", "繁栄"]
    message = refusal("populous", state, 1, "DISCARD 繁栄 奇跡")
    assert message.startswith("繁栄 奇跡 のうち手札にないカードがあります")
    assert "あなたの手元" in message
    assert refusal("populous", state, 1, "DISCARD 繁栄 繁栄").startswith("繁栄 繁栄 のうち")
    assert refusal("populous", state, 1, "DISCARD 奇跡").startswith("奇跡 を持っていません")


def test_ポピュラス_a_cube_split_names_the_slot_over_6() -> None:
    """CUBES is sealed: its refusal is its author's alone."""
    state = at("populous", "リソースの配分待ち")
    message = refusal("populous", state, 1, "CUBES 情熱 7 食料 0 信仰 0", sealed=True)
    assert message.startswith("情熱に7個は置けません") and "6個まで" in message


# --- アイマス × ワーカープレイスメント ---------------------------------------------------


def test_アイマス_vo_on_a_space_that_is_not_a_lesson_names_the_space() -> None:
    state = at("idolwp", "第1ラウンド")
    message = refusal("idolwp", state, 2, "MOVE 真 D1 VO")
    assert message.startswith("D1 はレッスンのマスではない")


# --- 掲示板進行カードゲーム --------------------------------------------------------------


def test_カードゲーム_an_attacker_sent_twice_is_named_by_number_and_card() -> None:
    state = at("cardbattle", "攻撃待ち")
    attacker = state["players"][1]["field"][0]["name"]
    message = refusal("cardbattle", state, 1, "ATTACK 1>1 1>2")
    assert message.startswith(f"1番 {attacker} を2回攻撃させています")


def test_カードゲーム_a_deck_names_the_card_in_the_wrong_place() -> None:
    """DECK is sealed until both decks are in: these refusals are the author's alone."""
    state = at("cardbattle", "デッキ封印待ち")
    twice = refusal(
        "cardbattle", state, 0, "DECK 士翼号 ホープ 見習い騎士 MAGIC 火花 火花", sealed=True
    )
    assert twice.startswith("火花 が2枚あります")
    magic = refusal("cardbattle", state, 0, "DECK 士翼号 ホープ 火花", sealed=True)
    assert magic.startswith("火花 はマジックカードなので")
    normal = refusal(
        "cardbattle", state, 0, "DECK 士翼号 ホープ 見習い騎士 MAGIC 赤竜", sealed=True
    )
    assert normal.startswith("赤竜 は通常カードなので")
    assert not any("R " in text for text in (twice, magic, normal))


# --- in the thread ------------------------------------------------------------------------


def test_in_the_thread_the_reason_follows_the_marked_line_and_names_no_card_of_the_hand(
    session: Session,
) -> None:
    """The reply: which line, the line with the word at fault marked, the reason naming what
    was written, the lines legal now — and no line naming a card of the (secret) hand."""
    names = [unique_name("p")[:10] for _ in range(PLAYERS["populous"])]
    played = script("populous", names)
    master = accounts.register(session, unique_name("m")[:10], "password123")
    players = [accounts.register(session, name, "password123") for name in names]
    table = Table(session, played, master, players, SECRET)
    table.advance(played.stop("啓示の移動か捨て札を待つ手番の途中"))
    state = table.game.state
    assert state is not None
    seat = state["turn"]
    hand = state["players"][seat]["hand"]
    written = hand[0]
    _mine, replies = gm.submit_post(
        session, table.game.thread_id, players[seat], f"DISCARD {written} {written}", SECRET
    )
    body = replies[-1].body
    lines = body.split("\n")
    marked = next(i for i, line in enumerate(lines) if line.startswith("　") and "DISCARD" in line)
    assert lines[marked + 1] == "2枚は捨てられません(捨てられるのはあと1枚)。"
    others = [card for card in hand if card != written]
    assert not any(f"DISCARD {card}" in body for card in others), body


@pytest.mark.parametrize(
    ("kind", "line"),
    [("eitsuku", "SET 主演 役者1"), ("populous", "AREA 2 4"), ("cardbattle", "ATTACK 1>2")],
)
def test_the_platforms_refusals_of_who_and_where_are_one_sentence(kind: str, line: str) -> None:
    """A player's command from the GM, a public command sealed, a secret one posted: one
    sentence each, the way out (AS, the thread, the seal) in it."""
    impl = find_game(kind)
    assert impl is not None
    stop = next(s for s in _script(kind).stops if s.state and not impl.is_over(s.state))
    state = copy.deepcopy(stop.state)
    assert "AS <名前> <命令>" in refusal(kind, state, "gm", line)
    command = impl.parse(line)
    for message in (
        impl.must_be_public_message(state, command),
        impl.must_be_sealed_message(state, command),
    ):
        assert one_sentence(message), message
