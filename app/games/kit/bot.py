"""What every kind's bot shares (app/games/<kind>/bot.py, docs/bot-play.md).

A bot decides from one seat's own view and its legal lines only: `bot(own_view, legal)`. Any
randomness it needs comes from `view_rng`, seeded from a digest of exactly those two, so the
same view and lines always give the same choice — whatever the hidden state, the game's seed or
the hour — and a test can prove it (tests/games/test_bots.py).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = ["best", "view_digest", "view_rng"]

T = TypeVar("T")


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
    """A `random.Random` seeded from `view_digest`: the bot's only source of chance."""
    return random.Random(int(view_digest(own_view, legal), 16))


def best(items: Sequence[T], score: Callable[[T], float]) -> T:
    """The item of highest score, the first one on ties (the order of `legal` breaks them)."""
    chosen = items[0]
    top = score(chosen)
    for item in items[1:]:
        value = score(item)
        if value > top:
            chosen, top = item, value
    return chosen
