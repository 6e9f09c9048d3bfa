"""The Jinja2 environment: one templates directory found through the settings, with gettext
(``{% trans %}``, ``_()``) in the language of the request being served (app/i18n.py)."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any
from urllib.parse import urlencode, urlsplit

from fastapi.templating import Jinja2Templates
from jinja2 import select_autoescape
from starlette.requests import Request

from app import i18n
from app.config import Settings
from app.forum.names import split_shown
from app.forum.service import BBS_TZ, format_bbs_time
from app.games.cardbattle.cards import ability_text
from app.i18n import N_
from app.web import messages, panel_cache
from app.web.common import safe_next


def make_templates(settings: Settings) -> Jinja2Templates:
    i18n.load_catalogs()
    templates = Jinja2Templates(directory=str(settings.templates_dir))
    env = templates.env
    # Starlette's default escapes .html/.htm/.xml only: the games' boards (board.html.j2,
    # included by the game page, the panel and the replay) rendered players' free text raw.
    env.autoescape = select_autoescape(["html", "htm", "xml", "html.j2"])
    env.filters["bbs_time"] = bbs_time
    env.filters["name_and_trip"] = split_shown  # a post's name, and its trip styled apart
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.add_extension("jinja2.ext.i18n")
    # {% trans %} blocks collapse their whitespace, so msgids are one line as in the catalog.
    env.policies["ext.i18n.trimmed"] = True
    # Added by the i18n extension; newstyle: _() escapes its values and formats %(name)s.
    env.install_gettext_callables(  # type: ignore[attr-defined]
        i18n.gettext, i18n.ngettext, newstyle=True, pgettext=i18n.pgettext
    )
    env.globals["current_language"] = i18n.current_language
    env.globals["language_links"] = language_links
    env.filters["translate"] = messages.translate
    env.filters["game_title"] = messages.game_title
    env.filters["board_title"] = messages.board_title
    env.filters["board_description"] = messages.board_description
    env.filters["game_status"] = messages.game_status
    env.filters["delivery_status"] = messages.delivery_status
    env.filters["breakdown_lines"] = messages.breakdown_lines
    env.filters["ability_text"] = ability_text  # a card's ability: a game term, as written
    # games/panel.html, kept by its inputs (app/web/panel_cache.py)
    env.globals["panel_html"] = partial(panel_cache.render_panel, env)
    return templates


# The weekday of a BBS time, Monday first; the rest of the format is the same in every language.
WEEKDAYS = (N_("(月)"), N_("(火)"), N_("(水)"), N_("(木)"), N_("(金)"), N_("(土)"), N_("(日)"))


def bbs_time(when: datetime) -> str:
    """``2026/11/22(日) 10:28:09.12`` (Tokyo time), the weekday in the reader's language."""
    text = format_bbs_time(when)
    weekday = WEEKDAYS[when.astimezone(BBS_TZ).weekday()]
    return text.replace(weekday, i18n.gettext(weekday), 1)


def here(request: Request) -> str:
    """Where the language switch sends the reader back: this page without ``lang``; after a
    form was posted, the page that had the form (same site only), since the form's address
    may answer GET with 405."""
    if request.method in ("GET", "HEAD"):
        query = urlencode(
            [(k, v) for k, v in request.query_params.multi_items() if k != i18n.QUERY_PARAMETER]
        )
        return request.url.path + (f"?{query}" if query else "")
    referer = urlsplit(request.headers.get("referer", ""))
    if referer.netloc and referer.netloc == request.url.netloc:
        return safe_next(referer.path + (f"?{referer.query}" if referer.query else ""))
    return "/"


def language_links(request: Request) -> list[dict[str, Any]]:
    """The switch: one link per other language, each in its own language."""
    current = i18n.current_language()
    back = urlencode({"next": here(request)})
    return [
        {"code": code, "label": label, "href": f"/lang/{code}?{back}"}
        for code, label in i18n.LANGUAGES.items()
        if code != current
    ]
