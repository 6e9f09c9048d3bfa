"""The game contract: what every game module offers the app, and what they share.

A game is a pure library (compare python-chess): it parses command lines with its Lark grammar,
applies commands to a JSON-serialisable state, says what is legal, and scores. It imports
nothing of the app; randomness comes only from the `Rng` handed to it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import random
import re
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Mapping, MutableSequence, Sequence
from copy import copy
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

import lark
from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError
from pydantic import BaseModel, ConfigDict

from app.games.command_messages import COMMON_SYNTAX_EXAMPLES, COMMON_TERMINAL_LABELS
from app.games.resources import resource_dir

__all__ = [
    "N_",
    "Actor",
    "Command",
    "CommandParser",
    "CommandSyntaxError",
    "Game",
    "NoOptions",
    "RankEntry",
    "Result",
    "Rng",
    "RuleError",
    "State",
    "Viewer",
    "copy_json",
    "event",
    "normalise",
    "private_event",
]

T = TypeVar("T")

# A seat index into the game's players list, or the game master.
Actor = int | Literal["gm"]
# Who looks at a view: a seat, the game master, or the public (None).
Viewer = int | Literal["gm"] | None
# Plain JSON data: dicts, lists, str, int, bool, None.
State = dict[str, Any]


# --------------------------------------------------------------------------- errors


class RuleError(Exception):
    """A well-formed command the rules forbid now.

    `message` is Japanese and names the rule; `legal` lists the canonical lines that the same
    actor may post instead (possibly empty).
    """

    def __init__(self, message: str, legal: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.legal: list[str] = list(legal)

    def __str__(self) -> str:
        return self.message


class CommandSyntaxError(Exception):
    """A command line the grammar does not accept.

    `line` is the normalised line, `column` the 1-based column of the problem (None when it is
    not about one place), `message` a friendly Japanese explanation, `expected` what could have
    stood there (display names, e.g. ``"主演"``, ``"行末"``).
    """

    def __init__(
        self,
        line: str,
        message: str,
        column: int | None = None,
        expected: Iterable[str] = (),
    ) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message
        self.expected: list[str] = list(expected)

    def __str__(self) -> str:
        return self.message


# --------------------------------------------------------------------------- randomness


class Rng:
    """Deterministic randomness for one move: sha256(f"{seed}:{seq}") seeds a `random.Random`.

    The seed is the game's secret; `seq` the move's sequence number (0 for setup), so a game
    replays exactly from its log.
    """

    def __init__(self, seed: str, seq: int) -> None:
        self._seed = seed
        self._seq = seq

    @cached_property
    def _random(self) -> random.Random:
        # Made on first use: most moves draw nothing, and a replay makes one Rng per move.
        digest = hashlib.sha256(f"{self._seed}:{self._seq}".encode()).digest()
        return random.Random(int.from_bytes(digest, "big"))

    def randint(self, a: int, b: int) -> int:
        return self._random.randint(a, b)

    def shuffle(self, items: MutableSequence[Any]) -> None:
        self._random.shuffle(items)

    def choice(self, items: Sequence[T]) -> T:
        return self._random.choice(items)


# --------------------------------------------------------------------------- text


def _verb(command: Any) -> str:
    """A command's verb, for a refusal's message (its canonical line's first word)."""
    return str(command.canonical()).split(" ", 1)[0]


_SPACES = re.compile(r"\s+")


def normalise(line: str) -> str:
    """NFKC, strip, and collapse whitespace runs to one ASCII space.

    NFKC maps full-width letters/digits to ASCII and U+3000 to a space, so ``ＳＥＴ　主演　役者３``
    becomes ``SET 主演 役者3``.
    """
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", line)).strip()


# --------------------------------------------------------------------------- results


def N_(message: str) -> str:
    """Marks Japanese text that the app's pages translate where they show it (Babel extracts
    ``N_``): the breakdown labels. The game itself only speaks Japanese."""
    return message


@dataclass
class RankEntry:
    name: str
    rank: int
    score: int | None
    breakdown: dict[str, int | str | None] = field(default_factory=dict)


@dataclass
class Result:
    ranking: list[RankEntry]

    def to_json(self) -> dict[str, Any]:
        return {"ranking": [asdict(entry) for entry in self.ranking]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        return cls(
            ranking=[
                RankEntry(
                    name=entry["name"],
                    rank=entry["rank"],
                    score=entry["score"],
                    breakdown=dict(entry["breakdown"]),
                )
                for entry in data["ranking"]
            ]
        )


def competition_ranks(scores: Sequence[int]) -> list[int]:
    """Ranks for scores already sorted best first; equal scores share a rank (1, 1, 3)."""
    ranks: list[int] = []
    for index, score in enumerate(scores):
        if index and score == scores[index - 1]:
            ranks.append(ranks[-1])
        else:
            ranks.append(index + 1)
    return ranks


# --------------------------------------------------------------------------- commands


@runtime_checkable
class Command(Protocol):
    """Every command object (platform or game): a frozen dataclass with a canonical line.

    ``game.parse(cmd.canonical()) == cmd`` holds for every command.
    """

    def canonical(self) -> str: ...


# --------------------------------------------------------------------------- parsing

# What may follow a verb written without a space and adds nothing: 終了。, 公開します,
# 終了する, 預言者宣言, 預言者を宣言します (a closing 。 allowed after each).
VERB_ENDINGS = frozenset(
    ending + stop
    for ending in (
        "",
        "します",
        "する",
        "です",
        "宣言",
        "宣言します",
        "宣言する",
        "を宣言",
        "を宣言します",
    )
    for stop in ("", "。")
)

# A closing full stop at the end of a command line: 。 (and ｡, which NFKC makes 。) and ． (which
# NFKC makes "."). Dropped before parsing unless the grammar reads it as part of the last word
# (CommandParser._drop_full_stop).
FULL_STOPS = "。."

# Regex syntax that makes a terminal's pattern more than a choice of words.
_NOT_A_WORD = frozenset(".[]{}*+^$|()\\")


class _NotWords(Exception):
    """The pattern matches more than a short list of plain words."""


def literal_words(pattern: str, limit: int = 64) -> list[str]:
    """The words a terminal's regex matches when it is a choice of plain words, else [].

    ``(?:(?i:SCOUT)|スカウト)`` gives ``SCOUT``, ``スカウト``; groups, inline flags and ``?`` are
    read, lookarounds (``マジック(?![^ ,、])``, a whole word only) match no text and are left out.
    A character class, ``.``, ``*`` or ``+`` makes it no list of words.
    """
    reader = _WordsReader(pattern, limit)
    try:
        words = reader.alternation()
    except _NotWords:
        return []
    if reader.at < len(pattern):
        return []
    return [word for word in dict.fromkeys(words) if word]


class _WordsReader:
    """Recursive descent over the little of regex syntax that spells a choice of words."""

    def __init__(self, pattern: str, limit: int) -> None:
        self.pattern = pattern
        self.limit = limit
        self.at = 0

    def _peek(self, text: str) -> bool:
        return self.pattern.startswith(text, self.at)

    def alternation(self) -> list[str]:
        words = self.sequence()
        while self._peek("|"):
            self.at += 1
            words = words + self.sequence()
        return words

    def sequence(self) -> list[str]:
        words = [""]
        while self.at < len(self.pattern) and self.pattern[self.at] not in "|)":
            item = self.atom()
            if self._peek("??") or self._peek("?"):
                self.at += 2 if self._peek("??") else 1
                item = [*item, ""]
            words = [head + tail for head in words for tail in item]
            if len(words) > self.limit:
                raise _NotWords
        return words

    def atom(self) -> list[str]:
        char = self.pattern[self.at]
        if char == "(":
            return self.group()
        if char == "\\":
            escaped = self.pattern[self.at + 1 : self.at + 2]
            if not escaped or escaped.isalnum():
                raise _NotWords  # \d, \s, \w, \b … (or a dangling backslash)
            self.at += 2
            return [escaped]
        if char in _NOT_A_WORD or char == "?":
            raise _NotWords
        self.at += 1
        return [char]

    def group(self) -> list[str]:
        lookaround = re.compile(r"\(\?(?:=|!|<=|<!)").match(self.pattern, self.at)
        if lookaround is not None:
            self.at = lookaround.end()
            self._skip_to_close()
            return [""]
        opener = re.compile(r"\((?:\?(?:[aiLmsux-]*:|P<\w+>))?").match(self.pattern, self.at)
        assert opener is not None  # the pattern is at "("
        if self._peek("(?") and opener.end() == self.at + 1:
            raise _NotWords  # (?P=…), (?#…), a conditional …
        self.at = opener.end()
        words = self.alternation()
        if not self._peek(")"):
            raise _NotWords
        self.at += 1
        return words

    def _skip_to_close(self) -> None:
        """Past the ``)`` that closes the group being read (escapes and classes skipped)."""
        depth = 1
        in_class = False
        while self.at < len(self.pattern):
            char = self.pattern[self.at]
            self.at += 2 if char == "\\" else 1
            if char == "\\":
                continue
            if in_class:
                in_class = char != "]"
            elif char == "[":
                in_class = True
                if self._peek("]"):  # a "]" first in a class is a member
                    self.at += 1
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    return
        raise _NotWords


STRICT_AVAILABLE = importlib.util.find_spec("interegular") is not None
# How many parsed lines each game's parser keeps (CommandParser.parse).
PARSE_CACHE_SIZE = 4096


def _display_terminal(parser: Lark, name: str, labels: Mapping[str, str]) -> str:
    """A human name for a grammar terminal: a label, the literal itself, or the bare name."""
    bare = name.split("__")[-1]
    if bare in labels:
        return labels[bare]
    if name in ("$END", "<END-OF-FILE>"):
        return "行末"
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return bare
    if pattern.type == "str":
        return str(pattern.value)
    return bare


class SyntaxErrorDetail(Exception):
    """Raised inside a Transformer for a token the grammar lexes but the game rejects (役者7)."""

    def __init__(self, token: Token, message: str, expected: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.token = token
        self.message = message
        self.expected = list(expected)


class CommandParser:
    """One game's grammar: LALR parser (built once per process), transformer, error tables.

    `grammar_file` is a file name inside `resource_dir("grammar")`; it imports common.lark.
    `make_transformer` builds the Transformer that turns a tree into a command dataclass.
    `examples` maps friendly messages to malformed lines (tried before the common table).
    """

    def __init__(
        self,
        grammar_file: str,
        make_transformer: Callable[[], Transformer[Token, Any]],
        examples: Mapping[str, list[str]],
        terminal_labels: Mapping[str, str],
    ) -> None:
        self.grammar_file = grammar_file
        self._make_transformer = make_transformer
        self.examples: dict[str, list[str]] = {**examples, **COMMON_SYNTAX_EXAMPLES}
        self.terminal_labels: dict[str, str] = {**COMMON_TERMINAL_LABELS, **terminal_labels}

    @cached_property
    def lark(self) -> Lark:
        path: Path = resource_dir("grammar") / self.grammar_file
        return Lark.open(
            str(path),
            parser="lalr",
            # strict=True (shift/reduce conflicts and terminal collisions are errors) needs the
            # `interegular` package; without it the parser is the same, only unchecked. The
            # tests build every grammar with strict=True.
            strict=STRICT_AVAILABLE,
            cache=_lark_cache_file(path),
            maybe_placeholders=True,
            propagate_positions=False,
        )

    @cached_property
    def transformer(self) -> Transformer[Token, Any]:
        return self._make_transformer()

    @cached_property
    def _verb_patterns(self) -> list[re.Pattern[str]]:
        """Regexes of the terminals that may begin a line: the verbs."""
        first = self._accepts(self.lark.parse_interactive(""))
        patterns = []
        for name in sorted(first):
            if name.startswith("$"):
                continue
            patterns.append(re.compile(self.lark.get_terminal(name).pattern.to_regexp()))
        return patterns

    @cached_property
    def _terminal_names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.lark.terminals)

    def _accepts(self, interactive: Any) -> set[str]:
        """Terminals that let the parse go on from here.

        Lark's own `InteractiveParser.accepts()` recognises terminals by `name.isupper()`, which
        drops the namespaced ones imported from common.lark (``common__JOIN``).
        """
        conf = copy(interactive.parser_state.parse_conf)
        conf.callbacks = {}
        accepted: set[str] = set()
        for name in interactive.choices():
            if name != "$END" and name not in self._terminal_names:
                continue
            cursor = interactive.copy(deepcopy_values=False)
            cursor.parser_state.parse_conf = conf
            try:
                cursor.feed_token(Token(name, ""))
            except UnexpectedInput:
                continue
            accepted.add(name)
        return accepted

    @cached_property
    def verb_words(self) -> list[str]:
        """Every spelling of every verb (``SCOUT``, ``スカウト``, …), as plain words: for the
        verbs glued to what follows and for "did you mean" hints."""
        words: list[str] = []
        for pattern in self._verb_patterns:
            words.extend(w for w in literal_words(pattern.pattern) if w not in words)
        return words

    def verbs_match(self, word: str) -> bool:
        return self._any_verb.fullmatch(word) is not None

    @cached_property
    def _any_verb(self) -> re.Pattern[str]:
        """All the verbs in one regex: it is tried on the first word of every line posted."""
        return re.compile("|".join(f"(?:{p.pattern})" for p in self._verb_patterns) or "(?!)")

    @cached_property
    def _glued_verb(self) -> re.Pattern[str]:
        """A verb at the start of a word, longest first: a Japanese one followed by anything
        (スカウト役者), an English one (any case) only by a non-ASCII character (SCOUT役者, but
        DRAWING and ENDLESS are words of their own)."""
        spellings = []
        for word in sorted(self.verb_words, key=len, reverse=True):
            if word.isascii():
                spellings.append(f"(?i:{re.escape(word)})(?=[^\\x00-\\x7f])")
            else:
                spellings.append(re.escape(word))
        return re.compile("|".join(spellings) or "(?!)")

    def command_text(self, line: str) -> str | None:
        """The command line, with a space after a glued verb; None for talk (docs/forum.md,
        "Where talk ends and a command begins").

        A command line begins with a verb. The verb may be followed by a space, by nothing,
        or directly by the rest: ``スカウト役者`` and ``SCOUT役者`` read ``スカウト 役者`` and
        ``SCOUT 役者``. A closing 。 and a polite ending after the verb (``終了。``, ``公開します``,
        ``預言者宣言``) add nothing. A verb glued to other words counts only when the grammar
        takes the word right after the verb (``配置主演役者9`` is a command with an error in its
        card; ``終了しました、おつかれ`` is talk); an English one not in capitals only when the
        whole line parses. A 。 or ． closing the line stays here: `parse` drops it
        (`_drop_full_stop`), and an error quotes the line with it.
        """
        text = normalise(line)
        if not text:
            return None
        first = text.split(" ", 1)[0]
        if self.verbs_match(first):
            return text
        glued = self._glued_verb.match(first)
        if glued is None:
            return None
        verb = glued.group()
        rest = text[len(verb) :].strip()
        if rest in VERB_ENDINGS:
            return verb
        spaced = f"{verb} {rest}"
        if not self._takes_word_after(verb, rest):
            return None
        if verb.isascii() and not verb.isupper() and not self._parses(spaced, stop=True):
            return None  # lower-case English glued to talk (endです…) needs the whole line
        return spaced

    def _drop_full_stop(self, text: str) -> str:
        """Without the 。 (or ．) closing the line, unless a word of free form (a regex
        terminal) reads it: a player called モーニング娘。, the free words of a hint keep
        theirs. A stop nothing reads, or only a literal of the grammar (the ``.`` of the rule
        language's ``card.rank``), is punctuation: no command ends with one."""
        bare = text.rstrip(FULL_STOPS).rstrip()
        if bare == text or not bare:
            return text
        interactive = self.lark.parse_interactive(text)
        try:
            for token in interactive.iter_parse():
                if token.end_pos is not None and token.end_pos > len(bare):
                    return text if self._is_free_form(token.type) else bare
        except UnexpectedInput:
            pass
        return bare

    def _is_free_form(self, terminal: str) -> bool:
        try:
            return self.lark.get_terminal(terminal).pattern.type == "re"
        except KeyError:
            return False

    def _parses(self, text: str, stop: bool = False) -> bool:
        """Does the grammar take the line (``stop``: with a closing 。 or ． dropped)?"""
        try:
            self.lark.parse(self._drop_full_stop(text) if stop else text)
        except UnexpectedInput:
            return False
        return True

    def reads_as_arguments(self, verb: str, rest: str) -> bool:
        """Does ``verb rest`` parse, with one of the grammar's own terms (a deck, a slot, a
        mark; not a name or free words) right after the verb? Tells a misspelt verb
        (``スカウド 役者``) from talk that only begins like one (app.gm.lines.misspelt_verb)."""
        return self._takes_word_after(verb, rest) and self._parses(f"{verb} {rest}", stop=True)

    def _takes_word_after(self, verb: str, rest: str) -> bool:
        """Does the grammar read the word after the verb as one of its own terms (a deck, a
        slot, a mark)? A word any text would match (a name, free words) does not count:
        ``代理の一手です`` and ``ヒントください`` stay talk."""
        if not any(term.match(rest) for term in self._terms_after(verb)):
            return False  # the cheap test first: most talk stops here
        interactive = self.lark.parse_interactive(f"{verb} {rest}")
        try:
            for index, token in enumerate(interactive.iter_parse()):
                if index == 1:
                    return not self._takes_any_word(token.type)
        except UnexpectedInput:
            return False
        return False

    def _terms_after(self, verb: str) -> list[re.Pattern[str]]:
        """The regexes of the grammar's own terms that may stand right after the verb (no
        name, no free words), worked out once per verb."""
        key = verb.upper() if verb.isascii() else verb
        terms = self._terms_after_verb.get(key)
        if terms is None:
            terms = []
            interactive = self.lark.parse_interactive(key)
            try:
                interactive.exhaust_lexer()
                accepted = self._accepts(interactive)
            except UnexpectedInput:
                accepted = set()
            for name in sorted(accepted):
                if name != "$END" and not self._takes_any_word(name):
                    terms.append(re.compile(self.lark.get_terminal(name).pattern.to_regexp()))
            self._terms_after_verb[key] = terms
        return terms

    @cached_property
    def _terms_after_verb(self) -> dict[str, list[re.Pattern[str]]]:
        return {}

    @cached_property
    def _terms_after_any_verb(self) -> re.Pattern[str]:
        patterns = dict.fromkeys(t.pattern for v in self.verb_words for t in self._terms_after(v))
        return re.compile("|".join(f"(?:{p})" for p in patterns) or "(?!)")

    def may_begin_arguments(self, rest: str) -> bool:
        """Could ``rest`` begin with a term some verb takes right after it (a deck, a slot, a
        mark)? The cheap first test of app.gm.lines.misspelt_verb, run on lines of talk."""
        return self._terms_after_any_verb.match(rest) is not None

    def _takes_any_word(self, terminal: str) -> bool:
        try:
            pattern = re.compile(self.lark.get_terminal(terminal).pattern.to_regexp())
        except KeyError:
            return False
        return all(pattern.fullmatch(probe) for probe in ("あいう", "xyz9"))

    def is_command_line(self, line: str) -> bool:
        return self.command_text(line) is not None

    def parse(self, line: str) -> Any:
        """The command of a line (commands are frozen dataclasses, so the same line's command
        is kept and handed out again: a game's replay parses the same few lines thousands of
        times). A line that does not parse raises CommandSyntaxError every time."""
        command = self._parsed.get(line)
        if command is None:
            command = self._parse(line)
            if len(self._parsed) >= PARSE_CACHE_SIZE:
                self._parsed.clear()
            self._parsed[line] = command
        return command

    @cached_property
    def _parsed(self) -> dict[str, Any]:
        return {}

    def _parse(self, line: str) -> Any:
        written = normalise(line)
        text = self.command_text(written) or written
        read = self._drop_full_stop(text)
        try:
            tree = self.lark.parse(read)
        except UnexpectedInput as error:
            raise _as_written(written, text, self._syntax_error(read, error)) from None
        try:
            return self.transformer.transform(tree)
        except VisitError as error:
            detail = error.orig_exc
            if isinstance(detail, SyntaxErrorDetail):
                column = getattr(detail.token, "column", None)
                refusal = CommandSyntaxError(
                    text, detail.message, column=column, expected=detail.expected
                )
                raise _as_written(written, text, refusal) from None
            raise

    def expected_names(self, names: Iterable[str]) -> list[str]:
        shown: list[str] = []
        for name in sorted(names):
            label = _display_terminal(self.lark, name, self.terminal_labels)
            if label not in shown:
                shown.append(label)
        return shown

    @cached_property
    def _labels_by_state(self) -> dict[tuple[int, ...], str]:
        """Each example's parser stack at its error -> its label (the first label wins).

        Like Lark's `match_examples`, but keyed by the whole LALR stack rather than the top
        state and stack depth: LALR merges states (the one after a role card serves SET and
        EVENT 新たなるチャンス alike), and only the stack tells those errors apart.
        """
        labels: dict[tuple[int, ...], str] = {}
        for label, examples in self.examples.items():
            for example in examples:
                key = self._error_key(example)
                if key is not None:
                    labels.setdefault(key, label)
        return labels

    def _error_key(self, line: str) -> tuple[int, ...] | None:
        try:
            self.lark.parse(line)
        except UnexpectedInput as error:
            return _state_key(error)
        return None

    def example_label(self, line: str) -> str | None:
        """The friendly message a malformed line gets from the tables (None: no match)."""
        key = self._error_key(normalise(line))
        return None if key is None else self._labels_by_state.get(key)

    def _syntax_error(self, text: str, error: UnexpectedInput) -> CommandSyntaxError:
        interactive = getattr(error, "interactive_parser", None)
        if interactive is not None:
            expected = self.expected_names(self._accepts(interactive))
        elif isinstance(error, UnexpectedCharacters):
            expected = self.expected_names(error.allowed)
        else:
            expected = self.expected_names(getattr(error, "expected", ()))
        at_end = isinstance(error, UnexpectedToken) and error.token.type == "$END"
        column: int | None = len(text) + 1 if at_end else error.column
        if column is None or column < 1:
            column = len(text) + 1
        key = _state_key(error)
        label = None if key is None else self._labels_by_state.get(key)
        if label is None:
            nested = self._nested_error(text)
            if nested is not None:
                return nested
            where = "行末" if at_end else f"{column}文字目"
            message = f"{where}が読めません。ここに書けるのは次のどれかです: " + "、".join(expected)
        else:
            message = label
        return CommandSyntaxError(text, message, column=column, expected=expected)

    def _nested_error(self, text: str) -> CommandSyntaxError | None:
        """For `AS <name> <command>`: explain the error inside <command> on its own terms."""
        words = text.split(" ", 2)
        if len(words) < 3 or not self._is_as(words[0]):
            return None
        offset = len(words[0]) + len(words[1]) + 2
        try:
            self.lark.parse(words[2])
        except UnexpectedInput as inner:
            nested = self._syntax_error(words[2], inner)
        else:
            return None
        column = None if nested.column is None else nested.column + offset
        return CommandSyntaxError(text, nested.message, column=column, expected=nested.expected)

    def _is_as(self, word: str) -> bool:
        try:
            pattern = self.lark.get_terminal("common__AS").pattern.to_regexp()
        except KeyError:
            return False
        return re.fullmatch(pattern, word) is not None


def _as_written(written: str, text: str, refusal: CommandSyntaxError) -> CommandSyntaxError:
    """The refusal of a command line read as ``text`` (CommandParser.command_text), quoting the
    line as written: with its closing stop, without the space put after a glued verb (the
    columns after it moved back by one)."""
    column = refusal.column
    glued = next((i for i, (a, b) in enumerate(zip(text, written, strict=False)) if a != b), None)
    if glued is not None and text[glued] == " " and text[glued + 1 :] == written[glued:]:
        if column is not None and column > glued + 1:
            column -= 1
    elif not written.startswith(text):
        return refusal  # read otherwise: quote it as read
    return CommandSyntaxError(written, refusal.message, column=column, expected=refusal.expected)


def _state_key(error: UnexpectedInput) -> tuple[int, ...] | None:
    stack = getattr(error.state, "state_stack", None)
    if stack is None:
        return None
    return tuple(stack)


# --------------------------------------------------------------------------- events


def event(kind: str, text: str, **extra: Any) -> dict[str, Any]:
    """A public event of a move: its ``text`` goes into the bot's reply for everyone. A text
    that says whom the game now waits for carries them as ``waiting=[seat, …]`` (or is a
    ``"turn"`` event with its ``seat``): the reply then adds no 手番待ち line naming them again."""
    return {"type": kind, "text": text, **extra}


def private_event(kind: str, text: str, seat: Actor) -> dict[str, Any]:
    """An event only the actor of the command (and the GM) is shown."""
    return {"type": kind, "text": text, "private": True, "seat": seat}


def copy_json(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


class NoOptions(BaseModel):
    """A game without options: anything given is refused by name."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- the contract


class Game:
    """What the app needs from a game, and what every game shares: subclass it once per kind
    (one instance per kind in `app.games.GAMES`, compare python-chess's variants).

    A game writes its rules (`deal`, `execute`, `legal_commands`), its view, its scoring and
    its picture; parsing, the guarded `apply` (actor and command-type checks, sealing, no
    mutation of the input, the legal lines in a refusal) and the split of legal lines between
    the thread and the sealed endpoint are done here, once. docs/games.md is the checklist.
    """

    kind: str
    title_ja: str
    title_en: str
    aliases: tuple[str, ...] = ()
    min_players: int
    max_players: int
    Options: type[BaseModel] = NoOptions
    parser: CommandParser
    # The game's own command types (platform commands are the app's).
    commands: tuple[type, ...]
    # Of those, the ones only the GM gives (seats are refused them, the GM may give no other).
    gm_commands: tuple[type, ...] = ()
    # Said after the player count when it is out of range, e.g. the source's line about it.
    player_count_note: str = ""
    # The game plays with the site's card registry (app/gm/cards.py): when a game of this kind is
    # made, the app puts the approved pool into its options as ``pool`` (name -> card), so the
    # game stays a pure library and its record names the versions it was played with.
    uses_card_registry: bool = False
    # The rules' edition new games are made with, for a kind whose rules changed in a way that
    # changes how a game plays out: its `Options` then has an ``edition`` field (defaulting to
    # this), which the app sets for every new game and no player chooses; a game keeps the
    # edition it was made with, so games recorded under older rules replay by them. 1 for a
    # kind whose rules never changed (and no such field).
    edition: int = 1
    # The wording of the texts its events say (the bot's replies, app/gm/working.py): bumped
    # whenever those texts change, never the rules. A game keeps the wording it started with
    # (Game.wording), and `bbsgm verify` compares a game's replies with the replayed texts
    # word for word only when they are in the kind's current wording; an older game's
    # outcomes are still checked by its replay (docs/archive.md, "Verifying a game").
    wording: int = 1
    # A label for each key of the result's breakdown, in Japanese marked with `N_` (the pages
    # translate it); a key ending in a number matches its entry with ``{n}`` (``round_{n}``).
    breakdown_labels: Mapping[str, str] = {}
    # The command types whose lines name hidden things (the cards of a hand, undeclared
    # magic): a refusal, which everyone in the thread reads, never lists them.
    secret_commands: tuple[type, ...] = ()

    # -- parsing, from the parser

    @property
    def grammar(self) -> str:
        """Its `.lark` file in `grammar/`."""
        return self.parser.grammar_file

    def is_command_line(self, line: str) -> bool:
        """After `normalise`, does the line begin with a known verb? Other lines are talk."""
        return self.parser.is_command_line(line)

    def parse(self, line: str) -> Any:
        """Normalise and parse one line into a command object; raises CommandSyntaxError."""
        return self.parser.parse(line)

    def verbs(self) -> list[str]:
        """Every spelling of every verb the game understands (platform verbs included)."""
        return self.parser.verb_words

    # -- setting up

    def setup(self, players: list[str], options: Mapping[str, Any], rng: Rng) -> State:
        """The dealt game: options validated, the players checked, then `deal`."""
        chosen = self.Options.model_validate(dict(options))
        self.check_players(list(players))
        return self.deal(list(players), chosen, rng)

    def players_text(self) -> str:
        """How many play it, as players read it: ``2〜6人``, or ``2人`` (never ``2〜2人``)."""
        if self.min_players == self.max_players:
            return f"{self.min_players}人"
        return f"{self.min_players}〜{self.max_players}人"

    def check_players(self, players: list[str]) -> None:
        if not self.min_players <= len(players) <= self.max_players:
            raise RuleError(
                f"{self.title_ja}は{self.players_text()}で遊びます"
                f"（今は{len(players)}人{self.player_count_note}）。"
            )
        for name in players:
            if not name or any(ch.isspace() for ch in name):
                raise RuleError(f"プレイヤー名 {name!r} は空白を含まない1語にしてください。")
        if len(set(players)) != len(players):
            raise RuleError("同じ名前のプレイヤーが2人います。")

    def check_content(self) -> None:
        """Load and validate the game's house content files (app/games/<kind>/content/): the
        app calls this at start-up, so a bad entry stops the start with its file and line
        instead of a game in play. Nothing by default."""

    def deal(self, players: list[str], options: Any, rng: Rng) -> State:
        """The state before the first move; `options` is an instance of `Options`."""
        raise NotImplementedError

    # -- moves

    def apply(
        self, state: State, actor: Actor, command: Any, rng: Rng, *, sealed: bool = False
    ) -> tuple[State, list[dict[str, Any]]]:
        """Return (new state, events); never mutates `state`; raises RuleError.

        ``sealed``: the command came through the private endpoint; only its author and the GM
        see it until the game reveals it. Secret commands sent unsealed and commands that may
        not be sealed are refused (`needs_seal`). An event with ``"private": True`` is shown
        only to the actor and the GM; every other event's text is public.
        """
        self._check_command(state, actor, command)
        try:
            self._check_guards(state, actor, command, sealed)
            new_state = self.copy_state(state)
            events = self.execute(new_state, actor, command, rng, sealed)
        except RuleError as error:
            error.legal = self.refusal_lines(state, actor)
            raise
        return new_state, events

    def apply_owned(
        self, state: State, actor: Actor, command: Any, rng: Rng, *, sealed: bool = False
    ) -> list[dict[str, Any]]:
        """``apply`` on a state its caller owns and never reads again but through the result:
        ``state`` itself is changed, not a copy, and its events are returned. For a replay's
        fold (app/gm/replay.py), which keeps only the last state: the copy per move was a
        tenth of a populous replay. The caller's first state
        must be a ``copy_state`` (so the parts a move may edit are its own, not shared with
        whatever made it); on a RuleError the state may be half changed and is dropped."""
        self._check_command(state, actor, command)
        self._check_guards(state, actor, command, sealed)
        return self.execute(state, actor, command, rng, sealed)

    def _check_command(self, state: State, actor: Actor, command: Any) -> None:
        """The actor is a seat or the GM, and the command is one of this game's."""
        self._check_actor(state, actor)
        if not isinstance(command, self.commands):
            raise RuleError(
                f"{command!r} は{self.title_ja}の命令ではありません"
                "(掲示板の命令はアプリが扱います)。"
            )

    def _check_actor(self, state: State, actor: Actor) -> None:
        if actor == "gm":
            return
        if not isinstance(actor, int) or isinstance(actor, bool):
            raise RuleError(f"{actor!r} はこのゲームの席でも GM でもありません。")
        if not 0 <= actor < len(state["players"]):
            raise RuleError(f"席 {actor} のプレイヤーはいません。")

    def _check_guards(self, state: State, actor: Actor, command: Any, sealed: bool) -> None:
        if self.is_over(state):
            raise RuleError("ゲームはすでに終了しています。")
        gm_only = isinstance(command, self.gm_commands)
        if actor == "gm" and not gm_only:
            raise RuleError(
                f"{_verb(command)} はプレイヤーの命令です"
                "(GM が代わりに書くときは AS <名前> <命令>)。"
            )
        if actor != "gm" and gm_only:
            raise RuleError(f"{_verb(command)} は GM の命令です{self.gm_command_note(command)}。")
        required = self.needs_seal(state, command)
        if required is True and not sealed:
            raise RuleError(self.must_be_sealed_message(state, command))
        if required is False and sealed:
            raise RuleError(self.must_be_public_message(state, command))

    def gm_command_note(self, command: Any) -> str:
        """Said after "X は GM の命令です" (why the rules give it to the GM)."""
        return ""

    def must_be_sealed_message(self, state: State, command: Any) -> str:
        return f"{_verb(command)} は秘密の命令なので、封印して送ってください。"

    def must_be_public_message(self, state: State, command: Any) -> str:
        return f"{_verb(command)} は皆の前で行う命令なので、封印せずスレッドに書き込んでください。"

    def copy_state(self, state: State) -> State:
        """A deep copy for `execute` to change. A game may override it with a faster copy
        that shares what never changes (see eitsuku's and eleusis's)."""
        copied: State = copy_json(state)
        return copied

    def execute(
        self, state: State, actor: Actor, command: Any, rng: Rng, sealed: bool
    ) -> list[dict[str, Any]]:
        """Check `command` against the rules and run it on `state` (a copy: mutate it);
        raise RuleError when it is illegal. Actor, command type, game over and sealing were
        checked before. By default `play`, for a game whose GM gives no game command
        (`gm_commands` empty, so `apply` lets only seats through) and whose rules do not ask
        whether the command came sealed."""
        assert isinstance(actor, int), f"{self.kind}: GM commands need the game's own execute"
        return self.play(state, actor, command, rng)

    def play(self, state: State, seat: int, command: Any, rng: Rng) -> list[dict[str, Any]]:
        """For the default `execute`: check and run one seat's command on `state`."""
        raise NotImplementedError

    def needs_seal(self, state: State, command: Any) -> bool | None:
        """True: ``command`` must come sealed now; False: it must be public; None: either.
        The bot uses it to send a missing player's default moves the way the rules want."""
        return False

    def reveals(self, state: State, command: Any) -> str | None:
        """What ``command``, given now, turns up that nobody could know before — a draw from
        a closed deck, a die, a judgment against a secret — as the words after 「N行目で」
        (「山札からカードを引く」), or None. Told from ``state`` before the line and the command
        alone, never from the outcome. Such a line is final once applied: a preview stops
        after it, and a later line of the same post refused no longer undoes it
        (docs/security.md). Its legality must be decided before the draw. The platform also
        counts as such any line that changes what ``hidden`` lists for the seat it plays
        for. None by default."""
        return None

    # -- legal lines

    def legal_commands(self, state: State, actor: Actor) -> list[Any]:
        """Every command `actor` may give now, either way (thread or sealed). Where the full
        set is large, an enumerable prefix (e.g. BUY without its payment)."""
        raise NotImplementedError

    def legal_split(self, state: State, actor: Actor) -> tuple[list[str], list[str]]:
        """What ``/legal`` answers, from one listing of ``legal_commands``: the canonical
        lines ``actor`` may post in the thread now (none has to be sealed), and those they
        may (or must) send through the sealed endpoint."""
        if self.is_over(state):
            return [], []
        thread: list[str] = []
        sealed: list[str] = []
        for command in self.legal_commands(state, actor):
            way = sealed if self.needs_seal(state, command) is True else thread
            way.append(command.canonical())
        return thread, sealed

    def legal(self, state: State, actor: Actor) -> list[str]:
        """Canonical lines `actor` may post in the thread now: none has to be sealed."""
        return self.legal_split(state, actor)[0]

    def sealed_legal(self, state: State, actor: Actor) -> list[str]:
        """Enumerable lines `actor` may (or must) send through the sealed endpoint now."""
        return self.legal_split(state, actor)[1]

    def examples(self, state: State, actor: Actor) -> list[tuple[str, bool]]:
        """Lines of free text that `legal` cannot list (a secret rule, a hint), one example
        each with whether it goes sealed: shown as a pattern to follow, not a promise."""
        return []

    def refusal_lines(self, state: State, actor: Actor) -> list[str]:
        """The legal lines a refusal in the thread may show everyone: the thread's lines but
        those of a `secret_commands` type."""
        if self.is_over(state):
            return []
        return [
            command.canonical()
            for command in self.legal_commands(state, actor)
            if not isinstance(command, self.secret_commands)
            and self.needs_seal(state, command) is not True
        ]

    # -- reading the state

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]:
        """What that viewer may see; hidden information never leaves through another path."""
        raise NotImplementedError

    def hidden(self, state: State, viewer: Viewer) -> list[Any]:
        """The hidden values `viewer` must not find in its view (a hand, the deck order, a
        secret rule): the contract test looks for each in the view. Nothing by default."""
        return []

    def board_svg(self, view: Mapping[str, Any], own: Mapping[str, Any] | None = None) -> str:
        """The board as an SVG picture, a pure function of a view (`own`: the viewer's own
        view, which may add what only they see, such as their hand)."""
        raise NotImplementedError

    def result(self, state: State) -> Result | None:
        """Final scores with a per-player breakdown once over."""
        raise NotImplementedError

    def epilogue(self, state: State) -> list[str]:
        """Once over: lines revealing every hidden part of the state (hands, secret rules).
        By default the heading 【<title> 種明かし】 and a line per player from `revealed`;
        nothing where `revealed` has nothing to say (the default)."""
        if not self.is_over(state):
            return []
        lines = [
            f"・{player['name']}{shown}"
            for player in state["players"]
            if (shown := self.revealed(player)) is not None
        ]
        return [f"【{self.title_ja} 種明かし】", *lines] if lines else []

    def revealed(self, player: Mapping[str, Any]) -> str | None:
        """For the default `epilogue`: what stayed hidden of one player's entry in the state,
        said after their name (" の手札: …"); None: nothing to reveal."""
        return None

    def is_over(self, state: State) -> bool:
        return bool(state["over"])

    def waiting_for(self, state: State) -> list[int]:
        """The seats the game waits for now."""
        raise NotImplementedError

    def default_commands(self, state: State, seat: int) -> list[str]:
        """What the bot posts for a seat past its deadline (nothing by default)."""
        return []

    def autoplay(self, state: State, seat: int) -> list[str]:
        """What the bot plays for a kicked seat nobody replaced, while the game waits for it:
        the game's `zombie` choice from what that seat alone sees (its own view and its legal
        lines — never another's hidden information), else the default moves."""
        legal = self.legal(state, seat)
        chosen = self.zombie(self.view(state, seat), legal)
        if chosen is not None and chosen in legal:  # one legal line at a time: never refused
            return [chosen]
        return self.default_commands(state, seat)

    def breakdown_words(self, value: Any) -> Any:
        """A stored result's breakdown value as players read it: a result stored in words a
        kind has since said otherwise (カードゲーム's reason with the rule book's label) is
        shown in today's. As it is by default."""
        return value

    # A kind's bot (its ``bot.py``): the lines a bot seat plays, chosen from the seat's own
    # view and the lines legal for it now, thread and sealed ones (docs/bot-play.md).
    bot: Callable[[Mapping[str, Any], Sequence[str]], list[str]] | None = None

    def bot_lines(self, state: State, seat: int) -> list[str]:
        """What a bot seated at ``seat`` plays now, while the game waits for it, decided from
        that seat's own view and legal lines only (sealed ones too): the kind's ``bot``, or
        the dropped-seat play for a kind without one."""
        if self.bot is None:
            return self.autoplay(state, seat)
        thread, sealed = self.legal_split(state, seat)
        return self.bot(self.view(state, seat), thread + sealed)

    def zombie(self, own_view: Mapping[str, Any], legal: Sequence[str]) -> str | None:
        """A sensible next line for a dropped player, chosen from the lines legal for them now
        by what their own view shows; None: play the default moves. None by default."""
        return None

    def undo_lines(self, before: State, after: State) -> list[str]:
        """Canonical lines the bot plays as the GM (recorded moves, each with its own Rng)
        right after an UNDO turned state ``before`` into ``after``: e.g. shuffling a closed
        deck that got back a card the undone moves drew, whose name the thread already read
        (docs/gm.md, UNDO). A later UNDO never takes these back. None by default."""
        return []

    def turn_key(self, state: State) -> str:
        """Changes exactly when the turn or phase moves on (deadlines restart then)."""
        raise NotImplementedError

    def turn_label(self, state: State) -> str:
        """The turn or phase in words, for people (第2週, アイドル指名), where `turn_key` is for
        the code (week2): said in the "your turn" notification. Each form is a message of
        app/web/messages.py, so English pages translate it. Empty when there is nothing to
        name (the default); `phase_or_turn` says it for most games."""
        return ""


def phase_or_turn(state: State, turn: str, phases: Mapping[str, str] | None = None) -> str:
    """A `Game.turn_label`: nothing once the game is over, the name `phases` gives the state's
    ``phase`` (スキルのドラフト), else `turn` filled from the state (``"第{round}ラウンド"``)."""
    phase = state.get("phase")
    if state["over"] or phase == "over":
        return ""
    named = phases.get(phase) if phases is not None and isinstance(phase, str) else None
    return named if named is not None else turn.format_map(state)


def _lark_cache_file(grammar: Path) -> str:
    """Where Lark keeps a grammar's analysed parser. Lark's own ``cache=True`` names the file
    by the grammar's text and checks the files it imports by their paths, skipping a path
    that is gone — so one checkout could load the parser another checkout built with its own
    ``common.lark``. Named here by the text of every grammar file, and Lark's version and the
    user, so a changed import always builds afresh; Lark still checks its own digest of the
    grammar and options in the file."""
    digest = hashlib.sha256(lark.__version__.encode())
    for path in sorted(grammar.parent.glob("*.lark")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    user = getattr(os, "getuid", lambda: 0)()
    name = f".bbsgm_lark_{grammar.stem}_{user}_{digest.hexdigest()[:32]}.tmp"
    return str(Path(tempfile.gettempdir()) / name)
