"""The Jinja2 environment: one templates directory found through the settings."""

from __future__ import annotations

from fastapi.templating import Jinja2Templates

from app.config import Settings
from app.forum.service import format_bbs_time


def make_templates(settings: Settings) -> Jinja2Templates:
    templates = Jinja2Templates(directory=str(settings.templates_dir))
    templates.env.filters["bbs_time"] = format_bbs_time
    templates.env.trim_blocks = True
    templates.env.lstrip_blocks = True
    return templates
