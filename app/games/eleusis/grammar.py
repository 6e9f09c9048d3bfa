"""新新エリューシス's command grammar (grammar/eleusis.lark): Transformer, friendly-error tables,
and `parse`, which explains a broken `RULE <expression>` in the rule language's own terms."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from lark import Token, Transformer
from lark.visitors import merge_transformers

from app.games.base import CommandParser, CommandSyntaxError, SyntaxErrorDetail, normalise
from app.games.commands import PlatformTransformer
from app.games.eleusis.cards import parse_card
from app.games.eleusis.commands import (
    ChooseParent,
    EndRound,
    Hint,
    Judge,
    Play,
    Prophet,
    SealRule,
)
from app.games.eleusis.rule import (
    FAILURE,
    MAX_RULE_LENGTH,
    MIXED,
    RULE_PARSER,
    RULE_TERMINAL_LABELS,
    SUCCESS,
    RuleLanguageError,
    RuleTransformer,
    RuleTypeError,
    check_types,
    to_text,
    type_error,
)

MAX_PLAY = 4
MAX_TEXT_LENGTH = 300

_SUCCESS_WORDS = frozenset({"○", "◯", "〇", "成功", "o", "O"})
_FAILURE_WORDS = frozenset({"●", "失敗", "×", "x", "X"})
# Suits as Japanese players spell them in katakana (the CARD terminal), longest first.
_KATAKANA_SUITS: tuple[tuple[str, str], ...] = (
    ("ダイヤモンド", "♦"),
    ("クローバー", "♣"),
    ("スペード", "♠"),
    ("ハート", "♥"),
    ("ダイヤ", "♦"),
    ("ダイア", "♦"),
    ("クラブ", "♣"),
)


def _mark(token: Token) -> str:
    word = str(token)
    if word in _SUCCESS_WORDS:
        return SUCCESS
    if word in _FAILURE_WORDS:
        return FAILURE
    return MIXED


_SUITS_TEXT = "スート(S H D C、♠ ♥ ♦ ♣ か スペード ハート ダイヤ クラブ)"


def _suit_symbol(text: str) -> str:
    """スペード7 -> ♠7: a katakana suit as its symbol (anything else unchanged)."""
    for word, symbol in _KATAKANA_SUITS:
        if text.startswith(word):
            return symbol + text[len(word) :]
    return text


def _card(token: Token) -> str:
    card = parse_card(_suit_symbol(str(token)))
    if card is None:
        raise SyntaxErrorDetail(
            token,
            f"{token} というカードはありません。カードは{_SUITS_TEXT}と数"
            "(A 2〜10 J Q K、10 は T とも)で書きます(例: S7、♥Q、D10、ハート10)。",
            ["カード(例: ♠7)"],
        )
    return card


def _text(token: Token, what: str) -> str:
    text = str(token).strip()
    if len(text) > MAX_TEXT_LENGTH:
        raise SyntaxErrorDetail(
            token, f"{what}は {MAX_TEXT_LENGTH} 文字までです(今は {len(text)} 文字)。"
        )
    return text


class EleusisTransformer(Transformer[Token, Any]):
    """Tree -> command dataclass. Platform rules come from PlatformTransformer and the rule
    language from RuleTransformer (both merged under their grammar's prefix)."""

    def start(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> Any:
        return children[0]

    def declaration(self, children: list[Token]) -> str:
        return _mark(children[0])

    def judgment(self, children: list[Token]) -> str:
        return _mark(children[0])

    def cards(self, children: list[Token]) -> tuple[str, ...]:
        if len(children) > MAX_PLAY:
            raise SyntaxErrorDetail(
                children[MAX_PLAY],
                f"一度に出せるのは 1〜{MAX_PLAY} 枚です({len(children)} 枚書かれています。"
                "R「手札より1枚以上4枚以下のカード」)。",
            )
        return tuple(_card(token) for token in children)

    def play(self, children: list[Any]) -> Play:
        _, declaration, cards = children
        return Play(declaration, cards)

    def judge(self, children: list[Any]) -> Judge:
        return Judge(children[1])

    def prophet(self, _: list[Any]) -> Prophet:
        return Prophet()

    def hint(self, children: list[Any]) -> Hint:
        return Hint(_text(children[1], "ヒント"))

    def formal_rule(self, children: list[Any]) -> SealRule:
        verb, node = children
        try:
            check_types(node)
        except RuleTypeError as error:
            message = type_error("", error).message
            anchor = Token("RULE", "", column=error.pos if error.pos >= 1 else verb.column)
            raise SyntaxErrorDetail(anchor, message) from None
        return SealRule("formal", to_text(node))

    def hand_rule(self, children: list[Any]) -> SealRule:
        return SealRule("hand", _text(children[2], "ルールの文章"))

    def end_round(self, _: list[Any]) -> EndRound:
        return EndRound()

    def choose_parent(self, children: list[Any]) -> ChooseParent:
        return ChooseParent(str(children[1]))


def make_transformer() -> Transformer[Token, Any]:
    merged: Transformer[Token, Any] = merge_transformers(  # type: ignore[no-untyped-call]
        EleusisTransformer(), common=PlatformTransformer(), eleusis_rule=RuleTransformer()
    )
    return merged


# Friendly messages: label -> malformed lines failing in the same parser state (see
# base.CommandParser). Errors inside a rule expression are explained by the rule grammar's own
# table (rule.RULE_SYNTAX_EXAMPLES) instead, see `parse`.
SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "PLAY の後には宣言(○ か ●)と出すカード1〜4枚を書いてください(例: PLAY ○ ♠7 ♥8)。": [
        "PLAY",
        "PLAY S7",
        "PLAY ♠7 ○",
        "出す",
    ],
    "宣言の後には出すカードを1〜4枚書いてください(例: PLAY ○ ♠7 ♥8、PLAY ● S7)。": [
        "PLAY ○",
        "PLAY ○ 7",
        "PLAY ○ ♥",
        "PLAY ● 7",
        "PLAY ○ ○",
        "PLAY ○●",
    ],
    f"カードの後に書けるのは次のカードだけです。カードは{_SUITS_TEXT}と数で書きます"
    "(例: PLAY ○ ♠7 ♥8)。": [
        "PLAY ○ S7 7",
        "PLAY ○ S7 ○",
        "PLAY ○ S7,",
        "PLAY ○ S7 and",
    ],
    "JUDGE の後には判定(○・●・○●)を1つだけ書いてください(例: JUDGE ○●)。": [
        "JUDGE",
        "JUDGE 7",
        "JUDGE ○ ●",
        "JUDGE ● x",
        "JUDGE ○● ○",
        "判定",
    ],
    "PROPHET・ENDROUND には続きを書きません(例: PROPHET)。": [
        "PROPHET x",
        "ENDROUND x",
    ],
    "HINT の後にはヒントの文章を書いてください(例: HINT 色に注目)。": ["HINT"],
    "RULE の後にはルールの式か、TEXT とルールの文章を書いてください"
    "(例: RULE card.color != prev.color、RULE TEXT 前のカードと色が違う)。": ["RULE"],
    "RULE TEXT の後にはルールの文章を書いてください(例: RULE TEXT 前のカードと色が違う)。": [
        "RULE TEXT"
    ],
    "PARENT の後には親にするプレイヤーの名前を1人だけ書いてください(例: PARENT 太郎)。": [
        "PARENT",
        "PARENT 太郎 次郎",
    ],
}

# Display names of the game's terminals in "expected one of" messages (rule-language terminals
# are named by their bare name too).
TERMINAL_LABELS: dict[str, str] = {
    **{name: label for name, label in RULE_TERMINAL_LABELS.items() if name != "INT"},
    "PLAY": "PLAY(出す)",
    "JUDGE": "JUDGE(判定)",
    "PROPHET": "PROPHET(預言者)",
    "HINT": "HINT(ヒント)",
    "RULE": "RULE(ルール)",
    "TEXT": "TEXT(文章)",
    "ENDROUND": "ENDROUND(ラウンド終了)",
    "PARENT": "PARENT(親指名)",
    "SUCCESS": "○(成功)",
    "FAILURE": "●(失敗)",
    "MIXED": "○●(混在)",
    "CARD": "カード(例: ♠7)",
    "WORDS": "文章",
}


@cache  # a few terminals, asked for on every line parsed
def _pattern(terminal: str) -> re.Pattern[str]:
    return re.compile(PARSER.lark.get_terminal(terminal).pattern.to_regexp())


def _rule_expression(text: str) -> tuple[str, int] | None:
    """The expression of a `RULE <expression>` line (also inside `AS <name> …`) and its offset
    in the line; None for any other line and for `RULE TEXT …`."""
    words = text.split(" ")
    start = 0
    if len(words) >= 3 and _pattern("common__AS").fullmatch(words[0]):
        start = 2
    if len(words) < start + 2 or not _pattern("RULE").fullmatch(words[start]):
        return None
    if _pattern("TEXT").fullmatch(words[start + 1]):
        return None
    offset = sum(len(word) + 1 for word in words[: start + 1])
    return text[offset:], offset


class _Parser(CommandParser):
    """The command grammar, with a rule expression's length checked first and a broken one
    explained by the rule grammar (position, advice, what could stand there) rather than by
    the command grammar. Only lines accepted by both are kept (``CommandParser.parse``)."""

    def _parse(self, line: str) -> Any:
        text = self.command_text(line) or normalise(line)
        rule = _rule_expression(text)
        if rule is not None and len(rule[0]) > MAX_RULE_LENGTH:
            expression, offset = rule
            raise CommandSyntaxError(
                text,
                f"ルールの式は {MAX_RULE_LENGTH} 文字までです(今は {len(expression)} 文字)。",
                column=offset + MAX_RULE_LENGTH + 1,
            )
        try:
            return super()._parse(line)  # a refusal quotes the line as written (glued, with 。)
        except CommandSyntaxError as error:
            if rule is None or error.column is None or error.column <= rule[1]:
                raise
            expression, offset = rule
            try:
                RULE_PARSER.parse(expression, shift=offset)
            except RuleLanguageError as inner:
                raise CommandSyntaxError(
                    text, inner.message, column=inner.column, expected=inner.expected
                ) from None
            raise


PARSER = _Parser("eleusis.lark", make_transformer, SYNTAX_EXAMPLES, TERMINAL_LABELS)


def parse(line: str) -> Any:
    """Parse one command line (``_Parser``)."""
    return PARSER.parse(line)
