"""Atom feeds and the notification pages."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request, Response
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from app.accounts import ratelimit
from app.api.schemas import ERROR_RESPONSES
from app.db.models import User
from app.errors import ServiceError
from app.forum import service as forum
from app.notify import delivery, feeds
from app.web import deps, http_cache, thread_cache
from app.web.common import CSRF_MESSAGE, redirect, render
from app.web.deps import ApiUser, PageUser, ReadSession, WriteSession

# The pages are left out of the schema; the /api/me routes answer errors like every API router.
router = APIRouter(responses=ERROR_RESPONSES)
ATOM = "application/atom+xml; charset=utf-8"


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _subscription_base(request: Request) -> str | None:
    """The site's address as this request saw it, kept with a webhook or the mail settings
    for their links when BBSGM_BASE_URL is unset."""
    return delivery.request_base_url(str(request.base_url), request.scope.get("root_path", ""))


@router.get("/feeds/{token}.atom", include_in_schema=False)
def private_feed(request: Request, token: str, session: ReadSession) -> Response:
    user = feeds.user_for_feed(session, token)
    body = feeds.user_feed(session, user, _base(request))
    return Response(body, media_type=ATOM, headers={"Cache-Control": "private, no-store"})


@router.get("/boards/{slug}/feed.atom", include_in_schema=False)
def board_feed(request: Request, slug: str, session: ReadSession) -> Response:
    base = _base(request)
    key = thread_cache.board_feed_key(session, forum.get_board(session, slug), feeds.ENTRIES)
    body, digest = thread_cache.cached_file(
        (*key, base), lambda: feeds.board_feed(session, slug, base)
    )
    return _feed_response(request, body, digest)


@router.get("/threads/{thread_id}/feed.atom", include_in_schema=False)
def thread_feed(request: Request, thread_id: int, session: ReadSession) -> Response:
    base = _base(request)
    thread = forum.get_thread(session, thread_id)
    version = thread_cache.thread_version(session, thread, None)
    key = ("thread-feed", thread.id, thread.title, version.post_count, version.moderation, base)
    body, digest = thread_cache.cached_file(
        key, lambda: feeds.thread_feed(session, thread_id, base)
    )
    return _feed_response(request, body, digest)


def _feed_response(request: Request, body: bytes, digest: bytes) -> Response:
    """The same bytes for every reader: any cache may keep them, asking each time."""
    tag = http_cache.etag(digest)
    return http_cache.conditional(
        request, body, tag, media_type=ATOM, cache_control=http_cache.PUBLIC
    )


def _notifications(
    request: Request, session: Session, user: User, status: int = 200, **extra: Any
) -> Response:
    context: dict[str, Any] = {
        "groups": feeds.notification_groups(session, user),
        "has_feed": feeds.has_feed(session, user),
        "feed_url": None,
        "webhooks": delivery.list_webhooks(session, user),
        "deliveries": delivery.deliveries_for(session, user, 20),
        "error": None,
        "typed_url": "",
        "typed_email": user.email or "",
        **extra,
    }
    return render(request, "notifications.html", user, status, **context)


@router.get("/notifications", include_in_schema=False)
def notifications_page(request: Request, session: ReadSession, user: PageUser) -> Response:
    if user is None:
        return redirect("/login?next=/notifications")
    return _notifications(request, session, user)


@router.post("/notifications/feed", include_in_schema=False)
def feed_token(
    request: Request,
    session: WriteSession,
    user: PageUser,
    csrf_token: Annotated[str, Form()] = "",
    action: Annotated[str, Form()] = "new",
) -> Response:
    if user is None:
        return redirect("/login?next=/notifications")
    if not deps.csrf_ok(request, csrf_token):
        return render(request, "error.html", user, 403, status=403, message=CSRF_MESSAGE)
    try:
        ratelimit.check_settings(session, request, user)
    except ServiceError as exc:
        return _notifications(request, session, user, exc.status, error=exc.message)
    url = None
    if action == "revoke":
        feeds.revoke_feed_tokens(session, user)
    else:
        url = f"{_base(request)}/feeds/{feeds.new_feed_token(session, user)}.atom"
    return _notifications(request, session, user, feed_url=url, has_feed=url is not None)


@router.post("/api/me/feed", status_code=201)
def api_new_feed(request: Request, session: WriteSession, user: ApiUser) -> dict[str, str]:
    """A new private feed URL (the previous one stops working)."""
    ratelimit.check_settings(session, request, user)
    token = feeds.new_feed_token(session, user)
    return {"url": f"{_base(request)}/feeds/{token}.atom"}


@router.delete("/api/me/feed", status_code=204)
def api_revoke_feed(request: Request, session: WriteSession, user: ApiUser) -> Response:
    ratelimit.check_settings(session, request, user)
    feeds.revoke_feed_tokens(session, user)
    return Response(status_code=204)


@router.get("/api/me/notifications")
def api_notifications(session: ReadSession, user: ApiUser) -> list[dict[str, object]]:
    return [
        {
            "kind": n.kind,
            "text": n.text,
            "url": n.url,
            "game_id": n.game_id,
            "created_at": n.created_at.isoformat(),
        }
        for n in feeds.notifications_for(session, user)
    ]


class WebhookIn(BaseModel):
    url: str = Field(max_length=2000, json_schema_extra={"format": "uri"})  # http(s) only


class EmailIn(BaseModel):
    email: str | None = Field(default=None, max_length=1000, json_schema_extra={"format": "email"})
    notify: bool = False


@router.get("/api/me/webhooks")
def api_webhooks(session: ReadSession, user: ApiUser) -> list[dict[str, object]]:
    return [{"id": h.id, "url": h.url} for h in delivery.list_webhooks(session, user)]


@router.post("/api/me/webhooks", status_code=201)
def api_add_webhook(
    request: Request, body: WebhookIn, session: WriteSession, user: ApiUser
) -> dict[str, object]:
    ratelimit.check_settings(session, request, user)
    hook = delivery.add_webhook(session, user, body.url, _subscription_base(request))
    return {"id": hook.id, "url": hook.url}


@router.delete("/api/me/webhooks/{hook_id}", status_code=204)
def api_remove_webhook(
    hook_id: int, request: Request, session: WriteSession, user: ApiUser
) -> Response:
    ratelimit.check_settings(session, request, user)
    delivery.remove_webhook(session, user, hook_id)
    return Response(status_code=204)


@router.put("/api/me/email")
def api_email(
    request: Request, body: EmailIn, session: WriteSession, user: ApiUser
) -> dict[str, object]:
    ratelimit.check_settings(session, request, user)
    delivery.set_email(session, user, body.email, body.notify, _subscription_base(request))
    return {"email": user.email, "notify": user.email_notify}


@router.get("/api/me/deliveries")
def api_deliveries(session: ReadSession, user: ApiUser) -> list[dict[str, object]]:
    """The delivery log: every webhook and mail attempt for this user's notifications."""
    return [
        {
            "id": d.id,
            "channel": d.channel,
            "target": d.target,
            "status": d.status,
            "attempts": d.attempts,
            "response_status": d.response_status,
            "last_error": d.last_error,
            "created_at": d.created_at.isoformat(),
            "delivered_at": d.delivered_at.isoformat() if d.delivered_at else None,
        }
        for d in delivery.deliveries_for(session, user)
    ]


@router.post("/notifications/settings", include_in_schema=False)
def notification_settings(
    request: Request,
    session: WriteSession,
    user: PageUser,
    csrf_token: Annotated[str, Form()] = "",
    action: Annotated[str, Form()] = "",
    url: Annotated[str, Form()] = "",
    hook_id: Annotated[int, Form()] = 0,
    email: Annotated[str, Form()] = "",
    notify: Annotated[str, Form()] = "",
) -> Response:
    """Webhooks and mail from the notifications page (forms work without JavaScript)."""
    if user is None:
        return redirect("/login?next=/notifications")
    if not deps.csrf_ok(request, csrf_token):
        return render(request, "error.html", user, 403, status=403, message=CSRF_MESSAGE)
    try:
        ratelimit.check_settings(session, request, user)
        if action == "add_webhook":
            delivery.add_webhook(session, user, url, _subscription_base(request))
        elif action == "remove_webhook":
            delivery.remove_webhook(session, user, hook_id)
        elif action == "email":
            delivery.set_email(session, user, email, notify == "on", _subscription_base(request))
    except ServiceError as exc:
        session.end_writes()
        return _notifications(
            request, session, user, exc.status, error=exc.message, typed_url=url, typed_email=email
        )
    return redirect("/notifications")
