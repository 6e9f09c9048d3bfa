"""The maintainers' labels that must never reach a player (issue #43): the rule book's section
numbers and the design notes' tags — 「(R 4.3)」「(R)」「、R 4.3)」「R 4.3: 」「(I: …)」「(D: …)」
「(R 2−2「6任意」…)」 — and the English words for a step the player never sees 「(sealed)」."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

LABEL = re.compile(
    r"[(（、,]\s*[RID]\s+A?[0-9][0-9.\-−]*"  # (R 4.3) (R 3.2 カタン取り) 、R 5.1)
    r"|[(（、,]\s*[RID]\s*(?:[)）:：、「]|$)"  # (R) (I: …) (R「…」) 、I: …
    r"|(?<![A-Za-z0-9_])[RID] [0-9]+(?:[.\-−][0-9]+)*\s*[:：)）、「]"  # R 4.3: …
    r"|[(（、,。]\s*[RID] (?=[\u3040-\u30ff\u3400-\u9fff])"  # (R 敗北条件が優先) 。R プレイヤー…
    r"|[(（]\s*sealed\s*[)）]"
)
# A literal that is stored, never shown (a state's words kept for replays, said to players in
# other words) says so on its line; the scan leaves it out.
NOT_SHOWN = "# not shown to players"
JAPANESE = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")


def labels_in(text: str) -> list[str]:
    return [m.group(0) for m in LABEL.finditer(text)]


def python_strings(path: Path) -> list[tuple[int, str]]:
    """(line, value) of the string literals with Japanese in them: what players may read
    (comments and English docstrings are the maintainers' own)."""
    found = []
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING and JAPANESE.search(token.string):
            body = token.string
            if body.startswith(('"""', "'''")) or body[1:].startswith(('"""', "'''")):
                continue  # a docstring
            found.append((token.start[0], body))
    return found


def template_text(path: Path) -> str:
    """A template without its {# comments #}."""
    return re.sub(r"\{#.*?#\}", "", path.read_text(encoding="utf-8"), flags=re.S)


def scan(root: Path) -> list[str]:
    """Every label in what app/ and templates/ give players to read, as 'file:line: label'."""
    hits: list[str] = []
    for path in sorted((root / "app").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for line, value in python_strings(path):
            if NOT_SHOWN in lines[line - 1]:
                continue
            hits.extend(f"{path.relative_to(root)}:{line}: {label}" for label in labels_in(value))
    texts = [*(root / "templates").rglob("*.j2"), *(root / "templates").rglob("*.html")]
    content = (".yaml", ".yml", ".json", ".toml", ".md", ".txt")
    texts += [p for p in (root / "app").rglob("*") if p.suffix in content]
    for path in sorted(texts):
        templated = path.is_relative_to(root / "templates")
        text = template_text(path) if templated else path.read_text(encoding="utf-8")
        for number, line in enumerate(text.split("\n"), start=1):
            if JAPANESE.search(line) and not line.lstrip().startswith("#"):  # TOML comments
                where = f"{path.relative_to(root)}:{number}"
                hits.extend(f"{where}: {label}" for label in labels_in(line))
    return hits
