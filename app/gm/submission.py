"""The one loop every submission the bot answers goes through — a post in a game's thread, a
sealed command, a post in the card registry's thread: read every command line, then apply
them in order to a working copy, all or nothing. The first line that does not read, or that
the rules refuse, stops it; the caller then writes nothing and answers with that line — but a
game's line that drew, rolled or was judged is final once applied: what came up to it is kept
(app/gm/play.py, docs/security.md "No answer depends on a hidden or random result").

What "apply" means is the caller's (app/gm/play.py for a game, app/gm/cards.py for the registry);
here is only the order of things and what a refused line is."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from app.games.base import CommandSyntaxError, RuleError, normalise
from app.gm.lines import Language, meant_line, misspelt_verb

log = logging.getLogger("bbsgm.gm")
# What a line gets when reading or applying it raised anything but a refusal: a bug of the
# bot's, answered in the thread like any refused line (the post is kept, the game unchanged).
UNREADABLE = (
    "ボットがこの行を処理できませんでした（不具合として記録しました）。ゲームは変わっていません。"
)

__all__ = ["MAX_COMMAND_LINES", "LineError", "Read", "Refusal", "Refused", "apply_all", "read"]

MAX_COMMAND_LINES = 50


class Refusal(Exception):
    """A well-formed command that may not be given now (the platform's or the registry's
    RuleError), with the lines the poster may give instead."""

    def __init__(self, message: str, legal: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.legal: list[str] = list(legal)


@dataclass
class LineError:
    """Where and why a line of a submission was refused (``column`` None: the whole line)."""

    line: int
    column: int | None
    message: str
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "message": self.message}


@dataclass
class Refused:
    """A submission stopped at a line: the line's error and the lines offered instead."""

    error: LineError
    legal: list[str]


@dataclass(frozen=True)
class Read:
    """A command line read: its number in the post, as written, and its command."""

    number: int
    line: str
    command: Any


def read(
    language: Language,
    lines: list[tuple[int, str]],
    legal_now: Callable[[], list[str]] = list,
) -> list[Read] | Refused:
    """Every line's command, or the first line that is too many, misspelt or does not parse
    (with ``legal_now()``: what the poster may write instead)."""
    if len(lines) > MAX_COMMAND_LINES:
        number, line = lines[MAX_COMMAND_LINES]
        message = f"1つの書き込みの命令は{MAX_COMMAND_LINES}行までです。"
        return Refused(LineError(number, None, message, normalise(line)), [])
    commands: list[Read] = []
    for number, line in lines:
        guess = misspelt_verb(language, line)
        if guess is not None:
            word = normalise(line).split(" ", 1)[0]
            message = f"「{word}」という命令はありません。もしかして {guess} ですか？"
            return Refused(LineError(number, 1, message, normalise(line)), legal_now())
        meant = meant_line(language, line)
        if meant is not None:  # issue #43: a line that looks like a move is answered
            written = normalise(line)
            message = f"「{written}」は {meant} のつもりでしたか？ そのままでは命令になりません。"
            return Refused(LineError(number, None, message, normalise(line)), legal_now())
        try:
            commands.append(Read(number, line, language.parse(line)))
        except CommandSyntaxError as exc:
            return Refused(LineError(number, exc.column, exc.message, exc.line), legal_now())
        except Exception:
            log.exception("reading line %d failed: %r", number, line)
            return Refused(LineError(number, None, UNREADABLE, normalise(line)), legal_now())
    return commands


def apply_all(commands: list[Read], apply: Callable[[int, Any], bool | None]) -> Refused | None:
    """``apply(index, command)`` for each command in order (it changes the caller's working
    copy, or raises ``Refusal`` or ``RuleError``); the first refusal stops the loop and is
    returned, what the caller does with its working copy then being its own (app/gm/play.py
    keeps what came before a line that drew, rolled or was judged). ``apply`` answering True
    stops the loop after that line (a preview goes no further than such a line)."""
    for index, read_line in enumerate(commands):
        try:
            if apply(index, read_line.command):
                return None
        except (RuleError, Refusal) as exc:
            error = LineError(read_line.number, None, exc.message, normalise(read_line.line))
            return Refused(error, exc.legal)
        except SQLAlchemyError:
            raise  # the database's trouble, not the line's: the request answers for it
        except Exception:
            log.exception("applying line %d failed: %r", read_line.number, read_line.line)
            error = LineError(read_line.number, None, UNREADABLE, normalise(read_line.line))
            return Refused(error, [])
    return None
