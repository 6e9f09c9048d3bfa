"""Plain-text rendering of the bot's replies (templates/games/<kind>/summary.txt.j2)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template

from app.config import get_settings
from app.games.base import Game as GameImpl


@lru_cache
def text_environment() -> Environment:
    """Text, not HTML: no autoescape here; the page escapes the post body when it shows it.
    A template is read once per process (``auto_reload`` off): asking the file system whether
    it changed, at every reply, cost a sixth of rendering it."""
    return Environment(
        loader=FileSystemLoader(str(get_settings().templates_dir)),
        autoescape=False,
        undefined=StrictUndefined,
        auto_reload=False,
    )


@lru_cache
def _summary(kind: str) -> Template:
    """Kept by kind: ``get_template`` builds its cache key (a weak reference to the loader)
    and walks jinja's LRU list at every call, a tenth of rendering a short summary."""
    return text_environment().get_template(f"games/{kind}/summary.txt.j2")


def render_board_summary(
    impl: GameImpl, view: dict[str, Any], *, compact: bool = False, game_page: str = ""
) -> str:
    """The board as text. ``compact``: the board a reply carries when the week, round or
    phase turns (issue #43) — who leads, what changed, whose turn, the essentials; the long
    lists (every area, every stock, the whole line) stay on ``game_page``, which the compact
    board names in one line. BOARD / 盤面 and the game page's own text get the full board."""
    template = _summary(impl.kind)
    return template.render(view=view, compact=compact, game_page=game_page).strip()
