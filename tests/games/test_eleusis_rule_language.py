"""grammar/eleusis_rule.lark and app/games/eleusis/rule.py: the rule language of formal rules
(docs/rules/eleusis.md, "The rule language").

`rules_with_meaning` draws random well-typed rules from the grammar together with an
independent meaning: a Python closure built alongside the text, with its own card decoding.
The interpreter must agree with it everywhere (and test_eleusis_property.py plays whole rounds
with such rules).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.base import CommandSyntaxError
from app.games.eleusis.cards import ALL_KINDS
from app.games.eleusis.rule import (
    RULE_PARSER,
    RULE_SYNTAX_EXAMPLES,
    RuleLanguageError,
    accepts,
    commitment,
    judge,
    parse_rule,
    to_text,
)

# --------------------------------------------------------------------------- an independent meaning


class Undefined(Exception):
    """The reference meaning of "undecidable": a card that is not there, a remainder by 0."""


_SUIT = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
_FACE_RANK = {"A": 1, "J": 11, "Q": 12, "K": 13}


def rank(card: str) -> int:
    text = card[1:]
    return _FACE_RANK[text] if text in _FACE_RANK else int(text)


def suit(card: str) -> str:
    return _SUIT[card[0]]


def color(card: str) -> str:
    return "red" if suit(card) in ("H", "D") else "black"


def parity(card: str) -> str:
    return "even" if rank(card) % 2 == 0 else "odd"


Env = tuple[str, Sequence[str]]  # (candidate, main line)
Meaning = Callable[[Env], Any]
Expr = tuple[str, Meaning]


def reference(meaning: Meaning, line: Sequence[str], candidate: str) -> bool:
    try:
        return meaning((candidate, line)) is True
    except Undefined:
        return False


def _at(line: Sequence[str], index: int) -> str:
    if -len(line) <= index < len(line):
        return line[index]
    raise Undefined


CARD_REFS: dict[str, Callable[[Env], str]] = {
    "card": lambda env: env[0],
    "prev": lambda env: _at(env[1], -1),
    "prev2": lambda env: _at(env[1], -2),
}

card_exprs: st.SearchStrategy[Expr] = st.one_of(
    st.sampled_from(sorted(CARD_REFS.items())),
    st.integers(-3, 3).map(lambda i: (f"line[{i}]", lambda env, i=i: _at(env[1], i))),
)


def _int_leaf() -> st.SearchStrategy[Expr]:
    literals = st.integers(0, 14).map(lambda n: (str(n), lambda env, n=n: n))
    letters = st.sampled_from(sorted(_FACE_RANK.items())).map(
        lambda item: (item[0], lambda env, v=item[1]: v)
    )
    ranks = card_exprs.map(lambda c: (f"{c[0]}.rank", lambda env, f=c[1]: rank(f(env))))
    counts = st.just(("count", lambda env: len(env[1])))
    return st.one_of(literals, letters, ranks, ranks, counts)


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise Undefined
    return a % b


def _int_node(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    binary = {
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "%": _mod,
    }

    def combine(op: str, left: Expr, right: Expr) -> Expr:
        f, g, h = left[1], right[1], binary[op]
        return f"({left[0]} {op} {right[0]})", lambda env: h(f(env), g(env))

    def call(name: str, args: list[Expr]) -> Expr:
        fs = [a[1] for a in args]
        impl = {"abs": lambda xs: abs(xs[0]), "min": min, "max": max}[name]
        return f"{name}({', '.join(a[0] for a in args)})", lambda env: impl([f(env) for f in fs])

    return st.one_of(
        st.builds(combine, st.sampled_from(sorted(binary)), children, children),
        children.map(lambda c: (f"(-{c[0]})", lambda env, f=c[1]: -f(env))),
        children.map(lambda c: call("abs", [c])),
        st.builds(
            call, st.sampled_from(["min", "max"]), st.lists(children, min_size=2, max_size=3)
        ),
    )


int_exprs: st.SearchStrategy[Expr] = st.recursive(_int_leaf(), _int_node, max_leaves=3)

_COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
_ATTRIBUTE_VALUES = {
    "suit": (suit, ["S", "H", "D", "C", "♠", "♥", "♦", "♣"]),
    "color": (color, ["red", "black", "赤", "黒"]),
    "parity": (parity, ["odd", "even", "奇数", "偶数"]),
}
_LITERAL_VALUE = {"♠": "S", "♥": "H", "♦": "D", "♣": "C", "赤": "red", "黒": "black"}
_LITERAL_VALUE |= {"奇数": "odd", "偶数": "even"}


def _bool_leaf() -> st.SearchStrategy[Expr]:
    def compare_ints(op: str, left: Expr, right: Expr) -> Expr:
        f, g, h = left[1], right[1], _COMPARE[op]
        return f"{left[0]} {op} {right[0]}", lambda env: h(f(env), g(env))

    def attribute_vs_literal(attr: str, c: Expr, op: str, literal: str) -> Expr:
        get = _ATTRIBUTE_VALUES[attr][0]
        value = _LITERAL_VALUE.get(literal, literal)
        f, eq = c[1], op == "=="
        return f"{c[0]}.{attr} {op} {literal}", lambda env: (get(f(env)) == value) == eq

    def attribute_vs_attribute(attr: str, a: Expr, b: Expr, op: str) -> Expr:
        get = _ATTRIBUTE_VALUES[attr][0]
        f, g, eq = a[1], b[1], op == "=="
        return f"{a[0]}.{attr} {op} {b[0]}.{attr}", lambda env: (get(f(env)) == get(g(env))) == eq

    def face(c: Expr) -> Expr:
        f = c[1]
        return f"{c[0]}.face", lambda env: rank(f(env)) >= 11

    def same_card(a: Expr, b: Expr, op: str) -> Expr:
        f, g, eq = a[1], b[1], op == "=="
        return f"{a[0]} {op} {b[0]}", lambda env: (f(env) == g(env)) == eq

    def in_line(c: Expr, negated: bool) -> Expr:
        f = c[1]
        return (
            f"{c[0]} {'not in' if negated else 'in'} line",
            lambda env: (f(env) in env[1]) != negated,
        )

    def rank_in(item: Expr, values: list[Expr], negated: bool) -> Expr:
        f, gs = item[1], [v[1] for v in values]
        text = f"{item[0]} {'not in' if negated else 'in'} ({', '.join(v[0] for v in values)})"

        def meaning(env: Env) -> bool:
            x = f(env)
            pool = [g(env) for g in gs]  # every element is evaluated (documented)
            return (x in pool) != negated

        return text, meaning

    attrs = sorted(_ATTRIBUTE_VALUES)
    return st.one_of(
        st.builds(compare_ints, st.sampled_from(sorted(_COMPARE)), int_exprs, int_exprs),
        st.sampled_from(attrs).flatmap(
            lambda attr: st.builds(
                attribute_vs_literal,
                st.just(attr),
                card_exprs,
                st.sampled_from(["==", "!="]),
                st.sampled_from(_ATTRIBUTE_VALUES[attr][1]),
            )
        ),
        st.builds(
            attribute_vs_attribute,
            st.sampled_from(attrs),
            card_exprs,
            card_exprs,
            st.sampled_from(["==", "!="]),
        ),
        card_exprs.map(face),
        st.builds(same_card, card_exprs, card_exprs, st.sampled_from(["==", "!="])),
        st.builds(in_line, card_exprs, st.booleans()),
        st.builds(rank_in, int_exprs, st.lists(int_exprs, min_size=1, max_size=3), st.booleans()),
        st.sampled_from([("true", lambda env: True), ("false", lambda env: False)]),
    )


def _bool_node(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    def both(op: str, left: Expr, right: Expr) -> Expr:
        f, g = left[1], right[1]
        if op == "and":
            return f"({left[0]} and {right[0]})", lambda env: f(env) is True and g(env) is True
        return f"({left[0]} or {right[0]})", lambda env: f(env) is True or g(env) is True

    def negate(child: Expr) -> Expr:
        f = child[1]
        return f"(not {child[0]})", lambda env: not f(env)

    def choose(c: Expr, t: Expr, e: Expr) -> Expr:
        fc, ft, fe = c[1], t[1], e[1]
        text = f"(if {c[0]} then {t[0]} else {e[0]})"
        return text, lambda env: ft(env) if fc(env) is True else fe(env)

    return st.one_of(
        st.builds(both, st.sampled_from(["and", "or"]), children, children),
        children.map(negate),
        st.builds(choose, children, children, children),
    )


rules_with_meaning: st.SearchStrategy[Expr] = st.recursive(
    _bool_leaf(), _bool_node, max_leaves=5
).filter(lambda rule: len(rule[0]) <= 300)
lines = st.lists(st.sampled_from(ALL_KINDS), min_size=1, max_size=6)


@given(rules_with_meaning, lines, st.sampled_from(ALL_KINDS))
@settings(max_examples=400, deadline=None)
def test_interpreter_agrees_with_the_independent_meaning(
    rule: Expr, line: list[str], candidate: str
) -> None:
    """Every random rule from the grammar: accepts() equals the reference meaning, and the
    canonical text parses back to the same tree."""
    text, meaning = rule
    node = RULE_PARSER.parse(text)
    assert accepts(node, line, candidate) is reference(meaning, line, candidate)
    canonical = to_text(node)
    assert RULE_PARSER.parse(canonical) == node
    assert to_text(RULE_PARSER.parse(canonical)) == canonical


@given(rules_with_meaning, lines, st.lists(st.sampled_from(ALL_KINDS), min_size=1, max_size=4))
@settings(max_examples=200, deadline=None)
def test_judge_agrees_with_the_independent_meaning(
    rule: Expr, line: list[str], cards: list[str]
) -> None:
    """R ○ / ● / ○●, computed from the reference meaning by its own definition."""
    text, meaning = rule
    grown, in_order = list(line), True
    for card in cards:
        if not reference(meaning, grown, card):
            in_order = False
            break
        grown.append(card)
    each_fails = not any(reference(meaning, line, card) for card in cards)
    expected = "○" if in_order else "●" if each_fails else "○●"
    assert judge(parse_rule(to_text(RULE_PARSER.parse(text))), line, cards) == expected


# --------------------------------------------------------------------------- the rules page


RULES_PAGE_EXAMPLES = [
    "card.color != prev.color",
    "card.rank > prev.rank or card.suit == prev.suit",
    "(count % 2 == 0 and card.parity == odd) or (count % 2 == 1 and card.face)",
]


@pytest.mark.parametrize("text", RULES_PAGE_EXAMPLES)
def test_rules_page_examples_parse_and_are_canonical(text: str) -> None:
    """Rules page, "The rule language": its three examples, each its own canonical spelling."""
    assert to_text(RULE_PARSER.parse(text)) == text


@pytest.mark.parametrize(
    ("text", "line", "candidate", "expected"),
    [
        # card.color != prev.color
        (RULES_PAGE_EXAMPLES[0], ["♠Q"], "♥2", True),
        (RULES_PAGE_EXAMPLES[0], ["♠Q"], "♣2", False),
        (RULES_PAGE_EXAMPLES[0], ["♠Q", "♦3"], "♠2", True),
        # card.rank > prev.rank or card.suit == prev.suit
        (RULES_PAGE_EXAMPLES[1], ["♠7"], "♥8", True),
        (RULES_PAGE_EXAMPLES[1], ["♠7"], "♠2", True),
        (RULES_PAGE_EXAMPLES[1], ["♠7"], "♥7", False),
        (RULES_PAGE_EXAMPLES[1], ["♠K"], "♦A", False),
        # count even: odd card; count odd: a face card
        (RULES_PAGE_EXAMPLES[2], ["♠7", "♥8"], "♣3", True),
        (RULES_PAGE_EXAMPLES[2], ["♠7", "♥8"], "♣Q", False),
        (RULES_PAGE_EXAMPLES[2], ["♠7"], "♣Q", True),
        (RULES_PAGE_EXAMPLES[2], ["♠7"], "♣3", False),
    ],
)
def test_rules_page_examples_judge_cards(
    text: str, line: list[str], candidate: str, expected: bool
) -> None:
    assert accepts(RULE_PARSER.parse(text), line, candidate) is expected


# --------------------------------------------------------------------------- every feature


@pytest.mark.parametrize(
    ("text", "line", "candidate", "expected"),
    [
        ("card.rank == A", ["♠2"], "♥A", True),
        ("card.rank == 13 and card.rank == K", ["♠2"], "♥K", True),
        ("card.suit == ♠ and card.suit == S", ["♥2"], "♠9", True),
        ("card.suit in (H, D)", ["♠2"], "♦9", True),
        ("card.suit not in (H, D)", ["♠2"], "♦9", False),
        ("card.color == 赤", ["♠2"], "♥9", True),
        ("card.colour == black", ["♠2"], "♥9", False),
        ("card.parity == 奇数", ["♠2"], "♥9", True),
        ("card.parity == even", ["♠2"], "♥Q", True),
        ("card.face", ["♠2"], "♥J", True),
        ("not card.face", ["♠2"], "♥10", True),
        ("count == 3", ["♠2", "♠3", "♠4"], "♥J", True),
        ("prev2.rank + 1 == prev.rank", ["♠2", "♠3"], "♥J", True),
        ("line[0] == card", ["♥J", "♠3"], "♥J", True),
        ("line[-1].rank == 3", ["♥J", "♠3"], "♥J", True),
        ("card in line", ["♥J", "♠3"], "♥J", True),
        ("card not in line", ["♥J", "♠3"], "♦J", True),
        ("card == prev", ["♥J"], "♥J", True),
        ("card != prev", ["♥J"], "♦J", True),
        ("abs(card.rank - prev.rank) <= 2", ["♥J"], "♦9", True),
        ("min(card.rank, prev.rank, 5) == 5", ["♥J"], "♦9", True),
        ("max(card.rank, prev.rank) > 10", ["♥J"], "♦9", True),
        ("card.rank * 2 % 5 == 1", ["♥J"], "♦3", True),
        ("-card.rank < -10", ["♥J"], "♦Q", True),
        ("card.rank - -1 == 4", ["♥J"], "♦3", True),
        ("if card.face then card.color == red else card.rank > prev.rank", ["♠5"], "♦Q", True),
        ("if card.face then card.color == red else card.rank > prev.rank", ["♠5"], "♠Q", False),
        ("if card.face then card.color == red else card.rank > prev.rank", ["♠5"], "♠6", True),
        ("IF card.face THEN true ELSE false", ["♠5"], "♠6", False),
        ("card.rank = 6 and card.rank ≥ 6 and card.rank ≤ 6 and card.rank ≠ 7", ["♠5"], "♠6", True),
    ],
)
def test_rule_language_features(text: str, line: list[str], candidate: str, expected: bool) -> None:
    """Rules page: card attributes rank (A=1) suit color parity face; == != < <= > >=, + - %,
    and or not, in, parentheses, abs(); D extensions: if-then-else, *, min, max, line[i],
    card equality, Japanese color/parity words, ♠ suits."""
    assert accepts(RULE_PARSER.parse(text), line, candidate) is expected


@pytest.mark.parametrize(
    ("text", "line", "expected"),
    [
        ("prev2.color != card.color", ["♠5"], False),
        ("not (prev2.color == card.color)", ["♠5"], False),
        ("count < 2 or prev2.color != card.color", ["♠5"], True),
        ("count >= 2 and prev2.color != card.color", ["♠5"], False),
        ("if count < 2 then true else prev2.rank == 1", ["♠5"], True),
        ("line[5].rank == 5", ["♠5"], False),
        ("card.rank % (count - 1) == 0", ["♠5"], False),
        ("card.rank % (count - 1) == 0", ["♠5", "♠6"], True),
        ("card.rank in (1, prev2.rank)", ["♠5"], False),
    ],
)
def test_undecidable_card_fails(text: str, line: list[str], expected: bool) -> None:
    """D: reading a card that is not there or `% 0` makes the card fail; and/or/if evaluate
    only what they need, everything else every operand."""
    assert accepts(RULE_PARSER.parse(text), line, "♥A") is expected


def test_judge_success_failure_mixed() -> None:
    """R ○ all succeed in order, ● each would fail as the next card, ○● otherwise."""
    rule = RULE_PARSER.parse("card.color != prev.color")
    assert judge(rule, ["♠Q"], ["♥2", "♣3", "♦4"]) == "○"
    assert judge(rule, ["♠Q"], ["♣3", "♥2"]) == "○●"  # order matters
    assert judge(rule, ["♠Q"], ["♣2", "♠3"]) == "●"
    assert judge(rule, ["♠Q"], ["♣2", "♥3"]) == "○●"
    assert judge(rule, ["♠Q"], ["♥2", "♦3"]) == "○●"
    assert judge(rule, ["♠Q"], ["♣2"]) == "●"


def test_commitment_is_sha256_of_salt_and_text() -> None:
    import hashlib

    assert commitment("00ff", "card.face") == hashlib.sha256(b"00ff:card.face").hexdigest()


# --------------------------------------------------------------------------- errors


EXAMPLES = [(label, text) for label, texts in RULE_SYNTAX_EXAMPLES.items() for text in texts]


@pytest.mark.parametrize(("label", "text"), EXAMPLES)
def test_rule_syntax_examples_yield_their_message(label: str, text: str) -> None:
    """The rule grammar's match-examples table: every example fails with its label, the column
    and what could stand there."""
    with pytest.raises(RuleLanguageError) as caught:
        RULE_PARSER.parse(text)
    error = caught.value
    assert label in error.message
    assert RULE_PARSER.example_label(text) == label
    assert error.column is not None and 1 <= error.column <= len(text) + 1
    assert error.expected and "ここに書けるのは次のどれかです" in error.message
    assert isinstance(error, CommandSyntaxError)


def test_rule_syntax_example_table_does_not_overlap() -> None:
    owner: dict[tuple[int, ...], str] = {}
    for label, texts in RULE_SYNTAX_EXAMPLES.items():
        for text in texts:
            key = RULE_PARSER.error_key(text)
            assert key is not None, text
            assert owner.setdefault(key, label) == label, text


@pytest.mark.parametrize(
    ("text", "column", "fragment"),
    [
        ("card.rank", 6, "真偽"),
        ("card.suit + 1", 6, "+ の左には数"),
        ("card.rank + red", 13, "+ の右には数"),
        ("card.color < prev.color", 12, "数どうし"),
        ("card.color == 3", 12, "同じ種類"),
        ("card == 3", 6, "同じ種類"),
        ("line == line", 6, "同じ種類"),
        ("count.rank == 1", 7, ".rank はカード"),
        ("card[0] == card", 6, "[番号] は line"),
        ("line[red] == card", 6, "line[…] の番号"),
        ("not card.rank", 10, "not の後"),
        ("-card.face", 7, "符号 - の後"),
        ("card.face and 1", 15, "and の右"),
        ("card.rank in (S, H)", 15, "in の ( ) の中"),
        ("card.rank in line", 11, "in line の左"),
        ("line in (line)", 6, "列(line)そのもの"),
        ("abs(1, 2) == 1", 1, "abs( ) には数を1つ"),
        ("min(1) == 1", 1, "min( ) には数を2つ以上"),
        ("max(card, 1) == 1", 5, "max( ) の中"),
        ("if card.rank then true else false", 9, "if の条件"),
        ("if card.face then 1 else card", 1, "then と else"),
    ],
)
def test_rule_type_errors_say_where_and_why(text: str, column: int, fragment: str) -> None:
    """A rule that parses but can never be evaluated is refused with the column of the culprit."""
    with pytest.raises(RuleLanguageError) as caught:
        RULE_PARSER.parse(text)
    assert caught.value.column == column
    assert f"{column}文字目" in caught.value.message
    assert fragment in caught.value.message


def test_rule_longer_than_300_characters_is_refused() -> None:
    with pytest.raises(RuleLanguageError) as caught:
        RULE_PARSER.parse("card.face or " * 30 + "true")
    assert "300 文字まで" in caught.value.message


def test_deep_nesting_within_the_limit_parses_and_runs() -> None:
    text = "-" * 280 + "1 == 1"
    assert accepts(RULE_PARSER.parse(text), ["♠2"], "♠3") is True
    text = "not " * 70 + "true"
    assert accepts(RULE_PARSER.parse(text), ["♠2"], "♠3") is True


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("card.color!=prev.color", "card.color != prev.color"),
        ("CARD.Colour == 赤", "card.color == red"),
        ("card.suit == ♠", "card.suit == S"),
        ("((card.rank)) > (prev.rank)", "card.rank > prev.rank"),
        ("card.rank = Q", "card.rank == Q"),
        ("(card.rank + 1) * 2 == 4", "(card.rank + 1) * 2 == 4"),
        ("card.rank - (1 - 2) == 4", "card.rank - (1 - 2) == 4"),
        ("not (card.face and true)", "not (card.face and true)"),
        ("(card.face == true) == false", "(card.face == true) == false"),
        ("card.face and true or false", "(card.face and true) or false"),
        ("card.face or (true or false)", "card.face or (true or false)"),
        ("(if true then 1 else 2) == 1", "(if true then 1 else 2) == 1"),
        ("line [ 0 ] . rank == 1", "line[0].rank == 1"),
        ("(-1) == -(1)", "-1 == -1"),
    ],
)
def test_canonical_spelling(written: str, canonical: str) -> None:
    """D: the sealed, hashed, revealed text is the canonical spelling."""
    node = RULE_PARSER.parse(written)
    assert to_text(node) == canonical
    assert RULE_PARSER.parse(canonical) == node
