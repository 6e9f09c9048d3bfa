"""Writing from a BBS browser (専ブラ: JDim, ChMate, Siki, …): 2ch's ``POST /test/bbs.cgi``, and
the page where a user makes the app passwords such a browser signs in with (``/me``).

The request, as JDim sends it (docs/senbura.md): ``application/x-www-form-urlencoded`` in
Windows code page 932 (``bbs``, ``key``, ``time``, ``submit``, ``FROM``, ``mail``, ``MESSAGE``;
``subject`` and no ``key`` for a new thread), a character cp932 has no code for as ``&#NNNNN;``,
``<`` and ``&`` raw; HTTP Basic credentials with every request; no ``Origin``; a ``Host``
without the port. The answer is a cp932 HTML page the browser reads by its markers: the title
書きこみました and ``<!-- 2ch_X:true -->`` for a stored post, ``<!-- 2ch_X:error -->`` and the
message in ``<b>…</b>`` for a refusal — both with status 200, as 2ch answers (JDim shows only
the status line of any other status). No confirmation step: the sign-in is the Basic one.

A post goes through the services the web page and the API use (``gm.submit_post``,
``forum.create_thread``), with the same rate limits, spectator muting and checks; so a game
command written here is applied and answered by the bot as from the web, and a rejected one is
stored with the bot's explanation (shown on the success page too).

Only HTTP Basic signs in here — never the site's session cookie — and a request a web browser
made (one carrying ``Origin`` or ``Sec-Fetch-Site``) is refused: docs/security.md says why the
form needs no CSRF token.
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import APIRouter, Depends, Form, Request, Response
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.accounts import ratelimit
from app.accounts import users as accounts
from app.archive import dat
from app.db.models import Post, Thread, User
from app.errors import Invalid, NotFound, ServiceError, Unauthorized
from app.forum import service as forum
from app.gm import service as gm
from app.gm import turns
from app.i18n import N_
from app.web import deps
from app.web.common import CSRF_MESSAGE, redirect, render
from app.web.deps import PageUser, ReadSession, WriteSession

router = APIRouter(include_in_schema=False)

MAX_FORM_BYTES = 256 * 1024  # MESSAGE is at most 10,000 characters: 30 KB percent-encoded, ×3
MAIL_MAX = 64
SIGN_IN_HELP = (
    "専ブラの板の設定（JDim なら外部板の「ID」と「パスワード」）に、このサイトのアカウント名と"
    "パスワード、またはマイページ（/me）で作ったアプリパスワードを入れてください。"
)
NOT_SIGNED_IN = "ログインしていません。" + SIGN_IN_HELP
WRONG_SIGN_IN = accounts.WRONG_CLIENT_CREDENTIALS + SIGN_IN_HELP
FROM_BROWSER = (
    "ウェブブラウザのフォームからは書き込めません。スレッドのページから書き込むか、"
    "専ブラを使ってください。"
)
_REFERENCE = re.compile(r"&#(?:([0-9]{1,7})|[xX]([0-9A-Fa-f]{1,6}));")
_CHARSET = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9_-]+)", re.IGNORECASE)


# --- the request -------------------------------------------------------------------------------


async def form_bytes(request: Request) -> bytes:
    """The request's body, as sent (the form is decoded from cp932 here, not by Starlette)."""
    body = await request.body()
    return body[: MAX_FORM_BYTES + 1]


def _character(found: re.Match[str]) -> str:
    """A ``&#NNNNN;`` reference as its character; one that names no character a post may
    hold (NUL, other control characters but the newline and tab, surrogates) stays as typed."""
    number = int(found.group(1)) if found.group(1) else int(found.group(2), 16)
    if number > 0x10FFFF or 0xD800 <= number <= 0xDFFF:
        return found.group(0)
    if (number < 0x20 and number not in (0x09, 0x0A)) or 0x7F <= number < 0xA0:
        return found.group(0)
    return chr(number)


def decode_references(text: str) -> str:
    """What a 専ブラ sends for a character cp932 has no code for (``&#128512;``) → 😀."""
    return _REFERENCE.sub(_character, text)


def read_form(raw: bytes, content_type: str) -> dict[str, str]:
    """The form's fields, decoded: percent-encoding in cp932 (UTF-8 if the request says so),
    ``+`` as a space, references as characters. A field sent
    twice keeps its first value."""
    found = _CHARSET.search(content_type)
    utf8 = found is not None and found.group(1).lower() in ("utf-8", "utf8")
    encoding = "utf-8" if utf8 else dat.ENCODING
    # ``%``, ``&``, ``=`` and ``+`` are never a trail byte of cp932 (0x40–0xFC), so the raw
    # bytes may be decoded before the percent-escapes are.
    text = raw.decode(encoding, errors="replace")
    fields: dict[str, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True, encoding=encoding, errors="replace"):
        fields.setdefault(name, decode_references(value))
    return fields


def from_a_web_page(request: Request) -> bool:
    """Whether a web browser made the request (a form or a script of some page). Browsers send
    ``Origin`` with every POST and ``Sec-Fetch-Site`` with every request; 専ブラ send neither."""
    headers = request.headers
    return "origin" in headers or "sec-fetch-site" in headers or "sec-fetch-mode" in headers


# --- the answer --------------------------------------------------------------------------------


def _page(title: str, marker: str, body: str) -> Response:
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        f"<title>{dat.escape(title)}</title></head>\n<!-- 2ch_X:{marker} -->\n"
        f"<body>{body}</body></html>\n"
    )
    return Response(
        html.encode(dat.ENCODING, errors="xmlcharrefreplace"),
        media_type="text/html; charset=Shift_JIS",
        headers={"Cache-Control": "no-store"},
    )


def error_page(message: str) -> Response:
    """2ch's ERROR page: JDim shows the text of the innermost ``<b>``."""
    return _page("ＥＲＲＯＲ！", "error", f"<b>ＥＲＲＯＲ：{dat.escape(message)}</b>")


def done_page(replies: list[Post]) -> Response:
    """書きこみました, and the bot's answers to the post (a rejected command's explanation)."""
    answers = "".join(
        f"<br><br>{dat.escape(r.author_name)}: "
        + "<br>".join(dat.escape(line) for line in r.body.split("\n"))
        for r in replies
    )
    return _page("書きこみました。", "true", f"書きこみが終わりました。{answers}")


# --- posting -----------------------------------------------------------------------------------


def is_sage(mail: str | None) -> bool:
    return mail is not None and "sage" in mail.casefold()


def clean_mail(raw: str) -> str | None:
    mail = " ".join(raw.split())
    if not mail:
        return None
    if len(mail) > MAIL_MAX:
        raise Invalid(N_("メール欄は64文字以内にしてください。"), field="mail")  # MAIL_MAX
    if "\x00" in mail:
        raise Invalid(N_("メール欄に使えない文字（NUL）が含まれています。"), field="mail")
    return mail


def keep_place(session: Session, thread_id: int, first: int) -> None:
    """A ``sage`` post (and the bot's answer to it) leaves the thread where it was in the
    thread lists: ``Thread.last_post_at``, which orders them, goes back to the time of the
    thread's last post before ``first`` that was not sage (its creation, if none)."""
    rows = session.execute(
        select(Post.created_at, Post.mail)
        .where(Post.thread_id == thread_id, Post.number < first)
        .order_by(Post.number.desc())
        .limit(1000)
    )
    bump = next((created for created, mail in rows if not is_sage(mail)), None)
    if bump is None:
        bump = session.scalar(select(Thread.created_at).where(Thread.id == thread_id))
    session.execute(update(Thread).where(Thread.id == thread_id).values(last_post_at=bump))


def sign_in(session: Session, request: Request) -> User:
    """The account of the request's HTTP Basic credentials (name and password, or an app
    password); ``Unauthorized`` with how to sign in otherwise. Login rate limits apply."""
    credentials = accounts.basic_credentials(request.headers.get("authorization", ""))
    if credentials is None:
        raise Unauthorized(NOT_SIGNED_IN)
    name, password = credentials
    ratelimit.check_login(session, request, name)  # committed by the check that follows
    try:
        return accounts.authenticate_client(session, name, password)
    except Unauthorized as exc:
        raise Unauthorized(WRONG_SIGN_IN) from exc


def write(session: Session, request: Request, fields: dict[str, str]) -> list[Post]:
    """Store the post (or the thread) the form holds; the bot's answers to it."""
    user = sign_in(session, request)
    board = forum.get_board(session, fields.get("bbs", ""))
    mail = clean_mail(fields.get("mail", ""))
    name = fields.get("FROM", "")
    body = fields.get("MESSAGE", "")
    secret = deps.secret_key(request)
    key = fields.get("key", "")
    ratelimit.check_post(session, request, user)
    if not key:
        thread, post = forum.create_thread(
            session, board, user, fields.get("subject", ""), body, secret, name=name
        )
        post.mail = mail
        return []
    thread = dat.thread_by_key(session, board, key)
    post, replies = gm.submit_post(session, thread.id, user, body, secret, name=name)
    post.mail = mail
    if is_sage(mail):
        for reply in replies:
            reply.mail = "sage"
        session.flush()
        keep_place(session, thread.id, post.number)
    return replies


@router.post("/test/bbs.cgi")
def bbs_cgi(
    request: Request, session: WriteSession, raw: Annotated[bytes, Depends(form_bytes)]
) -> Response:
    if from_a_web_page(request):
        return error_page(FROM_BROWSER)
    if len(raw) > MAX_FORM_BYTES:
        return error_page("書き込みが大きすぎます。")
    fields = read_form(raw, request.headers.get("content-type", ""))
    try:
        replies = write(session, request, fields)
    except ServiceError as exc:
        session.end_writes()
        return error_page(exc.message)
    return done_page(replies)


# --- /me: app passwords -------------------------------------------------------------------------

FormText = Annotated[str, Form(max_length=200)]


def _me(
    request: Request,
    session: Session,
    user: User,
    status: int = 200,
    made: str | None = None,
    error: str | None = None,
) -> Response:
    passwords = accounts.list_app_passwords(session, user)
    tables = turns.my_tables(session, user.id)
    return render(
        request,
        "me.html",
        user,
        status,
        passwords=passwords,
        made=made,
        error=error,
        bbs_url=str(request.base_url).rstrip("/"),
        tables=tables,
    )


@router.get("/me")
def me_page(request: Request, session: ReadSession, user: PageUser) -> Response:
    if user is None:
        return redirect("/login?next=/me")
    return _me(request, session, user)


@router.post("/me/app-passwords")
def app_passwords(
    request: Request,
    session: WriteSession,
    user: PageUser,
    action: FormText = "",
    label: FormText = "",
    password_id: FormText = "",
    csrf_token: FormText = "",
) -> Response:
    """Make one (shown once, on the page this answers) or revoke one."""
    if user is None:
        return redirect("/login?next=/me")
    if not deps.csrf_ok(request, csrf_token):
        return _me(request, session, user, 403, error=CSRF_MESSAGE)
    try:
        if action == "new":
            _row, made = accounts.create_app_password(session, user, label)
            return _me(request, session, user, 201, made=made)
        if action == "revoke" and password_id.isdigit() and len(password_id) < 10:
            accounts.revoke_app_password(session, user, int(password_id))
            return redirect("/me")
        raise NotFound(N_("その操作はありません。"))
    except ServiceError as exc:
        session.end_writes()
        return _me(request, session, user, exc.status, error=exc.message)
