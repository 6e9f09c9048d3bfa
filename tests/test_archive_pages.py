"""The archive over HTTP: the list and its filters (API and page), search, the replay page,
and verification (docs/archive.md)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from app.db.engine import Database
from app.forum.service import BBS_TZ
from app.gm import service as gm
from tests.test_archive_helpers import new_table, play, post, unique_words


@dataclass
class Archive:
    finished_id: int
    finished_thread: int
    aborted_id: int
    active_id: int
    recruiting_id: int
    players: list[str]
    winners: list[str]
    moves: int
    title: str
    word: str


@pytest.fixture(scope="module")
def archive(database: Database) -> Iterator[Archive]:
    """One game of each status, committed (the live server reads them)."""
    word = unique_words()
    with database.session() as session:
        done = play(session, title=f"{word}のB決勝卓")
        impl = gm.game_impl("eitsuku")
        result = impl.result(done.game.state or {})
        assert result is not None
        aborted = play(session, stop_after=3, title=f"{word}のA中止卓")
        post(session, aborted.game, aborted.master, "ABORT")
        active = play(session, stop_after=3, title=f"{word}の進行卓")
        recruiting = new_table(session, title=f"{word}の募集卓")
        ranking = done.game.result["ranking"] if done.game.result else []
        made = Archive(
            finished_id=done.game.id,
            finished_thread=done.game.thread_id,
            aborted_id=aborted.game.id,
            active_id=active.game.id,
            recruiting_id=recruiting.game.id,
            players=[u.name for u in done.players],
            # ranked 1st with a score: a game nobody finished (all 未完成) has no winner
            winners=[e["name"] for e in ranking if e["rank"] == 1 and e["score"] is not None],
            moves=max(done.states),
            title=done.game.title,
            word=word,
        )
        session.commit()
    yield made


def ids(answer: httpx.Response) -> list[int]:
    assert answer.status_code == 200, answer.text
    return [g["id"] for g in answer.json()["games"]]


# --- the list -------------------------------------------------------------------------------


def test_api_lists_ended_games_with_length_and_winner(
    client: httpx.Client, archive: Archive
) -> None:
    answer = client.get("/api/games", params={"status": "finished,aborted", "q": archive.word})
    body = answer.json()
    assert set(body) == {"games", "page", "pages"}
    assert set(ids(answer)) == {archive.finished_id, archive.aborted_id}
    game = next(g for g in body["games"] if g["id"] == archive.finished_id)
    assert game["kind"] == "eitsuku" and game["title"] == archive.title
    assert [p["name"] for p in game["players"]] == archive.players
    assert game["gm"] and game["moves"] == archive.moves and game["winners"] == archive.winners
    assert game["started_at"] and game["finished_at"] and game["created_at"]
    assert game["posts"] > archive.moves
    assert game["replay_url"] == f"/games/{archive.finished_id}/replay"
    aborted = next(g for g in body["games"] if g["id"] == archive.aborted_id)
    assert aborted["winners"] == [] and aborted["moves"] == 3


def test_api_filters_by_player_kind_and_date(client: httpx.Client, archive: Archive) -> None:
    by_player = client.get("/api/games", params={"player": archive.players[0]})
    assert ids(by_player) == [archive.finished_id]
    kind = client.get("/api/games", params={"kind": "えいつく", "q": archive.word})
    assert set(ids(kind)) == {
        archive.finished_id,
        archive.aborted_id,
        archive.active_id,
        archive.recruiting_id,
    }
    today = datetime.now(BBS_TZ).date()
    around = {"q": archive.word, "status": "finished"}
    same_day = client.get("/api/games", params={**around, "from": str(today), "to": str(today)})
    assert ids(same_day) == [archive.finished_id]
    tomorrow = str(today + timedelta(days=1))
    assert ids(client.get("/api/games", params={**around, "from": tomorrow})) == []
    assert ids(client.get("/api/games", params={**around, "to": str(today - timedelta(1))})) == []
    instant = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert ids(client.get("/api/games", params={**around, "to": instant})) == [archive.finished_id]


def test_api_sorts(client: httpx.Client, archive: Archive) -> None:
    ended = {"q": archive.word, "status": "finished,aborted"}
    longest = ids(client.get("/api/games", params={**ended, "sort": "longest"}))
    assert longest == [archive.finished_id, archive.aborted_id]
    shortest = ids(client.get("/api/games", params={**ended, "sort": "shortest"}))
    assert shortest == [archive.aborted_id, archive.finished_id]
    by_title = ids(client.get("/api/games", params={**ended, "sort": "title"}))
    assert by_title == [archive.aborted_id, archive.finished_id]  # …のA中止卓, …のB決勝卓


@pytest.mark.parametrize(
    "params",
    [
        {"status": "bogus"},
        {"status": "finished,bogus"},
        {"sort": "random"},
        {"from": "2026-13-01"},
        {"from": "yesterday"},
        {"to": "9" * 39},
        {"from": "0001-01-01"},
        {"to": "9999-12-31"},
        {"from": "0001-01-01T00:00:00+09:00"},
        {"player": "a\x00b"},
        {"q": "\x00"},
        {"from": "2026-11-22", "to": "2026-11-01"},
        {"page": "0"},
        {"page": str(10**12)},
        {"q": "x" * 201},
    ],
)
def test_api_bad_filters_are_422(client: httpx.Client, params: dict[str, str]) -> None:
    answer = client.get("/api/games", params=params)
    assert answer.status_code == 422, answer.text
    assert "detail" in answer.json()


def test_archive_page_lists_ended_games(client: httpx.Client, archive: Archive) -> None:
    page = client.get("/archive", params={"q": archive.word})
    assert page.status_code == 200
    html = page.text
    assert archive.title in html and f"{archive.word}のA中止卓" in html
    assert f"{archive.word}の進行卓" not in html  # ended games only by default
    assert f'href="/games/{archive.finished_id}/replay"' in html
    for winner in archive.winners:
        assert winner in html
    assert 'href="/archive"' in client.get("/").text  # the nav link
    bad = client.get("/archive", params={"from": "2026-99-99"})
    assert bad.status_code == 422 and "from は" in bad.text


def test_archive_pager_keeps_the_filters(client: httpx.Client, database: Database) -> None:
    word = unique_words()
    with database.session() as session:
        for n in range(31):  # one more than a page
            new_table(session, players=0, title=f"{word} {n:02d}")
        session.commit()
    params = {"status": "recruiting", "q": word, "sort": "oldest"}
    page = client.get("/archive", params=params)
    assert page.status_code == 200 and f"{word} 00" in page.text and f"{word} 30" not in page.text
    links = re.findall(r'href="\?([^"]*page=\d+)"', page.text)
    assert links
    for link in links:
        assert "status=recruiting" in link and "sort=oldest" in link and "q=" in link
    second = client.get("/archive", params={**params, "page": 2})
    assert f"{word} 30" in second.text


# --- search ---------------------------------------------------------------------------------


def test_search_page_and_api(client: httpx.Client, archive: Archive) -> None:
    page = client.get("/search", params={"q": archive.word})
    assert page.status_code == 200
    assert f"<mark>{archive.word}</mark>" in page.text
    assert f'href="/threads/{archive.finished_thread}#1"' in page.text
    api = client.get("/api/search", params={"q": archive.word[1:5]}).json()
    assert api["mode"] == "index" and api["total"] >= 4
    hit = next(p for p in api["posts"] if p["thread_id"] == archive.finished_thread)
    assert hit["url"] == f"/threads/{archive.finished_thread}#1"
    assert f"<mark>{archive.word[1:5]}</mark>" in hit["snippet_html"]
    short = client.get("/search", params={"q": archive.word[:2]})
    assert short.status_code == 200 and "新しい書き込み" in short.text
    assert client.get("/search", params={"q": "あ" * 300}).status_code == 422
    assert client.get("/api/search", params={"q": "あ" * 300}).status_code == 422
    assert client.get("/api/search", params={"q": "x", "page": "-1"}).status_code == 422


# --- replay ---------------------------------------------------------------------------------


def test_replay_page_navigates_without_javascript(client: httpx.Client, archive: Archive) -> None:
    base = f"/games/{archive.finished_id}/replay"
    last = client.get(base)
    assert last.status_code == 200
    assert f'value="{archive.moves}"' in last.text and 'type="range"' in last.text
    assert "/static/replay.js" in last.text
    middle = client.get(base, params={"at": 5})
    html = middle.text
    assert "5手目の後の盤面" in html
    assert f'href="{base}?at=4&amp;viewer=all"' in html  # previous
    assert f'href="{base}?at=6&amp;viewer=all"' in html  # next
    assert f'href="{base}?at=0&amp;viewer=all"' in html  # first
    assert f'href="{base}?at={archive.moves}&amp;viewer=all"' in html  # last
    assert 'class="replay-line"' in html and "replay-post current" in html
    assert 'aria-current="step"' in html
    seat = client.get(base, params={"at": 5, "viewer": "2"})
    assert seat.status_code == 200 and 'value="2" selected' in seat.text
    api = client.get(f"/api/games/{archive.finished_id}/replay", params={"at": 5})
    assert api.status_code == 200 and api.json()["at"] == 5


@pytest.mark.parametrize("at", ["-1", "abc", "1e3", str(10**12), "999999"])
def test_replay_page_bad_at_is_4xx(client: httpx.Client, archive: Archive, at: str) -> None:
    answer = client.get(f"/games/{archive.finished_id}/replay", params={"at": at})
    assert 400 <= answer.status_code < 500


def test_replay_page_of_running_and_unstarted_games(client: httpx.Client, archive: Archive) -> None:
    active = f"/games/{archive.active_id}/replay"
    assert client.get(active).status_code == 200
    assert client.get(active, params={"viewer": "all"}).status_code == 403
    assert client.get(active, params={"viewer": "nobody"}).status_code == 403
    unstarted = client.get(f"/games/{archive.recruiting_id}/replay")
    assert unstarted.status_code == 200 and "再生する手はありません" in unstarted.text
    assert client.get("/games/999999999/replay").status_code == 404


# --- verification ---------------------------------------------------------------------------


def test_verify_button_and_api(client: httpx.Client, archive: Archive) -> None:
    replay_page = client.get(f"/games/{archive.finished_id}/replay").text
    assert f'action="/games/{archive.finished_id}/verify"' in replay_page
    page = client.get(f"/games/{archive.finished_id}/verify")
    assert page.status_code == 200 and "すべて一致しました" in page.text
    assert client.get(f"/games/{archive.active_id}/verify").status_code == 409
    report = client.get(f"/api/games/{archive.finished_id}/verify").json()
    assert report["ok"] is True and report["moves_replayed"] == archive.moves
    export = client.get(f"/api/games/{archive.finished_id}/export").json()
    assert client.post("/api/verify", json=export).json()["ok"] is True
    tampered = copy.deepcopy(export)
    tampered["seed"] = "0" * 64
    answer = client.post("/api/verify", json=tampered).json()
    assert answer["ok"] is False
    assert any(c["name"] == "種のハッシュ" and c["ok"] is False for c in answer["checks"])
    assert client.post("/api/verify", json=[1]).status_code == 422
    assert client.post("/api/verify", content=b"{oops").status_code == 422
    assert client.post("/api/verify", json={"format": "bbsgm-game"}).status_code == 422


def csrf_token(client: httpx.Client) -> str:
    page = client.get("/archive/verify")
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found
    return found.group(1)


def test_verify_an_uploaded_record(client: httpx.Client, archive: Archive) -> None:
    export: dict[str, Any] = client.get(f"/api/games/{archive.finished_id}/export").json()
    token = csrf_token(client)
    raw = copy.deepcopy(export)
    good = json.dumps(raw, ensure_ascii=False).encode()
    answer = client.post(
        "/archive/verify",
        data={"csrf_token": token},
        files={"file": ("game.json", good, "application/json")},
    )
    assert answer.status_code == 200 and "すべて一致しました" in answer.text
    raw["moves"][3]["command"] = "RELEASE"
    pasted = client.post("/archive/verify", data={"csrf_token": token, "record": json.dumps(raw)})
    assert pasted.status_code == 200 and "一致しないところがあります" in pasted.text
    garbage = client.post("/archive/verify", data={"csrf_token": token, "record": "{nope"})
    assert garbage.status_code == 422 and "JSON" in garbage.text
    empty = client.post("/archive/verify", data={"csrf_token": token})
    assert empty.status_code == 422
    forged = client.post("/archive/verify", data={"csrf_token": "x", "record": "{}"})
    assert forged.status_code == 403
