"""Where the data files that ship beside the code (grammars, templates) live.

Installed from a wheel they sit inside the package (``app/grammar``); in a checkout they are the
repository's top-level folders. Games find their ``.lark`` files only through this function,
never through the current directory.
"""

from __future__ import annotations

from pathlib import Path


def resource_dir(name: str) -> Path:
    """The folder ``name`` (``"grammar"``, ``"templates"``, ...) shipped with the app."""
    here = Path(__file__).resolve()
    packaged = here.parents[1] / name
    if packaged.is_dir():
        return packaged
    return here.parents[2] / name
