"""Conditional GETs and a bounded in-process store for bytes that are expensive to make.

An ETag here is always a digest of the exact bytes of the answer (or of parts that make them
up one to one), never of what we believe they depend on: a key that forgot something can at
worst make a cache miss its entry, never make a 304 tell a browser that changed bytes are the
ones it has. ``If-None-Match`` is compared weakly (RFC 9110 13.1.2) and ``*`` matches.

``ByteCache`` is per process. What it holds must be looked up by a key read from the database
in the same request (a thread's post count, its moderation count, ...), so a worker never
serves what another worker's write made stale: the key itself has moved on.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping

from starlette.requests import Request
from starlette.responses import Response

# Pages that differ per viewer (cookies: login, CSRF nonce, language): browsers may keep them
# but must ask each time, and shared caches must not keep them at all.
PRIVATE = "private, no-cache"
# The same bytes for everyone (feeds, dat files): any cache may keep them, asking each time.
PUBLIC = "no-cache"


def digest(*parts: bytes) -> bytes:
    """A 128-bit digest of the parts, each length-prefixed (so ``ab|c`` differs from ``a|bc``)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def etag(*parts: bytes) -> str:
    return f'"{digest(*parts).hex()}"'


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def not_modified(request: Request, current: str) -> bool:
    """Whether the request's If-None-Match names ``current`` (weak comparison) or is ``*``."""
    header = request.headers.get("if-none-match")
    if not header:
        return False
    wanted = _opaque(current)
    return any(tag.strip() == "*" or _opaque(tag) == wanted for tag in header.split(","))


def conditional(
    request: Request,
    body: bytes,
    tag: str,
    *,
    media_type: str,
    cache_control: str,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """``body`` with its ETag, or an empty 304 when the client already holds it. Only a 200
    can become a 304 (an error page is never "not modified")."""
    all_headers = {"ETag": tag, "Cache-Control": cache_control, **(headers or {})}
    if cache_control == PRIVATE:
        all_headers["Vary"] = "Cookie"
    if status_code == 200 and not_modified(request, tag):
        return Response(status_code=304, headers=all_headers)
    return Response(body, status_code=status_code, headers=all_headers, media_type=media_type)


class ByteCache:
    """A least-recently-used map of keys to byte strings (and a digest of each), bounded by
    the bytes it holds. Thread-safe: the sync routes run in Starlette's thread pool."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._entries: OrderedDict[Hashable, tuple[bytes, bytes]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> tuple[bytes, bytes] | None:
        """``(body, digest)`` or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: Hashable, body: bytes) -> tuple[bytes, bytes]:
        entry = (body, digest(body))
        if len(body) > self.max_bytes // 4:  # one huge entry would flush everything else
            return entry
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.size -= len(old[0])
            self._entries[key] = entry
            self.size += len(body)
            while self.size > self.max_bytes and self._entries:
                _key, (dropped, _digest) = self._entries.popitem(last=False)
                self.size -= len(dropped)
        return entry

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.size = 0

    def __len__(self) -> int:
        return len(self._entries)
