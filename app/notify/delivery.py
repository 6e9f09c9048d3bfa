"""Delivering notifications by webhook (Discord- and Slack-compatible JSON) and by mail.

Off the request path: a post only writes ``deliveries`` rows in its own transaction; a worker
(inside ``bbsgm serve`` and as ``bbsgm deliver``) claims due rows with a short lease, sends
without holding any database lock, and records the outcome. Failures are retried with
exponential back-off; every attempt is in the delivery log."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.message import EmailMessage
from urllib.parse import urlsplit

import httpx
from sqlalchemy import (
    Table,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
)
from sqlalchemy.orm import Session

from app.config import Settings
from app.db.engine import Database, is_postgres
from app.db.models import (
    Delivery,
    Game,
    Move,
    Notification,
    User,
    Webhook,
    utcnow,
)
from app.errors import Invalid, NotFound
from app.games import find_game
from app.gm import secrecy

log = logging.getLogger("bbsgm.delivery")
MAX_WEBHOOKS = 5
KEPT_REMOVED_WEBHOOKS = 5  # removed ones kept (inactive) for the delivery log
MAX_ATTEMPTS = 6
FIRST_RETRY = timedelta(seconds=30)
LEASE = timedelta(seconds=60)
BATCH = 50
# Links of a message whose subscription predates the record of where it was made from (and
# no BBSGM_BASE_URL): what every link used before that record.
FALLBACK_BASE_URL = "http://127.0.0.1:8000"


def validate_url(raw: str) -> str:
    """A webhook URL as it is stored: one that httpx, which sends it, takes as it is."""
    url = raw.strip()
    if len(url) > 500 or any(ch.isspace() or not ch.isprintable() for ch in url):
        raise Invalid("Webhook の URL が長すぎるか、空白や制御文字を含んでいます。", field="url")
    try:
        parts = urlsplit(url)
        complete = parts.scheme in ("http", "https") and bool(parts.hostname)
        httpx.URL(url)
    except (ValueError, httpx.InvalidURL):  # "http://[::1": unbalanced brackets, say
        complete = False
    if not complete:
        raise Invalid(
            "Webhook の URL は http:// か https:// で始まる完全な URL にしてください。", field="url"
        )
    if parts.username or parts.password:
        raise Invalid("Webhook の URL に利用者名やパスワードは書けません。", field="url")
    return url


def request_base_url(base_url: str, root_path: str = "") -> str | None:
    """The site's address as a request saw it (Starlette's ``request.base_url``: the scheme,
    through a trusted proxy's X-Forwarded-Proto, the Host header and the root path), kept
    with a subscription for the links in its messages. None for a Host header that makes no
    plain address (a path, a query, credentials, a bad port): such links would lead nowhere."""
    base = base_url.rstrip("/")
    if len(base) > 200 or any(ch.isspace() or not ch.isprintable() for ch in base):
        return None
    try:
        parts = urlsplit(base)
        parts.port  # noqa: B018 — raises ValueError for a port that is no number
    except ValueError:
        return None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or "?" in base
        or "#" in base
        or parts.path != root_path.rstrip("/")
    ):
        return None
    return base


def add_webhook(session: Session, user: User, raw_url: str, base_url: str | None = None) -> Webhook:
    """``base_url``: the site's address as the registering request saw it
    (``request_base_url``), for the links in this webhook's messages."""
    url = validate_url(raw_url)
    hooks = list_webhooks(session, user)
    if len(hooks) >= MAX_WEBHOOKS:
        raise Invalid(f"Webhook は{MAX_WEBHOOKS}個までです。", field="url")
    if any(h.url == url for h in hooks):
        raise Invalid("その URL はもう登録されています。", field="url")
    hook = Webhook(user_id=user.id, url=url, base_url=base_url)
    session.add(hook)
    session.flush()
    return hook


def list_webhooks(session: Session, user: User) -> list[Webhook]:
    return list(
        session.scalars(
            select(Webhook)
            .where(Webhook.user_id == user.id, Webhook.active.is_(True))
            .order_by(Webhook.id)
        )
    )


def remove_webhook(session: Session, user: User, hook_id: int) -> None:
    hook = session.get(Webhook, hook_id) if 0 < hook_id < 2**31 else None
    if hook is None or hook.user_id != user.id or not hook.active:
        raise NotFound("その Webhook はありません。")
    hook.active = False
    session.flush()
    # A removed webhook is kept, inactive, for its delivery log; only the newest few are:
    # older ones go with their deliveries, so adding and removing never grows without bound.
    removed = (Webhook.user_id == user.id, Webhook.active.is_(False))
    kept = session.scalars(
        select(Webhook.id).where(*removed).order_by(Webhook.id.desc()).limit(KEPT_REMOVED_WEBHOOKS)
    ).all()
    session.execute(delete(Webhook).where(*removed, Webhook.id.not_in(kept)))


def set_email(
    session: Session, user: User, email: str | None, notify: bool, base_url: str | None = None
) -> None:
    """``base_url``: the site's address as the request saw it, for the links in the mail."""
    address = (email or "").strip() or None
    if address is not None and (
        len(address) > 254
        or address.count("@") != 1
        or any(c.isspace() for c in address)
        or not all(address.split("@"))
    ):
        raise Invalid("メールアドレスの形が正しくありません。", field="email")
    if notify and address is None:
        raise Invalid("メール通知を受けるにはメールアドレスが必要です。", field="email")
    user.email = address
    user.email_notify = notify
    if base_url is not None:
        user.email_base_url = base_url
    session.flush()


def queue(session: Session, notifications: Sequence[tuple[int, int]], now: datetime) -> None:
    """For notifications just written — (notification id, user id) — one pending delivery per
    active webhook of the user, and one mail if that user opted in. The users' settings and
    their active webhooks are read by key in one query (the users joined to their hooks); the
    deliveries written by one INSERT."""
    if not notifications:
        return
    user_ids = sorted({user_id for _note, user_id in notifications})
    hooks: dict[int, list[tuple[int, str]]] = {}
    mail: dict[int, str] = {}
    for user_id, email, email_notify, hook_id, url in session.execute(
        _TARGETS_OF, {"user_ids": user_ids}
    ):
        if email_notify and email:
            mail[user_id] = email
        if hook_id is not None:
            hooks.setdefault(user_id, []).append((hook_id, url))
    rows: list[dict[str, object]] = []
    for note_id, user_id in notifications:
        targets: list[tuple[str, int | None, str]] = [
            ("webhook", hook_id, url) for hook_id, url in hooks.get(user_id, [])
        ]
        if user_id in mail:
            targets.append(("email", None, mail[user_id]))
        rows.extend(
            {
                "notification_id": note_id,
                "channel": channel,
                "webhook_id": hook_id,
                "target": target,
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "created_at": now,
            }
            for channel, hook_id, target in targets
        )
    if rows:
        session.execute(insert(Delivery), rows)


_USERS: Table = User.__table__  # type: ignore[assignment]
_WEBHOOKS: Table = Webhook.__table__  # type: ignore[assignment]
# Built once: the told users' mail settings, each with its active webhooks in order (one row
# a hook; one row with no hook for a user who has none).
_TARGETS_OF = (
    select(_USERS.c.id, _USERS.c.email, _USERS.c.email_notify, _WEBHOOKS.c.id, _WEBHOOKS.c.url)
    .select_from(
        _USERS.outerjoin(
            _WEBHOOKS,
            and_(_WEBHOOKS.c.user_id == _USERS.c.id, _WEBHOOKS.c.active.is_(True)),
        )
    )
    .where(_USERS.c.id.in_(bindparam("user_ids", expanding=True)))
    .order_by(_USERS.c.id, _WEBHOOKS.c.id)
)


def deliveries_for(session: Session, user: User, limit: int = 50) -> list[Delivery]:
    return list(
        session.scalars(
            select(Delivery)
            .join(Notification, Delivery.notification_id == Notification.id)
            .where(Notification.user_id == user.id)
            .order_by(Delivery.id.desc())
            .limit(limit)
        )
    )


@dataclass
class Job:
    delivery_id: int
    channel: str
    target: str
    subject: str
    text: str
    payload: dict[str, object]


def _base_url(session: Session, delivery: Delivery, note: Notification) -> str:
    """Where the links of a message lead when BBSGM_BASE_URL is unset: the address the webhook
    was registered from, or the mail set up from; for rows older than that record, the old
    default."""
    base: str | None = None
    if delivery.webhook_id is not None:
        hook = session.get(Webhook, delivery.webhook_id)
        base = hook.base_url if hook is not None else None
    elif delivery.channel == "email":
        user = session.get(User, note.user_id)
        base = user.email_base_url if user is not None else None
    return base or FALLBACK_BASE_URL


def _claim(db: Database, now: datetime, base_url: str | None) -> list[Job]:
    """Take due deliveries for LEASE (so another worker skips them) and build their messages
    (links on ``base_url``, BBSGM_BASE_URL, or where each subscription was made from)."""
    with db.session() as session:
        query = (
            select(Delivery)
            .where(
                or_(Delivery.status == "pending", Delivery.status == "sending"),
                Delivery.next_attempt_at <= now,
            )
            .order_by(Delivery.next_attempt_at, Delivery.id)
            .limit(BATCH)
        )
        if is_postgres(session):
            query = query.with_for_update(skip_locked=True)
        jobs = []
        for delivery in session.scalars(query):
            note = session.get(Notification, delivery.notification_id)
            if note is None:
                delivery.status = "failed"
                continue
            delivery.status = "sending"
            delivery.attempts += 1
            delivery.next_attempt_at = now + LEASE
            base = base_url or _base_url(session, delivery, note)
            jobs.append(_job(session, delivery, note, base))
        session.commit()
        return jobs


def _job(session: Session, delivery: Delivery, note: Notification, base_url: str) -> Job:
    link = f"{base_url}{note.url}"
    game = session.get(Game, note.game_id) if note.game_id is not None else None
    lines = [note.text, link]
    picture: str | None = None
    if game is not None:
        applied = session.scalar(
            select(func.count())
            .select_from(Move)
            .where(Move.game_id == game.id, Move.undone.is_(False))
        )
        # The board as it stands when the notice goes out, so a reader elsewhere sees it.
        at = f"?at={applied}" if game.started_at is not None else ""
        picture = f"{base_url}/api/games/{game.id}/board.svg{at}"
        lines.append(f"盤面の図: {picture}")
        moves = list(
            session.scalars(
                select(Move)
                .where(Move.game_id == game.id, Move.undone.is_(False))
                .order_by(Move.seq.desc())
                .limit(5)
            )
        )
        impl = find_game(game.kind)
        kind = impl.title_ja if impl is not None else game.kind  # the game's name, not its key
        lines.insert(1, f"ゲーム: {game.title}（{kind}）")
        if moves:
            # Off the site: what anyone may read (a channel has readers besides its owner).
            reader = secrecy.public_reader(game)
            lines.append("最近の手:")
            lines.extend(
                f"  {m.actor_name if m.actor_seat is not None else 'GM'}: {reader.shown(m)}"
                for m in reversed(moves)
            )
    text = "\n".join(lines)
    payload: dict[str, object] = {
        "content": text,  # Discord
        "text": text,  # Slack
        "bbsgm": {
            "kind": note.kind,
            "url": link,
            "game_id": note.game_id,
            "board": picture,
            "created_at": note.created_at.isoformat(),
        },
    }
    return Job(
        delivery.id, delivery.channel, delivery.target, f"[bbsgm] {note.text}", text, payload
    )


def _send(job: Job, settings: Settings, transport: httpx.BaseTransport | None) -> int | None:
    if job.channel == "webhook":
        with httpx.Client(timeout=10, transport=transport, follow_redirects=False) as client:
            response = client.post(
                job.target, json=job.payload, headers={"User-Agent": "bbsgm-webhook/1"}
            )
        if response.status_code >= 300:
            raise RuntimeError(f"HTTP {response.status_code}")
        return response.status_code
    if not settings.smtp_host:
        raise RuntimeError("SMTP is not configured (BBSGM_SMTP_HOST)")
    message = EmailMessage()
    message["From"] = settings.smtp_from
    message["To"] = job.target
    message["Subject"] = job.subject
    message.set_content(job.text)
    with smtplib.SMTP(settings.smtp_host, settings.smtp_port, timeout=10) as smtp:
        if settings.smtp_starttls:
            smtp.starttls()
        if settings.smtp_user:
            smtp.login(settings.smtp_user, settings.smtp_password or "")
        smtp.send_message(message)
    return None


def deliver_due(
    db: Database,
    settings: Settings,
    now: datetime | None = None,
    transport: httpx.BaseTransport | None = None,
) -> dict[str, int]:
    """Send what is due; returns counts of sent / retried / failed."""
    now = now or utcnow()
    counts = {"sent": 0, "retry": 0, "failed": 0}
    configured = settings.base_url.rstrip("/") if settings.base_url else None
    for job in _claim(db, now, configured):
        error: str | None = None
        status: int | None = None
        permanent = False
        try:
            status = _send(job, settings, transport)
        except (httpx.HTTPError, OSError, smtplib.SMTPException, RuntimeError) as exc:
            error = str(exc) or type(exc).__name__
        except httpx.InvalidURL as exc:  # stored before validate_url refused such URLs
            error, permanent = f"invalid URL: {exc}", True
        with db.session() as session:
            delivery = session.get(Delivery, job.delivery_id)
            if delivery is None:
                continue
            delivery.response_status = status
            if error is None:
                delivery.status, delivery.delivered_at, delivery.last_error = "sent", now, None
                counts["sent"] += 1
            elif delivery.attempts >= MAX_ATTEMPTS or permanent:
                delivery.status, delivery.last_error = "failed", error
                counts["failed"] += 1
            else:
                delivery.status, delivery.last_error = "pending", error
                delivery.next_attempt_at = now + FIRST_RETRY * 2 ** (delivery.attempts - 1)
                counts["retry"] += 1
            session.commit()
    return counts
