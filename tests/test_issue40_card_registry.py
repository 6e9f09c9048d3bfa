"""The card registry, issue 40: 「初期配布されるカードと異なるステータスの組み合わせを持つカードを
作成する行為」 — a copy of a starter card is refused in the registry thread, as a new card and as
a promotion (docs/rules/cardbattle.md, Cards)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import select

from app.db.engine import Database
from app.db.models import Game, User
from app.forum import service as forum
from app.gm import cards
from tests.conftest import ApiUser
from tests.test_card_registry import (
    admin,
    approved,
    card_name,
    forget_made_up_cards,
    played,
    say,
)

# The registry module's fixtures, used here too.
__all__ = ["admin", "approved", "forget_made_up_cards", "played"]


def test_a_new_card_equal_to_a_starter_card_is_refused_in_the_registry(alice: ApiUser) -> None:
    """R カード作成: CARD NEW with 歩兵's cost, attack and durability (and no ability) is refused
    with the starter card's name; one point of attack more is accepted."""
    refused = say(alice, f"CARD NEW {card_name()} COST 150 ATK 40 DUR 280")
    assert not refused["ok"] and "「歩兵」" in refused["body"]
    accepted = say(alice, f"CARD NEW {card_name()} COST 150 ATK 41 DUR 280")
    assert accepted["ok"]


def test_a_promotion_equal_to_a_starter_card_is_refused_in_the_registry(
    alice: ApiUser, approved: str, played: Any
) -> None:
    """R カード作成 (a promotion rewrites a card: a カード作成行為 too): CARD PROMOTE to 弓兵's
    stats and ability is refused, though the card was used in a game."""
    played(approved, 1)
    line = f"CARD PROMOTE {approved} COST 180 ATK 45 DUR 230 ABILITY 登場時 ダメージ 60"
    refused = say(alice, line)
    assert not refused["ok"] and "「弓兵」" in refused["body"]


@pytest.fixture
def magic_in_a_finished_game(
    database: Database, alice: ApiUser, admin: ApiUser
) -> Iterator[Callable[[bool], str]]:
    """An approved magic card of alice's, in the deck of a finished cardbattle game: declared
    (``magic_used``) or sealed and never declared (``magic``, which the epilogue shows)."""
    made: list[int] = []

    def finished(declared: bool) -> str:
        name = card_name("魔")
        assert say(alice, f"CARD NEW {name} MAGIC COST 50 ABILITY 回復 10")["ok"]
        assert say(admin, f"APPROVE {name}")["ok"]
        hand = (
            {"magic": [], "magic_used": [name]} if declared else {"magic": [name], "magic_used": []}
        )
        with database.session() as session:
            owner = session.scalar(select(User).order_by(User.id).limit(1))
            assert owner is not None
            board = forum.get_board(session, "lobby")
            thread, _ = forum.create_thread(session, board, owner, "カード対戦", "卓", "s")
            game = Game(
                kind=cards.CARD_GAME_KIND,
                title="カード対戦",
                status="finished",
                thread_id=thread.id,
                gm_id=owner.id,
                seed=secrets.token_hex(8),
                options={"pool": {name: {"name": name, "version": 1}}},
                state={"players": [{"name": "A", "field": [], **hand}]},
            )
            session.add(game)
            session.commit()
            made.append(game.id)
        return name

    yield finished
    with database.session() as session:
        for game_id in made:
            found = session.get(Game, game_id)
            if found is not None:
                session.delete(found)
        session.commit()


def test_a_magic_card_sealed_but_never_declared_has_not_been_used(
    alice: ApiUser, magic_in_a_finished_game: Callable[[bool], str]
) -> None:
    """R プロモーション 「一度でもゲーム中に使用したことがある」: a magic card is used by declaring
    it; one sealed in a finished game's deck and never declared (shown only by the epilogue)
    was not, so it may not be promoted yet; a declared one may."""
    sealed = magic_in_a_finished_game(False)
    refused = say(alice, f"CARD PROMOTE {sealed} MAGIC COST 40 ABILITY 回復 10")
    assert not refused["ok"] and "使われていません" in refused["body"]
    declared = magic_in_a_finished_game(True)
    assert say(alice, f"CARD PROMOTE {declared} MAGIC COST 40 ABILITY 回復 10")["ok"]
