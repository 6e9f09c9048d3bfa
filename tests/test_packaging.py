"""The README's serve command installs the project without its test extras
(`pip install -e .`), so everything the app imports must be a declared dependency: httpx
(webhooks) was once only a test extra, and `bbsgm serve` failed on a fresh machine."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = set()
    for requirement in project["dependencies"]:
        names.add(_normalise(re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0]))
    return names


def _imported_modules() -> set[str]:
    modules: set[str] = set()
    for path in (ROOT / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - {"app"} - set(sys.stdlib_module_names)


def test_every_third_party_import_of_the_app_is_a_declared_dependency() -> None:
    declared = _declared()
    owners = packages_distributions()
    missing = {
        module: owners.get(module, ["?"])
        for module in sorted(_imported_modules())
        if not any(_normalise(dist) in declared for dist in owners.get(module, []))
    }
    # A package that only comes with a declared one (starlette with FastAPI, MarkupSafe with
    # Jinja2) counts as missing too: what the app imports itself, it declares itself.
    assert missing == {}, f"imported by app/ but not in [project.dependencies]: {missing}"
