"""The 名前欄 (name field) and 2ch's tripcode (トリップ).

``名前#キー`` shows as ``名前 ◆XXXXXXXXXX``: the key (トリップキー) is hashed the way 2ch
hashes it, so the same key gives the same trip in every thread (and on 2ch), and only whoever
knows the key can show it. The key is never stored: only the shown name, trip included, goes
into ``posts.author_name``. What a post may show, and what it may not, is in docs/forum.md.

The algorithm (2ch's, as its public descriptions and testers give it):

- the key is everything after the first ``#`` (or full-width ``＃``) of the field; 2ch escapes
  ``"`` ``<`` ``>`` in the name field before it hashes, so they are escaped here too, and the
  result is encoded in Shift_JIS (Windows code page 932, as 2ch reads a form); a character it
  has no code for becomes a decimal character reference, as a browser sends it in such a form;
- fewer than 12 bytes: the classic 10-character trip. The salt is the key's 2nd and 3rd bytes
  (``H.`` appended first, for short keys); a byte outside ``.``–``z`` becomes ``.``, and
  the 13 characters from ``:`` to ``@`` and from ``[`` to the backquote become
  ``ABCDEFGabcdef``; the trip is the last 10 characters of crypt(3)'s traditional DES hash
  of the key (its first 8 bytes, 7 bits each) with that salt;
- 12 bytes or more: the 12-character trip, the first 12 characters of the base64 SHA-1 of the
  key, ``+`` written ``.``; except a key that starts with ``#``, a 生キー (raw key): ``#``,
  16 hex digits and up to 2 salt characters give the DES hash of those 8 bytes (up to the
  first zero byte) with that salt (``..`` by default); and one starting with ``$`` (kept for
  later by 2ch): both show ``???`` when they do not fit.

DES crypt comes from ``passlib`` (the maintained ``libpass`` fork): the standard library's
``crypt`` module is deprecated and gone in Python 3.13.
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from dataclasses import dataclass

from passlib.hash import des_crypt

from app.errors import Invalid

TRIP_MARK = "◆"
# Between the name and its trip in a stored name. A typed name cannot hold ◆ (it becomes ◇)
# and an account name cannot hold a space, so only a trip made here follows " ◆".
SEPARATOR = " " + TRIP_MARK
NAME_MAX = 32  # the name part of the field, as an account name
KEY_MAX = 128
TRIP_MAX = 12
SHOWN_MAX = NAME_MAX + len(SEPARATOR) + TRIP_MAX  # what posts.author_name must hold
UNDEFINED_TRIP = "???"  # 2ch's answer to a 生キー that is not one, or a key starting with $
# 2ch's own replacements in a typed name: no forged trip (◆) and no forged cap or bot (★).
_FORGERIES = str.maketrans({"◆": "◇", "★": "☆"})
# Names an account may not take either, and that would pass for the site or its bot.
RESERVED = {"gm", "bot", "system", "admin"}
_KEY_START = re.compile("[#＃]")
_SALT_FIX = str.maketrans(":;<=>?@[\\]^_`", "ABCDEFGabcdef")
_RAW_KEY = re.compile(rb"#([0-9A-Fa-f]{16})([./0-9A-Za-z]{0,2})")


@dataclass(frozen=True)
class NameField:
    """What a 名前欄 asks for: a name to show ("" for the account's) and a trip, if a key came."""

    name: str
    trip: str | None


def key_bytes(key: str) -> bytes:
    """The key as 2ch hashes it: ``"<>`` escaped, then Shift_JIS (cp932)."""
    escaped = key.replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.encode("cp932", errors="xmlcharrefreplace")


def _des(secret: bytes, salt: str) -> str:
    """The last 10 characters of crypt(3)'s traditional DES hash (13 characters, salt first)."""
    hashed: str = des_crypt.using(salt=salt).hash(secret)
    return hashed[-10:]


def _ten(key: bytes) -> str:
    salt = bytes(c if 0x2E <= c <= 0x7A else 0x2E for c in (key + b"H.")[1:3])
    return _des(key, salt.decode("ascii").translate(_SALT_FIX))


def _raw(key: bytes) -> str:
    match = _RAW_KEY.fullmatch(key)
    if match is None:
        return UNDEFINED_TRIP
    secret = bytes.fromhex(match[1].decode("ascii")).split(b"\0", 1)[0]  # crypt stops at NUL
    return _des(secret, (match[2] + b"..")[:2].decode("ascii"))


def _twelve(key: bytes) -> str:
    digest = hashlib.sha1(key, usedforsecurity=False).digest()
    return base64.b64encode(digest).decode("ascii")[:TRIP_MAX].replace("+", ".")


def tripcode(key: str) -> str:
    """The trip (without ◆) that 2ch shows for ``名前#key``: 10 characters, or 12 for a key of
    12 bytes or more, or ``???``."""
    data = key_bytes(key)
    if len(data) < 12:
        return _ten(data)
    if data.startswith(b"#"):
        return _raw(data)
    if data.startswith(b"$"):
        return UNDEFINED_TRIP
    return _twelve(data)


def unforged(name: str) -> str:
    """A name with the marks only the site may show replaced as 2ch does: ◆→◇, ★→☆."""
    return name.translate(_FORGERIES)


def read_field(field: str) -> NameField:
    """Split and check a 名前欄: the name (blank space collapsed, ◆/★ replaced, at most 32
    characters, no control characters) and the trip of the key after the first # or ＃ (an
    empty key gives no trip). Raises ``Invalid`` (field ``name``)."""
    start = _KEY_START.search(field)
    raw_name, key = (field, "") if start is None else (field[: start.start()], field[start.end() :])
    name = unforged(" ".join(raw_name.split()))
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise Invalid("名前欄に制御文字は使えません。", field="name")
    if len(name) > NAME_MAX:
        raise Invalid(f"名前欄の名前は{NAME_MAX}文字以内にしてください。", field="name")
    if len(key) > KEY_MAX:
        raise Invalid(f"トリップキーは{KEY_MAX}文字以内にしてください。", field="name")
    if any(unicodedata.category(ch) == "Cc" for ch in key):
        raise Invalid("トリップキーに制御文字は使えません。", field="name")
    return NameField(name=name, trip=tripcode(key) if key else None)


def name_key(name: str) -> str:
    """How a typed name is compared with account names (which are NFKC-normalised)."""
    return unicodedata.normalize("NFKC", name).strip()


def is_reserved(name: str) -> bool:
    return name_key(name).casefold() in RESERVED


def shown(name: str, trip: str | None) -> str:
    """The name a post shows, as stored in ``posts.author_name``: ``名前`` or ``名前 ◆trip``."""
    base = unforged(name)
    return base if trip is None else f"{base}{SEPARATOR}{trip}"


def split_shown(author_name: str) -> tuple[str, str | None]:
    """A stored name taken apart again: the name, and the trip (without ◆) if it has one."""
    head, mark, trip = author_name.rpartition(SEPARATOR)
    return (head, trip) if mark and head else (author_name, None)
