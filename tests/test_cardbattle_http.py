"""掲示板進行カードゲーム end to end over HTTP (the issue's "done when"): two new users each
register a card in the registry thread, an admin approves both, they build decks with them,
seal the decks and fight a battle to its result by post; the game's record names the versions
it was played with, and the picture follows."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select

from app.db.engine import Database
from app.db.models import CardVersion
from app.forum.moderation import set_admin
from app.games.cardbattle.registry import name_key
from tests.conftest import ApiUser, api_user


@pytest.fixture
def made_up(database: Database) -> Iterator[list[str]]:
    """Names of cards this test registers: removed afterwards, so other modules' games get the
    starter pool again (a game copies the whole pool when it is made)."""
    names: list[str] = []
    yield names
    with database.session() as session:
        keys = [name_key(name) for name in names]
        for row in session.scalars(select(CardVersion).where(CardVersion.name_key.in_(keys))):
            session.delete(row)
        session.commit()


def registry(user: ApiUser, body: str) -> dict[str, object]:
    thread_id = user.client.get("/api/cards").json()["registry_thread_id"]
    answer = user.post(f"/api/threads/{thread_id}/posts", {"body": body}).json()
    reply: dict[str, object] = answer["replies"][0]
    return reply


def test_two_new_users_register_cards_and_fight_a_battle_to_its_result_by_post(
    client: httpx.Client, database: Database, made_up: list[str]
) -> None:
    official = api_user(client)
    with database.session() as session:
        set_admin(session, official.name, True)
        session.commit()
    players = [api_user(client), api_user(client)]
    mine = [f"剣士{uuid.uuid4().hex[:6]}", f"魔女{uuid.uuid4().hex[:6]}"]
    made_up.extend(mine)
    lines = [
        f"CARD NEW {mine[0]} COST 300 ATK 60 DUR 400 ABILITY 登場時 ダメージ 80",
        f"カード 新規 {mine[1]} コスト 300 攻撃 55 耐久 420 能力 手番開始時 回復 100",
    ]
    for user, line, name in zip(players, lines, mine, strict=True):
        assert registry(user, line)["ok"]
        assert name not in {card["name"] for card in client.get("/api/cards").json()["cards"]}
        refused = registry(players[1 - players.index(user)], f"APPROVE {name}")
        assert not refused["ok"]  # only site admins approve
        assert registry(official, f"承認 {name}")["ok"]
    pool = {card["name"]: card for card in client.get("/api/cards").json()["cards"]}
    assert all(name in pool for name in mine)
    # A deck is drawn from its player's collection (docs/cards.md "Collections"): the starter
    # cards, their own card once approved, and what an official hands out.
    gift = registry(official, f"GIVE {players[1].name} 吏族\n配布 {players[1].name} 癒しの雨")
    assert gift["ok"], gift

    master = api_user(client)
    made = master.post("/api/games", {"kind": "cardbattle", "title": "決闘", "options": {}})
    assert made.status_code == 201, made.text
    game = made.json()
    gid, tid = game["id"], game["thread_id"]
    for user in players:
        assert user.post(f"/api/threads/{tid}/posts", {"body": "参加"}).json()["replies"][0]["ok"]
    started = master.post(f"/api/threads/{tid}/posts", {"body": "開始"}).json()["replies"][0]
    # D: the dice and who moves first are told at START, before the decks.
    assert started["ok"] and "先攻" in started["body"] and "ダイス" in started["body"]
    decks = [
        f"DECK {mine[0]} 歩兵 見習い騎士 MAGIC 火花",
        f"デッキ {mine[1]} 弓兵 吏族 魔法 癒しの雨",
    ]
    for user, deck in zip(players, decks, strict=True):
        # A deck written in the thread would be seen by the opponent: refused, unchanged.
        public = user.post(f"/api/threads/{tid}/posts", {"body": deck}).json()["replies"][0]
        assert not public["ok"] and "封印" in public["body"]
        sealed = user.post(f"/api/games/{gid}/sealed", {"body": deck}).json()
        assert sealed["sealed"]["ok"], sealed
    view = client.get(f"/api/games/{gid}").json()["view"]
    assert view["players"][0]["field"][0]["name"] == mine[0]
    assert view["players"][1]["magic_left"] == 1 and "magic" not in view["players"][1]

    chooser = random.Random("battle")
    by_name = {user.name: user for user in players}
    saw_table = False
    for _ in range(400):
        found = client.get(f"/api/games/{gid}").json()
        if found["status"] == "finished":
            break
        user = by_name[chooser.choice(found["view"]["waiting_for"])]
        legal = user.get(f"/api/games/{gid}/legal").json()
        line = chooser.choice(legal["commands"])
        reply = user.post(f"/api/threads/{tid}/posts", {"body": line}).json()["replies"][0]
        assert reply["ok"], reply["body"]
        # A turn's result: one line an attack (「1.歩兵 → 相手2.弓兵 40、残り 60」).
        saw_table = saw_table or ("手番】" in reply["body"] and " → 相手" in reply["body"])
    final = client.get(f"/api/games/{gid}").json()
    assert final["status"] == "finished" and saw_table
    ranking = final["result"]["ranking"]
    assert {entry["name"] for entry in ranking} == {user.name for user in players}
    assert all(entry["breakdown"]["reason"] == final["view"]["reason"] for entry in ranking)
    record = client.get(f"/api/games/{gid}/export").json()
    assert all(record["options"]["pool"][name]["version"] == 1 for name in mine)
    moves = len(client.get(f"/api/games/{gid}/moves").json())
    picture = client.get(f"/api/games/{gid}/board.svg", params={"at": moves})
    assert picture.status_code == 200 and mine[0] in picture.text
    history = client.get(f"/api/cards/{mine[0]}").json()
    assert gid in [entry["id"] for entry in history["games"]]
