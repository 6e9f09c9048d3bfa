"""Placeholder replaced below."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def board_svg(view: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> str:
    raise NotImplementedError
