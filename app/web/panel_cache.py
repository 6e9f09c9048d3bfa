"""A game's panel (games/panel.html) kept between requests, keyed by everything it is made of.

The panel shows the same game to each of its readers but for their own lines (what they may
post now) and whether the board picture is theirs (``as=me``). The thread page, the game page
and live.js's refresh after every bot reply (``/games/{id}/panel``: on a game night, one
request per live reader at once) each rendered it anew: on a cached thread page it was the
largest part left to render (docs/benchmarks.md, round 23).

The key is a digest of every input of the template, not an id and a version: the game's own
columns that it shows, its GM's name, its seats, its state (from which the public board is
made), the reader's lines and picture, and the language. So an entry is found only by inputs
that would render the very same bytes — one reader's lines never reach another whose lines
differ, and a change made anywhere (another worker, a GM's tool, a direct write) is seen
whether or not it moved the game's version. What cannot be put in the key is rendered each
time, uncached.
"""

from __future__ import annotations

from typing import Any

import orjson
from jinja2 import Environment
from markupsafe import Markup

from app import i18n
from app.web.http_cache import ByteCache, digest

# Per process, bounded by the bytes kept: a panel is a few KB, its public board included.
PANELS = ByteCache(8 * 1024 * 1024)
TEMPLATE = "games/panel.html"


def panel_key(panel: dict[str, Any]) -> bytes | None:
    """The digest of what games/panel.html reads; None when some input is not JSON."""
    game = panel["game"]
    inputs = [
        game.id,
        game.kind,
        game.title,
        game.status,
        game.paused,
        game.version,
        game.gm.name if game.gm is not None else None,
        [(p.seat, p.name) for p in game.players],
        game.deadline_at,
        game.deadline_hours,
        game.result,
        game.state,
        game.state is not None and (panel["seat"] is not None or panel["is_gm"]),
        panel["legal"],
        panel["sealed_legal"],
        panel["examples"],
    ]
    try:
        encoded = orjson.dumps(inputs)
    except TypeError:  # orjson.JSONEncodeError: a value JSON cannot hold
        return None
    return digest(i18n.current_language().encode(), encoded)


def render_panel(env: Environment, panel: dict[str, Any]) -> Markup:
    """games/panel.html for ``panel`` (common.game_panel), from the cache when it has it."""
    key = panel_key(panel)
    if key is None:
        return Markup(env.get_template(TEMPLATE).render(panel=panel))
    found = PANELS.get(key)
    if found is None:
        found = PANELS.put(key, env.get_template(TEMPLATE).render(panel=panel).encode())
    return Markup(found[0].decode())
