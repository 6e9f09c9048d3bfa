"""Limits on what one client may send: posting rates (counted in the database) and request size.

Rate limits are sliding-window counters (the weighted sum of the current and the previous
fixed window, as Cloudflare describes them) kept in the ``rate_limits`` table, so every worker
process and every host sharing the database sees the same counts; nothing lives in process
memory. Only allowed attempts are counted: a refused one is taken back, so a client that keeps
retrying is let in again as soon as ``Retry-After`` says. A refusal is ``RateLimited`` (429);
the app adds ``Retry-After`` to the answer (``retry_after_header`` in app/main.py).

Counters run in their own short transaction, committed before the action itself, so an attempt
that then fails (a wrong password, an invalid body) still counts. The API's post route, the
busiest, counts without a transaction of its own (``counting_post``): on PostgreSQL each of
its statements before the post commits as it runs; on SQLite it counts inside the post's own
transaction, and in one of its own only when the post fails: the same counts, one commit less.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import ipaddress
import json
import logging
import math
import time
import unicodedata
from collections.abc import Awaitable, Callable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn

from fastapi import Request
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    String,
    Table,
    and_,
    bindparam,
    cast,
    delete,
    exists,
    literal,
    literal_column,
    null,
    select,
    true,
    union_all,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app import accounts, i18n
from app.config import Settings
from app.db import (
    Loading,
    Prepared,
    begin_now,
    each_statement_commits,
    gave_up_waiting,
    is_postgres,
)
from app.errors import ServiceError
from app.models import ApiToken, RateLimit, User

log = logging.getLogger("bbsgm.ratelimit")
MINUTE = 60
HOUR = 3600


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
_TOKENS: Table = ApiToken.__table__  # type: ignore[assignment]
_USERS: Table = User.__table__  # type: ignore[assignment]
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
def _upsert(dialect: str, keys: int) -> Prepared:
    """Count an attempt under each of ``keys`` keys in one statement, built once per dialect
    and number of keys: each key's current counter goes up by one, or starts at 1, and
    RETURNING gives the key, its hits and those of the window before it. (Run as a
    ``Prepared`` statement: SQLAlchemy's own cache cannot hold a multi-row VALUES list.)

    The window before is the key's row whose start and end add up to twice the current
    start (a counter lives two windows: ``expires_at = window_start + 2 * window``)."""
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    statement = insert(_COUNTERS).values(
        [
            {
                "key": bindparam(f"key_{n}"),
                "window_start": bindparam(f"start_{n}"),
                "hits": 1,
                "expires_at": bindparam(f"ends_{n}"),
            }
            for n in range(keys)
        ]
    )
    return Prepared(
        statement.on_conflict_do_update(
            index_elements=[_COUNTERS.c.key, _COUNTERS.c.window_start],
            set_={"hits": _COUNTERS.c.hits + 1},
        ).returning(_COUNTERS.c.key, _COUNTERS.c.hits, _PREVIOUS_HITS)
    )


def count(session: Session, rules: Sequence[Rule], now: float) -> tuple[Rule, int] | None:
    """Count one attempt under every rule, in one statement (``_upsert``). Returns the first
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
    params: dict[str, object] = {}
    for n, rule in enumerate(rules):
        start = starts[rule.key]
        params.update(
            {f"key_{n}": rule.key, f"start_{n}": start, f"ends_{n}": start + 2 * rule.window}
        )
    current: dict[str, int] = {}
    previous: dict[str, int] = {}
    if rules:
        upsert = _upsert(session.get_bind().dialect.name, len(rules))
        for key, hits, earlier in upsert.run(session, params):
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
    """Deletes every counter that expired. Best effort in the event loop, whose statements
    give up waiting for a lock (app/api/turns.py; there each statement commits as it runs, so
    one given up leaves nothing behind): another process dropping the same rows at the same
    moment must not send an attempt already counted to a worker thread to be counted again."""
    try:
        session.connection().execute(_EXPIRED, {"now": int(now)})
    except Exception as error:
        if not gave_up_waiting(error):
            raise
        log.info("expired counters left for the next attempt: %s", error)


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


_COUNTED = "bbsgm.post_counted"  # the request's attempt is counted (committed already)


@contextlib.contextmanager
def counting_post(
    session: Session,
    request: Request,
    signed_in: Callable[[], User],
    *,
    token: str | None = None,
    in_loop: bool = False,
) -> Iterator[User]:
    """``check_post`` for the busiest route, without a transaction of its own. ``signed_in``
    looks the client's token up (raising if there is none); the block gets its user.

    - PostgreSQL: the token is read and the attempt counted before the post's transaction,
      by one statement (``_signed_in_and_counted``, given the ``token``; ``signed_in`` then
      only answers a token that signs nobody in), committing as it runs
      (``app.db.each_statement_commits``): counted
      inside the post, the counter row of a client address — one row for every post from it —
      stayed locked until the post committed, and posts from one address queued on it. A
      full counter takes the attempt back and answers 429 before any work; a post that fails
      afterwards stays counted, as an attempt. A post done again (a write in the event loop
      that gave up waiting for a lock, app/api/turns.py) is not counted again.
    - SQLite runs one transaction at a time anyway: the attempt is counted first, inside the
      post's transaction, and a full counter answers 429 before any work (nothing counted,
      as in ``enforce``). If the post fails (a 4xx, or anything else), its transaction is
      rolled back and the attempt is counted in a short one of its own — answered 429
      instead, if that is full. ``in_loop``: the post runs in the event loop
      (``app.db.begin_now``), which may never wait for the write lock — a worker thread that
      holds it may be waiting for the event loop. The failed attempt is counted there only if
      the lock is free that instant, else in a worker thread after the answer (which is then
      the post's own error, never 429).
    """
    if is_postgres(session):
        done = request.scope.get(_COUNTED)
        if done is not None:  # done again in a worker thread (app/api/turns.py)
            if done:  # refused the first time: refused again, nothing counted again
                _refuse(session, request, *done)
            yield signed_in()
            return
        with each_statement_commits(session):
            now = time.time()
            counted = _signed_in_and_counted(session, request, token, now) if token else None
            if counted is not None:
                user, rules, refused = counted
            else:
                user = signed_in()
                rules = _active(request, _post_rules(request, user))
                refused = count(session, rules, now) if rules else None
            # Counted (committed): a post done again must not count it twice, even if what
            # follows gives up in the event loop.
            request.scope[_COUNTED] = refused or ()
            if refused is not None:
                _take_back(session, rules, now)
        if refused is not None:  # after the block: the rollback gives the connection back
            _refuse(session, request, *refused)
        yield user
        return
    user = signed_in()
    rules = _post_rules(request, user)
    _count_or_refuse(session, request, rules, commit=False)
    try:
        yield user
    except RateLimited:
        raise
    except Exception:
        session.rollback()
        try:
            if not in_loop or begin_now(session):
                enforce(session, request, rules)
            else:
                _count_later(request, rules)
        except RateLimited:
            raise
        except Exception:  # the post's own error is the one to answer with
            log.warning("could not count a failed post", exc_info=True)
        raise


def _signed_in_and_counted(
    session: Session, request: Request, token: str, now: float
) -> tuple[User, list[Rule], tuple[Rule, int] | None] | None:
    """PostgreSQL: the user a bearer ``token`` signs in, with the post's attempt counted under
    their rules (``count``'s upsert, the account's key made from the token's user), by one
    statement: the token's read and the count were two round trips before every post
    (docs/benchmarks.md, round 17). Returns the user, the rules counted and ``count``'s answer;
    None if the token signs nobody in (unknown, expired or no token at all), and then nothing
    is counted."""
    digest = accounts.token_digest(token)
    if digest is None:
        return None
    shapes = _post_rules(request, None)
    active = {rule.key for rule in _active(request, shapes)}
    address, account = (rule.key in active for rule in shapes)
    params: dict[str, Any] = {
        "token_hash": digest,
        "kind": "api",
        "now_at": datetime.fromtimestamp(now, UTC),
        "address_key": shapes[0].key,
    }
    for name, rule in zip(("address", "account"), shapes, strict=True):
        start = int(now // rule.window) * rule.window
        params |= {f"{name}_start": start, f"{name}_ends": start + 2 * rule.window}
    rows = _sign_in_and_count(address, account).load(session, params)
    if not rows:
        return None
    user: User = rows[0][0]
    current: dict[str, int] = {}
    previous: dict[str, int] = {}
    for _user, (key, hits, earlier) in rows:
        if key is not None:
            current[key], previous[key] = hits, earlier or 0
    rules = _active(request, _post_rules(request, user))
    if {rule.key for rule in rules} != current.keys():  # the statement counts what the rules say
        raise RuntimeError(f"counted {sorted(current)} for the rules {[r.key for r in rules]}")
    if 1 in current.values():  # as ``count``: a key's first attempt in a window
        _drop_expired(session, now)
    for rule in rules:
        start = int(now // rule.window) * rule.window
        wait = _wait_if_over(rule, previous[rule.key], current[rule.key], now - start)
        if wait is not None:
            return user, rules, (rule, wait)
    return user, rules, None


@functools.cache
def _sign_in_and_count(address: bool, account: bool) -> Loading:
    """The token's user (``accounts._TOKEN``'s columns, the token unexpired) and, in a
    data-modifying WITH, ``_upsert``'s count of the attempt under the address's key and the
    account's (``post:user:<id>``, from the token's row), those of them that are limited, in
    key order, only if the token signs somebody in: one row per key counted (none counted:
    one row), each with the key, its hits and those of the window before."""
    tokens, users = _TOKENS, _USERS
    token_row = and_(
        tokens.c.token_hash == bindparam("token_hash"),
        tokens.c.kind == bindparam("kind"),
        tokens.c.expires_at > bindparam("now_at", type_=tokens.c.expires_at.type),
    )
    parts = []
    if address:
        parts.append(
            select(
                bindparam("address_key", type_=String()).label("key"),
                bindparam("address_start", type_=BigInteger()).label("start"),
                bindparam("address_ends", type_=BigInteger()).label("ends"),
            ).where(exists().where(token_row))
        )
    if account:
        parts.append(
            select(
                (literal("post:user:", String()) + cast(tokens.c.user_id, String())).label("key"),
                bindparam("account_start", type_=BigInteger()).label("start"),
                bindparam("account_ends", type_=BigInteger()).label("ends"),
            ).where(token_row)
        )
    found = select(*users.c).join(tokens, tokens.c.user_id == users.c.id).where(token_row)
    if not parts:
        keys = [null(), null(), null()]
        return Loading(User, found.add_columns(*keys), refresh=False)
    wanted = (union_all(*parts) if len(parts) > 1 else parts[0]).subquery("wanted")
    counted = (
        pg_insert(_COUNTERS)
        .from_select(
            ["key", "window_start", "hits", "expires_at"],
            select(wanted.c.key, wanted.c.start, literal(1, Integer()), wanted.c.ends).order_by(
                wanted.c.key
            ),
        )
        .on_conflict_do_update(
            index_elements=[_COUNTERS.c.key, _COUNTERS.c.window_start],
            set_={"hits": _COUNTERS.c.hits + 1},
        )
        .returning(_COUNTERS.c.key, _COUNTERS.c.hits, _PREVIOUS_HITS.label("earlier"))
        .cte("counted")
    )
    statement = (
        select(*users.c, counted.c.key, counted.c.hits, counted.c.earlier)
        .select_from(users.join(tokens, tokens.c.user_id == users.c.id).outerjoin(counted, true()))
        .where(token_row)
        .order_by(counted.c.key)
    )
    return Loading(User, statement, refresh=False)


def _count_later(request: Request, rules: list[Rule]) -> None:
    """Count an attempt in a worker thread, from the event loop, without waiting for it."""
    database = request.app.state.database

    def count_it() -> None:
        with database.session() as session:
            try:
                enforce(session, request, rules)
            except RateLimited:
                pass  # counted; the post was answered with its own error
            except Exception:
                log.warning("could not count a failed post", exc_info=True)

    asyncio.get_running_loop().run_in_executor(None, count_it)


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
      holds its session (on SQLite: the write lock, every transaction is BEGIN IMMEDIATE) from
      the auth dependency to the end of the route, across hops between worker threads; with
      more requests inside than threads or pooled connections, the holders starved and the
      rest timed out after 30 s (500s at 64 clients on one process, tests/test_load_*). The
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
