"""The rulebook's worked example (結論の具体的説明 (3) Aさんの例), reproduced move by move.

Aさんは役割カード2枚、イベントカード2枚、【予算・小】5枚、【予算・中】2枚を得てゲームを開始します。
第1ターン
 スタートフェイズ: Aさんはまず【予算・小】カードを1枚を『ストック場』に追加しました。
 アクションフェイズ: Aさんは【タイアップキャンペーン】を配置しました。
 スカウトフェイズ: (nothing)
 セットフェイズ: Aさんの『ストック場』には【役割】カードがありますが、コストが支払えないため、
   イベントカードを1枚引きます。
 エンドフェイズ: … 終了します。

The example does not say which role cards Aさん holds. Two 6s cost 6 + 2 = 8 each, more than
the five budget cards a week allow (予算・中 2 + 予算・小 3 = 7), which is why Aさん cannot pay.
"""

from __future__ import annotations

import pytest

from app.games.base import Rng, RuleError
from app.games.eitsuku import game
from app.games.eitsuku.cards import EVENT_DECK, MEDIUM, SMALL, is_role_card, role_deck_of
from app.games.eitsuku.events import EVENTS
from app.games.eitsuku.rules import card_census, full_census


def test_rulebook_example_a_week_1() -> None:
    """Aさんの例: start adds 予算・小, places タイアップキャンペーン, cannot pay for the role
    card so draws an event card, ends the week."""
    state = game.setup(["Aさん", "Bさん"], {}, Rng("example", 0))
    a = state["players"][0]
    # Aさん's two role cards are 役者6 and 脚本家6; the two event cards include
    # タイアップキャンペーン (cards swapped with the decks, so every card stays accounted for).
    for card in [c for c in a["stock"] if is_role_card(c) or c in EVENTS]:
        count = a["stock"].pop(card)
        deck = EVENT_DECK if card in EVENTS else role_deck_of(card)
        assert deck is not None
        state["decks"][deck].extend([card] * count)
    a["pending_choices"] = 0
    for card, deck in (
        ("役者6", "役者"),
        ("脚本家6", "脚本家"),
        ("タイアップキャンペーン", EVENT_DECK),
        ("電撃発表", EVENT_DECK),
    ):
        state["decks"][deck].remove(card)
        a["stock"][card] = 1
    assert card_census(state) == full_census(2)

    # スタートフェイズ: 予算・小 5 + 1 = 6, 予算・中 2 — the start phase ran with the deal.
    assert a["stock"][SMALL] == 6 and a["stock"][MEDIUM] == 2
    assert state["week"] == 1

    # アクションフェイズ: タイアップキャンペーン.
    state, events = game.apply(
        state, 0, game.parse("EVENT タイアップキャンペーン"), Rng("example", 1)
    )
    assert state["players"][0]["events"] == [{"name": "タイアップキャンペーン", "week": 1}]
    assert "タイアップキャンペーン" in events[0]["text"]

    # セットフェイズ: the role cards cannot be paid for ...
    legal = game.legal(state, 0)
    assert not any(line.startswith("SET") for line in legal)
    with pytest.raises(RuleError) as caught:
        game.apply(state, 0, game.parse("SET 主演 役者6"), Rng("example", 2))
    assert "コスト 8 を払えません" in caught.value.message
    assert "DRAW" in caught.value.legal
    # ... so Aさん draws an event card.
    events_in_stock = sum(n for c, n in state["players"][0]["stock"].items() if c in EVENTS)
    state, _ = game.apply(state, 0, game.parse("DRAW"), Rng("example", 3))
    after = sum(n for c, n in state["players"][0]["stock"].items() if c in EVENTS)
    assert after == events_in_stock + 1

    # エンドフェイズ: END; the week turns once Bさん ends too.
    state, _ = game.apply(state, 0, game.parse("END"), Rng("example", 4))
    assert game.waiting_for(state) == [1]
    state, _ = game.apply(state, 1, game.parse("END"), Rng("example", 5))
    assert state["week"] == 2
    assert state["players"][0]["stock"][SMALL] == 6  # nothing was spent
    assert state["players"][0]["stock"][MEDIUM] == 3  # week 2's start: 予算・小 pile is empty
    assert card_census(state) == full_census(2)
