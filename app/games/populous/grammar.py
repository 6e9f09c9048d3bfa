"""ポピュラス 草案21's command grammar (grammar/populous.lark): Transformer and friendly-error
tables. Race and skill names are words here; the rules check them. Squares, genesis cards,
kinds, terrains and counts are checked and put into their canonical spelling here."""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer
from lark.visitors import merge_transformers

from app.games.base import CommandParser, SyntaxErrorDetail
from app.games.commands import PlatformTransformer
from app.games.populous.commands import (
    Area,
    Catastrophe,
    Cubes,
    Discard,
    End,
    Mediate,
    Move,
    Pick,
    Place,
    Play,
    Race,
    Reveal,
    Town,
    War,
    WrathBuy,
    card_order,
)

__all__ = ["MAX_PATH", "PARSER", "SYNTAX_EXAMPLES", "TERMINAL_LABELS", "square_id"]

# The longest MOVE path and DISCARD list worth reading (more is never a real move).
MAX_PATH = 12

_KIND_WORDS = {
    "blessing": "祝福",
    "labor": "労働",
    "labour": "労働",
    "miracle": "奇跡",
    "revelation": "啓示",
    "prosperity": "繁栄",
}
_TERRAIN_WORDS = {
    "plain": "平地",
    "plains": "平地",
    "緑": "平地",
    "mountain": "山岳",
    "mountains": "山岳",
    "灰": "山岳",
    "desert": "砂漠",
    "黄": "砂漠",
    "tundra": "凍土",
    "白": "凍土",
    "sea": "海",
    "青": "海",
}
_RESOURCE_WORDS = {"passion": "情熱", "food": "食料", "faith": "信仰"}
_CUBE = re.compile(r"(?P<name>\D+?) ?(?P<count>[0-9]+)")
_FREE = re.compile(r"(?:free|f|フリー)(?:[=:]? ?(?P<number>[0-9]+))?", re.IGNORECASE)
_SQUARE = re.compile(r"(?P<low>[0-9])[-\u2212]?(?P<high>[0-9])(?P<letter>[a-zA-Z])")


def square_id(low: int, high: int, letter: str) -> str:
    return f"{low}{high}{letter}"


def _square(token: Token) -> str:
    match = _SQUARE.fullmatch(str(token))
    assert match is not None  # the terminal and the regex describe the same strings
    low, high, letter = int(match["low"]), int(match["high"]), match["letter"].lower()
    if not (1 <= low <= 5 and 1 <= high <= 5) or letter not in "abc":
        raise SyntaxErrorDetail(
            token,
            f"マス {token} はありません。マスはタイルの2つの数字(1〜5、小さい方が先)とa・b・cで"
            "書きます(例: 24a)。",
            ["24a", "35c"],
        )
    if low > high:
        raise SyntaxErrorDetail(
            token,
            f"マス {token} は小さい数字を先に書きます(例: {high}{low}{letter})。",
            [f"{high}{low}{letter}"],
        )
    return square_id(low, high, letter)


def _kind(token: Token) -> str:
    text = str(token)
    return _KIND_WORDS.get(text.lower(), text)


def _terrain(token: Token) -> str:
    text = str(token)
    return _TERRAIN_WORDS.get(text.lower(), text)


def _number(token: Token, low: int, high: int, what: str) -> int:
    value = int(str(token))
    if not low <= value <= high:
        raise SyntaxErrorDetail(token, f"{what}は {low}〜{high} です({value} は書けません)。")
    return value


AREA_MESSAGE = (
    "AREA の後には創世カードを2枚書いてください(1〜5、フリーは使う数字を付けて F2。"
    "例: AREA 2 4、AREA F3 4)。"
)


def _area_card(token: Token) -> tuple[str, Token]:
    """A genesis card as written: ``"3"``, ``"F3"`` (Free as 3) or ``"F"`` (Free, its number
    not written), with its token."""
    if token.type.endswith("FREE"):
        match = _FREE.fullmatch(str(token))
        assert match is not None
        if match["number"] is None:
            return "F", token
        number = Token("INT", match["number"], start_pos=token.start_pos, column=token.column)
        return f"F{_number(number, 1, 5, '創世カードの数字')}", token
    return str(_number(token, 1, 5, "創世カードの数字")), token


def _one_area_card(area: Token, card: str, token: Token) -> tuple[str, str]:
    """``AREA F 3`` (the rules page's own example): Free and 【3】, Free's number left to the
    rules (the one area it can stand for, else a refusal listing them). Any other single card
    is a line missing its second card."""
    text = str(token)
    if card.startswith("F") and len(card) == 2 and text[-2] in " =:":
        return "F", card[1]
    end = Token("AREA", "", start_pos=(token.start_pos or 0) + len(text))
    end.column = (token.column or 0) + len(text)
    raise SyntaxErrorDetail(end, AREA_MESSAGE, ["AREA 2 4", "AREA F3 4"])


class PopulousTransformer(Transformer[Token, Any]):
    """Tree -> command dataclass. Platform rules come from PlatformTransformer (merged)."""

    def start(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> Any:
        return children[0]

    # -- pieces
    def squares(self, children: list[Token]) -> tuple[str, ...]:
        if len(children) > MAX_PATH:
            raise SyntaxErrorDetail(children[MAX_PATH], f"マスは {MAX_PATH} 個までです。")
        return tuple(_square(token) for token in children)

    def kinds(self, children: list[Token]) -> tuple[str, ...]:
        if len(children) > MAX_PATH:
            raise SyntaxErrorDetail(children[MAX_PATH], f"カードは {MAX_PATH} 枚までです。")
        return tuple(_kind(token) for token in children)

    def area_card(self, children: list[Token]) -> tuple[str, Token]:
        return _area_card(children[0])

    def extra(self, children: list[Token]) -> int:
        return _number(children[1], 1, 3, "EXTRA(追加アクション)の数")

    def card(self, children: list[Token]) -> str:
        return _kind(children[1])

    def cube_list(self, children: list[Token]) -> Cubes:
        counts: dict[str, int] = {}
        for token in children:
            match = _CUBE.fullmatch(str(token))
            assert match is not None
            name = _RESOURCE_WORDS.get(match["name"].lower(), match["name"])
            if name in counts:
                raise SyntaxErrorDetail(token, f"{name} が2回書かれています。")
            counts[name] = int(match["count"])
        return Cubes(counts.get("情熱", 0), counts.get("食料", 0), counts.get("信仰", 0))

    # -- the verbs
    def race(self, children: list[Token]) -> Race:
        return Race(str(children[1]))

    def pick(self, children: list[Token]) -> Pick:
        return Pick(str(children[1]))

    def cubes(self, children: list[Any]) -> Cubes:
        cubes = children[1]
        assert isinstance(cubes, Cubes)
        return cubes

    def area(self, children: list[Any]) -> Area:
        verb, (first, token), written = children
        pair = _one_area_card(verb, first, token) if written is None else (first, written[0])
        low, high = sorted(pair, key=card_order)
        return Area((low, high))

    def wrath_buy(self, _: list[Any]) -> WrathBuy:
        return WrathBuy()

    def catastrophe(self, children: list[Any]) -> Catastrophe:
        _, paid, _, squares, _, terrain = children
        return Catastrophe(
            _number(paid, 1, 6, "払う神の怒りの数"), tuple(squares or ()), _terrain(terrain)
        )

    def place(self, children: list[Any]) -> Place:
        return Place(children[1])

    def play(self, children: list[Any]) -> Play:
        _, kind, extra = children
        return Play(_kind(kind), extra or 0)

    def facedown(self, children: list[Any]) -> Play:
        _, kind, card, extra = children
        return Play(_kind(kind), extra or 0, down=True, card=card)

    def newgen(self, children: list[Any]) -> Play:
        _, _, kind, extra = children
        return Play(_kind(kind), extra or 0, newgen=True)

    def newgen_facedown(self, children: list[Any]) -> Play:
        _, _, kind, card, extra = children
        return Play(_kind(kind), extra or 0, newgen=True, down=True, card=card)

    def move(self, children: list[Any]) -> Move:
        path = children[1]
        if len(path) < 2:
            raise SyntaxErrorDetail(
                _end_of(children[0]),
                "MOVE には動かすワーカーのいるマスと移動先のマスを書きます(例: MOVE 24a 24b。"
                "続けて書けば何マスでも進めます: MOVE 24a 24b 45c)。",
            )
        return Move(path)

    def discard(self, children: list[Any]) -> Discard:
        return Discard(children[1])

    def war(self, _: list[Any]) -> War:
        return War()

    def mediate(self, _: list[Any]) -> Mediate:
        return Mediate()

    def town(self, children: list[Token]) -> Town:
        return Town(_square(children[1]))

    def reveal(self, children: list[Token]) -> Reveal:
        return Reveal(str(children[1]))

    def end(self, _: list[Any]) -> End:
        return End()


def _end_of(token: Token) -> Token:
    end = token.end_column if token.end_column is not None else token.column
    return Token("END", "", start_pos=token.end_pos, line=token.line, column=end)


def make_transformer() -> Transformer[Token, Any]:
    merged: Transformer[Token, Any] = merge_transformers(  # type: ignore[no-untyped-call]
        PopulousTransformer(), common=PlatformTransformer()
    )
    return merged


_KINDS_TEXT = "祝福・労働・奇跡・啓示・繁栄"

# Friendly messages: label -> malformed lines failing in the same parser state (see
# CommandParser). The tests parse every example and check it yields its own label.
SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "RACE の後には種族の名前を1つだけ書いてください(例: RACE ドワーフ)。": [
        "RACE",
        "RACE 人間 人間",
    ],
    "PICK の後には残すスキルの名前を1つだけ書いてください(例: PICK 大図書館)。": [
        "PICK",
        "PICK 大図書館 大図書館",
    ],
    "CUBES の後には 情熱・食料・信仰 とその数を書いてください(合計7、各6まで。"
    "例: CUBES 情熱 2 食料 3 信仰 2)。": [
        "CUBES",
        "CUBES x",
        "CUBES 情熱 2 x",
        "CUBES 情熱 2,",
        "CUBES 情熱 2 食料 3 x",
        "CUBES 情熱 2 食料 3 信仰 2 x",
    ],
    AREA_MESSAGE: [
        "AREA",
        "AREA x",
        "AREA 2 x",
        "AREA F3 x",
        "AREA 2 4 5",
    ],
    "WRATH の後には BUY(信仰3で神の怒り1)か、払う神の怒りの数・マス・リングを書いてください"
    "(例: WRATH BUY、WRATH 3 RING 海、WRATH 4 SQUARE 24b RING 山岳)。": [
        "WRATH",
        "WRATH x",
        "WRATH BUY x",
    ],
    "WRATH <数> の後には、(4以上なら)SQUARE <マス>、そして RING <地形> を書いてください"
    "(例: WRATH 3 RING 海、WRATH 4 SQUARE 24b RING 山岳)。": [
        "WRATH 3",
        "WRATH 3 x",
        "WRATH 4 SQUARE",
        "WRATH 4 SQUARE x",
        "WRATH 4 SQUARE 24b",
        "WRATH 4 SQUARE 24b x",
        "WRATH 4 24b",
        "WRATH 5 24b 24c",
        "WRATH 5 24b 24c x",
        "WRATH 4 24b,",
    ],
    "RING の後には地形を1つ書いてください(平地・山岳・砂漠・凍土・海。例: RING 海)。": [
        "WRATH 3 RING",
        "WRATH 3 RING x",
        "WRATH 3 RING 海 x",
    ],
    "PLACE の後にはワーカーを置くマスを書いてください(例: PLACE 24a、追加も置くなら "
    "PLACE 24a 24b)。": [
        "PLACE",
        "PLACE x",
        "PLACE 24a x",
        "PLACE 24a,",
        "PLACE 24a 24b x",
    ],
    f"PLAY の後にはカードの種類({_KINDS_TEXT})を書いてください(例: PLAY 祝福、"
    "PLAY 労働 EXTRA 1)。": ["PLAY", "PLAY x"],
    f"FACEDOWN の後には行うアクション({_KINDS_TEXT})を書いてください(例: FACEDOWN 啓示、"
    "封印して CARD も: FACEDOWN 啓示 CARD 労働)。": ["FACEDOWN", "FACEDOWN x", "NEWGEN FACEDOWN"],
    f"NEWGEN の後にはカードの種類({_KINDS_TEXT})か FACEDOWN <アクション> を書いてください"
    "(例: NEWGEN 祝福、NEWGEN FACEDOWN 啓示)。": ["NEWGEN", "NEWGEN x", "NEWGEN PLAY"],
    "カードの種類の後に書けるのは EXTRA <1〜3>(情熱で追加アクション)だけです"
    "(例: PLAY 祝福 EXTRA 1)。": ["PLAY 祝福 x", "NEWGEN 祝福 x", "PLAY 祝福 EXTRA 1 x"],
    "FACEDOWN <アクション> の後に書けるのは CARD <伏せるカード> と EXTRA <1〜3> だけです"
    "(例: FACEDOWN 啓示 CARD 労働 EXTRA 1)。": [
        "FACEDOWN 啓示 x",
        "FACEDOWN 啓示 CARD 労働 x",
        "NEWGEN FACEDOWN 啓示 x",
        "NEWGEN FACEDOWN 啓示 CARD 労働 x",
        "FACEDOWN 啓示 EXTRA 1 x",
    ],
    "EXTRA の後には追加するアクションの数(1〜3)を書いてください(例: EXTRA 2)。": [
        "PLAY 祝福 EXTRA",
        "PLAY 祝福 EXTRA x",
        "FACEDOWN 啓示 EXTRA",
    ],
    f"CARD の後には伏せるカードの種類({_KINDS_TEXT})を書いてください"
    "(例: FACEDOWN 啓示 CARD 労働)。": ["FACEDOWN 啓示 CARD", "FACEDOWN 啓示 CARD x"],
    "MOVE の後には動かすワーカーのいるマスと移動先のマスを書いてください(例: MOVE 24a 24b)。": [
        "MOVE",
        "MOVE x",
        "MOVE 24a x",
        "MOVE 24a,",
        "MOVE 24a 24b x",
    ],
    f"DISCARD の後には捨てるカードの種類({_KINDS_TEXT})を書いてください(例: DISCARD 祝福 労働)。": [
        "DISCARD",
        "DISCARD x",
        "DISCARD 祝福 x",
        "DISCARD 祝福,",
    ],
    "TOWN の後にはタウンを建てるマスを1つ書いてください(例: TOWN 24a)。": [
        "TOWN",
        "TOWN x",
        "TOWN 24a x",
    ],
    "REVEAL の後には表にするスキルの名前を1つだけ書いてください(例: REVEAL 大図書館)。": [
        "REVEAL",
        "REVEAL 大図書館 大図書館",
    ],
    "WAR・MEDIATE・END には続きを書きません。": ["WAR x", "MEDIATE x", "END x"],
}

# Display names of the game's terminals in "expected one of" messages.
TERMINAL_LABELS: dict[str, str] = {
    "RACE": "RACE(種族)",
    "PICK": "PICK(選択)",
    "CUBES": "CUBES(配分)",
    "AREA": "AREA(エリア)",
    "WRATH": "WRATH(怒り)",
    "BUY": "BUY(購入)",
    "SQUARE_KW": "SQUARE(マス)",
    "RING": "RING(リング)",
    "PLACE": "PLACE(配置)",
    "PLAY": "PLAY(プレイ)",
    "FACEDOWN": "FACEDOWN(裏)",
    "NEWGEN": "NEWGEN(世代交代)",
    "EXTRA": "EXTRA(追加)",
    "CARD": "CARD(カード)",
    "MOVE": "MOVE(移動)",
    "DISCARD": "DISCARD(捨てる)",
    "WAR": "WAR(戦争)",
    "MEDIATE": "MEDIATE(調停)",
    "TOWN": "TOWN(建設)",
    "REVEAL": "REVEAL(公開)",
    "END": "END(終了)",
    "FREE": "フリー(例: F2)",
    "SQUARE": "マス(例: 24a)",
    "KIND": "カードの種類(例: 祝福)",
    "TERRAIN": "地形(例: 海)",
    "CUBE": "リソースと数(例: 情熱 2)",
}

PARSER = CommandParser("populous.lark", make_transformer, SYNTAX_EXAMPLES, TERMINAL_LABELS)
