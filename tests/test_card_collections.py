"""Collections over HTTP (docs/cards.md "Collections", docs/rules/cardbattle.md): R 通常カード
「f:規定枚数 ← 9」, マジックカード 「f:規定枚数 ← 3枚以下」, 「初期所持の通常カード」,
「イベントなどで配布される」 — each account holds at most 9 normal and 3 magic cards: the
starter cards, its own approved cards, the cards an official GIVEs; RELEASE lets one go; a deck
is drawn from the collection its player held when the game started."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text

from app.db.engine import Database
from app.db.models import CardHolding, CardVersion, User
from app.forum.moderation import set_admin
from app.games.cardbattle.content import starter_cards
from app.games.cardbattle.registry import name_key
from app.gm import collections
from tests.conftest import ApiUser, api_user
from tests.test_card_registry import say

STARTER = [card.name for card in starter_cards()]
STARTER_NORMAL = [card.name for card in starter_cards() if card.kind == "normal"]
# Starter-pool cards no starter hand holds, to give.
GIFTS_NORMAL = ["赤竜", "士翼号", "狂戦士", "岩の巨人"]
GIFTS_MAGIC = ["火の玉", "雷鳴", "吹雪"]
MADE_UP: list[str] = []


@pytest.fixture(autouse=True)
def forget_made_up_cards(database: Database) -> Iterator[None]:
    yield
    with database.session() as session:
        keys = [name_key(name) for name in MADE_UP]
        for row in session.scalars(select(CardVersion).where(CardVersion.name_key.in_(keys))):
            session.delete(row)
        session.commit()
    MADE_UP.clear()


@pytest.fixture
def admin(client: httpx.Client, database: Database) -> ApiUser:
    official = api_user(client)
    with database.session() as session:
        set_admin(session, official.name, True)
        session.commit()
    return official


def held(client: httpx.Client, name: str) -> dict[str, dict[str, Any]]:
    answer = client.get(f"/api/cards/collections/{name}")
    assert answer.status_code == 200, answer.text
    return {card["name"]: card for card in answer.json()["cards"]}


def rows(database: Database, name: str) -> list[tuple[str, str, bool]]:
    with database.session() as session:
        user_id = session.scalar(select(User.id).where(User.name == name))
        found = session.execute(
            select(CardHolding.name, CardHolding.how, CardHolding.released_at.is_(None))
            .where(CardHolding.user_id == user_id)
            .order_by(CardHolding.id)
        )
        return [(n, how, active) for n, how, active in found]


def new_card(prefix: str = "剣") -> str:
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    MADE_UP.append(name)
    return name


# --- 初期所持の通常カード -------------------------------------------------------------------------


def test_初期所持の通常カード_a_new_account_holds_the_starter_cards_given_once(
    client: httpx.Client, database: Database, alice: ApiUser, admin: ApiUser
) -> None:
    """R 「初期所持の通常カード」 (舞踏子, ホープ): a new account holds the starter cards before
    any need; they are written once, at its first need, and never given again."""
    before = held(client, alice.name)
    assert list(before) == STARTER and {"舞踏子", "ホープ", "MAKI"} <= set(before)
    assert all(c["how"] == "starter" and c["obtained_at"] is None for c in before.values())
    assert rows(database, alice.name) == []  # nothing written by reading

    given = say(admin, f"GIVE {alice.name} 赤竜")  # the first need: a card given
    assert given["ok"], given
    assert rows(database, alice.name) == [
        *[(name, "starter", True) for name in STARTER],
        ("赤竜", "given", True),
    ]
    with database.session() as session:  # a second first need changes nothing
        user_id = session.scalar(select(User.id).where(User.name == alice.name))
        assert user_id is not None
        collections.ensure_starter(session, user_id)
        session.commit()
    assert len(rows(database, alice.name)) == len(STARTER) + 1

    assert say(alice, "RELEASE 歩兵")["ok"]
    with database.session() as session:
        collections.ensure_starter(session, user_id)
        session.commit()
    after = held(client, alice.name)
    assert "歩兵" not in after and "赤竜" in after  # released stays released
    assert after["赤竜"]["how"] == "given" and after["赤竜"]["given_by"] == admin.name

    # A starter card added to the list later (here: a row gone, as if 舞踏子 had not been in
    # it) is not given to an account that had its starter cards.
    with database.session() as session:
        row = session.scalar(
            select(CardHolding).where(
                CardHolding.user_id == user_id, CardHolding.name_key == name_key("舞踏子")
            )
        )
        session.delete(row)
        session.commit()
        collections.ensure_starter(session, user_id)
        session.commit()
    assert "舞踏子" not in held(client, alice.name)


def test_初期所持の通常カード_are_written_when_a_card_game_starts(
    client: httpx.Client, database: Database
) -> None:
    """The start of a card game is a first need: its players' starter cards are written, and
    the game's options name the collections its decks are drawn from."""
    master, a, b = api_user(client), api_user(client), api_user(client)
    made = master.post("/api/games", {"kind": "cardbattle", "title": "初期", "options": {}})
    game = made.json()
    tid = game["thread_id"]
    for user in (a, b):
        assert user.post(f"/api/threads/{tid}/posts", {"body": "JOIN"}).json()["replies"][0]["ok"]
    assert rows(database, a.name) == []
    assert master.post(f"/api/threads/{tid}/posts", {"body": "START"}).json()["replies"][0]["ok"]
    assert [n for n, how, _ in rows(database, a.name) if how == "starter"] == STARTER
    assert [n for n, _how, _ in rows(database, b.name)] == STARTER


# --- 規定枚数 -----------------------------------------------------------------------------------


def test_規定枚数_9_a_collection_holds_at_most_9_normal_cards(
    client: httpx.Client, database: Database, alice: ApiUser, admin: ApiUser
) -> None:
    """R 通常カード 「f:規定枚数 ← 9」: GIVE to a collection of 9 normal cards is refused, says
    what to do, and the whole post changes nothing."""
    room = 9 - len(STARTER_NORMAL)
    lines = "\n".join(f"GIVE {alice.name} {name}" for name in GIFTS_NORMAL[:room])
    assert say(admin, lines)["ok"]
    assert sum(1 for c in held(client, alice.name).values() if c["kind"] == "normal") == 9

    before = rows(database, alice.name)
    refused = say(admin, f"GIVE {alice.name} 火の玉\nGIVE {alice.name} {GIFTS_NORMAL[room]}")
    assert not refused["ok"]
    assert refused["error"]["line"] == 2
    message = refused["error"]["message"]
    assert "通常カードは9枚" in message and "上限の9枚" in message and "RELEASE" in message
    assert rows(database, alice.name) == before  # not even the magic card of line 1

    # A new card keeps a place in its author's collection: a full one proposes none.
    name = new_card()
    full = say(alice, f"CARD NEW {name} COST 300 ATK 61 DUR 333")
    assert not full["ok"] and "上限の9枚" in full["error"]["message"]
    assert client.get(f"/api/cards/{name}").status_code == 404


def test_3枚以下_a_collection_holds_at_most_3_magic_cards(
    client: httpx.Client, alice: ApiUser, admin: ApiUser
) -> None:
    """R マジックカード 「f:規定枚数 ← 3枚以下」."""
    magic = [c for c in held(client, alice.name).values() if c["kind"] == "magic"]
    room = 3 - len(magic)
    assert say(admin, "\n".join(f"配布 {alice.name} {m}" for m in GIFTS_MAGIC[:room]))["ok"]
    refused = say(admin, f"GIVE {alice.name} {GIFTS_MAGIC[room]}")
    assert not refused["ok"]
    assert "マジックカードは3枚" in refused["error"]["message"]
    assert GIFTS_MAGIC[room] not in held(client, alice.name)
    # Released, there is room again.
    assert say(alice, f"手放す {GIFTS_MAGIC[0]}")["ok"]
    assert say(admin, f"GIVE {alice.name} {GIFTS_MAGIC[room]}")["ok"]


def test_規定枚数_an_approved_card_joins_its_authors_collection_and_keeps_its_place_meanwhile(
    client: httpx.Client, alice: ApiUser, admin: ApiUser
) -> None:
    """The author's own card joins the collection when approved; while it waits it keeps a
    place, so GIVE cannot fill the collection under it."""
    room = 9 - len(STARTER_NORMAL)
    assert say(admin, "\n".join(f"GIVE {alice.name} {n}" for n in GIFTS_NORMAL[: room - 1]))["ok"]
    name = new_card()
    assert say(alice, f"CARD NEW {name} COST 300 ATK 61 DUR 333")["ok"]  # the 9th place
    refused = say(admin, f"GIVE {alice.name} {GIFTS_NORMAL[room - 1]}")
    assert not refused["ok"]
    assert "承認待ちの提案が1枚" in refused["error"]["message"]
    approved = say(admin, f"APPROVE {name}")
    assert approved["ok"] and f"{alice.name}さんのコレクションに入りました" in approved["body"]
    mine = held(client, alice.name)[name]
    assert (mine["how"], mine["given_by"], mine["post_number"]) == (
        "own",
        admin.name,
        approved["number"] - 1,
    )
    # The same card cannot be held twice.
    again = say(admin, f"GIVE {alice.name} {name}")
    assert not again["ok"] and "もう" in again["error"]["message"]


# --- 配布 ---------------------------------------------------------------------------------------


def test_配布_only_officials_give_and_unknown_players_or_cards_are_refused(
    client: httpx.Client, database: Database, alice: ApiUser, bob: ApiUser, admin: ApiUser
) -> None:
    """R 「イベントなどで配布される」: GIVE is an official's (a site admin's), like APPROVE."""
    not_admin = say(bob, f"GIVE {alice.name} 赤竜")
    assert not not_admin["ok"] and "公式（サイトの管理者）だけ" in not_admin["error"]["message"]
    nobody = say(admin, f"GIVE nobody{uuid.uuid4().hex[:8]} 赤竜")
    assert not nobody["ok"] and "という利用者はいません" in nobody["error"]["message"]
    missing = say(admin, f"GIVE {alice.name} 存在しない{uuid.uuid4().hex[:6]}")
    assert not missing["ok"] and "というカードはありません" in missing["error"]["message"]
    waiting = new_card()
    assert say(bob, f"CARD NEW {waiting} COST 300 ATK 62 DUR 333")["ok"]
    unapproved = say(admin, f"GIVE {alice.name} {waiting}")
    assert not unapproved["ok"] and "まだ承認されていません" in unapproved["error"]["message"]
    starter = say(admin, f"GIVE {alice.name} 舞踏子")
    assert not starter["ok"] and "もう「舞踏子」を持っています" in starter["error"]["message"]
    assert rows(database, alice.name) == []  # no refused line was a need

    done = say(admin, f"配布 {alice.name} 雷鳴\nGIVE {alice.name} 赤竜")
    assert done["ok"] and "「赤竜」を" in done["body"] and "通常カード 7/9枚" in done["body"]


def test_release_refuses_a_card_not_held_or_one_the_last_deck_needs(
    client: httpx.Client, alice: ApiUser
) -> None:
    """RELEASE (手放す) lets a held card go; a card not held, or one without which no deck of
    three normal cards within 1,000 is left, is refused."""
    not_mine = say(alice, "RELEASE 赤竜")
    assert not not_mine["ok"] and "あなたのコレクションにありません" in not_mine["error"]["message"]
    keep = len(STARTER_NORMAL) - 3
    lines = "\n".join(f"RELEASE {n}" for n in STARTER_NORMAL[-keep:])
    assert say(alice, lines)["ok"]
    last = say(alice, f"RELEASE {STARTER_NORMAL[0]}")
    assert not last["ok"] and "デッキ" in last["error"]["message"]
    assert len([c for c in held(client, alice.name).values() if c["kind"] == "normal"]) == 3


def test_a_collection_of_a_name_no_account_has_is_404(client: httpx.Client) -> None:
    for name in (f"nobody{uuid.uuid4().hex[:8]}", "a%00b", "a/b"):
        answer = client.get(f"/api/cards/collections/{name}")
        assert answer.status_code == 404, (name, answer.text)
        assert "いません" in str(answer.json()["detail"])


# --- a deck from the collection ------------------------------------------------------------------


def _started(client: httpx.Client, players: list[ApiUser]) -> int:
    master = api_user(client)
    made = master.post("/api/games", {"kind": "cardbattle", "title": "所持", "options": {}})
    assert made.status_code == 201, made.text
    game = made.json()
    for user in players:
        joined = user.post(f"/api/threads/{game['thread_id']}/posts", {"body": "参加"})
        assert joined.json()["replies"][0]["ok"]
    started = master.post(f"/api/threads/{game['thread_id']}/posts", {"body": "開始"})
    assert started.json()["replies"][0]["ok"]
    gid: int = game["id"]
    return gid


def seal(user: ApiUser, gid: int, deck: str) -> dict[str, Any]:
    answer = user.post(f"/api/games/{gid}/sealed", {"body": deck})
    assert answer.status_code in (200, 201), answer.text
    sealed: dict[str, Any] = answer.json()["sealed"]
    return sealed


def test_規定枚数_a_deck_is_drawn_from_the_collection_held_at_start(
    client: httpx.Client, database: Database, alice: ApiUser, bob: ApiUser, admin: ApiUser
) -> None:
    """A deck naming a card its player does not hold is refused with the card's name; so is
    one holding a card twice (a collection holds a card once); a card given after the start
    is not in that game."""
    assert say(admin, f"GIVE {alice.name} 赤竜")["ok"]
    gid = _started(client, [alice, bob])
    assert say(admin, f"GIVE {bob.name} 士翼号")["ok"]  # after the start: not in this game

    not_held = seal(bob, gid, "DECK 赤竜 歩兵 弓兵")
    assert not not_held["ok"] and "赤竜 はあなたのコレクションにありません" in not_held["reply"]
    later = seal(bob, gid, "DECK 士翼号 歩兵 弓兵")
    assert not later["ok"] and "士翼号 はあなたのコレクションにありません" in later["reply"]
    magic = seal(bob, gid, "DECK 歩兵 弓兵 MAKI MAGIC 雷鳴")
    assert not magic["ok"] and "雷鳴 はあなたのコレクションにありません" in magic["reply"]
    twice = seal(alice, gid, "DECK 舞踏子 舞踏子 ホープ")
    assert not twice["ok"] and "舞踏子 が2枚あります" in twice["reply"]

    assert seal(alice, gid, "DECK 赤竜 歩兵 弓兵 MAGIC 火花")["ok"]
    assert seal(bob, gid, "DECK 舞踏子 ホープ MAKI")["ok"]
    view = client.get(f"/api/games/{gid}").json()["view"]
    assert [c["name"] for c in view["players"][0]["field"]] == ["赤竜", "歩兵", "弓兵"]


def test_初期所持の通常カード_two_first_needs_at_once_give_them_once(
    database: Database, settings: Any
) -> None:
    """PostgreSQL: two transactions give one account its starter cards at once (a START and
    a registry post): the second waits for the first's rows and skips them, nothing fails."""
    if not settings.database_url.startswith("postgresql"):
        pytest.skip("concurrent transactions: PostgreSQL's")
    with database.session() as session:
        user = User(name=f"race{uuid.uuid4().hex[:8]}", password_hash="-")
        session.add(user)
        session.commit()
        user_id = user.id
    first, second = database.sessionmaker(), database.sessionmaker()
    try:
        collections.ensure_starter(first, user_id)  # written, not committed
        second_pid = second.scalar(text("SELECT pg_backend_pid()"))
        failed: list[BaseException] = []

        def give() -> None:
            try:
                collections.ensure_starter(second, user_id)
                second.commit()
            except BaseException as error:  # reported by the test below
                failed.append(error)

        racer = threading.Thread(target=give)
        racer.start()
        deadline = time.monotonic() + 30
        waiting = text(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = :pid AND wait_event_type = 'Lock'"
        )
        with database.engine.connect() as watch:
            while not watch.execute(waiting, {"pid": second_pid}).scalar_one():
                assert time.monotonic() < deadline and racer.is_alive(), failed
                time.sleep(0.01)
        first.commit()
        racer.join(30)
        assert not racer.is_alive() and failed == []
    finally:
        first.close()
        second.close()
    with database.session() as session:
        names = session.scalars(select(CardHolding.name).where(CardHolding.user_id == user_id))
        assert sorted(names) == sorted(STARTER)
