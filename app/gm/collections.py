"""Collections of 掲示板進行カードゲーム cards (docs/cards.md "Collections"; R 通常カード
「f:規定枚数 ← 9」, マジックカード 「f:規定枚数 ← 3枚以下」, 「初期所持の通常カード」,
「イベントなどで配布される」): each account holds at most 9 normal and 3 magic cards — the
house's starter cards (``content/starter.toml``), its own cards once approved, and cards an
official hands out (``GIVE <player> <card>`` in the registry thread) — and a game's decks are
drawn from the collections its players held when it started.

The rows are `CardHolding`s, one per (user, card), kept when a card is released so that an
account gets its starter cards once. The starter cards are written at the account's first need
— its first registry command that touches its collection, or the start of a card game it plays
in — by an INSERT that skips a row already there (the unique constraint), so two first needs at
once give them once. Before that the account holds them all the same: reading a collection
shows them. The registry thread's commands change collections through `Hand` (app/gm/cards.py,
all or nothing); this module reads and writes the rows and never commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.db.models import CardHolding, CardVersion, User, utcnow
from app.errors import NotFound
from app.games.cardbattle.cards import HELD_LIMITS, MAX_COST
from app.games.cardbattle.content import starter_cards
from app.games.cardbattle.registry import name_key
from app.gm.submission import Refusal

__all__ = [
    "HOW",
    "HOW_JA",
    "KIND_JA",
    "STARTER_BY",
    "Hand",
    "Held",
    "approved_costs",
    "approved_kinds",
    "check_room",
    "collection",
    "counts",
    "ensure_starter",
    "game_collections",
    "give",
    "held_by",
    "own_card_joins",
    "release",
    "write_new",
]

HOW = ("starter", "own", "given")
HOW_JA = {"starter": "初期所持", "own": "自作（承認済み）", "given": "配布"}
KIND_JA = {"normal": "通常カード", "magic": "マジックカード"}
# Who gives the starter cards: the house (R 公式), as it authored them.
STARTER_BY = "公式"
DECK_CARDS = 3  # R f:デッキ = 通常カード3枚の組み合わせ


@dataclass
class Held:
    """A card a collection holds; ``row`` is None for one not written yet (a starter card of
    an account whose first need has not come, or a card this post gives)."""

    name: str
    kind: str
    how: str
    given_by: str
    obtained_at: datetime | None = None
    post_number: int | None = None
    row: CardHolding | None = None


def _rows(session: Session, user_id: int) -> list[CardHolding]:
    return list(
        session.scalars(
            select(CardHolding).where(CardHolding.user_id == user_id).order_by(CardHolding.id)
        )
    )


def _starter(kinds: Mapping[str, str]) -> list[Held]:
    return [
        Held(card.name, kinds.get(name_key(card.name), card.kind), "starter", STARTER_BY)
        for card in starter_cards()
    ]


def collection(session: Session, user_id: int, kinds: Mapping[str, str]) -> list[Held]:
    """The cards the account holds, in the order it got them: its rows not released, or the
    starter cards when it has no row yet. ``kinds``: name_key -> kind of the approved cards
    (`Hand.kinds`); a row of a card the registry no longer has approved is left out."""
    rows = _rows(session, user_id)
    if not rows:
        return _starter(kinds)
    return [
        Held(r.name, kinds[r.name_key], r.how, r.given_by, r.obtained_at, r.post_number, r)
        for r in rows
        if r.released_at is None and r.name_key in kinds
    ]


def _insert(session: Session, values: list[dict[str, Any]]) -> None:
    """Rows skipped when the user holds (or held) that card already: the unique constraint
    decides, so two transactions giving the starter cards at once give them once."""
    if not values:
        return
    table: Any = CardHolding.__table__
    if session.get_bind().dialect.name == "postgresql":
        statement: Any = postgresql.insert(table).on_conflict_do_nothing(
            index_elements=["user_id", "name_key"]
        )
    else:
        statement = sqlite.insert(table).on_conflict_do_nothing(
            index_elements=["user_id", "name_key"]
        )
    session.execute(statement, values)


def _values(user_id: int, held: Held, now: datetime) -> dict[str, Any]:
    return {
        "user_id": user_id,
        "name": held.name,
        "name_key": name_key(held.name),
        "how": held.how,
        "obtained_at": now,
        "given_by": held.given_by,
        "post_number": held.post_number,
        "released_at": None,
    }


def ensure_starter(session: Session, user_id: int, now: datetime | None = None) -> None:
    """The account's starter cards, written at its first need (an account with any row, a
    released one included, has had them); idempotent and safe against a concurrent one."""
    if session.scalar(select(CardHolding.id).where(CardHolding.user_id == user_id).limit(1)):
        return
    now = now or utcnow()
    _insert(session, [_values(user_id, held, now) for held in _starter({})])
    session.flush()


@dataclass
class Hand:
    """One account's collection as a registry post changes it (written by `write_new` only
    when every line of the post went through)."""

    user_id: int
    user_name: str
    held: list[Held]
    released: list[Held] = field(default_factory=list)
    # Rows of cards released earlier, by name_key: a card given again takes its row back.
    old: dict[str, CardHolding] = field(default_factory=dict)
    starter_new: bool = False  # the starter cards are not written yet

    @classmethod
    def load(cls, session: Session, user: User, kinds: Mapping[str, str]) -> Hand:
        rows = _rows(session, user.id)
        hand = cls(user.id, user.name, collection(session, user.id, kinds))
        hand.starter_new = not rows
        hand.old = {r.name_key: r for r in rows if r.released_at is not None}
        return hand

    def holds(self, name: str) -> Held | None:
        key = name_key(name)
        return next((h for h in self.held if name_key(h.name) == key), None)

    def count(self, kind: str) -> int:
        return sum(1 for h in self.held if h.kind == kind)

    def full(self, kind: str, waiting: int = 0) -> bool:
        """No room for one more card of ``kind``, with ``waiting`` places kept for the
        account's own new cards waiting for approval."""
        return self.count(kind) + waiting >= HELD_LIMITS[kind]

    def add(self, name: str, kind: str, how: str, by: str) -> None:
        key = name_key(name)
        again = next((h for h in self.released if name_key(h.name) == key), None)
        if again is not None:  # released by a line before: its row is taken back
            self.released.remove(again)
            if again.row is not None:
                self.old[key] = again.row
        self.held.append(Held(name, kind, how, by))

    def release(self, held: Held) -> None:
        self.held.remove(held)
        self.released.append(held)


def write_new(
    session: Session, hands: Iterable[Hand], now: datetime, post_number: int | None
) -> None:
    """What a registry post (number ``post_number``) did to the collections: the starter
    cards of an account at its first need, the cards given, the cards released."""
    for hand in hands:
        values = []
        for held in hand.held:
            if held.row is not None:
                continue
            if held.how != "starter":
                held.post_number = post_number
            old = hand.old.get(name_key(held.name))
            if old is not None:  # released earlier, given again
                old.name, old.how, old.given_by = held.name, held.how, held.given_by
                old.obtained_at, old.post_number, old.released_at = now, held.post_number, None
                continue
            values.append(_values(hand.user_id, held, now))
        for held in hand.released:
            if held.row is not None:
                held.row.released_at = now
            else:  # a starter card released before it was written: written as released
                row = _values(hand.user_id, held, now)
                row["released_at"] = now
                values.append(row)
        _insert(session, values)
    session.flush()


def game_collections(
    session: Session, seats: Iterable[tuple[int | None, str]], pool: Mapping[str, Any]
) -> dict[str, list[str]]:
    """Each seated account's collection as a card game's option ``collections`` (player name
    -> the names of the game's pool it holds), taken when the game starts: the starter cards
    are written then if they were not (the first need). A seat without an account (a bot's)
    is left out: it may use the whole pool. A card held but not in the game's pool (approved
    or given after the game was made) is not in the game."""
    if not pool:  # no pool of the registry's: the game's own starter pool, for everyone
        return {}
    by_key = {name_key(name): name for name in pool}
    kinds = {name_key(name): str(card.get("kind", "")) for name, card in pool.items()}
    found: dict[str, list[str]] = {}
    for user_id, player in seats:
        if user_id is None:
            continue
        ensure_starter(session, user_id)
        held = collection(session, user_id, kinds)
        found[player] = [by_key[k] for h in held if (k := name_key(h.name)) in by_key]
    return found


def approved_kinds(session: Session) -> dict[str, str]:
    """name_key -> kind of every card with an approved version."""
    approved = select(CardVersion.name_key, CardVersion.kind).where(
        CardVersion.status == "approved"
    )
    return {key: kind for key, kind in session.execute(approved)}


def approved_costs(session: Session) -> dict[str, int]:
    """name_key -> the cost of every card's newest approved version."""
    approved = (
        select(CardVersion.name_key, CardVersion.cost)
        .where(CardVersion.status == "approved")
        .order_by(CardVersion.version)
    )
    return {key: cost for key, cost in session.execute(approved)}  # the newest last


def held_by(session: Session, user_name: str) -> tuple[User, list[Held]]:
    """The account called ``user_name`` and its collection (its starter cards before its first
    need); raises NotFound for a name no account has."""
    # PostgreSQL takes no NUL in text; no account is named so.
    found = user_name and "\x00" not in user_name
    user = session.scalar(select(User).where(User.name == user_name)) if found else None
    if user is None:
        raise NotFound(f"利用者「{user_name.replace(chr(0), '')}」はいません。")
    return user, collection(session, user.id, approved_kinds(session))


# --- what the registry's lines do to a collection (app/gm/cards.py checks who may) --------------


def counts(hand: Hand) -> str:
    """``通常カード 6/9枚、マジックカード 1/3枚``."""
    return "、".join(
        f"{KIND_JA[kind]} {hand.count(kind)}/{limit}枚" for kind, limit in HELD_LIMITS.items()
    )


def check_room(hand: Hand, kind: str, waiting: int, *, own: bool) -> None:
    """Refused (``Refusal``) when ``hand`` has no place left for a card of ``kind``, with
    ``waiting`` places kept for its own new cards waiting for approval. ``own``: the poster's
    own collection (a new card), else a player an official gives a card to."""
    if not hand.full(kind, waiting):
        return
    who = "あなた" if own else f"{hand.user_name}さん"
    also = f"（ほかに承認待ちの提案が{waiting}枚）" if waiting else ""
    then = (
        "承認されたカードはコレクションに入るので、先に RELEASE <カード>（手放す）で1枚"
        "手放してください。"
        if own
        else f"{hand.user_name}さんが RELEASE <カード>（手放す）で1枚手放してから配ってください。"
    )
    raise Refusal(
        f"{who}のコレクションの{KIND_JA[kind]}は{hand.count(kind)}枚{also}で、"
        f"上限の{HELD_LIMITS[kind]}枚です。{then}"
    )


def own_card_joins(hand: Hand, name: str, kind: str, judge: str) -> str:
    """An approved new card joins its author's collection; a full one is said, not changed
    (the approval stands: the card is in the pool)."""
    if hand.holds(name) is not None:
        return ""
    if hand.full(kind):
        return (
            f"{hand.user_name}さんのコレクションは{KIND_JA[kind]}が{HELD_LIMITS[kind]}枚で満杯な"
            "ので、コレクションには入りませんでした（手放したあと、公式が GIVE で配れます）。"
        )
    hand.add(name, kind, "own", judge)
    return f"{hand.user_name}さんのコレクションに入りました（{counts(hand)}）。"


def give(hand: Hand, name: str, kind: str, waiting: int, by: str) -> str:
    """GIVE: the card joins ``hand`` — refused when it holds the card already (a card is held
    once) or has no place left."""
    if hand.holds(name) is not None:
        raise Refusal(
            f"{hand.user_name}さんはもう「{name}」を持っています（同じカードは1枚までです）。"
        )
    check_room(hand, kind, waiting, own=False)
    hand.add(name, kind, "given", by)
    return f"「{name}」を{hand.user_name}さんに配りました（{counts(hand)}）。"


def release(hand: Hand, name: str, cost: Callable[[str], int]) -> str:
    """RELEASE: the card leaves ``hand`` — refused when it is not there, or when the normal
    cards left would make no deck (3 cards within the initial cost)."""
    held = hand.holds(name)
    if held is None:
        raise Refusal(f"「{name}」はあなたのコレクションにありません。")
    if held.kind == "normal":
        left = sorted(cost(h.name) for h in hand.held if h.kind == "normal" and h is not held)
        if len(left) < DECK_CARDS or sum(left[:DECK_CARDS]) > MAX_COST:
            raise Refusal(
                f"「{held.name}」を手放すと、残りの通常カードでデッキ（{DECK_CARDS}枚、"
                f"コスト合計{MAX_COST}以内）が組めなくなります。"
            )
    hand.release(held)
    return f"「{held.name}」を手放しました（{counts(hand)}）。"
