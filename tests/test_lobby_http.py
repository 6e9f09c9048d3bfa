"""The lobby and a player's record over HTTP (docs/forum.md "The lobby", docs/ratings.md): the
recruiting games first on / and /games with their kind's title, seats and a 参加 that works
without JavaScript; the ロビー's pinned guide; /users/{name} and its JSON; /ratings/{kind}."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from app import cli
from app.config import Settings
from app.db.engine import Database
from app.db.models import Game, PinnedThread
from app.games import all_games, find_game
from app.gm import lobby, ratings
from tests.conftest import LiveServer, unique_name
from tests.test_archive_helpers import SECRET, play, post, unique_words
from tests.test_pages import csrf, register

JOIN_FORM = re.compile(
    r'<form class="lobby-join" method="post" action="/threads/(\d+)/posts">(.*?)</form>', re.S
)


@pytest.fixture
def web(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=30) as c:
        yield c


@dataclass
class Finished:
    game_id: int
    players: list[str]
    places: dict[str, int]
    scores: dict[str, int | None]
    aborted_id: int
    aborted_players: list[str]


@pytest.fixture(scope="module")
def finished(database: Database) -> Iterator[Finished]:
    """A 3-player えいつく played to its end, and a game ABORTed half-way (committed)."""
    with database.session() as session:
        done = play(session, players=3, title=f"{unique_words()}の決勝卓")
        assert done.game.status == "finished" and done.game.result
        ranking = done.game.result["ranking"]
        aborted = play(session, players=2, stop_after=2, title=f"{unique_words()}の中止卓")
        post(session, aborted.game, aborted.master, "ABORT")
        made = Finished(
            game_id=done.game.id,
            players=[u.name for u in done.players],
            places={e["name"]: e["rank"] for e in ranking},
            scores={e["name"]: e["score"] for e in ranking},
            aborted_id=aborted.game.id,
            aborted_players=[u.name for u in aborted.players],
        )
        session.commit()
    yield made


def recruiting_game(web: httpx.Client, title: str) -> dict[str, object]:
    """A recruiting えいつく made by a fresh GM through the API (the GM is not seated)."""
    name = unique_name("gm")
    web.post("/api/register", json={"name": name, "password": "password123"})
    token = web.post("/api/login", json={"name": name, "password": "password123"}).json()
    made = web.post(
        "/api/games",
        json={"kind": "eitsuku", "title": title, "options": {}},
        headers={"Authorization": f"Bearer {token['token']}"},
    )
    assert made.status_code == 201, made.text
    game: dict[str, object] = made.json()
    return game


def lobby_entry(html: str, title: str) -> str:
    """The lobby's list item of the game with this title."""
    section = html.split('<section class="lobby"', 1)[1].split("</section>", 1)[0]
    items = [item for item in section.split('<li class="lobby-game">') if title in item]
    assert len(items) == 1, f"{title} not in the lobby once"
    return items[0]


def test_home_page_shows_recruiting_games_first_with_title_seats_and_kind(
    web: httpx.Client,
) -> None:
    title = f"{unique_words()}の募集卓"
    game = recruiting_game(web, title)
    page = web.get("/")
    assert page.status_code == 200
    assert page.text.index('class="lobby"') < page.text.index('class="board-list"')
    entry = lobby_entry(page.text, title)
    assert f'href="/games/{game["id"]}"' in entry
    shown = re.sub(r"<[^>]+>", "", entry)  # what a reader sees (links name the kind's 遊び方)
    assert "えいつく" in shown and "eitsuku" not in shown
    assert f"0/{find_game('eitsuku').max_players}席" in entry  # type: ignore[union-attr]
    assert "ボット 0" in entry
    # Not logged in: a way to log in, not a form that would be refused.
    assert "ログインして参加" in entry and "lobby-join" not in entry


def test_join_from_the_lobby_seats_the_reader_without_javascript(web: httpx.Client) -> None:
    title = f"{unique_words()}の参加卓"
    game = recruiting_game(web, title)
    name = register(web)
    page = web.get("/games")
    assert page.status_code == 200
    entry = lobby_entry(page.text, title)
    form = JOIN_FORM.search('<li class="lobby-game">' + entry)
    assert form is not None and int(form.group(1)) == game["thread_id"]
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', form.group(2)))
    assert fields["body"] == "JOIN" and fields["csrf_token"] == csrf(page)
    joined = web.post(f"/threads/{game['thread_id']}/posts", data=fields)
    assert joined.status_code == 303
    assert joined.headers["location"].startswith(f"/games/{game['id']}")
    seated = web.get(f"/api/games/{game['id']}").json()
    assert [p["name"] for p in seated["players"]] == [name]
    again = lobby_entry(web.get("/").text, title)
    assert "参加済み" in again and "lobby-join" not in again
    assert f"1/{find_game('eitsuku').max_players}席" in again  # type: ignore[union-attr]


def test_join_form_without_its_csrf_token_is_refused(web: httpx.Client) -> None:
    game = recruiting_game(web, f"{unique_words()}の卓")
    register(web)
    refused = web.post(f"/threads/{game['thread_id']}/posts", data={"body": "JOIN"})
    assert refused.status_code == 403
    assert web.get(f"/api/games/{game['id']}").json()["players"] == []


def test_lobby_board_shows_the_sites_pinned_guide_first(
    web: httpx.Client, database: Database, settings: object
) -> None:
    with database.session() as session:
        first = lobby.ensure_guide(session, SECRET)
        again = lobby.ensure_guide(session, SECRET)
        session.commit()
        assert first is not None and again is not None and first.id == again.id
        guide_id = first.id
    page = web.get("/boards/lobby")
    assert page.status_code == 200
    pinned = page.text.split('class="thread-list pinned-list"', 1)[1].split("</ol>", 1)[0]
    assert f'href="/threads/{guide_id}"' in pinned
    assert page.text.index("pinned-list") < page.text.index('<ol class="thread-list">')
    assert page.text.count(f'href="/threads/{guide_id}"') == 1  # not listed twice
    for kind in ("eitsuku", "eleusis", "cardbattle", "idolwp", "populous"):
        assert f'href="/games/{kind}/howto"' in page.text
    thread = web.get(f"/threads/{guide_id}").text
    assert "/games/eitsuku/howto" in thread and "JOIN" in thread
    web.cookies.set("bbsgm_lang", "en")
    english = web.get("/boards/lobby").text
    assert "Getting started: how this site works" in english and "How to play" in english


def test_player_page_shows_the_finished_game_with_place_score_replay_and_rating(
    web: httpx.Client, finished: Finished
) -> None:
    for name in finished.players:
        page = web.get(f"/users/{name}")
        assert page.status_code == 200
        html = page.text
        assert f'href="/games/{finished.game_id}/replay"' in html
        place = finished.places[name]
        assert f"{place}位（3人中）" in html
        if finished.scores[name] is not None:
            assert f"{finished.scores[name]}点" in html
        assert 'href="/ratings/eitsuku"' in html and "暫定" in html  # one game: provisional


def test_player_json_has_record_and_ratings(web: httpx.Client, finished: Finished) -> None:
    name = finished.players[0]
    body = web.get(f"/api/users/{name}").json()
    assert body["name"] == name
    game = next(g for g in body["finished"] if g["id"] == finished.game_id)
    assert game["place"] == finished.places[name]
    assert game["replay_url"] == f"/games/{finished.game_id}/replay"
    kinds = {k["kind"]: k for k in body["kinds"]}
    assert kinds["eitsuku"]["played"] >= 1
    won = finished.places[name] == 1 and finished.scores[name] is not None  # 未完成 never wins
    assert kinds["eitsuku"]["won"] == (1 if won else 0)
    rating = next(r for r in body["ratings"] if r["kind"] == "eitsuku")
    assert rating["games"] == 1 and rating["provisional"] is True
    assert rating["sigma"] < ratings.MODEL.sigma


def test_aborted_game_gives_no_rating(web: httpx.Client, finished: Finished) -> None:
    for name in finished.aborted_players:
        body = web.get(f"/api/users/{name}").json()
        assert body["ratings"] == [] and body["finished"] == []


def test_ranking_page_and_json_list_the_rated_players(
    web: httpx.Client, finished: Finished
) -> None:
    page = web.get("/ratings/eitsuku")
    assert page.status_code == 200
    for name in finished.players:
        assert f'href="/users/{name}"' in page.text
    body = web.get("/api/ratings/eitsuku").json()
    assert body["kind"] == "eitsuku"
    rated = {row["name"] for row in body["ranking"]}
    assert set(finished.players) <= rated
    assert not set(finished.aborted_players) & rated


def test_archive_links_player_names_to_their_pages(web: httpx.Client, finished: Finished) -> None:
    listing = web.get("/archive", params={"status": "finished", "player": finished.players[0]})
    for name in finished.players:
        assert f'href="/users/{name}"' in listing.text
    replay = web.get(f"/games/{finished.game_id}/replay")
    assert f'href="/users/{finished.players[1]}"' in replay.text


@pytest.mark.parametrize("path", ["/users/no-such-person-x", "/ratings/no-such-kind"])
def test_unknown_user_or_kind_is_a_404_page(web: httpx.Client, path: str) -> None:
    page = web.get(path)
    assert page.status_code == 404 and 'role="alert"' in page.text
    api = web.get("/api" + path)
    assert api.status_code == 404 and api.json()["detail"]


def test_finished_game_row_is_not_recruiting(database: Database, finished: Finished) -> None:
    with database.session() as session:
        game = session.get(Game, finished.game_id)
        assert game is not None
        assert all(t.game.id != game.id for t in lobby.recruiting(session, None, limit=1000))


def test_lobby_player_and_ranking_pages_in_english(web: httpx.Client, finished: Finished) -> None:
    title = f"{unique_words()}の英語卓"
    recruiting_game(web, title)
    web.cookies.set("bbsgm_lang", "en")
    home = web.get("/").text
    assert "Games looking for players" in home and "Log in to join" in home
    assert "募集中のゲーム" not in home and "ログインして参加" not in home
    assert re.search(r"0 of \d+ seats", lobby_entry(home, title))
    user = web.get(f"/users/{finished.players[0]}").text
    assert "Record and ratings" in user and "Finished games" in user and "of 3" in user
    assert "成績とレーティング" not in user and "人中" not in user
    ranking = web.get("/ratings/eitsuku").text
    assert "Ratings: Eitsuku" in ranking and "provisional" in ranking
    assert "レーティング" not in ranking


def test_bbsgm_migrate_writes_the_pinned_guide_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fresh = Settings(database_url=f"sqlite:///{tmp_path / 'fresh.db'}", secret_key="k")
    monkeypatch.setattr(cli, "get_settings", lambda: fresh)
    assert cli.main(["migrate"]) == 0
    assert cli.main(["migrate"]) == 0
    capsys.readouterr()
    db = Database(fresh.database_url)
    try:
        with db.session() as session:
            pins = session.scalars(select(PinnedThread)).all()
            assert [pin.purpose for pin in pins] == [lobby.GUIDE]
            guide = lobby.guide_thread(session)
            assert guide is not None and guide.board.slug == "lobby" and guide.post_count == 1
    finally:
        db.dispose()


def test_the_guide_names_the_sign_up_link_as_the_header_does_and_a_one_size_game_by_its_count() -> (
    None
):
    """The walk of a first evening: the guide said 「右上の「登録」」 for the header's 「新規登録」
    (on a phone at the left), and 「2〜2人」 for 掲示板進行カードゲーム."""
    text = lobby.guide_text()
    assert "「新規登録」" in text and "右上" not in text
    for impl in all_games():
        if impl.min_players == impl.max_players:
            assert f"{impl.title_ja}（{impl.min_players}人）" in text
        else:
            assert f"{impl.title_ja}（{impl.min_players}〜{impl.max_players}人）" in text
    assert "2〜2人" not in text


def test_the_home_page_offers_a_new_table_while_games_are_recruiting_too(
    web: httpx.Client,
) -> None:
    """The walk of a first evening: 新しいゲームを作る was on the home page only while nothing
    was recruiting; a newcomer on a busy board found no way to make a table of their own."""
    recruiting_game(web, f"{unique_words()}の募集卓")
    page = web.get("/").text
    lobby_part = page.split('class="lobby"', 1)[1].split("</section>", 1)[0]
    assert 'class="lobby-game"' in lobby_part
    assert '<a href="/games/new">新しいゲームを作る</a>' in lobby_part
