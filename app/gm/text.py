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


def render_board_summary(impl: GameImpl, view: dict[str, Any]) -> str:
    return _summary(impl.kind).render(view=view).strip()
