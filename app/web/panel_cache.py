"""A game's panel (games/panel.html) kept between requests, keyed by everything it is made of.

The panel shows the same game to each of its readers but for their own lines (what they may
post now) and whether the board picture is theirs (``as=me``). The thread page, the game page
and live.js's refresh after every bot reply (``/games/{id}/panel``: on a game night, one
request per live reader at once) each render it.

The key is a digest of the template's whole context (``common.game_panel``), turned into
plain data by ``plain``: every value, and of every ORM object in it every loaded column and
every loaded relationship, followed to the objects it holds. Nothing is listed by hand, so a
field the template starts to read is in the key already, and an entry is found only by
inputs that render the very same bytes — one reader's lines never reach another whose lines
differ, and a change made anywhere (another worker, a GM's tool, a direct write) is seen
whether or not it moved the game's version. A context holding something ``plain`` cannot
turn into data is rendered each time, uncached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from jinja2 import Environment
from markupsafe import Markup
from sqlalchemy import inspect
from sqlalchemy.orm import InstanceState

from app import i18n
from app.games.base import Game as GameImpl
from app.web.http_cache import ByteCache, digest

# Per process, bounded by the bytes kept: a panel is a few KB, its public board included.
PANELS = ByteCache(8 * 1024 * 1024)
TEMPLATE = "games/panel.html"


class Unkeyable(TypeError):
    """A value ``as_data`` cannot turn into data."""


def as_data() -> Callable[[Any], Any]:
    """orjson's ``default`` for a panel's context: what orjson cannot write itself becomes
    data. An ORM object: its class's name, its loaded columns and its loaded relationships
    (whose objects orjson hands back here in turn; one met again within the same context is
    written as its identity, which also ends the cycles of back references). A game's rules
    (``app.games.base.Game``, the same for every game of a kind): its kind. Anything else
    raises ``Unkeyable``. Each call gives a describer for one ``orjson.dumps``."""
    described: set[int] = set()

    def default(value: Any) -> Any:
        if isinstance(value, GameImpl):
            return ["rules", value.kind]
        state = inspect(value, raiseerr=False)
        if not isinstance(state, InstanceState):
            raise Unkeyable(type(value).__name__)
        if id(value) in described:
            return [type(value).__name__, state.identity]
        described.add(id(value))
        loaded = state.dict
        attributes = {a.key: loaded[a.key] for a in state.mapper.attrs if a.key in loaded}
        return [type(value).__name__, attributes]

    return default


def panel_key(panel: dict[str, Any]) -> bytes | None:
    """The digest of the panel's whole context and the language; None when some part of it
    is not data (``as_data``)."""
    try:
        encoded = orjson.dumps(panel, default=as_data(), option=orjson.OPT_NON_STR_KEYS)
    except TypeError:  # orjson.JSONEncodeError, Unkeyable among its causes
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
