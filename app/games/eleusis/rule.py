"""The rule language of formal rules (grammar/eleusis_rule.lark): AST, type checker, printer,
interpreter, and the judgment of a play.

A formal rule is a boolean expression about the candidate ``card`` and the main line so far
(``prev``, ``prev2``, ``line``, ``count``). The parse tree becomes frozen dataclasses; a type
check refuses a rule that could never be evaluated (``card.suit + 1``, a number as the whole
rule) with the column of the problem; `accepts` runs the tree with a small interpreter.

Evaluation (docs/rules/eleusis.md, "The rule language"):
- ``and``/``or`` and ``if … then … else …`` evaluate only what they need (left to right);
  everything else evaluates every operand.
- Reading a card that is not there (``prev2`` while the line has one card, ``line[i]`` out of
  range) or ``x % 0`` makes the rule undecidable for that candidate, and an undecidable card
  fails. Guard with ``count``: ``count < 2 or card.color != prev2.color``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Literal

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedInput

from app.games.base import STRICT_AVAILABLE, CommandSyntaxError, normalise
from app.games.eleusis.cards import SUIT_LETTER, is_red, rank_of, suit_of
from app.games.resources import resource_dir

__all__ = [
    "MAX_RULE_LENGTH",
    "RULE_PARSER",
    "RULE_SYNTAX_EXAMPLES",
    "Node",
    "RuleLanguageError",
    "RuleParser",
    "RuleTransformer",
    "accepts",
    "check_types",
    "commitment",
    "judge",
    "parse_rule",
    "to_text",
]

# A sealed rule is at most this long: enough for any rule a person keeps in their head, and a
# bound on the nesting the recursive transformer and interpreter meet.
MAX_RULE_LENGTH = 300

Type = Literal["int", "bool", "suit", "color", "parity", "card", "line"]
TYPE_JA: dict[str, str] = {
    "int": "数",
    "bool": "真偽",
    "suit": "スート",
    "color": "色",
    "parity": "偶奇",
    "card": "カード",
    "line": "列",
}

SUIT_NAMES: dict[str, str] = {
    **{letter: letter for letter in SUIT_LETTER.values()},
    **SUIT_LETTER,
}
COLOR_NAMES: dict[str, str] = {"red": "red", "black": "black", "赤": "red", "黒": "black"}
PARITY_NAMES: dict[str, str] = {"odd": "odd", "even": "even", "奇数": "odd", "偶数": "even"}
RANK_NAMES: dict[str, int] = {"A": 1, "J": 11, "Q": 12, "K": 13}
COMPARE_NAMES: dict[str, str] = {
    "==": "==",
    "=": "==",
    "!=": "!=",
    "≠": "!=",
    "<": "<",
    "<=": "<=",
    "≤": "<=",
    ">": ">",
    ">=": ">=",
    "≥": ">=",
}
ATTRIBUTES: dict[str, Type] = {
    "rank": "int",
    "suit": "suit",
    "color": "color",
    "parity": "parity",
    "face": "bool",
}


# --------------------------------------------------------------------------- the AST
# `pos` is the 1-based column of the node's token in the parsed text; it is not part of a
# node's identity, so a rule printed and parsed again is equal to itself.


@dataclass(frozen=True)
class Literal_:
    """A constant: a number (``3``, ``Q``), a suit (``S``), a color, a parity, a boolean."""

    type: Type
    value: int | str | bool
    text: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Ref:
    """``card``, ``prev``, ``prev2``, ``line`` or ``count``."""

    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Attribute:
    obj: Node
    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Index:
    obj: Node
    index: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Unary:
    """``not x`` or ``-x``."""

    op: str
    operand: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Binary:
    """``and``, ``or``, ``+``, ``-``, ``*``, ``%``."""

    op: str
    left: Node
    right: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Compare:
    op: str
    left: Node
    right: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Member:
    """``item in (a, b, …)``, ``item in line``, and their ``not in``."""

    item: Node
    items: tuple[Node, ...] | None  # None: the main line
    negated: bool
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple[Node, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class IfThenElse:
    condition: Node
    then: Node
    otherwise: Node
    pos: int = field(default=0, compare=False)


Node = Literal_ | Ref | Attribute | Index | Unary | Binary | Compare | Member | Call | IfThenElse


# --------------------------------------------------------------------------- parse tree -> AST


def _column(token: Token) -> int:
    column = getattr(token, "column", None)
    return column if isinstance(column, int) else 0


class RuleTransformer(Transformer[Token, Any]):
    """grammar/eleusis_rule.lark's tree -> AST. Merged into the command transformer under the
    prefix ``eleusis_rule`` (the command grammar imports the rule grammar)."""

    def start(self, children: list[Any]) -> Node:
        node: Node = children[0]
        return node

    def if_then_else(self, children: list[Any]) -> IfThenElse:
        if_token, condition, _, then, _, otherwise = children
        return IfThenElse(condition, then, otherwise, _column(if_token))

    def or_op(self, children: list[Any]) -> Binary:
        left, op, right = children
        return Binary("or", left, right, _column(op))

    def and_op(self, children: list[Any]) -> Binary:
        left, op, right = children
        return Binary("and", left, right, _column(op))

    def not_op(self, children: list[Any]) -> Unary:
        op, operand = children
        return Unary("not", operand, _column(op))

    def compare(self, children: list[Any]) -> Compare:
        left, op, right = children
        return Compare(COMPARE_NAMES[str(op)], left, right, _column(op))

    def member(self, children: list[Any]) -> Member:
        item, op, items = children
        return Member(item, items, False, _column(op))

    def not_member(self, children: list[Any]) -> Member:
        item, op, _, items = children
        return Member(item, items, True, _column(op))

    def tuple_items(self, children: list[Any]) -> tuple[Node, ...]:
        return tuple(children)

    def line_items(self, _: list[Any]) -> None:
        return None

    def arith(self, children: list[Any]) -> Binary:
        left, op, right = children
        return Binary(str(op), left, right, _column(op))

    def negate(self, children: list[Any]) -> Unary:
        op, operand = children
        return Unary("-", operand, _column(op))

    def attribute(self, children: list[Any]) -> Attribute:
        obj, name = children
        canonical = str(name).lower().replace("colour", "color")
        return Attribute(obj, canonical, _column(name))

    def index(self, children: list[Any]) -> Index:
        obj, position = children
        return Index(obj, position, position.pos)

    def number(self, children: list[Token]) -> Literal_:
        token = children[0]
        text = str(int(token))
        return Literal_("int", int(token), text, _column(token))

    def rank_name(self, children: list[Token]) -> Literal_:
        token = children[0]
        return Literal_("int", RANK_NAMES[str(token)], str(token), _column(token))

    def suit_name(self, children: list[Token]) -> Literal_:
        token = children[0]
        letter = SUIT_NAMES[str(token)]
        return Literal_("suit", letter, letter, _column(token))

    def color_name(self, children: list[Token]) -> Literal_:
        token = children[0]
        name = COLOR_NAMES[str(token).lower()]
        return Literal_("color", name, name, _column(token))

    def parity_name(self, children: list[Token]) -> Literal_:
        token = children[0]
        name = PARITY_NAMES[str(token).lower()]
        return Literal_("parity", name, name, _column(token))

    def bool_name(self, children: list[Token]) -> Literal_:
        token = children[0]
        value = str(token).lower() == "true"
        return Literal_("bool", value, "true" if value else "false", _column(token))

    def card_ref(self, children: list[Token]) -> Ref:
        return Ref(str(children[0]).lower(), _column(children[0]))

    def line_ref(self, children: list[Token]) -> Ref:
        return Ref("line", _column(children[0]))

    def count_ref(self, children: list[Token]) -> Ref:
        return Ref("count", _column(children[0]))

    def call(self, children: list[Any]) -> Call:
        function, *args = children
        return Call(str(function).lower(), tuple(args), _column(function))


# --------------------------------------------------------------------------- types


class RuleTypeError(Exception):
    """A rule that parses but can never be evaluated; `pos` is the column of the culprit."""

    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def _ja(kind: str) -> str:
    return TYPE_JA[kind]


def check_types(node: Node) -> None:
    """Raise RuleTypeError unless the rule is a well-typed boolean."""
    kind = type_of(node)
    if kind != "bool":
        raise RuleTypeError(
            node.pos,
            f"ルール全体は成り立つか成り立たないか(真偽)を表す式にしてください"
            f"(この式は{_ja(kind)}です。例: card.color != prev.color)。",
        )


def type_of(node: Node) -> Type:
    """The type of an expression; RuleTypeError when its parts do not fit together."""
    if isinstance(node, Literal_):
        return node.type
    if isinstance(node, Ref):
        return "line" if node.name == "line" else "int" if node.name == "count" else "card"
    if isinstance(node, Attribute):
        obj = type_of(node.obj)
        if obj != "card":
            raise RuleTypeError(
                node.pos,
                f".{node.name} はカード(card・prev・prev2・line[番号])にだけ付けられます"
                f"(ここは{_ja(obj)}です)。",
            )
        return ATTRIBUTES[node.name]
    if isinstance(node, Index):
        obj = type_of(node.obj)
        if obj != "line":
            raise RuleTypeError(
                node.pos, f"[番号] は line にだけ付けられます(ここは{_ja(obj)}です)。"
            )
        _expect(node.index, "int", "line[…] の番号")
        return "card"
    if isinstance(node, Unary):
        if node.op == "not":
            _expect(node.operand, "bool", "not の後")
            return "bool"
        _expect(node.operand, "int", "符号 - の後")
        return "int"
    if isinstance(node, Binary):
        wanted: Type = "bool" if node.op in ("and", "or") else "int"
        _expect(node.left, wanted, f"{node.op} の左")
        _expect(node.right, wanted, f"{node.op} の右")
        return wanted
    if isinstance(node, Compare):
        left, right = type_of(node.left), type_of(node.right)
        if node.op in ("<", "<=", ">", ">="):
            if left != "int" or right != "int":
                raise RuleTypeError(
                    node.pos,
                    f"{node.op} で比べられるのは数どうしです"
                    f"(左は{_ja(left)}、右は{_ja(right)}です)。",
                )
        elif left != right or left == "line":
            raise RuleTypeError(
                node.pos,
                f"{node.op} の両側は同じ種類の値にしてください"
                f"(左は{_ja(left)}、右は{_ja(right)}です)。",
            )
        return "bool"
    if isinstance(node, Member):
        item = type_of(node.item)
        if node.items is None:
            if item != "card":
                raise RuleTypeError(
                    node.pos, f"in line の左はカードにしてください(ここは{_ja(item)}です)。"
                )
            return "bool"
        if item == "line":
            raise RuleTypeError(node.pos, "in の左に列(line)そのものは書けません。")
        for element in node.items:
            _expect(element, item, "in の ( ) の中")
        return "bool"
    if isinstance(node, Call):
        if node.function == "abs" and len(node.args) != 1:
            raise RuleTypeError(node.pos, "abs( ) には数を1つだけ書いてください(例: abs(x))。")
        if node.function in ("min", "max") and len(node.args) < 2:
            raise RuleTypeError(
                node.pos, f"{node.function}( ) には数を2つ以上書いてください(例: min(x, y))。"
            )
        for arg in node.args:
            _expect(arg, "int", f"{node.function}( ) の中")
        return "int"
    _expect(node.condition, "bool", "if の条件")
    then, otherwise = type_of(node.then), type_of(node.otherwise)
    if then != otherwise:
        raise RuleTypeError(
            node.pos,
            f"if の then と else は同じ種類の値にしてください"
            f"(then は{_ja(then)}、else は{_ja(otherwise)}です)。",
        )
    return then


def _expect(node: Node, wanted: Type, where: str) -> None:
    actual = type_of(node)
    if actual != wanted:
        raise RuleTypeError(
            node.pos, f"{where}には{_ja(wanted)}を書いてください(ここは{_ja(actual)}です)。"
        )


# --------------------------------------------------------------------------- printing

_PRECEDENCE_IF = 0
_PRECEDENCE: dict[str, int] = {"or": 1, "and": 2, "+": 5, "-": 5, "*": 6, "%": 6}
_NOT, _COMPARE, _NEGATE, _POSTFIX, _ATOM = 3, 4, 7, 8, 9


def _precedence(node: Node) -> int:
    if isinstance(node, IfThenElse):
        return _PRECEDENCE_IF
    if isinstance(node, Binary):
        return _PRECEDENCE[node.op]
    if isinstance(node, Unary):
        return _NOT if node.op == "not" else _NEGATE
    if isinstance(node, Compare | Member):
        return _COMPARE
    if isinstance(node, Attribute | Index):
        return _POSTFIX
    return _ATOM


def to_text(node: Node, minimum: int = 0) -> str:
    """The canonical spelling of a rule: lower-case keywords, one space around operators,
    suits as S H D C, and only the parentheses the precedence needs."""
    text = _text(node)
    return f"({text})" if _precedence(node) < minimum else text


def _clarify(node: Node, text: str) -> str:
    is_and = isinstance(node, Binary) and node.op == "and"
    return f"({text})" if is_and else text


def _text(node: Node) -> str:
    if isinstance(node, Literal_):
        return node.text
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Attribute):
        return f"{to_text(node.obj, _POSTFIX)}.{node.name}"
    if isinstance(node, Index):
        return f"{to_text(node.obj, _POSTFIX)}[{to_text(node.index)}]"
    if isinstance(node, Unary):
        if node.op == "not":
            return f"not {to_text(node.operand, _NOT)}"
        return f"-{to_text(node.operand, _NEGATE)}"
    if isinstance(node, Binary):
        level = _PRECEDENCE[node.op]
        left, right = to_text(node.left, level), to_text(node.right, level + 1)
        if node.op == "or":
            # Not needed by the precedence, but `a and b or c` is easy to misread.
            left, right = (
                _clarify(side, text) for side, text in ((node.left, left), (node.right, right))
            )
        return f"{left} {node.op} {right}"
    if isinstance(node, Compare):
        left = to_text(node.left, _PRECEDENCE["+"])
        return f"{left} {node.op} {to_text(node.right, _PRECEDENCE['+'])}"
    if isinstance(node, Member):
        op = "not in" if node.negated else "in"
        items = "line" if node.items is None else f"({', '.join(map(to_text, node.items))})"
        return f"{to_text(node.item, _PRECEDENCE['+'])} {op} {items}"
    if isinstance(node, Call):
        return f"{node.function}({', '.join(map(to_text, node.args))})"
    return f"if {to_text(node.condition)} then {to_text(node.then)} else {to_text(node.otherwise)}"


# --------------------------------------------------------------------------- evaluation


class Undecidable(Exception):
    """The rule reads a card that is not there, or takes a remainder by zero."""


Value = int | bool | str | Sequence[str]


def accepts(rule: Node, line: Sequence[str], candidate: str) -> bool:
    """May `candidate` follow the main line `line` (oldest first)? Undecidable means no."""
    try:
        return _evaluate(rule, line, candidate) is True
    except Undecidable:
        return False


def _card_at(line: Sequence[str], index: int) -> str:
    if not -len(line) <= index < len(line):
        raise Undecidable
    return line[index]


def _evaluate(node: Node, line: Sequence[str], candidate: str) -> Value:
    if isinstance(node, Literal_):
        return node.value
    if isinstance(node, Ref):
        if node.name == "card":
            return candidate
        if node.name == "prev":
            return _card_at(line, -1)
        if node.name == "prev2":
            return _card_at(line, -2)
        if node.name == "count":
            return len(line)
        return line
    if isinstance(node, Attribute):
        return _attribute(str(_evaluate(node.obj, line, candidate)), node.name)
    if isinstance(node, Index):
        cards = _evaluate(node.obj, line, candidate)
        position = _evaluate(node.index, line, candidate)
        assert isinstance(cards, Sequence) and isinstance(position, int)
        return _card_at(cards, position)
    if isinstance(node, Unary):
        value = _evaluate(node.operand, line, candidate)
        return (not value) if node.op == "not" else -_int(value)
    if isinstance(node, Binary):
        if node.op == "and":
            return _evaluate(node.left, line, candidate) is True and (
                _evaluate(node.right, line, candidate) is True
            )
        if node.op == "or":
            return _evaluate(node.left, line, candidate) is True or (
                _evaluate(node.right, line, candidate) is True
            )
        left = _int(_evaluate(node.left, line, candidate))
        right = _int(_evaluate(node.right, line, candidate))
        if node.op == "+":
            return left + right
        if node.op == "-":
            return left - right
        if node.op == "*":
            return left * right
        if right == 0:
            raise Undecidable
        return left % right
    if isinstance(node, Compare):
        left_value = _evaluate(node.left, line, candidate)
        right_value = _evaluate(node.right, line, candidate)
        if node.op == "==":
            return left_value == right_value
        if node.op == "!=":
            return left_value != right_value
        a, b = _int(left_value), _int(right_value)
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[node.op]
    if isinstance(node, Member):
        item = _evaluate(node.item, line, candidate)
        pool: Iterable[Value] = (
            line if node.items is None else [_evaluate(e, line, candidate) for e in node.items]
        )
        found = any(item == element for element in pool)
        return found != node.negated
    if isinstance(node, Call):
        args = [_int(_evaluate(arg, line, candidate)) for arg in node.args]
        if node.function == "abs":
            return abs(args[0])
        return min(args) if node.function == "min" else max(args)
    if _evaluate(node.condition, line, candidate) is True:
        return _evaluate(node.then, line, candidate)
    return _evaluate(node.otherwise, line, candidate)


def _int(value: Value) -> int:
    assert isinstance(value, int) and not isinstance(value, bool)
    return value


def _attribute(card: str, name: str) -> Value:
    if name == "rank":
        return rank_of(card)
    if name == "suit":
        return SUIT_LETTER[suit_of(card)]
    if name == "color":
        return "red" if is_red(card) else "black"
    if name == "parity":
        return "odd" if rank_of(card) % 2 else "even"
    return rank_of(card) >= 11


SUCCESS = "○"
FAILURE = "●"
MIXED = "○●"


def judge(rule: Node, line: Sequence[str], cards: Sequence[str]) -> str:
    """R: ○ when the cards succeed one after another in the order played, ● when each of them
    would fail as the next card, ○● otherwise (「○●(混在)」)."""
    grown = list(line)
    for candidate in cards:
        if not accepts(rule, grown, candidate):
            break
        grown.append(candidate)
    else:
        return SUCCESS
    if not any(accepts(rule, line, candidate) for candidate in cards):
        return FAILURE
    return MIXED


def commitment(salt: str, text: str) -> str:
    """The published SHA-256 of a sealed rule: sha256("<salt>:<text>") in hex (UTF-8)."""
    return hashlib.sha256(f"{salt}:{text}".encode()).hexdigest()


# --------------------------------------------------------------------------- parsing

# Display names of the rule grammar's terminals in "expected one of" messages.
RULE_TERMINAL_LABELS: dict[str, str] = {
    "IF": "if",
    "THEN": "then",
    "ELSE": "else",
    "OR": "or",
    "AND": "and",
    "NOT": "not",
    "IN": "in",
    "COMPARE": "比較(== != < <= > >=)",
    "PLUS": "+",
    "MINUS": "-",
    "TIMES": "*",
    "MOD": "%",
    "ATTRIBUTE": "属性(rank suit color parity face)",
    "RANK": "A J Q K",
    "SUIT": "スート(S H D C)",
    "COLOR": "red black",
    "PARITY": "odd even",
    "BOOL": "true false",
    "CARD_REF": "card prev prev2",
    "LINE": "line",
    "COUNT": "count",
    "FUNCTION": "abs min max",
    "LPAR": "(",
    "RPAR": ")",
    "LSQB": "[",
    "RSQB": "]",
    "DOT": ".",
    "COMMA": ",",
}
_RULE_INT_LABEL = "数"

# Friendly messages for malformed rules: label -> rules failing in the same parser state (the
# stack-keyed `match_examples` of app.games.base.CommandParser, for the rule grammar alone).
# The tests check that every example yields its label and that no state has two labels.
RULE_SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "ルールの式を書いてください。card・prev・prev2・line・count・数・スート(S H D C)・red black・"
    "odd even・true false・abs min max・not・if・( のどれかで始まります"
    "(例: card.color != prev.color)。": ["", "x", "カード", ")", "== 3"],
    "比較や演算子の後に値がありません(例: card.rank > prev.rank)。": [
        "card.rank ==",
        "card.rank >",
        "card.rank == x",
        "card.rank +",
        "card.rank -",
        "card.rank *",
        "card.rank %",
        "card.rank + x",
    ],
    "and・or・not の後に条件がありません(例: card.face and card.color == red)。": [
        "card.face and",
        "card.face or",
        "not",
        "card.face and x",
        "card.face or x",
        "not x",
    ],
    "カードの属性は rank・suit・color・parity・face のどれかです(例: card.suit)。": [
        "card.",
        "card.number",
        "prev.",
        "prev2.",
        "prev.number",
        "prev2.number",
        "card.rank.",
    ],
    "値の後に続けられるのは .属性・比較(== != < <= > >=)・演算子(+ - * %)・and・or・in です"
    "(例: card.rank > prev.rank)。": [
        "card 3",
        "card.rank 3",
        "prev x",
        "count 3",
        "3 3",
        "card.face card.face",
    ],
    "in の後には ( 値, 値, … ) か line を書いてください(例: card.rank in (1, 3, 5))。": [
        "card.rank in",
        "card.rank in 3",
        "card.suit in S",
        "card.rank not in",
        "card.rank not in 3",
        "card.rank not",
    ],
    "比較は1つの式に1回です。範囲は and でつないでください"
    "(例: 2 <= card.rank and card.rank <= 9)。": [
        "1 < card.rank < 5",
        "card.rank == 3 == prev.rank",
        "card.color == red == prev.color",
    ],
    "閉じ括弧 ) が足りません。": [
        "(card.face",
        "(card.rank > 3",
        "(card.rank > 3 and card.face",
        "abs(card.rank - prev.rank",
        "card.rank in (1, 2",
        "card.rank in (1",
    ],
    "if は「if 条件 then 値 else 値」と書きます"
    "(例: if card.face then card.color == red else card.rank > prev.rank)。": [
        "if",
        "if card.face",
        "if card.face then",
        "if card.face then card.color == red",
        "if card.face then card.color == red else",
        "if card.face card.rank > 3",
    ],
    "関数は abs(x)・min(x, y)・max(x, y) のように ( ) を付けて書きます。": [
        "abs",
        "abs card.rank",
        "min",
        "max 3",
    ],
}


class RuleLanguageError(CommandSyntaxError):
    """A rule that does not parse or does not type-check. `line` is the rule text, `column`
    1-based in it, `message` says where and what, `expected` what could stand there."""


class RuleParser:
    """The rule grammar on its own: LALR (strict), its transformer, and its error table."""

    def __init__(self, examples: Mapping[str, list[str]]) -> None:
        self.examples = dict(examples)

    @cached_property
    def lark(self) -> Lark:
        return Lark.open(
            str(resource_dir("grammar") / "eleusis_rule.lark"),
            parser="lalr",
            strict=STRICT_AVAILABLE,
            cache=True,
        )

    @cached_property
    def _labels_by_state(self) -> dict[tuple[int, ...], str]:
        labels: dict[tuple[int, ...], str] = {}
        for label, examples in self.examples.items():
            for example in examples:
                key = self.error_key(example)
                if key is not None:
                    labels.setdefault(key, label)
        return labels

    def error_key(self, text: str) -> tuple[int, ...] | None:
        """The parser stack where `text` fails (None: it parses)."""
        try:
            self.lark.parse(normalise(text))
        except UnexpectedInput as error:
            stack = getattr(error.state, "state_stack", None)
            return None if stack is None else tuple(stack)
        return None

    def example_label(self, text: str) -> str | None:
        key = self.error_key(text)
        return None if key is None else self._labels_by_state.get(key)

    def expected_names(self, names: Iterable[str]) -> list[str]:
        shown: list[str] = []
        for name in sorted(names):
            if name == "$END":
                label = "式の終わり"
            elif name == "INT":
                label = _RULE_INT_LABEL
            else:
                label = RULE_TERMINAL_LABELS.get(name, name)
            if label not in shown:
                shown.append(label)
        return shown

    def parse(self, text: str, shift: int = 0) -> Node:
        """Parse and type-check a rule; RuleLanguageError says where and why it fails.

        `shift` is added to every column, for a rule that stands inside a longer line.
        """
        text = normalise(text)
        if len(text) > MAX_RULE_LENGTH:
            raise RuleLanguageError(
                text,
                f"ルールの式は {MAX_RULE_LENGTH} 文字までです(今は {len(text)} 文字)。",
                column=shift + MAX_RULE_LENGTH + 1,
            )
        try:
            tree = self.lark.parse(text)
        except UnexpectedInput as error:
            raise self._syntax_error(text, error, shift) from None
        node: Node = RuleTransformer().transform(tree)
        try:
            check_types(node)
        except RuleTypeError as error:
            raise type_error(text, error, shift) from None
        return node

    def _syntax_error(self, text: str, error: UnexpectedInput, shift: int) -> RuleLanguageError:
        interactive = getattr(error, "interactive_parser", None)
        if interactive is not None:
            names: Iterable[str] = interactive.accepts()
        else:
            names = getattr(error, "allowed", None) or getattr(error, "expected", None) or ()
        expected = self.expected_names(names)
        at_end = getattr(getattr(error, "token", None), "type", None) == "$END"
        column = len(text) + 1 if at_end or not error.column or error.column < 1 else error.column
        stack = getattr(error.state, "state_stack", None)
        label = None if stack is None else self._labels_by_state.get(tuple(stack))
        return RuleLanguageError(
            text,
            syntax_message(text, column, shift, label, expected),
            column=column + shift,
            expected=expected,
        )


def syntax_message(
    text: str, column: int, shift: int, label: str | None, expected: Sequence[str]
) -> str:
    """「N文字目の「…」が読めません」 + the table's advice + what could stand there."""
    if column > len(text):
        message = f"ルールの式が途中で終わっています({column + shift}文字目)。"
    else:
        word = text[column - 1 : column + 5].strip()
        message = f"ルールの式の{column + shift}文字目の「{word}」が読めません。"
    if label is not None:
        message += label
    if expected:
        message += "ここに書けるのは次のどれかです: " + "、".join(expected)
    return message


def type_error(text: str, error: RuleTypeError, shift: int = 0) -> RuleLanguageError:
    column = error.pos + shift if error.pos >= 1 else None
    where = f"{column}文字目: " if column is not None else ""
    return RuleLanguageError(text, f"ルールの式の{where}{error.message}", column=column)


RULE_PARSER = RuleParser(RULE_SYNTAX_EXAMPLES)


@lru_cache(maxsize=256)
def parse_rule(text: str) -> Node:
    """The AST of a rule text; cached, the AST is immutable (a text that fails raises
    RuleLanguageError, which is not cached)."""
    return RULE_PARSER.parse(text)
