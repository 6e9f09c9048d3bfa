"""schemathesis against the app's own OpenAPI schema (/api/openapi.json) on the live server:
for every operation, data that fits the schema and data that does not, anonymous and logged
in. No server error, and every answer matches what the schema says (status code documented
or an error, content type, body shape).

Bounded: a few examples per operation (the whole file runs in well under a minute). The
webhook and mail endpoints are left out: schemathesis fills `format: uri` and `email` fields
with real-looking addresses, and nothing here may ever be delivered off this machine.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)

from app.db import Database
from tests.conftest import LiveServer
from tests.test_load_support import fast_users

# Left out: webhooks and mail (see above), and the live event stream, which answers
# text/event-stream although its schema says application/json (app/web/live_pages.py,
# reported) and does not end; tests/test_fuzz_api.py checks its status and headers.
LEFT_OUT = r"webhook|/email|/events$"
# Operations whose answers are known not to match their schema (reported); only "no server
# error" is checked for them until their routers document what they answer.
KNOWN_SCHEMA_GAPS = {
    # 422 with bbsgm's string detail, documented as FastAPI's list (app/api/archive.py)
    "POST /api/verify": "422 detail is a string; no ERROR_RESPONSES on its router",
}


@pytest.fixture(scope="module")
def api_schema(live_server: LiveServer) -> Any:
    return schemathesis.openapi.from_url(f"{live_server.url}/api/openapi.json")


@pytest.fixture(scope="module")
def member(live_server: LiveServer, database: Database) -> dict[str, str]:
    """A logged-in caller that owns a started game, so ids 1… often exist."""
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        owner, other = fast_users(database, 2, web, prefix="schema")
        owner.post("/api/boards/chat/threads", {"title": "schema", "body": "1"})
        game = owner.post("/api/games", {"kind": "eitsuku", "title": "schema"}).json()
        other.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
        owner.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN\nSTART"})
    return {"Authorization": f"Bearer {owner.token}"}


schema = schemathesis.pytest.from_fixture("api_schema").exclude(path_regex=LEFT_OUT)


@schema.parametrize()
@settings(
    max_examples=10,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_matches_its_schema(case: Any, member: dict[str, str]) -> None:
    # Logout would end the member's login for the rest of the run; it is checked anonymously.
    headers = None if case.path.endswith("/logout") else member
    if f"{case.method} {case.path}" in KNOWN_SCHEMA_GAPS:
        checks = [not_a_server_error]
    else:
        checks = [not_a_server_error, response_schema_conformance, content_type_conformance]
    case.call_and_validate(headers=headers, checks=checks, timeout=30)
