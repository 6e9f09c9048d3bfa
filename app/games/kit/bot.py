"""What every kind's bot shares (app/games/<kind>/bot.py, docs/bot-play.md).

A bot decides from one seat's own view and its legal lines only: `bot(own_view, legal)`. Any
randomness it needs comes from `view_rng`, seeded from a digest of exactly those two, so the
same view and lines always give the same choice — whatever the hidden state, the game's seed or
the hour — and a test can prove it (tests/games/test_bots.py).

A choice that is itself a secret (the エリューシス parent's rule) must not be computable by
others from what they see: a seat's view is mostly public, and this code is open. `secret_rng`
keys the same digest with a secret the process draws when it starts (HMAC-SHA-256): still a
function of the view alone within a process (the same view, the same choice), but no one can
reproduce it from the public view.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = ["best", "secret_rng", "view_digest", "view_rng"]

T = TypeVar("T")

# Drawn once per process, never stored or shown: the key of `secret_rng`.
_PROCESS_KEY = secrets.token_bytes(32)


def view_digest(own_view: Mapping[str, Any], legal: Sequence[str]) -> str:
    """SHA-256 of the view and the lines, as canonical JSON (keys sorted)."""
    text = json.dumps(
        [own_view, list(legal)],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def view_rng(own_view: Mapping[str, Any], legal: Sequence[str]) -> random.Random:
    """A `random.Random` seeded from `view_digest`: the bot's chance (`secret_rng` for a secret)."""
    return random.Random(int(view_digest(own_view, legal), 16))


def secret_rng(own_view: Mapping[str, Any], legal: Sequence[str]) -> random.Random:
    """A `random.Random` seeded from HMAC(process key, `view_digest`): for a secret choice."""
    keyed = hmac.new(_PROCESS_KEY, view_digest(own_view, legal).encode(), hashlib.sha256)
    return random.Random(int.from_bytes(keyed.digest(), "big"))


def best(items: Sequence[T], score: Callable[[T], float]) -> T:
    """The item of highest score, the first one on ties (the order of `legal` breaks them)."""
    chosen = items[0]
    top = score(chosen)
    for item in items[1:]:
        value = score(item)
        if value > top:
            chosen, top = item, value
    return chosen
