"""Atom feeds (parsed with feedparser) and notifications: your turn, deadline soon, game over."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import feedparser
import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Notification
from app.notify import notices as notify
from tests.conftest import api_user
from tests.test_moderation import T0, new_table, say


def kinds_for(session: Session, user_id: int) -> list[str]:
    return list(
        session.scalars(
            select(Notification.kind)
            .where(Notification.user_id == user_id)
            .order_by(Notification.id)
        )
    )


def test_start_tells_every_player_it_is_their_turn(session: Session) -> None:
    table = new_table(session)
    for player in table["players"]:
        assert kinds_for(session, player.id) == ["your_turn"]
    # The GM was told of each JOIN (issue #43), and of no turn.
    assert kinds_for(session, table["gm"].id) == ["joined"] * len(table["players"])


def test_next_week_is_a_new_turn_for_everyone(session: Session) -> None:
    table = new_table(session)
    game = table["game"]
    say(session, game, table["players"][0], "END")
    assert kinds_for(session, table["players"][0].id) == ["your_turn"]  # ended: not asked again
    for player in table["players"][1:]:
        say(session, game, player, "END")
    for player in table["players"]:
        assert kinds_for(session, player.id) == ["your_turn", "your_turn"]


def test_deadline_warning_once_for_those_still_to_move(session: Session) -> None:
    table = new_table(session)
    game = table["game"]
    say(session, game, table["gm"], "DEADLINE 24")
    say(session, game, table["players"][0], "END")
    assert notify.warn_deadlines(session, T0 + timedelta(hours=10)) == 0  # 14 h left
    assert notify.warn_deadlines(session, T0 + timedelta(hours=19)) == 2
    assert notify.warn_deadlines(session, T0 + timedelta(hours=20)) == 0  # once per deadline
    assert "deadline_soon" not in kinds_for(session, table["players"][0].id)
    assert kinds_for(session, table["players"][1].id)[-1] == "deadline_soon"


def test_game_over_reaches_players_and_gm(session: Session) -> None:
    table = new_table(session)
    say(session, table["game"], table["gm"], "ABORT")
    for player in table["players"]:
        assert "game_over" not in kinds_for(session, player.id)  # aborted is not "over"
    from tests.test_moderation import play_to_end

    table = new_table(session)
    play_to_end(session, table)
    for user in [*table["players"], table["gm"]]:
        assert kinds_for(session, user.id)[-1] == "game_over"


def parse(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/atom+xml")
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.get("bozo_exception")
    return feed


def test_board_and_thread_feeds_parse(client: httpx.Client) -> None:
    user = api_user(client)
    thread_id = user.post(
        "/api/boards/chat/threads", {"title": "フィード", "body": "<b>本文</b> & 記号"}
    ).json()["id"]
    user.post(f"/api/threads/{thread_id}/posts", {"body": "二つ目"})
    thread = parse(client.get(f"/threads/{thread_id}/feed.atom"))
    assert [e.title.split()[-2] for e in thread.entries][-2:] == [">>1", ">>2"]
    assert thread.entries[-2].content[0].value == "<b>本文</b> & 記号"
    board = parse(client.get("/boards/chat/feed.atom"))
    assert any(e.link.endswith(f"/threads/{thread_id}#2") for e in board.entries)
    assert client.get("/boards/nope/feed.atom").status_code == 404


def test_control_characters_in_a_post_do_not_break_the_feeds(client: httpx.Client) -> None:
    """A post may hold control characters that XML 1.0 cannot (only NUL is refused); the
    board's and the thread's feeds were a 500 for every reader while it was among their last
    50 posts. They show as U+FFFD."""
    user = api_user(client)
    title = "制御\x01文字"
    thread_id = user.post(
        "/api/boards/chat/threads", {"title": title, "body": "ベル\x07と\x1bエスケープ\ufffe"}
    ).json()["id"]
    for path in (f"/threads/{thread_id}/feed.atom", "/boards/chat/feed.atom"):
        reply = client.get(path)
        assert reply.status_code == 200, path
        entry = next(e for e in parse(reply).entries if e.link.endswith(f"/{thread_id}#1"))
        assert entry.content[0].value == "ベル\ufffdと\ufffdエスケープ\ufffd"


def test_private_feed_lists_your_turn_and_dies_when_revoked(client: httpx.Client) -> None:
    master = api_user(client)
    players = [api_user(client), api_user(client)]
    game = master.post("/api/games", {"kind": "eitsuku", "title": "通知卓"}).json()
    for player in players:
        player.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
    master.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"})
    url = players[0].post("/api/me/feed", {}).json()["url"]
    path = url.split("://", 1)[1].split("/", 1)[1]
    feed = parse(client.get(f"/{path}"))
    assert any("通知卓" in e.title and "手番" in e.title for e in feed.entries)
    assert all(e.link.endswith(f"/games/{game['id']}") for e in feed.entries)
    assert players[0].client.delete("/api/me/feed", headers=players[0].headers).status_code == 204
    assert client.get(f"/{path}").status_code == 404
    assert client.get("/feeds/not-a-token.atom").status_code == 404


def test_notifications_page_lists_items_and_makes_a_feed(live_server: Any) -> None:
    from tests.test_pages import csrf, register

    with httpx.Client(base_url=live_server.url) as browser:
        assert browser.get("/notifications").status_code == 303  # logged out: to the login
        name = register(browser)
        master = api_user(browser)
        other = api_user(browser)
        game = master.post("/api/games", {"kind": "eitsuku", "title": "お知らせ卓"}).json()
        token = csrf(browser.get(f"/games/{game['id']}"))
        browser.post(
            f"/threads/{game['thread_id']}/posts", data={"body": "JOIN", "csrf_token": token}
        )
        other.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
        master.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"})
        page = browser.get("/notifications")
        assert page.status_code == 200 and "「お知らせ卓」であなたの手番です" in page.text
        assert f"{name} さん" in page.text
        made = browser.post("/notifications/feed", data={"csrf_token": csrf(page), "action": "new"})
        feed_url = made.text.split('class="feed-url"')[0].rsplit('value="', 1)[1].split('"')[0]
        assert "/feeds/" in feed_url
        path = feed_url.split("://", 1)[1].split("/", 1)[1]
        assert "お知らせ卓" in parse(browser.get(f"/{path}")).entries[-1].title
