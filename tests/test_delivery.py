"""Webhooks (a real HTTP receiver on loopback) and mail (a real aiosmtpd server): delivered after
commit, retried with back-off, logged; bad URLs refused."""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from pydantic import ValidationError
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.config import Settings
from app.db.engine import Database
from app.db.models import Delivery, Notification, User, Webhook, utcnow
from app.gm import service as gm
from app.notify import delivery
from app.notify import notices as notify
from app.notify.delivery import MAX_ATTEMPTS, deliver_due, request_base_url
from tests.conftest import ApiUser, api_user, unique_name
from tests.test_pages import csrf, register


class Receiver:
    """A webhook endpoint: records JSON bodies; answers ``status`` (changeable)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.status = 204
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(envelope)
        return "250 OK"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def smtp() -> Iterator[tuple[Mailbox, int]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield box, port
    controller.stop()


def started_game(client: httpx.Client, player: ApiUser) -> dict[str, Any]:
    master = api_user(client)
    other = api_user(client)
    game = master.post("/api/games", {"kind": "eitsuku", "title": "配信卓"}).json()
    for p in (player, other):
        p.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
    master.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"})
    return {**game, "other": other}


def end_week(who: ApiUser, game: dict[str, Any]) -> None:
    """Every pending CHOOSE first (a 6 on the set-up die may leave one or two), then END."""
    for _ in range(5):
        legal = who.get(f"/api/games/{game['id']}/legal").json()["commands"]
        choose = [c for c in legal if c.startswith("CHOOSE")]
        if not choose:
            break
        reply = who.post(f"/api/threads/{game['thread_id']}/posts", {"body": choose[0]})
        assert reply.json()["replies"][0]["ok"], reply.text
    reply = who.post(f"/api/threads/{game['thread_id']}/posts", {"body": "END"})
    assert reply.json()["replies"][0]["ok"], reply.text


def test_webhook_gets_discord_and_slack_compatible_json(
    client: httpx.Client, database: Database, settings: Settings, receiver: Receiver
) -> None:
    player = api_user(client)
    added = player.post("/api/me/webhooks", {"url": receiver.url})
    assert added.status_code == 201
    game = started_game(client, player)
    assert receiver.bodies == []  # nothing is sent from the request itself
    counts = deliver_due(database, settings)
    assert counts["sent"] >= 1
    body = next(b for b in receiver.bodies if "配信卓" in b["content"])
    assert body["content"] == body["text"] and "あなたの手番" in body["text"]
    assert body["bbsgm"]["url"].endswith(f"/games/{game['id']}")
    # The board's picture as it stood when the notice went out (START: no move yet).
    picture = f"/api/games/{game['id']}/board.svg?at=0"
    assert body["bbsgm"]["board"].endswith(picture) and "盤面の図: " in body["text"]
    log = player.get("/api/me/deliveries").json()
    assert log[0]["status"] == "sent" and log[0]["attempts"] == 1


def test_links_are_on_the_address_the_webhook_was_registered_from(
    client: httpx.Client, database: Database, settings: Settings, receiver: Receiver
) -> None:
    """BBSGM_BASE_URL unset: a webhook's links are absolute URLs on the host (and the scheme a
    trusted proxy's X-Forwarded-Proto gives) of the request that registered it — not
    127.0.0.1:8000, nor the address the delivery worker happens to know."""
    assert settings.base_url is None
    player = api_user(client)
    added = client.post(
        "/api/me/webhooks",
        json={"url": receiver.url},
        headers={**player.headers, "Host": "bbs.example.test", "X-Forwarded-Proto": "https"},
    )
    assert added.status_code == 201, added.text
    game = started_game(client, player)
    deliver_due(database, settings)
    (body,) = receiver.bodies
    site = "https://bbs.example.test"
    assert body["bbsgm"]["url"] == f"{site}/games/{game['id']}"
    assert body["bbsgm"]["board"] == f"{site}/api/games/{game['id']}/board.svg?at=0"
    assert f"\n{site}/games/{game['id']}\n" in body["text"]
    assert f"盤面の図: {site}/api/games/{game['id']}/board.svg?at=0" in body["text"]


def test_a_configured_base_url_wins_over_the_registering_request(
    client: httpx.Client, database: Database, settings: Settings, receiver: Receiver
) -> None:
    player = api_user(client)
    client.post(
        "/api/me/webhooks",
        json={"url": receiver.url},
        headers={**player.headers, "Host": "internal.example.test:8000"},
    )
    game = started_game(client, player)
    configured = settings.model_copy(update={"base_url": "https://bbs.example.org/forum/"})
    deliver_due(database, configured)
    (body,) = receiver.bodies
    assert body["bbsgm"]["url"] == f"https://bbs.example.org/forum/games/{game['id']}"
    assert "internal.example.test" not in json.dumps(body)


@pytest.mark.parametrize(
    "host", ["bbs.example.test/evil?x=1", "user@bbs.example.test", "bbs.example.test:notaport"]
)
def test_a_host_header_that_is_no_address_is_not_kept(
    client: httpx.Client, database: Database, host: str
) -> None:
    """Such a Host makes no link: the server's own address (what Starlette then takes) or none."""
    player = api_user(client)
    added = client.post(
        "/api/me/webhooks",
        json={"url": "https://hooks.example.test/x"},
        headers={**player.headers, "Host": host},
    )
    assert added.status_code == 201
    with database.session() as session:
        hook = session.get(Webhook, added.json()["id"])
        assert hook is not None and hook.base_url in (None, str(client.base_url).rstrip("/"))


@pytest.mark.parametrize(
    ("seen", "root_path", "kept"),
    [
        ("https://bbs.example.test/", "", "https://bbs.example.test"),
        ("http://bbs.example.test:8080/", "", "http://bbs.example.test:8080"),
        ("https://bbs.example.test/forum/", "/forum", "https://bbs.example.test/forum"),
        ("http://[::1]:8000/", "", "http://[::1]:8000"),
        ("http://bbs.example.test/evil/", "", None),
        ("http://bbs.example.test/?x=1", "", None),
        ("http://bbs.example.test/#x", "", None),
        ("http://user:pw@bbs.example.test/", "", None),
        ("http://bbs.example.test:port/", "", None),
        ("http://bbs.example.test:99999/", "", None),
        ("http://bbs example.test/", "", None),
        ("javascript://bbs.example.test/", "", None),
        ("http:///", "", None),
        ("https://" + "a" * 200 + ".test/", "", None),
    ],
)
def test_request_base_url_keeps_only_a_plain_address(
    seen: str, root_path: str, kept: str | None
) -> None:
    assert request_base_url(seen, root_path) == kept


def test_base_url_setting_is_an_absolute_address_or_unset() -> None:
    assert Settings(base_url="https://bbs.example.org/forum/").base_url == (
        "https://bbs.example.org/forum"
    )
    assert Settings(base_url="").base_url is None and Settings(base_url=" ").base_url is None
    for wrong in ("bbs.example.org", "ftp://bbs.example.org", "https://"):
        with pytest.raises(ValidationError, match="BBSGM_BASE_URL"):
            Settings(base_url=wrong)


def test_the_notifications_form_keeps_where_it_was_sent_from(
    client: httpx.Client, database: Database
) -> None:
    """The page's forms (no JavaScript) record the address as the API does, for a webhook and
    for the mail."""
    with httpx.Client(base_url=client.base_url, timeout=30) as browser:
        name = register(browser)
        proxied = {"Host": "bbs.example.test", "X-Forwarded-Proto": "https"}
        for form in (
            {"action": "add_webhook", "url": "https://hooks.example.test/form"},
            {"action": "email", "email": "form@bbsgm.test", "notify": "on"},
        ):
            token = csrf(browser.get("/notifications"))
            sent = browser.post(
                "/notifications/settings", data={**form, "csrf_token": token}, headers=proxied
            )
            assert sent.status_code == 303, sent.text
    with database.session() as session:
        user = session.scalars(select(User).where(User.name == name)).one()
        hook = session.scalars(select(Webhook).where(Webhook.user_id == user.id)).one()
        assert hook.base_url == user.email_base_url == "https://bbs.example.test"


def test_failing_webhook_is_retried_with_backoff_then_given_up(
    client: httpx.Client, database: Database, settings: Settings, receiver: Receiver
) -> None:
    player = api_user(client)
    player.post("/api/me/webhooks", {"url": receiver.url})
    receiver.status = 500
    started_game(client, player)
    with database.session() as session:
        mine = session.scalars(select(Delivery).where(Delivery.target == receiver.url)).all()
        ids = [d.id for d in mine]
        start = mine[0].created_at
    now = start
    for attempt in range(1, MAX_ATTEMPTS + 1):
        deliver_due(database, settings, now=now)
        with database.session() as session:
            row = session.get(Delivery, ids[0])
            assert row is not None
            attempts, status, error, due = (
                row.attempts,
                row.status,
                row.last_error,
                row.next_attempt_at,
            )
        assert attempts == attempt and error == "HTTP 500"
        if attempt < MAX_ATTEMPTS:
            assert status == "pending"
            assert due - now == timedelta(seconds=30) * 2 ** (attempt - 1)
            assert deliver_due(database, settings, now=now)["sent"] == 0  # not due yet
            now = due
        else:
            assert status == "failed"
    assert len(receiver.bodies) >= MAX_ATTEMPTS


def test_unreachable_webhook_never_delays_a_post(
    client: httpx.Client, database: Database, settings: Settings
) -> None:
    player = api_user(client)
    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    assert player.post("/api/me/webhooks", {"url": dead}).status_code == 201
    started_game(client, player)  # posts succeed although the hook is dead
    counts = deliver_due(database, settings)
    assert counts["retry"] >= 1
    log = player.get("/api/me/deliveries").json()
    assert log[0]["status"] == "pending" and log[0]["last_error"]


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://",
        "not a url",
        "http://user:pw@example.com/",
        "https://example.com/" + "x" * 600,
        "http://[::1",  # urlsplit's ValueError was a 500
        "http://127.0.0.1:9/\x00x",  # stored, then httpx refused to send it
        "http://127.0.0.1:9/\x7fx",
        "http://[not-an-address]/",
    ],
)
def test_bad_webhook_urls_are_refused(client: httpx.Client, url: str) -> None:
    player = api_user(client)
    reply = player.post("/api/me/webhooks", {"url": url})
    assert reply.status_code == 422 and reply.json()["detail"]
    assert player.get("/api/me/webhooks").json() == []


def test_a_stored_url_httpx_refuses_fails_its_delivery_at_once_and_spares_the_rest(
    client: httpx.Client, database: Database, settings: Settings, receiver: Receiver
) -> None:
    """A webhook stored before validate_url refused such URLs: its delivery is marked failed
    on the first attempt, with the reason, and the other deliveries of the batch still go."""
    player = api_user(client)
    player.post("/api/me/webhooks", {"url": receiver.url})
    bad = "http://127.0.0.1:9/\x01x"  # PostgreSQL stores no NUL
    with database.session() as session:
        user_id = session.scalar(select(User.id).where(User.name == player.name))
        session.add(Webhook(user_id=user_id, url=bad))
        session.commit()
    started_game(client, player)
    counts = deliver_due(database, settings)
    assert counts["failed"] >= 1 and counts["sent"] >= 1, counts
    with database.session() as session:
        rows = session.scalars(select(Delivery).where(Delivery.target == bad)).all()
        assert rows and all(r.status == "failed" and r.attempts == 1 for r in rows)
        assert all("invalid URL" in (r.last_error or "") for r in rows)
    assert receiver.bodies


def test_mail_is_opt_in_and_names_game_turn_and_moves(
    client: httpx.Client, database: Database, settings: Settings, smtp: tuple[Mailbox, int]
) -> None:
    box, port = smtp
    mail_settings = settings.model_copy(
        update={"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_from": "gm@bbsgm.test"}
    )
    quiet = api_user(client)
    started_game(client, quiet)  # no opt-in: no mail
    deliver_due(database, mail_settings)
    assert not [m for m in box.messages if quiet.name in str(m.rcpt_tos)]
    player = api_user(client)
    assert (
        player.client.put(
            "/api/me/email", json={"email": "p@bbsgm.test", "notify": True}, headers=player.headers
        ).status_code
        == 200
    )
    game = started_game(client, player)
    others = [p["name"] for p in client.get(f"/api/games/{game['id']}").json()["players"]]
    assert player.name in others
    # Both players end week 1 (the other one through the GM's AS): week 2 is a new turn.
    for who in (player, game["other"]):
        end_week(who, game)
    deliver_due(database, mail_settings)
    mails = [m for m in box.messages if m.rcpt_tos == ["p@bbsgm.test"]]
    assert len(mails) == 2, "a mail at START and one when week 2 began"
    latest = email.message_from_bytes(mails[-1].content, policy=email.policy.default)
    latest_body = latest.get_content()
    assert "（第2週）" in latest_body and "最近の手:" in latest_body and "END" in latest_body
    assert "week2" not in latest_body  # the turn in words, not its key
    moves = len(client.get(f"/api/games/{game['id']}/moves").json())
    # Absolute links on the address the mail was asked for from (BBSGM_BASE_URL unset).
    site = str(client.base_url).rstrip("/")
    assert f"盤面の図: {site}/api/games/{game['id']}/board.svg?at={moves}" in latest_body
    message = email.message_from_bytes(mails[0].content, policy=email.policy.default)
    assert message["From"] == "gm@bbsgm.test"
    assert "あなたの手番" in str(message["Subject"])
    body = message.get_content()
    assert "ゲーム: 配信卓（えいつく）" in body and "（第1週）" in str(message["Subject"])
    assert "week1" not in str(message["Subject"]) and "eitsuku" not in body
    assert f"{site}/games/{game['id']}" in body.splitlines()


def test_email_validation(client: httpx.Client) -> None:
    player = api_user(client)
    bad = player.client.put(
        "/api/me/email", json={"email": "nope", "notify": True}, headers=player.headers
    )
    assert bad.status_code == 422
    missing = player.client.put(
        "/api/me/email", json={"email": "", "notify": True}, headers=player.headers
    )
    assert missing.status_code == 422


def _users_to_tell(session: Session, count: int, without_address: int | None = None) -> list[User]:
    """``count`` users; user i has i % 3 active webhooks and an inactive one, is opted in to
    mail if i is even, and has an address (an empty one if i is ``without_address``)."""
    users = [accounts.register(session, unique_name(), "password123") for _ in range(count)]
    for index, user in enumerate(users):
        user.email_notify = index % 2 == 0
        user.email = "" if index == without_address else f"{user.name}@example.test"
        for number in range(index % 3):
            session.add(Webhook(user_id=user.id, url=f"http://127.0.0.1:9/{user.name}/{number}"))
        session.add(
            Webhook(user_id=user.id, url=f"http://127.0.0.1:9/{user.name}/off", active=False)
        )
    session.flush()
    return users


@pytest.mark.parametrize("told", [1, 3, 6])
def test_each_user_told_gets_a_delivery_per_active_webhook_and_one_mail_if_opted_in(
    session: Session, told: int
) -> None:
    """However many users one move tells (one by one up to a few, else in one IN query), each
    notification gets one pending delivery per active webhook of its user, in the order of the
    webhooks, and one mail if that user opted in with an address — nobody else's."""
    users = _users_to_tell(session, told + 1)
    now = utcnow()
    notes = []
    for user in users[:told]:  # the last user is not told
        note = Notification(
            user_id=user.id, kind="your_turn", text="手番です", url="/", created_at=now
        )
        session.add(note)
        session.flush()
        notes.append((note.id, user.id))
    delivery.queue(session, notes, now)
    got = session.execute(
        select(Delivery.notification_id, Delivery.channel, Delivery.target)
        .where(Delivery.notification_id.in_([note for note, _ in notes]))
        .order_by(Delivery.id)
    ).all()
    wanted = []
    for (note_id, _user_id), (index, user) in zip(notes, enumerate(users), strict=False):
        wanted += [
            (note_id, "webhook", f"http://127.0.0.1:9/{user.name}/{number}")
            for number in range(index % 3)
        ]
        if index % 2 == 0:
            wanted.append((note_id, "email", f"{user.name}@example.test"))
    assert [tuple(row) for row in got] == wanted


@pytest.mark.parametrize("told", [1, 2, 6])
def test_a_moves_notices_and_their_deliveries_are_written_as_queue_writes_them(
    session: Session, told: int
) -> None:
    """What a move writes for the users it tells (``notify.add_all``): each notice as given,
    and per notice one pending delivery per active webhook of its user in the webhooks'
    order, then one mail if that user opted in with an address (not for an empty one) — due
    now, no attempt yet; nothing for anybody else."""
    master = accounts.register(session, unique_name(), "password123")
    game = gm.create_game(session, master, "eitsuku", "卓", {}, "s" * 40)
    users = _users_to_tell(session, told + 1, without_address=2)
    now = utcnow()
    notices = [(user.id, "your_turn", f"{user.name}の手番です") for user in users[:told]]
    notify.add_all(session, game, notices, now)
    stored = session.execute(
        select(Notification.id, Notification.user_id, Notification.kind, Notification.text)
        .where(Notification.game_id == game.id, Notification.kind == "your_turn")
        .order_by(Notification.id)
    ).all()
    assert [tuple(row[1:]) for row in stored] == notices
    got = session.execute(
        select(
            Delivery.notification_id,
            Delivery.channel,
            Delivery.webhook_id.is_(None),
            Delivery.target,
            Delivery.status,
            Delivery.attempts,
            Delivery.next_attempt_at,
            Delivery.created_at,
        )
        .where(Delivery.notification_id.in_([row[0] for row in stored]))
        .order_by(Delivery.id)
    ).all()
    wanted = []
    for (note_id, *_), (index, user) in zip(stored, enumerate(users), strict=False):
        wanted += [
            (note_id, "webhook", False, f"http://127.0.0.1:9/{user.name}/{number}")
            for number in range(index % 3)
        ]
        if index % 2 == 0 and index != 2:
            wanted.append((note_id, "email", True, f"{user.name}@example.test"))
    assert [tuple(row[:4]) for row in got] == wanted
    assert all(tuple(row[4:]) == ("pending", 0, now, now) for row in got)


def test_a_moves_notices_read_each_told_users_address_and_webhooks_by_key(
    session: Session,
) -> None:
    """On PostgreSQL the read of the told users' addresses and webhooks (``delivery.queue``)
    finds them through the users' keys, never by reading the whole users table: a cost that
    would grow with the forum's users at every move."""
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("the query plans are PostgreSQL's")
    session.execute(
        text(
            "INSERT INTO users (name, password_hash, is_admin, created_at, email, email_notify)"
            " SELECT 'm' || left(md5(random()::text), 16) || g, 'x', false, now(),"
            " 'm@example.test', g % 2 = 0 FROM generate_series(1, 5000) AS g"
        )
    )
    session.execute(
        text(
            "INSERT INTO webhooks (user_id, url, created_at, active) SELECT id,"
            " 'http://127.0.0.1:9/' || id, now(), true FROM users ORDER BY id DESC LIMIT 4000"
        )
    )
    session.execute(text("ANALYZE users"))
    session.execute(text("ANALYZE webhooks"))
    told = _users_to_tell(session, 2)
    connection = session.connection()
    scans = []

    def walk(node: dict[str, Any]) -> None:
        if node.get("Relation Name") in ("users", "webhooks"):
            scans.append((node["Relation Name"], node["Node Type"]))
        for child in node.get("Plans", []):
            walk(child)

    for statement in (delivery._TARGETS_OF,):
        query = statement.params(user_ids=[user.id for user in told])
        sql = query.compile(dialect=connection.dialect, compile_kwargs={"literal_binds": True})
        walk(session.execute(text(f"EXPLAIN (FORMAT JSON) {sql}")).scalar_one()[0]["Plan"])
    assert {table for table, _scan in scans} == {"users", "webhooks"}
    assert [scan for scan in scans if scan[1] == "Seq Scan"] == []
