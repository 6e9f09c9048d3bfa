"""Limits on what one client may send: posting rates (counted in the database) and request size.

Rate limits are sliding-window counters (the weighted sum of the current and the previous
fixed window, as Cloudflare describes them) kept in the ``rate_limits`` table, so every worker
process and every host sharing the database sees the same counts; nothing lives in process
memory. Only allowed attempts are counted: a refused one is taken back, so a client that keeps
retrying is let in again as soon as ``Retry-After`` says. A refusal is ``RateLimited`` (429);
the app adds ``Retry-After`` to the answer (``retry_after_header`` in app/main.py).

Most counters run in their own short transaction, committed before the action itself, so an
attempt that then fails (a wrong password, an invalid body) still counts. A post and a sealed
command, the busiest writes, are counted at the end of their own transaction instead
(``counted_post``): one transaction a post, not two, and a counter row still held locked only
from the count to the commit, never while the post waits for its game; a post that fails is
rolled back and then counted in a transaction of its own, so it counts as well.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import ipaddress
import json
import math
import time
import unicodedata
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from fastapi import Request
from sqlalchemy import (
    ColumnElement,
    Table,
    bindparam,
    delete,
    literal_column,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app import i18n
from app.config import Settings
from app.db.models import RateLimit, User
from app.errors import ServiceError

MINUTE = 60
HOUR = 3600
T = TypeVar("T")


class RateLimited(ServiceError):
    """Too many attempts; ``retry_after`` is the number of seconds until one is allowed again."""

    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Rule:
    """At most ``limit`` attempts per ``window`` seconds for one key (0: no limit)."""

    key: str
    limit: int
    window: int
    what: str  # for the message: 書き込み, 登録, ログイン


# --- the counter ---------------------------------------------------------------------------


_COUNTERS: Table = RateLimit.__table__  # type: ignore[assignment]
_EXPIRED = delete(_COUNTERS).where(_COUNTERS.c.expires_at < bindparam("now"))


# The counted row's hits in the window before it: the key's row whose start and end add up to
# twice the counted row's start (a counter lives two windows). Written out: SQLAlchemy neither
# qualifies RETURNING columns on SQLite nor correlates a subquery there, and both dialects read
# ``rate_limits.…`` as the row just counted.
_PREVIOUS_HITS: ColumnElement[int] = literal_column(
    "(SELECT earlier.hits FROM rate_limits AS earlier"
    " WHERE earlier.key = rate_limits.key"
    " AND earlier.window_start + earlier.expires_at = 2 * rate_limits.window_start)"
)


@functools.cache
def _upsert(dialect: str) -> Any:
    """Count an attempt under one key: its current counter goes up by one, or starts at 1,
    and RETURNING gives its key, its hits and those of the window before it. One row a
    statement, so SQLAlchemy caches its compiled form; several keys are counted by executing
    it with a list of parameters, which SQLAlchemy sends as one multi-row INSERT (its
    "insertmanyvalues" executemany), rows in key order.

    The window before is the key's row whose start and end add up to twice the current
    start (a counter lives two windows: ``expires_at = window_start + 2 * window``)."""
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    return (
        insert(_COUNTERS)
        .values(
            key=bindparam("key"),
            window_start=bindparam("start"),
            hits=1,
            expires_at=bindparam("ends"),
        )
        .on_conflict_do_update(
            index_elements=[_COUNTERS.c.key, _COUNTERS.c.window_start],
            set_={"hits": _COUNTERS.c.hits + 1},
        )
        .returning(_COUNTERS.c.key, _COUNTERS.c.hits, _PREVIOUS_HITS)
    )


def count(session: Session, rules: Sequence[Rule], now: float) -> tuple[Rule, int] | None:
    """Count one attempt under every rule (``_upsert``, in key order). Returns the first
    full rule and the seconds until it has room (its attempt stays counted: the caller rolls
    back), or None.

    The caller commits. On PostgreSQL the upsert holds the counter rows until then, so
    concurrent attempts on one key are counted one after another (rows in key order, so two
    requests never wait for each other's rows); SQLite transactions here are BEGIN IMMEDIATE.
    """
    rules = sorted(rules, key=lambda r: r.key)
    if len({rule.key for rule in rules}) != len(rules):
        raise ValueError("one rule per key")  # one row cannot be counted twice in a statement
    starts = {rule.key: int(now // rule.window) * rule.window for rule in rules}
    current: dict[str, int] = {}
    previous: dict[str, int] = {}
    if rules:
        upsert = _upsert(session.get_bind().dialect.name)
        counted = session.execute(
            upsert,
            [
                {
                    "key": rule.key,
                    "start": starts[rule.key],
                    "ends": starts[rule.key] + 2 * rule.window,
                }
                for rule in rules
            ],
        )
        for key, hits, earlier in counted:
            current[key], previous[key] = hits, earlier or 0
    if 1 in current.values():
        # A key's first attempt in a window: a good moment to drop every counter that expired.
        _drop_expired(session, now)
    for rule in rules:
        wait = _wait_if_over(rule, previous[rule.key], current[rule.key], now - starts[rule.key])
        if wait is not None:
            return rule, wait
    return None


def _wait_if_over(rule: Rule, earlier: int, current: int, elapsed: float) -> int | None:
    """The sliding-window estimate, ``elapsed`` seconds into the current window, with
    ``current`` attempts in it (this one included) and ``earlier`` in the window before: None
    if it is within the limit, else the seconds until this attempt would fit."""
    if earlier * (rule.window - elapsed) / rule.window + current <= rule.limit:
        return None
    return retry_after(earlier, current - 1, rule.limit, rule.window, elapsed)


def hit(session: Session, key: str, limit: int, window: int, now: float) -> int | None:
    """Count one attempt for ``key``; None if allowed, else the seconds until one would be.
    A refused attempt is taken back at once. The caller commits."""
    rules = [Rule(key, limit, window, "")]
    refused = count(session, rules, now)
    if refused is None:
        return None
    _take_back(session, rules, now)
    return refused[1]


def _drop_expired(session: Session, now: float) -> None:
    """Deletes every counter that expired."""
    session.execute(_EXPIRED, {"now": int(now)})


def _take_back(session: Session, rules: Sequence[Rule], now: float) -> None:
    """Undo an attempt ``count`` counted (one that is refused, where rolling back is not how)."""
    for rule in rules:
        start = int(now // rule.window) * rule.window
        session.execute(
            update(RateLimit)
            .where(RateLimit.key == rule.key, RateLimit.window_start == start)
            .values(hits=RateLimit.hits - 1)
        )


def retry_after(previous: int, current: int, limit: int, window: int, elapsed: float) -> int:
    """Seconds until one more attempt fits, if nobody tries meanwhile (at least 1).

    The estimate at ``elapsed`` seconds into the window is ``previous * (1 - elapsed/window) +
    current``; in the next window the current count becomes the previous one.
    """
    room = limit - 1 - current  # what the previous window's weight must shrink to
    if room >= 0:
        if previous <= room:
            return 1
        wait = window * (1 - room / previous) - elapsed
    else:  # not before the next window, where this window's count weighs less and less
        wait = (window - elapsed) + window * (1 - (limit - 1) / current)
    return max(1, math.ceil(wait))


# --- who is asking -------------------------------------------------------------------------


def client_address(request: Request) -> str:
    """The client's address (uvicorn applies X-Forwarded-For from trusted proxies first).

    IPv6 clients are counted by their /64: one host usually holds a whole /64.
    """
    return _address_key(request.client.host if request.client is not None else "unknown")


@functools.lru_cache(maxsize=4096)
def _address_key(host: str) -> str:
    """``client_address`` of a host (remembered: parsed for every post otherwise)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def _subject(text: str) -> str:
    """Keys stay short whatever was typed (a login name may be up to 200 characters)."""
    text = unicodedata.normalize("NFKC", text).strip().casefold()
    if len(text) <= 64 and text.isprintable():
        return text
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


# --- the checks the routes call ------------------------------------------------------------


def enforce(
    session: Session, request: Request, rules: Sequence[Rule], now: float | None = None
) -> None:
    """Count an attempt under every rule; raise RateLimited (nothing counted) if one is full.

    Commits (or, refused, rolls back) the session's transaction: call it first in a route,
    before anything is written.
    """
    # The counters commit with the reads done so far (the login lookup), before the action
    # itself has its own transaction: one more transaction per attempt, not two.
    _count_or_refuse(session, request, rules, commit=True, now=now)


def _count_or_refuse(
    session: Session,
    request: Request,
    rules: Sequence[Rule],
    *,
    commit: bool,
    now: float | None = None,
) -> None:
    active = _active(request, rules)
    if not active:
        return
    refused = count(session, active, time.time() if now is None else now)
    if refused is None:
        if commit:
            session.commit()
        return
    _refuse(session, request, *refused)


def _refuse(session: Session, request: Request, rule: Rule, wait: int) -> NoReturn:
    session.rollback()  # nothing is counted for a refused attempt (nor anything else done)
    request.state.retry_after = wait
    per = {MINUTE: "1分間", HOUR: "1時間"}.get(rule.window, f"{rule.window}秒間")
    raise RateLimited(
        f"{rule.what}が多すぎます（{per}に{rule.limit}回まで）。"
        f"{wait}秒後にもう一度お試しください。",
        retry_after=wait,
    )


def check_post(session: Session, request: Request, user: User) -> None:
    """Posts, new threads, new games, sealed commands and previews: per account and address."""
    enforce(session, request, _post_rules(request, user))


def counted_post(session: Session, request: Request, user: User, action: Callable[[], T]) -> T:
    """``action()`` (a post, a sealed command) counted under ``check_post``'s rules at the end
    of its own transaction, which the caller then commits: the count commits with the post.

    Answers as ``check_post`` first would. Over a limit, the action is rolled back and
    RateLimited raised: nothing done, nothing counted. If the action raises, it is rolled
    back and its attempt counted in a transaction of its own (committed), so that failing
    attempts count too; over a limit, RateLimited is raised instead of its error.

    The counter rows are taken last, after the game's and the thread's: on PostgreSQL they
    are held from the count to the commit, and no transaction holding one waits for another
    lock (every other count commits at once), so posts from one address never queue on their
    address's row for longer than a commit."""
    rules = _active(request, _post_rules(request, user))
    if not rules:
        return action()
    try:
        result = action()
    except Exception:
        session.rollback()
        _count_or_refuse(session, request, rules, commit=True)
        raise
    refused = count(session, rules, time.time())
    if refused is not None:
        _refuse(session, request, *refused)
    return result


def _active(request: Request, rules: Sequence[Rule]) -> list[Rule]:
    """The rules that limit anything, in key order (none while rate limits are off)."""
    if not _settings(request).rate_limits:
        return []
    return sorted((r for r in rules if r.limit > 0), key=lambda r: r.key)


def _post_rules(request: Request, user: User | None) -> list[Rule]:
    """The address's rule, then the account's (``user`` None: its key is left empty)."""
    settings = _settings(request)
    return [
        Rule(
            f"post:addr:{client_address(request)}",
            settings.posts_per_minute_per_address,
            MINUTE,
            "この接続元からの書き込み",
        ),
        Rule(
            f"post:user:{user.id}" if user is not None else "",
            settings.posts_per_minute_per_account,
            MINUTE,
            "書き込み",
        ),
    ]


def check_settings(session: Session, request: Request, user: User) -> None:
    """Changes to what a user keeps — webhooks, the mail address, the private feed's URL —
    per account: each writes a row, and nothing else bounds how fast they come."""
    settings = _settings(request)
    enforce(
        session,
        request,
        [
            Rule(
                f"settings:user:{user.id}",
                settings.settings_changes_per_minute_per_account,
                MINUTE,
                "設定の変更",
            )
        ],
    )


def check_register(session: Session, request: Request) -> None:
    settings = _settings(request)
    enforce(
        session,
        request,
        [
            Rule(
                f"register:addr:{client_address(request)}",
                settings.registrations_per_hour_per_address,
                HOUR,
                "この接続元からの登録",
            )
        ],
    )


def check_login(session: Session, request: Request, name: str) -> None:
    """Per address, and per account name tried (guessing one account's password)."""
    settings = _settings(request)
    enforce(
        session,
        request,
        [
            Rule(
                f"login:addr:{client_address(request)}",
                settings.logins_per_minute_per_address,
                MINUTE,
                "この接続元からのログイン",
            ),
            Rule(
                f"login:name:{_subject(name)}",
                settings.logins_per_minute_per_account,
                MINUTE,
                "この名前へのログインの試み",
            ),
        ],
    )


# --- request size --------------------------------------------------------------------------


def in_flight_limit(settings: Settings) -> int:
    """``max_requests_in_flight``, or its default for the database in use."""
    if settings.max_requests_in_flight is not None:
        return settings.max_requests_in_flight
    return 2 if settings.is_sqlite else 6


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class RequestLimits:
    """ASGI middleware in front of the app, per process:

    - a request body over ``max_bytes`` gets 413 and never reaches the app: a declared
      Content-Length over it is refused before anything is read, and a body sent without one
      (chunked) is read up to the limit;
    - at most ``max_in_flight`` requests are inside the app at once; the others wait here, in
      the event loop, holding neither a worker thread nor a database connection. A request
      holds a pooled connection from its first read to the end of its route, and a write
      route on SQLite the write lock from its first write to its commit, across hops between
      worker threads; with more requests inside than threads or pooled connections, the
      holders starved and the rest timed out after 30 s (500s at 64 clients on one process,
      tests/test_load_*). The
      body is read before a place is taken, so slow uploads cannot hold places, and the place
      is given back when the answer starts (a live event stream holds none);
    - a 429 answer gets the ``Retry-After`` that ``enforce`` left in the request state.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, max_in_flight: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.places = asyncio.Semaphore(max_in_flight)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away before its request was complete
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body: bytes | None = b"".join(chunks)

        async def replay() -> Message:
            nonlocal body
            if body is None:
                return await receive()  # after the body: wait for the disconnect
            message, body = {"type": "http.request", "body": body, "more_body": False}, None
            return message

        holding = False

        def give_back() -> None:
            nonlocal holding
            if holding:
                holding = False
                self.places.release()

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start":
                give_back()
                if message["status"] == 429:
                    wait = scope.get("state", {}).get("retry_after")
                    if wait is not None:
                        headers = [*message.get("headers", []), (b"retry-after", b"%d" % wait)]
                        message = {**message, "headers": headers}
            await send(message)

        await self.places.acquire()
        holding = True
        try:
            await self.app(scope, replay, answer)
        finally:
            give_back()

    async def _refuse(self, scope: Scope, send: Send) -> None:
        limit_kib = self.max_bytes // 1024
        template = i18n.N_("リクエストが大きすぎます（%(kib)s KiB まで）。")
        if str(scope.get("path", "")).startswith("/api"):  # the API speaks Japanese
            message = template % {"kib": limit_kib}
            body = json.dumps({"detail": message}, ensure_ascii=False).encode()
            content_type = b"application/json"
        else:  # a page in the reader's language (LanguageMiddleware runs outside this one)
            message = i18n.gettext(template) % {"kib": limit_kib}
            lang = i18n.current_language()
            body = (
                f'<!doctype html><html lang="{lang}"><meta charset="utf-8">'
                f"<title>413</title><h1>413</h1><p>{message}</p></html>"
            ).encode()
            content_type = b"text/html; charset=utf-8"
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", content_type),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
