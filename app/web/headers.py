"""Security headers and the CSRF nonce cookie, as plain ASGI middleware.

Every answer gets the Content-Security-Policy (no inline script or style; the OpenAPI page at
/api/docs loads its own), nosniff, a same-origin referrer and no framing. A browser without a
CSRF nonce cookie gets one (HttpOnly, SameSite=Lax) with its first page; the nonce is in
``request.state.csrf_nonce`` for the forms (app/web/deps.py signs it).

Plain ASGI rather than ``@app.middleware("http")``: Starlette's BaseHTTPMiddleware runs the
app in a task of its own and streams the answer through a memory channel, which cost about a
tenth of a command post's CPU.
"""

from __future__ import annotations

import secrets

from starlette.datastructures import MutableHeaders
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSRF_COOKIE = "bbsgm_csrf"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)
FIXED = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
)


def new_csrf_nonce() -> str:
    return secrets.token_urlsafe(24)


def _cookie_header(nonce: str, secure: bool) -> str:
    """The Set-Cookie value, formatted by Starlette as Response.set_cookie would."""
    holder = Response()
    holder.set_cookie(CSRF_COOKIE, nonce, httponly=True, samesite="lax", secure=secure, path="/")
    return holder.headers["set-cookie"]


class SecurityHeaders:
    def __init__(self, app: ASGIApp, secure_cookies: bool) -> None:
        self.app = app
        self.secure_cookies = secure_cookies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = HTTPConnection(scope).cookies.get(CSRF_COOKIE, "")
        fresh = not (0 < len(nonce) <= 64)
        if fresh:
            nonce = new_csrf_nonce()
        scope.setdefault("state", {})["csrf_nonce"] = nonce
        path = str(scope.get("path", ""))
        set_cookie = fresh and not path.startswith("/api")

        async def answer(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                if set_cookie:
                    headers.append("set-cookie", _cookie_header(nonce, self.secure_cookies))
                if path != "/api/docs":
                    headers.setdefault("Content-Security-Policy", CSP)
                for name, value in FIXED:
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, answer)
