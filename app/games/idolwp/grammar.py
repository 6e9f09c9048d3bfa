"""IM@S x Workerplacement's command grammar (grammar/idolwp.lark): Transformer and
friendly-error tables. Idol, space and card names are words here; the rules check them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer
from lark.visitors import merge_transformers

from app.games.base import CommandParser, SyntaxErrorDetail
from app.games.commands import PlatformTransformer
from app.games.idolwp.commands import (
    ABILITIES,
    CardPlay,
    Convert,
    Discard,
    EventEntry,
    Move,
    Pick,
    Skip,
    Train,
)

__all__ = [
    "CONVERT_COUNTS",
    "GOAL",
    "LEVELS",
    "MAX_COUNT",
    "PARSER",
    "SYNTAX_EXAMPLES",
    "TERMINAL_LABELS",
]

LEVELS = (1, 2, 3)
# The largest count written after one ability (Vo99): more is never a real move, and a count
# in an abilities list (CARD x Vo99) becomes that many entries.
MAX_COUNT = 99
# R 4.6: a 思い出 chip gives three ability chips of your choice, a マニー chip two.
CONVERT_COUNTS = {"MEMORY": 3, "MONEY": 2}
_CHIP_NAMES = {"MEMORY": "思い出", "MONEY": "マニー"}
GOAL = "G"

_AMOUNT = re.compile(r"(?P<ability>[^\s0-9]+) ?(?P<count>[0-9]+)?")
_LEVEL = re.compile(r"(?:\D*?)(?P<level>[0-9]+)")
_ABILITY_WORDS = {
    "vo": "Vo",
    "vocal": "Vo",
    "ボーカル": "Vo",
    "da": "Da",
    "dance": "Da",
    "ダンス": "Da",
    "vi": "Vi",
    "visual": "Vi",
    "ビジュアル": "Vi",
}


@dataclass(frozen=True)
class _Amounts:
    """An AMOUNT list as written: (ability, count, token) in order, and its last token."""

    items: tuple[tuple[str, int, Token], ...]

    @property
    def last(self) -> Token:
        return self.items[-1][2]

    def merged(self) -> tuple[tuple[str, int], ...]:
        """Counts summed per ability, in Vo, Da, Vi order, zero counts dropped."""
        totals = dict.fromkeys(ABILITIES, 0)
        for ability, count, _ in self.items:
            totals[ability] += count
        return tuple((ability, totals[ability]) for ability in ABILITIES if totals[ability])

    def expanded(self) -> tuple[tuple[str, Token], ...]:
        """Each ability as many times as its count, in the order written."""
        return tuple((ability, token) for ability, count, token in self.items for _ in range(count))


def _amount(token: Token) -> tuple[str, int, Token]:
    match = _AMOUNT.fullmatch(str(token))
    ability = None if match is None else _ABILITY_WORDS.get(match["ability"].lower())
    if match is None or ability is None:  # the terminal and the regex describe the same strings
        raise SyntaxErrorDetail(token, f"能力 {token} が読めません。", list(ABILITIES))
    count = 1 if match["count"] is None else int(match["count"])
    if count > MAX_COUNT:
        raise SyntaxErrorDetail(
            token,
            f"能力の後の数は 0〜{MAX_COUNT} です({token} は書けません)。",
            [f"{ability}1", f"{ability}2"],
        )
    return ability, count, token


def _level(token: Token) -> int:
    match = _LEVEL.fullmatch(str(token))
    if match is None:
        raise SyntaxErrorDetail(token, f"レベル {token} が読めません。")
    level = int(match["level"])
    if level not in LEVELS:
        raise SyntaxErrorDetail(
            token,
            f"イベントのレベルは 1〜3 です(LV{level} はありません)。",
            [f"LV{n}" for n in LEVELS],
        )
    return level


def _space(token: Token) -> str:
    text = str(token)
    return GOAL if text == "ゴール" else text.upper()


def _end_of(token: Token) -> Token:
    """A token standing just after `token` (an error about what is missing after it)."""
    end = token.end_column if token.end_column is not None else token.column
    return Token("END", "", start_pos=token.end_pos, line=token.line, column=end)


class IdolwpTransformer(Transformer[Token, Any]):
    """Tree -> command dataclass. Platform rules come from PlatformTransformer (merged)."""

    def start(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> Any:
        return children[0]

    # -- lists
    def amounts(self, children: list[Token]) -> _Amounts:
        return _Amounts(tuple(_amount(token) for token in children))

    def abilities(self, children: list[Token]) -> _Amounts:
        return _Amounts(tuple(_amount(token) for token in children))

    # -- the verbs
    def pick(self, children: list[Token]) -> Pick:
        return Pick(str(children[1]))

    def move(self, children: list[Any]) -> Move:
        _, idol, space, (vo, money), event, train = children
        return Move(str(idol), _space(space), vo=vo, money=money, event=event, train=train)

    def move_flags(self, children: list[Token | None]) -> tuple[bool, bool]:
        vo, money = children
        return vo is not None, money is not None

    def event_part(self, children: list[Any]) -> EventEntry:
        entry = children[1]
        assert isinstance(entry, EventEntry)
        return entry

    def train_part(self, children: list[Any]) -> Train:
        return self.train(children)

    def event(self, children: list[Any]) -> EventEntry:
        return self.event_part(children)

    def event_body(self, children: list[Any]) -> EventEntry:
        level_token, _, boost, double = children
        if double is not None and str(double) == "倍":
            # 「Vo 2倍」: Vo2 and DOUBLE, or Vo1 and 2倍? 倍 must stand apart from a number.
            before: Token = boost.last if boost is not None else level_token
            if before.end_pos == double.start_pos and str(before)[-1].isdigit():
                raise SyntaxErrorDetail(
                    before,
                    f"「{before}倍」は数と 2倍(DOUBLE)の区切りが分かりません。"
                    "DOUBLE は前と離して書いてください(例: EVENT LV2 BOOST Vo2 DOUBLE)。",
                    ["DOUBLE"],
                )
        return EventEntry(
            _level(level_token),
            () if boost is None else boost.merged(),
            double is not None,
        )

    def train(self, children: list[Any]) -> Train:
        levels = children[1]
        return Train(() if levels is None else levels.merged())

    def _convert(self, chip: str, chip_token: Token, abilities: _Amounts | None) -> Convert:
        wanted = CONVERT_COUNTS[chip]
        written = () if abilities is None else abilities.expanded()
        if len(written) != wanted:
            where = written[wanted][1] if len(written) > wanted else None
            if where is None:
                where = _end_of(chip_token if abilities is None else abilities.last)
            raise SyntaxErrorDetail(
                where,
                f"{_CHIP_NAMES[chip]}チップ({chip})で得る能力チップはちょうど{wanted}個です"
                f"(書かれているのは{len(written)}個。例: {_convert_example(chip)})。",
                list(ABILITIES),
            )
        return Convert(chip, tuple(ability for ability, _ in written))

    def convert_memory(self, children: list[Any]) -> Convert:
        return self._convert("MEMORY", children[1], children[2])

    def convert_money(self, children: list[Any]) -> Convert:
        return self._convert("MONEY", children[1], children[2])

    def card(self, children: list[Any]) -> CardPlay:
        _, name, abilities = children
        written = () if abilities is None else abilities.expanded()
        return CardPlay(str(name), tuple(ability for ability, _ in written))

    def discard(self, children: list[Token]) -> Discard:
        return Discard(str(children[1]))

    def skip(self, _: list[Any]) -> Skip:
        return Skip()


def _convert_example(chip: str) -> str:
    return "CONVERT MEMORY Vo Vo Da" if chip == "MEMORY" else "CONVERT MONEY Vo Da"


def make_transformer() -> Transformer[Token, Any]:
    merged: Transformer[Token, Any] = merge_transformers(  # type: ignore[no-untyped-call]
        IdolwpTransformer(), common=PlatformTransformer()
    )
    return merged


# A MOVE onto an event space, for the examples of the event part inside a MOVE line.
_MOVE_EVENT = "MOVE 春香 E1 MONEY EVENT"


def _after_items(*prefixes: str) -> list[str]:
    """Lines broken after a list of abilities (each list length has its own parser stack: the
    first item, the second, the third and later; then a dangling separator)."""
    tails = (" Vo1 x", " Vo1,", " Vo1 Da2 x", " Vo1 Da2,", " Vo1 Da2 Vi1 x", " Vo1 Da2 Vi1,")
    return [prefix + tail for prefix in prefixes for tail in tails]


# Friendly messages: label -> malformed lines failing in the same parser state (see
# CommandParser). The tests parse every example and check it yields its own label.
SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "PICK の後には指名するアイドルの名前を1人だけ書いてください(例: PICK 春香)。": [
        "PICK",
        "PICK 春香 千早",
    ],
    "MOVE の後には動かすアイドルの名前と移動先のマス(L3、E1、G など)を書いてください"
    "(例: MOVE 春香 L3)。": ["MOVE", "MOVE 春香", "MOVE 春香 春香", "MOVE L3"],
    "MOVE <アイドル> <マス> の後に書けるのは VO、MONEY、EVENT …、TRAIN … だけです"
    "(この順に。例: MOVE 春香 L3 MONEY EVENT LV2)。": [
        "MOVE 春香 L3 x",
        "MOVE 千早 L3 VO x",
        "MOVE 千早 L3 Vo2",
        "MOVE 春香 L3 MONEY x",
        "MOVE 千早 L3 MONEY VO",
        "MOVE 千早 L3 VO MONEY x",
    ],
    "EVENT の後には参加するレベルを LV1〜LV3 で書いてください(例: EVENT LV2)。": [
        "EVENT",
        "EVENT x",
        "EVENT LV",
        "EVENT BOOST Vo1",
        "MOVE 春香 E1 EVENT",
        f"{_MOVE_EVENT} LV",
        f"{_MOVE_EVENT} x",
    ],
    "EVENT LV<n> の後に書けるのは BOOST <能力と数> と DOUBLE だけです"
    "(この順に。例: EVENT LV2 BOOST Vo1 Da2 DOUBLE)。": [
        "EVENT LV2 x",
        "EVENT LV2 Vo1",
        "EVENT 2 3",
    ],
    "MOVE … EVENT LV<n> の後に書けるのは BOOST <能力と数>、DOUBLE、TRAIN … だけです"
    "(この順に。例: MOVE 春香 E1 MONEY EVENT LV2 BOOST Vo1 DOUBLE)。": [
        f"{_MOVE_EVENT} LV2 x",
        f"{_MOVE_EVENT} LV2 Vo1",
    ],
    "BOOST の後には上げる能力と数を書いてください(例: BOOST Vo1 Da2)。": [
        "EVENT LV2 BOOST",
        "EVENT LV2 BOOST x",
        "EVENT LV2 BOOST DOUBLE",
        f"{_MOVE_EVENT} LV2 BOOST",
        f"{_MOVE_EVENT} LV2 BOOST x",
    ],
    "BOOST の後には能力と数(Vo1、Da2、Vi など)を並べ、最後に DOUBLE を書けます"
    "(例: EVENT LV2 BOOST Vo1 Da2 DOUBLE)。": _after_items("EVENT LV2 BOOST"),
    "MOVE … BOOST の後には能力と数(Vo1、Da2、Vi など)を並べ、その後に DOUBLE と TRAIN … を"
    "書けます(例: MOVE 春香 E1 MONEY EVENT LV2 BOOST Vo1 Da2 DOUBLE)。": _after_items(
        f"{_MOVE_EVENT} LV2 BOOST"
    ),
    "DOUBLE の後には続きを書きません(例: EVENT LV2 BOOST Vo1 DOUBLE)。": [
        "EVENT LV2 DOUBLE x",
        "EVENT LV2 DOUBLE BOOST Vo1",
        "EVENT LV2 BOOST Vo1 DOUBLE x",
    ],
    "TRAIN を EVENT と同じ行に書けるのは MOVE の行だけです(例: MOVE 春香 E1 MONEY EVENT LV2 "
    "TRAIN Vo1)。TRAIN は別の行に書いてください。": [
        "EVENT LV2 TRAIN",
        "EVENT LV2 BOOST Vo1 TRAIN Vo1",
        "EVENT LV2 DOUBLE TRAIN",
    ],
    "MOVE … DOUBLE の後に書けるのは TRAIN … だけです"
    "(例: MOVE 春香 E1 MONEY EVENT LV2 DOUBLE TRAIN Vo1)。": [
        f"{_MOVE_EVENT} LV2 DOUBLE x",
        f"{_MOVE_EVENT} LV2 BOOST Vo1 DOUBLE x",
    ],
    "TRAIN の後には上げる能力とレベル数だけを書いてください(例: TRAIN Vo1 Da1)。": [
        "TRAIN x",
        "MOVE 美希 T1 TRAIN x",
        f"{_MOVE_EVENT} LV2 TRAIN x",
        *_after_items("TRAIN", "MOVE 美希 T1 TRAIN", f"{_MOVE_EVENT} LV2 TRAIN"),
    ],
    "CONVERT の後には MEMORY(思い出)か MONEY(マニー)と、得る能力を書いてください"
    "(例: CONVERT MEMORY Vo Vo Da、CONVERT MONEY Vo Da)。": [
        "CONVERT",
        "CONVERT x",
        "CONVERT Vo Vo Da",
    ],
    "CONVERT MEMORY の後には得る能力(Vo・Da・Vi)をちょうど3個書いてください"
    "(例: CONVERT MEMORY Vo Vo Da)。": ["CONVERT MEMORY x", *_after_items("CONVERT MEMORY")],
    "CONVERT MONEY の後には得る能力(Vo・Da・Vi)をちょうど2個書いてください"
    "(例: CONVERT MONEY Vo Da)。": ["CONVERT MONEY x", *_after_items("CONVERT MONEY")],
    "CARD の後には使うカードの名前を書いてください(例: CARD 差し入れ Vo Da)。": ["CARD"],
    "CARD <カード名> の後に書けるのは、そのカードで選ぶ能力(Vo・Da・Vi)だけです"
    "(例: CARD 差し入れ Vo Da)。": ["CARD 差し入れ x", *_after_items("CARD 差し入れ")],
    "DISCARD の後には捨てるカードの名前を1枚だけ書いてください(例: DISCARD 差し入れ)。": [
        "DISCARD",
        "DISCARD 差し入れ 差し入れ",
    ],
    "SKIP には続きを書きません(例: SKIP)。": ["SKIP x", "EVENT SKIP x"],
}

# Display names of the game's terminals in "expected one of" messages.
TERMINAL_LABELS: dict[str, str] = {
    "PICK": "PICK(指名)",
    "MOVE": "MOVE(移動)",
    "EVENT": "EVENT(イベント)",
    "TRAIN": "TRAIN(特訓)",
    "CONVERT": "CONVERT(変換)",
    "CARD": "CARD(カード)",
    "DISCARD": "DISCARD(捨てる)",
    "SKIP": "SKIP(見送り)",
    "VO": "VO(Voで)",
    "MONEY": "MONEY(マニー)",
    "MEMORY": "MEMORY(思い出)",
    "BOOST": "BOOST(ブースト)",
    "DOUBLE": "DOUBLE(2倍)",
    "SPACE": "マス(例: L3)",
    "LEVEL": "レベル(例: LV2)",
    "AMOUNT": "能力と数(例: Vo2)",
}

PARSER = CommandParser("idolwp.lark", make_transformer, SYNTAX_EXAMPLES, TERMINAL_LABELS)
