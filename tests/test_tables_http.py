"""Your tables, your turn, the GM told (issue #43) over HTTP: GET /api/me/turns, /me, the
header's badge, one 「あなたの手番です」 a turn (a real カードゲーム through the post path), the
GM's notices, notifications grouped by game, who has not yet moved (docs/notifications.md)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import event, select

from app.db.engine import Database
from app.db.models import Game, Notification, User
from app.games import GAMES
from app.gm import deadlines, turns
from tests.conftest import ApiUser, LiveServer, api_user
from tests.test_archive_helpers import SECRET
from tests.test_gm_pipeline import seed_without_choice
from tests.test_pages import csrf

BADGE_TURNS = re.compile(r'<span class="badge badge-turns"[^>]*>(\d+)</span>')
BADGE_UNREAD = re.compile(r'<span class="badge badge-unread"[^>]*>(\d+)</span>')
GROUP_UNREAD = re.compile(r'<span class="badge badge-unread group-unread">未読 (\d+) 件</span>')


def web_login(live_server: LiveServer, name: str) -> httpx.Client:
    """A browser-like client signed in by the site's form (the session cookie)."""
    web = httpx.Client(base_url=live_server.url, timeout=30)
    token = csrf(web.get("/login"))
    answer = web.post(
        "/login",
        data={"name": name, "password": "password123", "csrf_token": token, "next": "/"},
    )
    assert answer.status_code == 303, answer.text
    return web


@pytest.fixture
def web_of(live_server: LiveServer) -> Iterator[Any]:
    made: list[httpx.Client] = []

    def signed_in(user: ApiUser) -> httpx.Client:
        made.append(web_login(live_server, user.name))
        return made[-1]

    yield signed_in
    for web in made:
        web.close()


def say(user: ApiUser, thread_id: int, body: str) -> dict[str, Any]:
    answer = user.post(f"/api/threads/{thread_id}/posts", {"body": body})
    assert answer.status_code == 201, answer.text
    reply: dict[str, Any] = answer.json()["replies"][0]
    return reply


def eitsuku_table(
    client: httpx.Client,
    database: Database,
    players: int = 3,
    title: str = "週の卓",
    with_: tuple[ApiUser, ...] = (),
) -> tuple[ApiUser, list[ApiUser], dict[str, Any]]:
    """A started えいつく (every player asked at once each week), by the API, seating ``with_``
    first; its seed rolls no 6 at set-up, so END is legal for everyone at once."""
    master = api_user(client)
    made = master.post("/api/games", {"kind": "eitsuku", "title": title, "options": {}})
    assert made.status_code == 201, made.text
    game: dict[str, Any] = made.json()
    seated = [*with_, *(api_user(client) for _ in range(players - len(with_)))]
    for user in seated:
        assert say(user, game["thread_id"], "JOIN")["ok"]
    with database.session() as session:
        row = session.get(Game, game["id"])
        assert row is not None
        row.seed = seed_without_choice([u.name for u in seated])
        session.commit()
    assert say(master, game["thread_id"], "START")["ok"]
    return master, seated, game


def notices_of(database: Database, name: str, kind: str | None = None) -> list[Notification]:
    with database.session() as session:
        user = session.scalars(select(User).where(User.name == name)).one()
        query = select(Notification).where(Notification.user_id == user.id)
        if kind is not None:
            query = query.where(Notification.kind == kind)
        return list(session.scalars(query.order_by(Notification.id)))


# -- 1. GET /api/me/turns


def test_api_me_turns_lists_the_games_awaiting_the_caller_with_title_turn_since_and_thread(
    client: httpx.Client, database: Database
) -> None:
    master, seated, game = eitsuku_table(client, database)
    answer = seated[0].get("/api/me/turns")
    assert answer.status_code == 200
    games = answer.json()["games"]
    assert [g["id"] for g in games] == [game["id"]]
    mine = games[0]
    assert mine["kind"] == "eitsuku" and mine["title"] == "週の卓"
    assert mine["kind_title"] == "えいつく" and mine["kind_title_en"] != "eitsuku"
    assert mine["thread_id"] == game["thread_id"]
    assert mine["thread_url"] == f"/threads/{game['thread_id']}"
    assert mine["turn"] == "第1週"
    assert mine["since"] and mine["deadline_at"] is None
    names = [u.name for u in seated]
    assert mine["waiting"] == {"word": "未提出", "names": names}
    assert mine["waiting_text"] == "未提出: " + "、".join(names)
    # The GM has no seat: nothing awaits them; once a player ENDs, nothing awaits that player.
    assert master.get("/api/me/turns").json() == {"games": []}
    assert say(seated[0], game["thread_id"], "END")["ok"]
    assert seated[0].get("/api/me/turns").json() == {"games": []}
    left = seated[1].get("/api/me/turns").json()["games"][0]
    assert left["waiting"]["names"] == names[1:]


def test_api_me_turns_needs_a_login(client: httpx.Client) -> None:
    assert client.get("/api/me/turns").status_code == 401


def test_api_me_turns_reads_two_queries_whatever_the_number_of_games(
    client: httpx.Client, database: Database
) -> None:
    """Efficient: the games and their threads in one query, their seats in one more."""
    master = api_user(client)
    player, other = api_user(client), api_user(client)
    for index in range(4):
        made = master.post("/api/games", {"kind": "eitsuku", "title": f"卓{index}", "options": {}})
        tid = made.json()["thread_id"]
        assert say(player, tid, "JOIN")["ok"] and say(other, tid, "JOIN")["ok"]
        assert say(master, tid, "START")["ok"]
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    with database.session() as session:
        user_id = session.scalars(select(User.id).where(User.name == player.name)).one()
        event.listen(database.engine, "before_cursor_execute", count)
        try:
            found = turns.awaiting(session, user_id)
            assert len(found) == 4 and all(t.waiting for t in found)
            assert len(statements) == 2, statements
            statements.clear()
            assert turns.header_counts(session, user_id)[0] == 4
            assert len(statements) == 1, statements
        finally:
            event.remove(database.engine, "before_cursor_execute", count)


# -- 2. /me and the header's badge


def test_me_lists_the_tables_awaiting_you_first_then_your_other_tables(
    client: httpx.Client, web_of: Any, database: Database
) -> None:
    master, seated, game = eitsuku_table(client, database, players=2)
    recruiting = master.post("/api/games", {"kind": "idolwp", "title": "募集卓", "options": {}})
    assert say(seated[0], recruiting.json()["thread_id"], "JOIN")["ok"]
    page = web_of(seated[0]).get("/me")
    assert page.status_code == 200
    text = page.text
    assert "あなたの番: 1 卓" in text
    first, other = text.index("週の卓"), text.index("募集卓")
    assert text.index("あなたの番: 1 卓") < first < text.index("ほかの卓") < other
    assert GAMES["eitsuku"].title_ja in text and GAMES["idolwp"].title_ja in text
    assert say(seated[0], game["thread_id"], "END")["ok"]
    after = web_of(seated[0]).get("/me").text
    assert "あなたの番: 0 卓" in after and "いまあなたを待っている卓はありません。" in after
    assert after.index("ほかの卓") < after.index("週の卓")


def test_header_badge_counts_the_tables_awaiting_you_on_every_page(
    client: httpx.Client, web_of: Any, database: Database
) -> None:
    master, seated, game = eitsuku_table(client, database, players=2)
    web = web_of(seated[0])
    for path in ("/", "/games", f"/threads/{game['thread_id']}", f"/games/{game['id']}"):
        page = web.get(path)
        assert page.status_code == 200, path
        assert BADGE_TURNS.findall(page.text) == ["1"], path
    assert say(seated[0], game["thread_id"], "END")["ok"]
    assert BADGE_TURNS.findall(web.get("/").text) == []
    # The GM, whom no seat awaits, sees no turn badge; signed out, no badge at all.
    assert BADGE_TURNS.findall(web_of(master).get("/").text) == []
    assert BADGE_TURNS.findall(client.get("/").text) == []


def test_games_and_lobby_show_kind_titles_never_raw_keys(client: httpx.Client) -> None:
    master = api_user(client)
    master.post("/api/games", {"kind": "cardbattle", "title": "鍵の卓", "options": {}})
    for path in ("/", "/games", "/games?status=recruiting"):
        text = client.get(path).text
        shown = re.sub(r"<[^>]*>", " ", text)  # what is read, not addresses or values
        assert "掲示板進行カードゲーム" in shown, path
        for key in ("cardbattle", "eitsuku", "idolwp", "populous", "eleusis"):
            at = shown.find(key)
            assert at < 0, (path, key, shown[max(0, at - 120) : at + 60])


# -- 3. One 「あなたの手番です」 per turn


def test_one_your_turn_per_turn_not_per_magic_window_in_a_real_cardbattle(
    client: httpx.Client, database: Database
) -> None:
    """掲示板進行カードゲーム through the post path: a MAGIC reopens the 魔法の宣言 window (both
    players asked again) within the same 手番; whoever was told of this 手番 is not told again.
    Between two notices to a player, the game's 手番 moved on."""
    master = api_user(client)
    made = master.post("/api/games", {"kind": "cardbattle", "title": "窓の卓", "options": {}})
    game = made.json()
    gid, tid = game["id"], game["thread_id"]
    players = [api_user(client), api_user(client)]
    by_name = {user.name: user for user in players}
    # The 手番 each notice was written in: デッキ封印, then 0 (the window before 第1手番), 1, …
    told_in: dict[str, list[str]] = {user.name: [] for user in players}

    def note_turns() -> None:
        view = client.get(f"/api/games/{gid}").json()["view"]
        now = "deck" if view["phase"] == "deck" else str(view["turn"])
        for player in players:
            notes = notices_of(database, player.name, "your_turn")
            told_in[player.name].extend([now] * (len(notes) - len(told_in[player.name])))

    for user in players:
        assert say(user, tid, "参加")["ok"]
    assert say(master, tid, "開始")["ok"]
    note_turns()
    deck = "DECK 歩兵 見習い騎士 弓兵 MAGIC 火花"  # a new account's starter cards
    for user in players:
        assert user.post(f"/api/games/{gid}/sealed", {"body": deck}).json()["sealed"]["ok"]
        note_turns()
    reopened = 0
    for _ in range(60):
        found = client.get(f"/api/games/{gid}").json()
        view = found["view"]
        if found["status"] != "active" or view["turn"] >= 4:
            break
        user = by_name[view["waiting_for"][0]]
        legal = user.get(f"/api/games/{gid}/legal").json()["commands"]
        magic = [line for line in legal if line.startswith("MAGIC")]
        # A MAGIC after the other PASSed reopens the window: both asked again.
        line = magic[0] if magic and view["passed"] else legal[0]
        if line.startswith("ATTACK"):
            line = "ATTACK"
        reopened += bool(magic and view["passed"])
        assert say(user, tid, line)["ok"]
        note_turns()
    assert reopened >= 1, "no window was reopened: the test proves nothing"
    for name, told in told_in.items():
        assert told[:2] == ["deck", "0"], (name, told)  # START, then the first window
        assert len(told) == len(set(told)), (name, told)


# -- 4. The GM is told


def test_gm_is_told_when_someone_joins_or_leaves_their_recruiting_game(
    client: httpx.Client, database: Database
) -> None:
    master = api_user(client)
    made = master.post("/api/games", {"kind": "eitsuku", "title": "募る卓", "options": {}})
    tid = made.json()["thread_id"]
    comer, leaver = api_user(client), api_user(client)
    assert say(comer, tid, "JOIN")["ok"] and say(leaver, tid, "JOIN")["ok"]
    assert say(leaver, tid, "LEAVE")["ok"]
    texts = [(n.kind, n.text) for n in notices_of(database, master.name)]
    assert texts == [
        ("joined", f"「募る卓」に {comer.name} さんが参加しました（1人）。"),
        ("joined", f"「募る卓」に {leaver.name} さんが参加しました（2人）。"),
        ("left", f"「募る卓」から {leaver.name} さんが抜けました（1人）。"),
    ]
    assert notices_of(database, comer.name) == []  # the players are not told of each other


def test_gm_is_told_when_a_seat_times_out_at_a_deadline(
    client: httpx.Client, database: Database
) -> None:
    master, seated, game = eitsuku_table(client, database, players=2)
    assert say(master, game["thread_id"], "DEADLINE 1")["ok"]
    assert say(seated[0], game["thread_id"], "END")["ok"]
    with database.session() as session:
        due = session.get(Game, game["id"])
        assert due is not None and due.deadline_at is not None
        when = due.deadline_at + timedelta(minutes=1)
    assert deadlines.tick(database, SECRET, when) == [game["id"]]
    told = notices_of(database, master.name, "timed_out")
    assert [n.text for n in told] == [
        f"「週の卓」の期限が過ぎ、{seated[1].name} さんの手をボットが既定の手で進めました。"
    ]


# -- 5. Notifications grouped by game


def test_notifications_are_grouped_by_game_with_an_unread_count_and_read_per_game(
    client: httpx.Client, web_of: Any, database: Database
) -> None:
    player = api_user(client)
    games = []
    for title in ("一の卓", "二の卓"):
        master = api_user(client)
        made = master.post("/api/games", {"kind": "eitsuku", "title": title, "options": {}})
        other = api_user(client)
        tid = made.json()["thread_id"]
        assert say(player, tid, "JOIN")["ok"] and say(other, tid, "JOIN")["ok"]
        assert say(master, tid, "START")["ok"]
        games.append(made.json())
    web = web_of(player)
    page = web.get("/notifications")
    text = page.text
    # The game with the newest notice first, each with its count.
    assert text.index("二の卓") < text.index("一の卓")
    groups = re.findall(r'<section class="notice-group[^"]*" id="notices-(\d+)">', text)
    assert groups == [str(games[1]["id"]), str(games[0]["id"])]
    assert BADGE_UNREAD.findall(text) == ["2"]  # the header's
    assert GROUP_UNREAD.findall(text) == ["1", "1"]  # each game's
    read = web.post(
        "/notifications/read", data={"game": str(games[1]["id"]), "csrf_token": csrf(page)}
    )
    assert read.status_code == 303 and read.headers["location"].endswith(
        f"#notices-{games[1]['id']}"
    )
    after = web.get("/notifications").text
    assert BADGE_UNREAD.findall(after) == ["1"] and GROUP_UNREAD.findall(after) == ["1"]
    assert after.count("既読にする") == 1
    unread = [n.game_id for n in notices_of(database, player.name) if n.read_at is None]
    assert unread == [games[0]["id"]]


def test_marking_read_needs_the_form_s_token_and_a_game_and_touches_no_one_else(
    client: httpx.Client, web_of: Any, database: Database
) -> None:
    _master, seated, game = eitsuku_table(client, database, players=2)
    web = web_of(seated[0])
    token = csrf(web.get("/notifications"))
    refused = web.post("/notifications/read", data={"game": str(game["id"])})
    assert refused.status_code == 403
    for bad in ("", "x", "1" * 12, "-1", "１"):
        answer = web.post("/notifications/read", data={"game": bad, "csrf_token": token})
        assert answer.status_code == 422, bad
        assert "既読にするゲームの指定が正しくありません。" in answer.text
    assert all(n.read_at is None for n in notices_of(database, seated[0].name))
    assert (
        web.post(
            "/notifications/read", data={"game": str(game["id"]), "csrf_token": token}
        ).status_code
        == 303
    )
    assert all(n.read_at is not None for n in notices_of(database, seated[0].name))
    assert all(n.read_at is None for n in notices_of(database, seated[1].name))


# -- 6. Who has not yet moved, one word for waiting


def test_simultaneous_phase_says_who_has_not_yet_moved_on_the_game_page(
    client: httpx.Client, database: Database
) -> None:
    _master, seated, game = eitsuku_table(client, database)
    names = [u.name for u in seated]

    def status_line() -> str:
        page = client.get(f"/games/{game['id']}").text
        found = re.findall(r'<p class="waiting-line">(.*?)</p>', page)
        assert len(found) == 1, found
        return found[0]

    assert status_line() == "未提出: " + "、".join(names)
    assert say(seated[0], game["thread_id"], "END")["ok"]
    assert status_line() == "未提出: " + "、".join(names[1:])
    assert say(seated[1], game["thread_id"], "END")["ok"]
    assert status_line() == f"手番待ち: {names[2]}"
    # One word for waiting on the page (the bot's posts are the replies' own wording).
    page = re.sub(
        r"<article .*?</article>", "", client.get(f"/games/{game['id']}").text, flags=re.S
    )
    assert "行動待ち" not in page and f'<p class="eitsuku-waiting">手番待ち: {names[2]}</p>' in page
    english = client.get(f"/games/{game['id']}?lang=en").text
    assert re.findall(r'<p class="waiting-line">(.*?)</p>', english) == [f"Waiting for: {names[2]}"]


# -- Every page in English too


def test_a_game_with_many_notices_never_pushes_the_other_games_off_the_notifications(
    client: httpx.Client, web_of: Any, database: Database
) -> None:
    """Grouped by game: the page shows the games with the newest notices, each with its
    newest few, however many one game has (here 150 on the newer game)."""
    player = api_user(client)
    made = []
    for title in ("古い卓", "うるさい卓"):
        master = api_user(client)
        made.append(
            master.post("/api/games", {"kind": "eitsuku", "title": title, "options": {}}).json()
        )
    with database.session() as s:
        user = s.scalars(select(User).where(User.name == player.name)).one()
        for game, count in ((made[0], 1), (made[1], 150)):
            for n in range(count):
                s.add(
                    Notification(
                        user_id=user.id,
                        game_id=game["id"],
                        kind="your_turn",
                        text=f"通知{n}",
                        url=f"/games/{game['id']}",
                    )
                )
            s.flush()
        s.commit()
    text = web_of(player).get("/notifications").text
    groups = re.findall(r'<section class="notice-group[^"]*" id="notices-(\d+)">', text)
    assert groups == [str(made[1]["id"]), str(made[0]["id"])]
    assert GROUP_UNREAD.findall(text) == ["150", "1"]  # every unread one counted
    newer = text.split("古い卓")[0]
    shown = re.findall(r"通知(\d+)", newer)
    assert shown == ["149", "148", "147", "146", "145"], shown  # the newest few, newest first


def test_me_and_notifications_in_english(
    client: httpx.Client, web_of: Any, database: Database
) -> None:
    _master, seated, _game = eitsuku_table(client, database, players=2)
    web = web_of(seated[0])
    me = web.get("/me?lang=en").text
    assert "Your turn: 1 table" in me and "Other tables" in me
    notes = web.get("/notifications?lang=en").text
    assert "1 unread" in notes and "Mark as read" in notes
    shown = re.sub(r"<[^>]*>", " ", me)
    assert "未提出" not in shown and "手番待ち" not in shown and "Not yet moved" in shown
