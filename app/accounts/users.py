"""Accounts: registration, password check (argon2), session and API tokens, app passwords
and the HTTP Basic sign-in of BBS browsers (専ブラ, app/web/bbs_cgi.py)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
import unicodedata
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import bindparam, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.db.models import ApiToken, AppPassword, User, utcnow
from app.errors import Conflict, Invalid, Unauthorized
from app.i18n import N_

NAME_MAX = 32
PASSWORD_MIN = 8
PASSWORD_MAX = 256
SESSION_LIFETIME = timedelta(days=30)
API_TOKEN_LIFETIME = timedelta(days=365)
# Names that would be mistaken for the bot or a trip code in the 名前欄: the bot's ★ and the
# trip's ◆ nowhere in a name (a post shows them as ☆ and ◇ anyway, app/forum/names.py), ☆
# not first.
RESERVED_NAMES = {"gm", "bot", "system", "admin", "名無し", "名無しさん"}
RESERVED_MARKS = ("★", "◆", "☆")
FORBIDDEN_MARKS = ("★", "◆")

_hasher = PasswordHasher()


def normalise_name(raw: str) -> str:
    return unicodedata.normalize("NFKC", raw).strip()


def validate_name(raw: str) -> str:
    name = normalise_name(raw)
    if not name:
        raise Invalid("名前を入力してください。", field="name")
    if len(name) > NAME_MAX:
        raise Invalid(f"名前は{NAME_MAX}文字以内にしてください。", field="name")
    if any(ch.isspace() for ch in name):
        # Names are words in command lines (AS <name> …, KICK <name>), so no spaces.
        raise Invalid("名前に空白は使えません。", field="name")
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise Invalid("名前に制御文字は使えません。", field="name")
    if any(ch in "<>&\"'" for ch in name):
        raise Invalid("名前に < > & \" ' は使えません。", field="name")
    reserved = name.startswith(RESERVED_MARKS) or any(m in name for m in FORBIDDEN_MARKS)
    if name.casefold() in RESERVED_NAMES or reserved:
        raise Invalid("その名前は予約されています。", field="name")
    return name


def validate_password(password: str) -> str:
    if len(password) < PASSWORD_MIN:
        raise Invalid(f"パスワードは{PASSWORD_MIN}文字以上にしてください。", field="password")
    if len(password) > PASSWORD_MAX:
        raise Invalid(f"パスワードは{PASSWORD_MAX}文字以内にしてください。", field="password")
    return password


def register(session: Session, name: str, password: str) -> User:
    name = validate_name(name)
    validate_password(password)
    # Hashed before the first statement: argon2 takes a fifth of a second, and on SQLite an
    # open transaction holds the write lock (every transaction is BEGIN IMMEDIATE).
    password_hash = _hasher.hash(password)
    if session.scalar(select(User.id).where(User.name == name)) is not None:
        raise Conflict("その名前はすでに使われています。", field="name")
    user = User(name=name, password_hash=password_hash)
    session.add(user)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError as exc:  # a concurrent registration took the name first
        raise Conflict("その名前はすでに使われています。", field="name") from exc
    return user


def authenticate(session: Session, name: str, password: str) -> User:
    """The account, if the password is right. Ends the session's (read) transaction before
    the password is checked: argon2 takes a fifth of a second, and on SQLite an open
    transaction holds the write lock, so checking inside it would stop every writer."""
    wanted = normalise_name(name)
    # No account's name holds a control character (validate_name), and PostgreSQL refuses a
    # NUL in a text parameter: such a name is simply not found.
    if any(unicodedata.category(ch) == "Cc" for ch in wanted):
        user = None
    else:
        user = session.scalar(select(User).where(User.name == wanted))
    session.commit()  # nothing is written before this point
    if user is None:
        _hasher.hash(password)  # same work either way, so timing does not reveal names
        raise Unauthorized("名前かパスワードが違います。")
    try:
        _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError) as exc:
        raise Unauthorized("名前かパスワードが違います。") from exc
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    return user


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_digest(token: str) -> str | None:
    """What a token is stored as (its SHA-256); None for what cannot be a token."""
    if not token or len(token) > 200:
        return None
    return _digest(token)


def issue_token(session: Session, user: User, kind: str) -> str:
    """A new random token for ``user``; only its digest is stored."""
    lifetime = SESSION_LIFETIME if kind == "session" else API_TOKEN_LIFETIME
    token = secrets.token_urlsafe(32)
    session.add(
        ApiToken(
            user_id=user.id, token_hash=_digest(token), kind=kind, expires_at=utcnow() + lifetime
        )
    )
    session.flush()
    return token


# Built once with bound parameters: every request signed in runs it, and building the
# statement cost a third of what running it does (docs/performance.md).
_USER_FOR_TOKEN = (
    select(User, ApiToken.expires_at)
    .join(ApiToken, ApiToken.user_id == User.id)
    .where(ApiToken.token_hash == bindparam("digest"), ApiToken.kind == bindparam("kind"))
)


def user_for_token(session: Session, token: str, kind: str) -> User | None:
    digest = token_digest(token)
    if digest is None:
        return None
    row = session.execute(_USER_FOR_TOKEN, {"digest": digest, "kind": kind}).first()
    if row is None or row.expires_at <= utcnow():
        return None
    user: User = row.User
    return user


def revoke_token(session: Session, token: str) -> None:
    session.execute(delete(ApiToken).where(ApiToken.token_hash == _digest(token)))


# --- app passwords and HTTP Basic (BBS browsers) -----------------------------------------------

APP_PASSWORD_LABEL_MAX = 64
APP_PASSWORDS_MAX = 20
# ``ap<id>-<secret>``: the id finds the one row to check, so a sign-in costs one argon2 check
# however many app passwords the account has.
_APP_PASSWORD = re.compile(r"ap([1-9][0-9]{0,9})-([A-Za-z0-9_-]{20,64})")
WRONG_CLIENT_CREDENTIALS = "名前かパスワード（またはアプリパスワード）が違います。"


def create_app_password(session: Session, user: User, label: str) -> tuple[AppPassword, str]:
    """A new app password for ``user``; returns its row and the password, shown once."""
    label = " ".join(label.split())
    if not label:
        raise Invalid(
            N_("アプリパスワードの名前（使う専ブラの名前など）を入力してください。"), field="label"
        )
    if len(label) > APP_PASSWORD_LABEL_MAX:
        raise Invalid(
            N_("アプリパスワードの名前は64文字以内にしてください。"),  # APP_PASSWORD_LABEL_MAX
            field="label",
        )
    count = len(list_app_passwords(session, user))
    if count >= APP_PASSWORDS_MAX:
        raise Conflict(N_("アプリパスワードは20個までです。使わないものを取り消してください。"))
    secret = secrets.token_urlsafe(24)
    row = AppPassword(user_id=user.id, label=label, password_hash=_hasher.hash(secret))
    session.add(row)
    session.flush()
    return row, f"ap{row.id}-{secret}"


def list_app_passwords(session: Session, user: User) -> list[AppPassword]:
    return list(
        session.scalars(
            select(AppPassword).where(AppPassword.user_id == user.id).order_by(AppPassword.id)
        )
    )


def revoke_app_password(session: Session, user: User, password_id: int) -> None:
    """Delete one of ``user``'s app passwords (another account's is never touched)."""
    session.execute(
        delete(AppPassword).where(AppPassword.id == password_id, AppPassword.user_id == user.id)
    )


def basic_credentials(header: str) -> tuple[str, str] | None:
    """The name and password of an ``Authorization: Basic …`` header, or None. UTF-8, else
    cp932 (what a Japanese Windows client may send)."""
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() != "basic" or not value or len(value) > 1024:
        return None
    try:
        raw = base64.b64decode(value.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    for encoding in ("utf-8", "cp932"):
        try:
            text = raw.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    else:
        return None
    name, colon, password = text.partition(":")
    if not colon or not name or not password:
        return None
    return name, password


def authenticate_client(session: Session, name: str, password: str) -> User:
    """The account of a client's HTTP Basic sign-in: its name and either its password or one
    of its app passwords (``ap<id>-…``). One argon2 check either way; the session's (read)
    transaction is ended first, as in ``authenticate``."""
    found = _APP_PASSWORD.fullmatch(password)
    if found is None:
        return authenticate(session, name, password)
    wanted = normalise_name(name)
    row = None
    if not any(unicodedata.category(ch) == "Cc" for ch in wanted):
        row = session.execute(
            select(User, AppPassword)
            .join(AppPassword, AppPassword.user_id == User.id)
            .where(User.name == wanted, AppPassword.id == int(found.group(1)))
        ).first()
    if row is None:  # perhaps the account's own password has that shape
        return authenticate(session, name, password)
    session.commit()
    user: User = row.User
    app_password: AppPassword = row.AppPassword
    try:
        _hasher.verify(app_password.password_hash, found.group(2))
    except (VerificationError, InvalidHashError) as exc:
        raise Unauthorized(WRONG_CLIENT_CREDENTIALS) from exc
    app_password.last_used_at = utcnow()
    return user
