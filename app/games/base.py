"""The game contract: what every game module offers the app, and what they share.

A game is a pure library (compare python-chess): it parses command lines with its Lark grammar,
applies commands to a JSON-serialisable state, says what is legal, and scores. It imports
nothing of the app; randomness comes only from the `Rng` handed to it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, MutableSequence, Sequence
from copy import copy
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError
from pydantic import BaseModel

from app.games.resources import resource_dir

__all__ = [
    "Actor",
    "Command",
    "CommandParser",
    "CommandSyntaxError",
    "Game",
    "RankEntry",
    "Result",
    "Rng",
    "RuleError",
    "State",
    "Viewer",
    "normalise",
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
        digest = hashlib.sha256(f"{seed}:{seq}".encode()).digest()
        self._random = random.Random(int.from_bytes(digest, "big"))

    def randint(self, a: int, b: int) -> int:
        return self._random.randint(a, b)

    def shuffle(self, items: MutableSequence[Any]) -> None:
        self._random.shuffle(items)

    def choice(self, items: Sequence[T]) -> T:
        return self._random.choice(items)


# --------------------------------------------------------------------------- text


_SPACES = re.compile(r"\s+")


def normalise(line: str) -> str:
    """NFKC, strip, and collapse whitespace runs to one ASCII space.

    NFKC maps full-width letters/digits to ASCII and U+3000 to a space, so ``ＳＥＴ　主演　役者３``
    becomes ``SET 主演 役者3``.
    """
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", line)).strip()


# --------------------------------------------------------------------------- results


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

STRICT_AVAILABLE = importlib.util.find_spec("interegular") is not None


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


# Display names for the shared terminals (grammar/common.lark) in "expected one of" messages.
COMMON_TERMINAL_LABELS: dict[str, str] = {
    "JOIN": "JOIN(参加)",
    "LEAVE": "LEAVE(離脱)",
    "START": "START(開始)",
    "UNDO": "UNDO(取消)",
    "AS": "AS(代理)",
    "KICK": "KICK(追放)",
    "REPLACE": "REPLACE(交代)",
    "PAUSE": "PAUSE(中断)",
    "RESUME": "RESUME(再開)",
    "ABORT": "ABORT(中止)",
    "DEADLINE": "DEADLINE(期限)",
    "ADJUST": "ADJUST(調整)",
    "ABSENT": "ABSENT(不在)",
    "NAME": "名前",
    "INT": "数字",
    "SIGNED_INT": "±数字",
    "REASON": "理由",
    "_SEP": "区切り(, 、)",
}

# Friendly messages for the platform commands: label -> malformed examples that fail in the
# same parser state (Lark `match_examples`). Game tables are tried before these.
COMMON_SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "命令が分かりません。行の最初には命令(JOIN、END など)を書いてください。": [
        "こんにちは",
        "+1",
    ],
    "この命令には続きを書きません(例: JOIN)。": [
        "JOIN x",
        "LEAVE x",
        "START x",
        "UNDO x",
        "PAUSE x",
        "RESUME x",
        "ABORT x",
    ],
    "AS の後にはプレイヤーの名前と命令を書いてください(例: AS 太郎 END)。": ["AS"],
    "AS <名前> の後には代わりに行う命令を書いてください(例: AS 太郎 END)。": [
        "AS 太郎",
        "AS 太郎 x",
    ],
    "KICK の後には追放するプレイヤーの名前を書いてください(例: KICK 太郎)。": ["KICK"],
    "KICK に書ける名前は1人だけです(例: KICK 太郎)。": ["KICK 太郎 次郎"],
    "REPLACE の後には交代するプレイヤーと新しいプレイヤーの名前を書いてください"
    "(例: REPLACE 太郎 次郎)。": ["REPLACE", "REPLACE 太郎"],
    "REPLACE に書ける名前は2人だけです(例: REPLACE 太郎 次郎)。": ["REPLACE 太郎 次郎 三郎"],
    "DEADLINE の後には時間数を数字で書いてください(例: DEADLINE 24)。": [
        "DEADLINE",
        "DEADLINE x",
        "DEADLINE 24 x",
    ],
    "ABSENT の後には不在にする時間数を数字で書いてください(例: ABSENT 48)。": [
        "ABSENT",
        "ABSENT x",
        "ABSENT 48 x",
    ],
    "ADJUST の後にはプレイヤーの名前、点数の増減(+5 や -3)、理由を書いてください"
    "(例: ADJUST 太郎 -3 ストライキの読み違い)。": ["ADJUST"],
    "ADJUST <名前> の後には点数の増減を +5 や -3 のように書いてください"
    "(例: ADJUST 太郎 -3 ストライキの読み違い)。": ["ADJUST 太郎", "ADJUST 太郎 x"],
    "ADJUST <名前> <増減> の後には理由を書いてください"
    "(例: ADJUST 太郎 -3 ストライキの読み違い)。": ["ADJUST 太郎 +3"],
}


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
            cache=True,
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
        """Every spelling of every verb (``SCOUT``, ``スカウト``, …), for "did you mean" hints."""
        words: list[str] = []
        for pattern in self._verb_patterns:
            bare = re.sub(r"\(\?(?:[a-z]+)?:|\)", "", pattern.pattern)
            words.extend(word for word in bare.split("|") if word and word not in words)
        return words

    def verbs_match(self, word: str) -> bool:
        return any(p.fullmatch(word) for p in self._verb_patterns)

    def is_command_line(self, line: str) -> bool:
        text = normalise(line)
        if not text:
            return False
        return self.verbs_match(text.split(" ", 1)[0])

    def parse(self, line: str) -> Any:
        text = normalise(line)
        try:
            tree = self.lark.parse(text)
        except UnexpectedInput as error:
            raise self._syntax_error(text, error) from None
        try:
            return self.transformer.transform(tree)
        except VisitError as error:
            detail = error.orig_exc
            if isinstance(detail, SyntaxErrorDetail):
                column = getattr(detail.token, "column", None)
                raise CommandSyntaxError(
                    text, detail.message, column=column, expected=detail.expected
                ) from None
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


def _state_key(error: UnexpectedInput) -> tuple[int, ...] | None:
    stack = getattr(error.state, "state_stack", None)
    if stack is None:
        return None
    return tuple(stack)


# --------------------------------------------------------------------------- the contract


class Game(Protocol):
    """What the app needs from a game (one module object per kind, see `app.games.GAMES`)."""

    kind: str
    title_ja: str
    title_en: str
    aliases: tuple[str, ...]
    min_players: int
    max_players: int
    Options: type[BaseModel]
    grammar: str

    def is_command_line(self, line: str) -> bool:
        """After `normalise`, does the line begin with a known verb? Other lines are talk."""
        ...

    def parse(self, line: str) -> Any:
        """Normalise and parse one line into a command object; raises CommandSyntaxError."""
        ...

    def verbs(self) -> list[str]:
        """Every spelling of every verb the game understands (platform verbs included)."""
        ...

    def setup(self, players: list[str], options: Mapping[str, Any], rng: Rng) -> State: ...

    def apply(
        self, state: State, actor: Actor, command: Any, rng: Rng, *, sealed: bool = False
    ) -> tuple[State, list[dict[str, Any]]]:
        """Return (new state, events); never mutates `state`; raises RuleError.

        ``sealed``: the command came through the private endpoint; only its author and the GM
        see it until the game reveals it. The game refuses secret commands sent unsealed and
        commands that may not be sealed. An event with ``"private": True`` is shown only to the
        actor and the GM; every other event's text is public.
        """
        ...

    def epilogue(self, state: State) -> list[str]:
        """Once over: lines revealing every hidden part of the state (hands, secret rules)."""
        ...

    def needs_seal(self, state: State, command: Any) -> bool | None:
        """True: ``command`` must come sealed now; False: it must be public; None: either.
        The bot uses it to send a missing player's default moves the way the rules want."""
        ...

    def legal(self, state: State, actor: Actor) -> list[str]: ...

    def view(self, state: State, viewer: Viewer) -> dict[str, Any]: ...

    def result(self, state: State) -> Result | None: ...

    def is_over(self, state: State) -> bool: ...

    def waiting_for(self, state: State) -> list[int]: ...

    def default_commands(self, state: State, seat: int) -> list[str]: ...

    def turn_key(self, state: State) -> str: ...
