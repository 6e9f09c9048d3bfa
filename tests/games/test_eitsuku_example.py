"""The rulebook's worked example (結論の具体的説明 (3) Aさんの例), reproduced move by move.

 Aさんは役割カード2枚、イベントカード2枚、【予算・小】5枚、【予算・中】2枚を得てゲームを開始します。
 これらのカードはすべて『ストック場』に公開して置かれます。
 第1ターン
 スタートフェイズ:Aさんはまず【予算・小】カードを1枚を『ストック場』に追加しました。
 アクションフェイズ:Aさんは【タイアップキャンペーン】を配置しました。最終ターン
 スカウトフェイズ:Aさんは
 セットフェイズ:Aさんの『ストック場』には【役割】カードがありますが、コストが支払えないため、
 イベントカードを1枚引きます。
 エンドフェイズ:Aさんの予算計上場には2枚の【予算・小】カードが残っているため、これを
 『ストック場』に戻して終了します。

The scout sentence stops at 「Aさんは」 and the example never names the role cards; the
予算計上場 appears nowhere else in the rulebook. I (docs/rules/eitsuku.md, "The rulebook's
worked example"): the 予算計上場 holds the budget cards flipped (裏返し) in the scout phase —
counted in the week's five, unusable as payment, back in the stock at the end of the week.
For two 予算・小 to lie there at the end phase, the scout phase must have flipped them: with
Aさん's 予算・小 ×6 and 予算・中 ×2 the only exact payment of a version-5 price (0 / 3 / 6) that
holds two 予算・小 is `BUY 大 WITH 予算・中 予算・中 予算・小 予算・小`. It leaves one card of the
week's five, so the role cards cannot be paid for (R「『裏返し』にしたものと『捨て札場』を合わせて
5枚まで」), which is the set-phase sentence; Aさん draws an event card instead.
"""

from __future__ import annotations

import pytest

from app.games.base import Rng, RuleError
from app.games.eitsuku import game
from app.games.eitsuku.cards import EVENT_DECK, LARGE, MEDIUM, SMALL, is_role_card, role_deck_of
from app.games.eitsuku.events import EVENTS
from app.games.eitsuku.rules import card_census, full_census


def _a_starts() -> dict[str, object]:
    """Setup for Aさん and Bさん; Aさん's role cards are 役者3 and 脚本家4, the event cards
    タイアップキャンペーン and 電撃発表 (swapped with the decks, so every card stays counted)."""
    state = game.setup(["Aさん", "Bさん"], {}, Rng("example", 0))
    a = state["players"][0]
    for card in [c for c in a["stock"] if is_role_card(c) or c in EVENTS]:
        count = a["stock"].pop(card)
        deck = EVENT_DECK if card in EVENTS else role_deck_of(card)
        assert deck is not None
        state["decks"][deck].extend([card] * count)
    a["pending_choices"] = 0
    for card, deck in (
        ("役者3", "役者"),
        ("脚本家4", "脚本家"),
        ("タイアップキャンペーン", EVENT_DECK),
        ("電撃発表", EVENT_DECK),
    ):
        state["decks"][deck].remove(card)
        a["stock"][card] = 1
    assert card_census(state) == full_census(2)
    return state


def test_rulebook_example_a_week_1_yosan_keijoba_two_small_back_to_stock() -> None:
    """Aさんの例, week 1, ending in 「Aさんの予算計上場には2枚の【予算・小】カードが残っている
    ため、これを『ストック場』に戻して終了します」."""
    state = _a_starts()

    # 「【予算・小】5枚、【予算・中】2枚を得てゲームを開始します」 and the start phase's
    # 「【予算・小】カードを1枚を『ストック場』に追加しました」: 5 + 1 予算・小.
    a = state["players"][0]
    assert a["stock"][SMALL] == 5 + 1 and a["stock"][MEDIUM] == 2
    assert state["week"] == 1

    # アクションフェイズ: 「【タイアップキャンペーン】を配置しました」.
    state, events = game.apply(
        state, 0, game.parse("EVENT タイアップキャンペーン"), Rng("example", 1)
    )
    assert state["players"][0]["events"] == [{"name": "タイアップキャンペーン", "week": 1}]
    assert "タイアップキャンペーン" in events[0]["text"]

    # スカウトフェイズ: 「Aさんは」 — two 予算・小 (and two 予算・中) go to the 予算計上場.
    state, _ = game.apply(
        state, 0, game.parse("BUY 大 WITH 予算・中 予算・中 予算・小 予算・小"), Rng("example", 2)
    )
    a = state["players"][0]
    assert a["flipped"] == {SMALL: 2, MEDIUM: 2}
    assert a["stock"][SMALL] == 4 and MEDIUM not in a["stock"] and a["stock"][LARGE] == 1
    assert a["budget_used"] == 4

    # セットフェイズ: 「【役割】カードがありますが、コストが支払えないため」 — the stock is worth
    # 7 face up, but one card of the week's five is left ...
    legal = game.legal(state, 0)
    assert not any(line.startswith("SET") for line in legal)
    for line, cost in (("SET 主演 役者3", 5), ("SET 脚本家 脚本家4", 6)):
        with pytest.raises(RuleError) as caught:
            game.apply(state, 0, game.parse(line), Rng("example", 3))
        assert f"コスト {cost} を払えません" in caught.value.message
        assert "あと 1 枚" in caught.value.message
        assert "DRAW" in caught.value.legal
    # ... 「イベントカードを1枚引きます」.
    events_in_stock = sum(n for c, n in state["players"][0]["stock"].items() if c in EVENTS)
    state, _ = game.apply(state, 0, game.parse("DRAW"), Rng("example", 4))
    after = sum(n for c, n in state["players"][0]["stock"].items() if c in EVENTS)
    assert after == events_in_stock + 1

    # エンドフェイズ: 「Aさんの予算計上場には2枚の【予算・小】カードが残っている」 ...
    assert state["players"][0]["flipped"][SMALL] == 2
    state, _ = game.apply(state, 0, game.parse("END"), Rng("example", 5))
    assert game.waiting_for(state) == [1]
    state, _ = game.apply(state, 1, game.parse("END"), Rng("example", 6))
    # ... 「これを『ストック場』に戻して終了します」 when the week ends.
    a = state["players"][0]
    assert a["flipped"] == {}
    assert state["week"] == 2
    # 4 face up + 2 back from the 予算計上場 + week 2's start phase (the 予算・小 pile lasts).
    assert a["stock"][SMALL] == 4 + 2 + 1
    assert a["stock"][MEDIUM] == 2 and a["stock"][LARGE] == 1
    assert card_census(state) == full_census(2)
