"""The language of the user interface (docs/i18n.md): Japanese, the source language of every
message, unless the reader chose English (the ``bbsgm_lang`` cookie or ``?lang=``).

The English catalog is the text file ``app/locale/en/LC_MESSAGES/messages.po``; it is compiled
in memory when the templates are made, so no binary ``.mo`` is kept in the repository. The
language of the request being served lives in a context variable: each request runs in its own
task (and its worker threads get a copy of that task's context), so concurrent requests in one
process never see each other's language.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from io import BytesIO
from pathlib import Path
from urllib.parse import parse_qsl

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from starlette.datastructures import MutableHeaders
from starlette.requests import cookie_parser
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_LANGUAGE = "ja"
# The source language first; every other one has a catalog under app/locale/.
LANGUAGES: dict[str, str] = {"ja": "日本語", "en": "English"}
COOKIE = "bbsgm_lang"
COOKIE_MAX_AGE = 400 * 24 * 3600  # the longest lifetime browsers keep (RFC 6265bis)
QUERY_PARAMETER = "lang"
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "messages"

_current: ContextVar[str] = ContextVar("bbsgm_language", default=DEFAULT_LANGUAGE)


def N_(message: str) -> str:
    """Marks a message for the catalog where it is defined (Babel extracts ``N_``); it is
    translated where it is shown."""
    return message


def catalog_path(language: str) -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


@functools.cache
def translations(language: str) -> NullTranslations:
    """The compiled catalog of a language (fuzzy entries left out); the source language has
    none, its messages are their own translation."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}")
    if language == DEFAULT_LANGUAGE:
        return NullTranslations()
    with catalog_path(language).open("rb") as source:
        catalog = read_po(source, locale=language, domain=DOMAIN)
    compiled = BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled, domain=DOMAIN)


def load_catalogs() -> None:
    """Compile every catalog now, so a broken .po stops the start instead of a request."""
    for language in LANGUAGES:
        translations(language)


def current_language() -> str:
    return _current.get()


def set_language(language: str) -> None:
    """The language of the rest of this request (its task and the threads it starts)."""
    _current.set(language if language in LANGUAGES else DEFAULT_LANGUAGE)


@contextmanager
def use_language(code: str) -> Iterator[None]:
    """Render something in a given language outside a request (tests, scripts)."""
    token = _current.set(code if code in LANGUAGES else DEFAULT_LANGUAGE)
    try:
        yield
    finally:
        _current.reset(token)


def gettext(message: str) -> str:
    return translations(current_language()).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return translations(current_language()).ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """A message whose Japanese is shared with another meaning (``context`` tells which)."""
    return str(translations(current_language()).pgettext(context, message))


def is_language(value: str | None) -> bool:
    return value is not None and value in LANGUAGES


def cookie_language(cookie_header: str) -> str | None:
    chosen = cookie_parser(cookie_header).get(COOKIE)
    return chosen if is_language(chosen) else None


def query_language(query_string: str) -> str | None:
    for key, value in parse_qsl(query_string, keep_blank_values=True):
        if key == QUERY_PARAMETER and is_language(value):
            return value
    return None


def set_language_cookie(response: Response, code: str, secure: bool) -> None:
    response.set_cookie(
        COOKIE,
        code,
        max_age=COOKIE_MAX_AGE,
        path="/",
        samesite="lax",
        httponly=True,
        secure=secure,
    )


class LanguageMiddleware:
    """Sets the language of each page request: ``?lang=`` (which also sets the cookie on the
    answer), else the cookie, else Japanese. Accept-Language is deliberately not read. The JSON
    API (``/api``) always speaks the contract's Japanese.

    Pure ASGI, and the value is not reset on the way out: the 500 handler runs outside every
    middleware (Starlette's ServerErrorMiddleware) in this same task and must render the error
    page in the reader's language too. The next request is a new task with a fresh context.
    """

    def __init__(self, app: ASGIApp, secure_cookies: bool = False) -> None:
        self.app = app
        self.secure_cookies = secure_cookies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if path == "/api" or path.startswith("/api/"):
            set_language(DEFAULT_LANGUAGE)
            await self.app(scope, receive, send)
            return
        chosen = query_language(scope.get("query_string", b"").decode("latin-1"))
        cookie = ""
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                cookie = value.decode("latin-1")
        stored = cookie_language(cookie)
        set_language(chosen or stored or DEFAULT_LANGUAGE)
        if chosen is None or chosen == stored:
            await self.app(scope, receive, send)
            return

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                carrier = Response()
                set_language_cookie(carrier, chosen, self.secure_cookies)
                headers = MutableHeaders(scope=message)
                for key, value in carrier.raw_headers:
                    if key == b"set-cookie":
                        headers.append("set-cookie", value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, send_with_cookie)
