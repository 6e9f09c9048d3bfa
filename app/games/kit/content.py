"""House content — tiles, skills, idols, events, round boards, cards — read from data files and
validated at start-up.

The rulebooks leave much of their content out, so the project supplies it as data files
(``app/games/<kind>/content/*.toml`` or ``.json``) that a group may edit without touching code.
People who are not the game's programmers edit them, so a mistake must be reported the way a
compiler reports one — file, line, what is wrong — and it must be reported when the app starts,
not in the middle of someone's game. Hence:

- the caller describes a whole file with a pydantic (v2) model, e.g. ``class Tiles(BaseModel):
  tiles: list[Tile]`` for a file of ``[[tiles]]`` tables;
- `load_content` parses the file (tomllib or json), validates it, runs an optional cross-entry
  `check` (what one entry alone cannot say: duplicate ids, a board graph with a cycle), and
  caches the result per file, so loading it at start-up and again in every game is free;
- any problem is one `ContentError(path, line, message)` whose text reads
  ``tiles.toml:12: tiles[3].terrain: Input should be '平地', '山岳', ...``.

The line is that of the innermost *entry* on the error's path — the ``[[tiles]]`` header of the
fourth tile in TOML, the ``{`` of the fourth object in JSON — because that is where a reader
starts looking (a missing field has no line of its own). Errors outside any array entry point at
the deepest key that can be found. A syntax error points where the parser stopped.

Validated content is shared between all callers through the cache: models should be frozen
(``model_config = ConfigDict(frozen=True)``) so no game can change another's content.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = [
    "ContentError",
    "EntryError",
    "Loc",
    "clear_cache",
    "content_dir",
    "entry_lines",
    "format_loc",
    "line_of",
    "load_content",
    "require_unique",
]

M = TypeVar("M", bound=BaseModel)

# A path into the document, as pydantic's error `loc`: keys and list indexes.
Loc = tuple[str | int, ...]


class ContentError(Exception):
    """A content file that cannot be used: where (`path`, 1-based `line` or None) and what.

    `message` already starts with the entry's path (``tiles[3].terrain: ...``) when there is
    one. `others` holds the file's further errors, so one start-up can report all of them.
    """

    def __init__(self, path: Path, line: int | None, message: str) -> None:
        super().__init__(path, line, message)
        self.path = path
        self.line = line
        self.message = message
        self.others: list[ContentError] = []

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path.name}: {self.message}"
        return f"{self.path.name}:{self.line}: {self.message}"


class EntryError(Exception):
    """Raised by a cross-entry `check` to blame one entry: `load_content` turns it into a
    `ContentError` on that entry's line. `loc` is the entry's path (``("spaces", 4)``, or deeper,
    ``("spaces", 4, "edges")``) in the validated document."""

    def __init__(self, loc: Sequence[str | int], message: str) -> None:
        super().__init__(tuple(loc), message)
        self.loc: Loc = tuple(loc)
        self.message = message


# --------------------------------------------------------------------------- paths and names


def content_dir(kind: str) -> Path:
    """The folder of a game's house content: ``app/games/<kind>/content``.

    Found from this file rather than the working directory, so it is the same in a checkout
    and in an installed wheel (the folder ships inside the package).
    """
    return Path(__file__).resolve().parents[1] / kind / "content"


def format_loc(loc: Sequence[str | int]) -> str:
    """``("tiles", 3, "terrain")`` -> ``tiles[3].terrain``, as a programmer would write it."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


# --------------------------------------------------------------------------- lines: TOML

_BARE = r"[A-Za-z0-9_-]+"
_BASIC = r'"(?:[^"\\\n]|\\.)*"'
_LITERAL = r"'[^'\n]*'"
_SIMPLE = rf"(?:{_BARE}|{_BASIC}|{_LITERAL})"
_KEY = rf"{_SIMPLE}(?:[ \t]*\.[ \t]*{_SIMPLE})*"
_HEADER_END = r"[ \t]*(?:#.*)?$"
_ARRAY_HEADER = re.compile(rf"[ \t]*\[\[[ \t]*({_KEY})[ \t]*\]\]{_HEADER_END}")
_TABLE_HEADER = re.compile(rf"[ \t]*\[[ \t]*({_KEY})[ \t]*\]{_HEADER_END}")
_KEY_VALUE = re.compile(rf"[ \t]*({_KEY})[ \t]*=")
_BASIC_STRING = re.compile(_BASIC)
_MULTILINE_QUOTES = ('"""', "'''")


def _split_key(key: str) -> tuple[str, ...]:
    """A dotted TOML key's parts, unquoted; tomllib does the unquoting so escapes are exact."""
    table: Any = tomllib.loads(f"{key} = 0")
    parts: list[str] = []
    while isinstance(table, dict) and len(table) == 1:
        name, table = next(iter(table.items()))
        parts.append(name)
    return tuple(parts)


@dataclass
class _Value:
    """Whether a value goes on past its line: open brackets, or an open multi-line string.

    The lines it continues on may look like anything (``["a"]`` in an array of arrays reads
    like a table header, a skill's text may hold ``x = 1``), so they must not be taken for
    headers or keys.
    """

    depth: int = 0
    string: str | None = None

    def open(self) -> bool:
        return self.depth > 0 or self.string is not None

    def feed(self, text: str) -> None:
        index = 0
        while index < len(text):
            if self.string is not None:
                end = text.find(self.string, index)
                if end < 0:
                    return
                index = end + len(self.string)
                self.string = None
                continue
            if text.startswith(_MULTILINE_QUOTES, index):
                self.string = text[index : index + 3]
                index += 3
                continue
            char = text[index]
            if char == '"':
                match = _BASIC_STRING.match(text, index)
                index = match.end() if match else len(text)
                continue
            if char == "'":
                end = text.find("'", index + 1)
                index = len(text) if end < 0 else end + 1
                continue
            if char == "#":
                return
            if char in "[{":
                self.depth += 1
            elif char in "]}":
                self.depth -= 1
            index += 1


def _toml_lines(text: str) -> dict[Loc, int]:
    """Every table header and key of a TOML document -> its line, by concrete path.

    tomllib keeps no positions, so the text is scanned: ``[[a.b]]`` headers are counted to
    give each array-of-tables entry its index (``("a", 2, "b", 0)``), and ``[a]`` headers and
    ``key =`` lines are recorded under the table they belong to. The further lines of a
    multi-line value are skipped (see `_Value`).
    """
    lines: dict[Loc, int] = {}
    counts: dict[Loc, int] = {}
    table: Loc = ()
    value = _Value()

    def resolve(parts: tuple[str, ...]) -> Loc:
        # A header names tables by keys only; a key that is an array of tables means its
        # latest entry, which is the index the text has reached.
        concrete: Loc = ()
        for part in parts:
            concrete = (*concrete, part)
            if concrete in counts:
                concrete = (*concrete, counts[concrete] - 1)
        return concrete

    for number, line in enumerate(text.splitlines(), start=1):
        if value.open():
            value.feed(line)
        elif match := _ARRAY_HEADER.match(line):
            parts = _split_key(match.group(1))
            array = (*resolve(parts[:-1]), parts[-1])
            index = counts.get(array, 0)
            counts[array] = index + 1
            table = (*array, index)
            lines.setdefault(array, number)
            lines[table] = number
        elif match := _TABLE_HEADER.match(line):
            table = resolve(_split_key(match.group(1)))
            lines.setdefault(table, number)
        elif match := _KEY_VALUE.match(line):
            parts = _split_key(match.group(1))
            for end in range(1, len(parts) + 1):
                lines.setdefault(table + parts[:end], number)
            value.feed(line[match.end() :])
    return lines


# --------------------------------------------------------------------------- lines: JSON

_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _json_lines(text: str) -> dict[Loc, int]:
    """Every value of a (valid) JSON document -> the line where it starts, by path.

    json keeps no positions either; this walks the brackets itself and leaves every key and
    scalar to json's `raw_decode`, so it reads them exactly as `json.loads` did.
    """
    newlines = [index for index, char in enumerate(text) if char == "\n"]
    decoder = json.JSONDecoder()
    lines: dict[Loc, int] = {}

    def skip(index: int) -> int:
        match = _JSON_SPACE.match(text, index)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    def value(index: int, loc: Loc) -> int:
        index = skip(index)
        lines[loc] = bisect.bisect_left(newlines, index) + 1
        char = text[index]
        if char == "{":
            index = skip(index + 1)
            if text[index] == "}":
                return index + 1
            while True:
                key, index = decoder.raw_decode(text, skip(index))
                # Valid JSON has only the ":" here, and after a member only "," or "}".
                index = skip(index) + 1
                index = skip(value(index, (*loc, key)))
                if text[index] == "}":
                    return index + 1
                index += 1
        if char == "[":
            index = skip(index + 1)
            if text[index] == "]":
                return index + 1
            position = 0
            while True:
                index = skip(value(index, (*loc, position)))
                if text[index] == "]":
                    return index + 1
                index += 1
                position += 1
        _, end = decoder.raw_decode(text, index)
        return end

    value(0, ())
    return lines


# --------------------------------------------------------------------------- lines: both


def entry_lines(path: Path, text: str) -> dict[Loc, int]:
    """The line of every entry and key of a content file's text, by path (see `line_of`)."""
    return _json_lines(text) if path.suffix == ".json" else _toml_lines(text)


def line_of(lines: dict[Loc, int], loc: Sequence[str | int]) -> int | None:
    """The line to blame for an error at `loc`: the innermost array entry on the path that has
    a line; else the deepest part of the path that has one; else None.

    Parts of `loc` that are not in the document (pydantic adds the names of union members, and
    a missing field has no line) simply find nothing, so a shorter path is used.
    """
    path = tuple(loc)
    for end in range(len(path), 0, -1):
        if isinstance(path[end - 1], int) and path[:end] in lines:
            return lines[path[:end]]
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


# --------------------------------------------------------------------------- loading

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column \d+\)$")
_TOML_END = re.compile(r"\s*\(at end of document\)$")


def _parse(path: Path, text: str) -> Any:
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ContentError(path, error.lineno, error.msg) from None
    if path.suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            message = str(error)
            line: int | None = None
            if match := _TOML_POSITION.search(message):
                line = int(match.group(1))
                message = message[: match.start()]
            elif match := _TOML_END.search(message):
                line = max(1, len(text.splitlines()))
                message = message[: match.start()]
            raise ContentError(path, line, message) from None
    raise ContentError(path, None, "content files are .toml or .json")


def _validation_errors(path: Path, text: str, error: ValidationError) -> ContentError:
    lines = entry_lines(path, text)
    found: list[ContentError] = []
    for detail in error.errors(include_url=False):
        loc = tuple(detail["loc"])
        where = format_loc(loc)
        message = f"{where}: {detail['msg']}" if where else detail["msg"]
        found.append(ContentError(path, line_of(lines, loc), message))
    first = found[0]
    first.others = found[1:]
    return first


@functools.cache
def _load(path: Path, model: type[BaseModel], check: Callable[[Any], None] | None) -> BaseModel:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ContentError(path, None, str(error)) from None
    data = _parse(path, text)
    try:
        content = model.model_validate(data)
    except ValidationError as error:
        raise _validation_errors(path, text, error) from None
    if check is not None:
        try:
            check(content)
        except EntryError as error:
            line = line_of(entry_lines(path, text), error.loc)
            where = format_loc(error.loc)
            message = f"{where}: {error.message}" if where else error.message
            raise ContentError(path, line, message) from None
    return content


def load_content(
    path: str | Path,
    model: type[M],
    check: Callable[[M], None] | None = None,
) -> M:
    """The content of `path` (``.toml`` or ``.json``), validated by `model` and `check`.

    `model` describes the whole file. `check`, run on the validated content, raises
    `EntryError` to blame an entry (any other exception is a bug and passes through). Raises
    `ContentError` for a missing or unreadable file, a syntax error, a validation error (the
    first one; the rest in ``.others``) or a failed check.

    The result is cached per (file, model, check): call it at start-up to fail early, then
    again wherever the content is needed. A failed load is not cached. Pass a module-level
    `check`, not a lambda: a new lambda object is a new cache key, so the file is read again.
    """
    content = _load(Path(path).resolve(), model, check)
    assert isinstance(content, model)
    return content


def clear_cache() -> None:
    """Forget every loaded file, so the next `load_content` reads it again (tests, reloads)."""
    _load.cache_clear()


# --------------------------------------------------------------------------- common checks


def require_unique(entries: Sequence[BaseModel], field: str, at: str | Sequence[str | int]) -> None:
    """Raise `EntryError` at the first entry whose `field` repeats an earlier entry's.

    `at` is where `entries` sit in the document (``"tiles"``, or a path such as
    ``("events", 2, "levels")``), so the error points at the repeated entry's line. Ids that
    repeat are the most common mistake when content is copied and edited, hence this helper.
    """
    base: Loc = (at,) if isinstance(at, str) else tuple(at)
    first_seen: dict[Any, int] = {}
    for index, entry in enumerate(entries):
        value = getattr(entry, field)
        if value in first_seen:
            raise EntryError(
                (*base, index, field),
                f"{value!r} is already used by {format_loc((*base, first_seen[value]))}",
            )
        first_seen[value] = index
