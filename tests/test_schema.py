"""schemathesis against the app's own OpenAPI schema (/api/openapi.json) on the live server:
for every operation, data that fits the schema and data that does not, anonymous and logged
in. No server error, and every answer matches what the schema says (status code documented
or an error, content type, body shape) — on every operation, the endless event stream included
(schemathesis reads its events until a short timeout and checks each against the schema).

Bounded: a few examples per operation (the whole file runs in well under a minute).

Nothing may ever be sent off this machine. The webhook and mail fields are `format: uri` and
`email`, so schemathesis generates real-looking addresses: each request's addresses are moved
to loopback port 9 / the reserved domain example.invalid before it is sent (the rest of what
was generated is kept), and the live server never delivers (deliver_seconds=0; registering a
webhook or an address stores it and contacts nothing).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import hypothesis
import pytest
import schemathesis
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st
from hypothesis.provisional import urls
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)

from app.config import Settings
from app.db.engine import Database
from app.errors import Invalid
from app.notify.delivery import validate_url
from tests.conftest import ApiUser, LiveServer
from tests.support.load_support import fast_users

CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]
# Loopback's discard port (privileged, so no test server binds it): a delivery is refused at once.
SAFE_HOST, SAFE_PORT = "127.0.0.1", 9
SAFE_MAIL_DOMAIN = "example.invalid"  # RFC 6761: never resolves
# The live event stream never ends: schemathesis reads its events for this long (or 20 of them).
STREAM_SECONDS = 1


def loopback_url(raw: str) -> str:
    """``raw`` with its host and port replaced by loopback's discard port (scheme, user info,
    path, query and fragment kept, so the app's URL checks are still exercised)."""
    try:
        parts = urlsplit(raw.strip())  # the app strips too (app.notify.delivery.validate_url)
    except ValueError:
        return raw  # the app cannot split it either (it answers 500: reported); never stored
    if not parts.netloc:
        return raw  # no host: refused
    userinfo, at, _host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{SAFE_HOST}:{SAFE_PORT}"))


def reserved_address(raw: str) -> str:
    """``raw`` with everything after its last @ replaced by the reserved domain."""
    local, at, _domain = raw.rpartition("@")
    return f"{local}@{SAFE_MAIL_DOMAIN}" if at else raw


def keep_addresses_here(body: Any) -> None:
    """Every webhook URL and mail address in a request body, moved to loopback / example.invalid."""
    if isinstance(body, dict):
        if isinstance(body.get("url"), str):
            body["url"] = loopback_url(body["url"])
        if isinstance(body.get("email"), str):
            body["email"] = reserved_address(body["email"])


def delivered_to(url: str) -> tuple[str, int | None] | None:
    """Host and port the delivery worker (httpx, app/notify/delivery.py) would connect to; None if
    httpx refuses the URL (control characters, which the app accepts: reported)."""
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL:
        return None
    return target.host, target.port


@given(
    raw=st.one_of(
        urls(),
        st.text(),
        st.builds("{}://{}".format, st.sampled_from(["http", "https", "HTTP"]), st.text()),
    )
)
@example(raw="http://example.com/hook")
@example(raw="https://hooks.example.com:8443/x?y=1#z")
@example(raw="http://evil.example\\@127.0.0.1/")
@example(raw="  http://example.com  ")
@example(raw="http://user:pw@example.com/")
@example(raw="https://7?\x1a")  # stored, but httpx refuses to send it
@hypothesis.settings(max_examples=300, deadline=None, database=None)
def test_generated_webhook_url_is_stored_only_on_loopback(raw: str) -> None:
    """Whatever schemathesis generates, a URL the app would store points at loopback's
    discard port, as the delivery worker parses it."""
    try:
        stored = validate_url(loopback_url(raw))
    except (Invalid, ValueError):  # refused (ValueError: reported app bug, never stored)
        return
    assert delivered_to(stored) in (None, (SAFE_HOST, SAFE_PORT))


def test_generated_mail_address_stays_on_the_reserved_domain() -> None:
    for raw in ["p@example.com", "a@b@gmail.com", " x@y.org ", "@", "no-at-sign"]:
        moved = reserved_address(raw)
        assert "@" not in moved or moved.strip().rsplit("@", 1)[1] == SAFE_MAIL_DOMAIN


@pytest.fixture(scope="module")
def api_schema(live_server: LiveServer, settings: Settings) -> Any:
    # The live server must not deliver: a registered webhook is only stored.
    assert settings.deliver_seconds == 0
    return schemathesis.openapi.from_url(f"{live_server.url}/api/openapi.json")


@pytest.fixture(scope="module")
def owner(live_server: LiveServer, database: Database) -> Iterator[ApiUser]:
    """A logged-in caller that owns a started game, so ids 1… often exist. Afterwards its
    webhooks and mail address are removed (they are all on loopback / example.invalid)."""
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        owner, other = fast_users(database, 2, web, prefix="schema")
        owner.post("/api/boards/chat/threads", {"title": "schema", "body": "1"})
        game = owner.post("/api/games", {"kind": "eitsuku", "title": "schema"}).json()
        other.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
        owner.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN\nSTART"})
        yield owner
        for hook in owner.get("/api/me/webhooks").json():
            owner.client.delete(f"/api/me/webhooks/{hook['id']}", headers=owner.headers)
        owner.client.put("/api/me/email", json={"email": None}, headers=owner.headers)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@hypothesis.settings(
    max_examples=10,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_matches_its_schema(case: Any, owner: ApiUser) -> None:
    # Logout would end the owner's login for the rest of the run; it is checked anonymously.
    headers = None if case.path.endswith("/logout") else owner.headers
    keep_addresses_here(case.body)
    timeout = STREAM_SECONDS if case.path.endswith("/events") else 30
    case.call_and_validate(headers=headers, checks=CHECKS, timeout=timeout)


def test_addresses_registered_by_schemathesis_are_on_this_machine(owner: ApiUser) -> None:
    """After the run above: every webhook and every delivery the owner has targets loopback
    or the reserved domain (its game's notifications queue deliveries to them)."""
    for hook in owner.get("/api/me/webhooks").json():
        assert delivered_to(hook["url"]) in (None, (SAFE_HOST, SAFE_PORT)), hook
    for delivery in owner.get("/api/me/deliveries").json():
        if delivery["channel"] == "webhook":
            assert delivered_to(delivery["target"]) in (None, (SAFE_HOST, SAFE_PORT)), delivery
        else:
            assert delivery["target"].endswith(f"@{SAFE_MAIL_DOMAIN}"), delivery
