"""The card registry over HTTP (docs/cards.md): cards proposed by post in the registry thread,
judged by site admins, the pool at GET /api/cards, each card's history, promotion of a card used
in a game, and the pages. Plus the service: seeding a fresh database, the game's pool snapshot.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.db.models import CardVersion, Game, Thread, User
from app.forum import service as forum
from app.forum.moderation import set_admin
from app.games.cardbattle.registry import name_key
from app.gm import cards
from app.gm import service as gm
from tests.conftest import ApiUser, api_user
from tests.test_i18n import JAPANESE, japanese_outside

NEW_LINE = "CARD NEW {name} COST 300 ATK 200 DUR 300 ABILITY 登場時 ダメージ 100"
# The names this module made up: their cards leave the registry after each test, so the pool
# other modules' games get is the starter pool again (create_game copies the whole pool).
MADE_UP: list[str] = []


def card_name(prefix: str = "剣") -> str:
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    MADE_UP.append(name)
    return name


@pytest.fixture(autouse=True)
def forget_made_up_cards(database: Database) -> Iterator[None]:
    yield
    with database.session() as session:
        keys = [name_key(name) for name in MADE_UP]
        for row in session.scalars(select(CardVersion).where(CardVersion.name_key.in_(keys))):
            session.delete(row)
        session.commit()
    MADE_UP.clear()


def registry_id(client: httpx.Client) -> int:
    thread_id = client.get("/api/cards").json()["registry_thread_id"]
    assert isinstance(thread_id, int)
    return thread_id


def say(user: ApiUser, body: str) -> dict[str, Any]:
    """Post ``body`` in the registry thread; the bot's reply."""
    reply = user.post(f"/api/threads/{registry_id(user.client)}/posts", {"body": body})
    assert reply.status_code == 201, reply.text
    answer = reply.json()
    assert answer["post"]["kind"] == "command", answer
    assert len(answer["replies"]) == 1, answer
    bot: dict[str, Any] = answer["replies"][0]
    assert bot["kind"] == "gm" and bot["author"] == gm.BOT_NAME
    assert bot["body"].startswith(f">>{answer['post']['number']}")
    assert bot["number"] == answer["post"]["number"] + 1
    return bot


def pool(client: httpx.Client, **params: Any) -> dict[str, dict[str, Any]]:
    answer = client.get("/api/cards", params=params)
    assert answer.status_code == 200, answer.text
    return {card["name"]: card for card in answer.json()["cards"]}


def versions(client: httpx.Client, name: str) -> list[dict[str, Any]]:
    answer = client.get(f"/api/cards/{name}")
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["versions"]
    return found


@pytest.fixture
def admin(client: httpx.Client, database: Database) -> ApiUser:
    official = api_user(client)
    with database.session() as session:
        set_admin(session, official.name, True)
        session.commit()
    return official


@pytest.fixture
def approved(alice: ApiUser, admin: ApiUser) -> str:
    """A normal card of alice's, approved."""
    name = card_name()
    assert say(alice, NEW_LINE.format(name=name))["ok"]
    assert say(admin, f"APPROVE {name}")["ok"]
    return name


@pytest.fixture
def played(database: Database, client: httpx.Client) -> Iterator[Any]:
    """Puts a card into a running cardbattle game: the field of a dealt deck, as the engine
    keeps it (players[i].field[j].name), and the game's pool naming the version it got. The
    game is removed afterwards (it has no moves to replay, which `bbsgm check` would report)."""
    made: list[int] = []

    def play(name: str, version: int, status: str = "active") -> int:
        with database.session() as session:
            owner = session.scalar(select(User).order_by(User.id).limit(1))
            assert owner is not None
            board = forum.get_board(session, "lobby")
            thread, _ = forum.create_thread(session, board, owner, "カード対戦", "卓", "s")
            card = {"name": name, "attack": 200, "durability": 300, "left": 300}
            game = Game(
                kind=cards.CARD_GAME_KIND,
                title="カード対戦",
                status=status,
                thread_id=thread.id,
                gm_id=owner.id,
                seed=secrets.token_hex(8),
                options={"pool": {name: {"name": name, "version": version}}},
                state={
                    "players": [
                        {"name": "A", "field": [card], "magic": [], "magic_used": []},
                        {"name": "B", "field": [], "magic": [], "magic_used": []},
                    ]
                },
            )
            session.add(game)
            session.commit()
            made.append(game.id)
            return game.id

    yield play
    with database.session() as session:
        for game_id in made:
            found = session.get(Game, game_id)
            if found is not None:
                session.delete(found)
        session.commit()


# --- the pool ---------------------------------------------------------------------------------


def test_the_starter_pool_is_there_as_approved_version_1(client: httpx.Client) -> None:
    answer = client.get("/api/cards").json()
    assert set(answer) >= {"cards", "registry_thread_id"}
    shown = {card["name"]: card for card in answer["cards"]}
    for card in cards.starter_pool():
        entry = shown[card.name]
        assert entry["version"] == 1 and entry["author"] == cards.OFFICIAL
        assert entry["kind"] == card.kind and entry["cost"] == card.cost
        assert entry["attack"] == card.attack and entry["durability"] == card.durability
        assert [(a["effect"], a["amount"], a["timing"]) for a in entry["abilities"]] == [
            (a.effect, a.amount, a.timing) for a in card.abilities
        ]
    assert set(shown[cards.starter_pool()[0].name]) >= {
        "name",
        "kind",
        "cost",
        "attack",
        "durability",
        "abilities",
        "version",
    }
    history = versions(client, cards.starter_pool()[0].name)
    assert [(v["version"], v["status"], v["decided_by"]) for v in history] == [
        (1, "approved", cards.OFFICIAL)
    ]


def test_the_registry_thread_is_on_its_own_board(client: httpx.Client) -> None:
    thread_id = registry_id(client)
    thread = client.get(f"/api/threads/{thread_id}").json()
    assert thread["thread"]["board"] == "cards"
    assert thread["thread"]["title"] == cards.REGISTRY_TITLE
    first = thread["posts"][0]
    assert first["number"] == 1 and first["author"] == gm.BOT_NAME and first["kind"] == "gm"
    assert "CARD NEW" in first["body"] and "APPROVE" in first["body"]
    boards = {b["slug"]: b for b in client.get("/api/boards").json()}
    assert boards["cards"]["title"] == "カード登録"


def test_the_pool_filters_by_kind_and_cost(client: httpx.Client) -> None:
    everything = pool(client)
    magic = pool(client, kind="magic")
    normal = pool(client, kind="normal")
    assert magic and normal
    assert set(magic) | set(normal) == set(everything)
    assert all(card["kind"] == "magic" for card in magic.values())
    assert all(card["attack"] == 0 and card["durability"] == 0 for card in magic.values())
    cheap = pool(client, max_cost=200)
    assert all(card["cost"] <= 200 for card in cheap.values())
    assert set(cheap) == {n for n, c in everything.items() if c["cost"] <= 200}
    dear = pool(client, min_cost=300, max_cost=400)
    assert set(dear) == {n for n, c in everything.items() if 300 <= c["cost"] <= 400}
    assert client.get("/api/cards", params={"kind": "token"}).status_code == 422
    assert client.get("/api/cards", params={"max_cost": "-1"}).status_code == 422
    unknown = client.get(f"/api/cards/{card_name('無')}")
    assert unknown.status_code == 404 and "カード「無" in unknown.json()["detail"]


# --- proposing and judging ------------------------------------------------------------------


def test_a_proposed_card_joins_the_pool_only_when_an_admin_approves(
    client: httpx.Client, alice: ApiUser, bob: ApiUser, admin: ApiUser
) -> None:
    name = card_name()
    proposed = say(alice, f"提案です\n{NEW_LINE.format(name=name)}\nよろしく")
    assert proposed["ok"] and proposed["error"] is None
    assert f"新しいカード「{name}」を受け付けました（版1・承認待ち）" in proposed["body"]
    assert f"APPROVE {name}" in proposed["body"]
    assert name not in pool(client)
    [first] = versions(client, name)
    assert first["status"] == "proposed" and first["author"] == alice.name
    assert first["post_number"] == proposed["reply_to"] and first["decided_by"] is None

    refused = say(bob, f"APPROVE {name}")
    assert not refused["ok"]
    assert refused["error"]["line"] == 1 and refused["error"]["column"] is None
    assert "公式（サイトの管理者）だけ" in refused["error"]["message"]
    assert "カード登録所は変わっていません" in refused["body"]
    assert name not in pool(client)
    assert [v["status"] for v in versions(client, name)] == ["proposed"]
    assert not say(alice, f"承認 {name}")["ok"]  # not even its author

    done = say(admin, f"承認 {name}")
    assert done["ok"] and "カードプールに入りました" in done["body"]
    card = pool(client)[name]
    assert (card["kind"], card["cost"], card["attack"], card["durability"]) == (
        "normal",
        300,
        200,
        300,
    )
    assert card["abilities"] == [
        {"effect": "damage", "amount": 100, "timing": "entry", "text": "登場時 ダメージ 100"}
    ]
    assert card["version"] == 1 and card["author"] == alice.name
    [judged] = versions(client, name)
    assert judged["status"] == "approved" and judged["decided_by"] == admin.name
    assert judged["decided_post_number"] == done["reply_to"] and judged["decided_at"]
    again = say(admin, f"APPROVE {name}")
    assert not again["ok"] and "承認待ちの版はありません" in again["error"]["message"]


def test_reject_with_a_reason_and_the_name_is_free_again(
    client: httpx.Client, alice: ApiUser, bob: ApiUser, admin: ApiUser
) -> None:
    name = card_name("盾")
    assert say(alice, f"CARD NEW {name} MAGIC COST 200 ABILITY 全体ダメージ 100")["ok"]
    assert not say(bob, f"REJECT {name} 気に入らない")["ok"]
    rejected = say(admin, f"却下 {name} 全体ダメージ 100 はコスト 200 には強すぎます")
    assert rejected["ok"]
    assert "理由: 全体ダメージ 100 はコスト 200 には強すぎます" in rejected["body"]
    [version] = versions(client, name)
    assert version["status"] == "rejected"
    assert version["reason"] == "全体ダメージ 100 はコスト 200 には強すぎます"
    assert name not in pool(client)
    retry = say(bob, f"CARD NEW {name} MAGIC COST 300 ABILITY 全体ダメージ 100")
    assert retry["ok"] and "版2・承認待ち" in retry["body"]
    assert [(v["version"], v["status"], v["author"]) for v in versions(client, name)] == [
        (1, "rejected", alice.name),
        (2, "proposed", bob.name),
    ]


def test_a_bad_line_gets_its_line_column_and_reason_and_nothing_is_recorded(
    client: httpx.Client, alice: ApiUser
) -> None:
    name, other = card_name(), card_name()
    line = f"CARD NEW {other} COST 300 ATK abc DUR 300"
    bad = say(alice, f"二枚提案します\n{NEW_LINE.format(name=name)}\n{line}")
    assert not bad["ok"]
    assert bad["error"]["line"] == 3
    assert bad["error"]["column"] == line.index("abc") + 1
    assert bad["error"]["message"] == "ATK の後には攻撃力を数字で書いてください(例: ATK 200)。"
    assert "3行目の命令は受け付けられませんでした" in bad["body"] and "▶abc◀" in bad["body"]
    # All or nothing: the good line 2 was not recorded either.
    assert client.get(f"/api/cards/{name}").status_code == 404

    too_dear = say(alice, f"CARD NEW {name} COST 1200 ATK 200 DUR 300")
    assert not too_dear["ok"]
    assert too_dear["error"]["column"] == len(f"CARD NEW {name} COST ") + 1
    assert too_dear["error"]["message"] == "コストは 0〜1000 です（1200 は書けません）。"
    misspelt = say(alice, f"APROVE {name}")
    assert not misspelt["ok"] and "もしかして APPROVE" in misspelt["error"]["message"]
    assert client.get(f"/api/cards/{name}").status_code == 404


def test_new_is_refused_for_a_name_taken_by_an_approved_or_proposed_card(
    client: httpx.Client, alice: ApiUser, bob: ApiUser
) -> None:
    starter = cards.starter_pool()[0].name
    taken = say(bob, NEW_LINE.format(name=starter))
    assert not taken["ok"] and "もうあります（版1・承認済み）" in taken["error"]["message"]
    name = card_name("MAKI")
    assert say(alice, NEW_LINE.format(name=name))["ok"]
    again = say(bob, NEW_LINE.format(name=name.lower()))  # the same name in other letters
    assert not again["ok"] and "承認待ち" in again["error"]["message"]
    twice = say(bob, f"{NEW_LINE.format(name=card_name())}\n{NEW_LINE.format(name=name)}")
    assert not twice["ok"] and twice["error"]["line"] == 2
    assert [v["author"] for v in versions(client, name)] == [alice.name]


def test_an_admin_may_propose_and_approve_in_one_post(client: httpx.Client, admin: ApiUser) -> None:
    name = card_name()
    both = say(admin, f"{NEW_LINE.format(name=name)}\nAPPROVE {name}")
    assert both["ok"]
    assert pool(client)[name]["version"] == 1
    [version] = versions(client, name)
    assert version["status"] == "approved" and version["decided_by"] == admin.name


def test_talk_in_the_registry_and_commands_elsewhere_get_no_reply(
    client: httpx.Client, alice: ApiUser
) -> None:
    talk = alice.post(f"/api/threads/{registry_id(client)}/posts", {"body": "Card games are fun"})
    assert talk.status_code == 201 and talk.json()["replies"] == []
    own = alice.post(
        "/api/boards/cards/threads", {"title": "カード談義", "body": "好きなカードは？"}
    ).json()
    line = NEW_LINE.format(name=card_name())
    elsewhere = alice.post(f"/api/threads/{own['id']}/posts", {"body": line})
    assert elsewhere.status_code == 201 and elsewhere.json()["replies"] == []
    assert registry_id(client) != own["id"]


# --- promotion --------------------------------------------------------------------------------


def test_promote_is_refused_for_a_card_no_game_used(
    client: httpx.Client, alice: ApiUser, approved: str
) -> None:
    line = f"CARD PROMOTE {approved} COST 300 ATK 250 DUR 300"
    refused = say(alice, line)
    assert not refused["ok"] and "まだどのゲームでも使われていません" in refused["error"]["message"]
    assert [v["version"] for v in versions(client, approved)] == [1]
    unknown = say(alice, f"CARD PROMOTE {card_name()} COST 300 ATK 250 DUR 300")
    assert not unknown["ok"] and "というカードはありません" in unknown["error"]["message"]


def test_promotion_of_a_used_card_keeps_every_version(
    client: httpx.Client, alice: ApiUser, bob: ApiUser, admin: ApiUser, approved: str, played: Any
) -> None:
    game_id = played(approved, 1)
    line = f"CARD PROMOTE {approved} COST 350 ATK 250 DUR 320 ABILITY 登場時 ダメージ 120"
    assert not say(bob, line)["ok"]  # not the author's
    as_magic = say(alice, f"CARD PROMOTE {approved} MAGIC COST 100 ABILITY 回復 10")
    assert not as_magic["ok"] and "種類は変えられません" in as_magic["error"]["message"]

    promoted = say(alice, line)
    assert promoted["ok"] and "版2・承認待ち" in promoted["body"]
    assert pool(client)[approved]["version"] == 1  # until the admin approves
    waiting = say(alice, line)
    assert not waiting["ok"] and "承認待ちの版2" in waiting["error"]["message"]

    done = say(admin, f"APPROVE {approved}")
    assert done["ok"] and "版1から版2" in done["body"]
    card = pool(client)[approved]
    assert (card["version"], card["cost"], card["attack"], card["durability"]) == (2, 350, 250, 320)
    history = client.get(f"/api/cards/{approved}").json()
    assert [(v["version"], v["status"], v["attack"]) for v in history["versions"]] == [
        (1, "approved", 200),
        (2, "approved", 250),
    ]
    assert history["current"] == 2
    assert history["games"] == [
        {"id": game_id, "title": "カード対戦", "status": "active", "version": 1}
    ]


def test_an_aborted_game_or_a_hidden_card_does_not_count_as_use(
    database: Database, alice: ApiUser, approved: str, played: Any
) -> None:
    played(approved, 1, status="aborted")
    line = f"CARD PROMOTE {approved} COST 350 ATK 250 DUR 320"
    assert not say(alice, line)["ok"]
    with database.session() as session:
        state = {"players": [{"field": [], "magic": [approved], "magic_used": []}]}
        assert cards.deck_cards(state) == set()  # undeclared magic: not used, even once shown
        assert cards.deck_cards({"decks": {"A": [approved]}}) == {approved}
        assert cards.used_in_games(session, approved) == []


# --- pages ------------------------------------------------------------------------------------


def test_the_card_pages_list_the_pool_and_a_card_s_history(
    client: httpx.Client, alice: ApiUser, admin: ApiUser, approved: str, played: Any
) -> None:
    listing = client.get("/cards")
    assert listing.status_code == 200
    assert f'data-card="{approved}"' in listing.text
    assert f'href="/threads/{registry_id(client)}"' in listing.text
    magic = client.get("/cards", params={"kind": "magic"}).text
    assert f'data-card="{approved}"' not in magic and 'data-kind="normal"' not in magic
    cheap = client.get("/cards", params={"max_cost": "100"}).text
    assert f'data-card="{approved}"' not in cheap
    assert client.get("/cards", params={"max_cost": "abc"}).status_code == 422
    assert client.get("/cards", params={"kind": "x"}).status_code == 422

    game_id = played(approved, 1)
    assert say(alice, f"CARD PROMOTE {approved} COST 300 ATK 230 DUR 300")["ok"]
    page = client.get(f"/cards/{approved}")
    assert page.status_code == 200
    assert 'data-version="1" data-status="approved"' in page.text
    assert 'data-version="2" data-status="proposed"' in page.text
    assert f'href="/games/{game_id}"' in page.text
    assert "登場時 ダメージ 100" in page.text and alice.name in page.text
    assert client.get(f"/cards/{card_name('無')}").status_code == 404
    assert 'href="/cards"' in client.get("/").text  # the header links the list


def test_the_card_pages_in_english(client: httpx.Client, settings: Settings, approved: str) -> None:
    """Card names, their texts and abilities are game terms; the rest is in English."""
    starter = [card.name for card in cards.starter_pool()]
    terms = [*starter, approved, cards.OFFICIAL, settings.site_name]
    terms += [text for card in pool(client).values() for text in (card["name"], card["text"])]
    terms += [a["text"] for card in pool(client).values() for a in card["abilities"]]
    for path in ("/cards", f"/cards/{approved}", "/cards?max_cost=abc"):
        page = client.get(path, params={"lang": "en"})
        assert '<html lang="en">' in page.text
        left = japanese_outside(page.text, terms)
        assert not left, f"{path}: Japanese left:\n" + "\n".join(left)
    assert "Cards" in client.get("/cards", params={"lang": "en"}).text
    assert JAPANESE.search(client.get("/cards", params={"lang": "ja"}).text)


# --- the service: a fresh database, and the game's pool ---------------------------------------


def test_a_fresh_database_gets_the_registry_and_the_starter_pool_once(
    tmp_path: Path, settings: Settings
) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    fresh = Database(url)
    try:
        migrate.upgrade(settings.model_copy(update={"database_url": url}), fresh.engine)
        for _ in range(2):  # idempotent: start-up runs it every time
            with fresh.session() as session:
                gm.ensure_game_boards(session, "k")
                session.commit()
        with fresh.session() as session:
            assert set(cards.pool(session)) == {card.name for card in cards.starter_pool()}
            assert all(card.version == 1 for card in cards.pool(session).values())
            count = session.scalar(select(func.count()).select_from(CardVersion))
            assert count == len(cards.starter_pool())
            threads = session.scalars(
                select(Thread).where(Thread.board_id == forum.get_board(session, "cards").id)
            ).all()
            assert [t.title for t in threads] == [cards.REGISTRY_TITLE]
            assert forum.get_board(session, "cards").thread_count == 1
            assert threads[0].post_count == 1
    finally:
        fresh.dispose()


class PoolOptions(BaseModel):
    pool: dict[str, Any] = {}


def test_a_game_of_a_registry_kind_gets_the_pool_in_its_options(
    session: Session, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """create_game: the approved pool, each card with its version, whatever the creator sent."""
    real = gm.game_impl("eitsuku")
    fake = type(real)()
    fake.uses_card_registry = True
    fake.Options = PoolOptions
    monkeypatch.setattr(gm, "find_game", lambda kind: fake)
    game = gm.create_game(
        session, user, "eitsuku", "卓", {"pool": {"偽物": {"cost": 0}}}, secret="s"
    )
    assert game.options["pool"] == cards.pool_options(session)
    assert "偽物" not in game.options["pool"]
    first = cards.starter_pool()[0]
    assert game.options["pool"][first.name]["version"] == 1
    assert game.options["pool"][first.name]["cost"] == first.cost
    monkeypatch.undo()
    plain = gm.create_game(session, user, "eitsuku", "卓", {}, secret="s")  # the real eitsuku
    assert "pool" not in plain.options
