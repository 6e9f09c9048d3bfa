"""掲示板進行カードゲーム's card registry language (grammar/cardbattle_registry.lark): the lines
players and officials post in the registry thread, parsed into frozen dataclasses.

Pure, like the games: no database. Whether a name is free, whether a card was used in a game
and whether the poster may approve is the registry service's (app/gm/cards.py); here a line is
read, and a card line becomes a validated `CardSpec` (its numbers in range, its abilities from
the vocabulary, its shape right for its kind), a problem reported at the token it is about.

    CARD NEW 炎の剣 COST 300 ATK 200 DUR 300 ABILITY 登場時 ダメージ 100
    カード 新規 火球 魔法 コスト 200 能力 全体ダメージ 100
    CARD PROMOTE 炎の剣 COST 300 ATK 250 DUR 300 ABILITY entry damage 100
    APPROVE 炎の剣            (承認 炎の剣)
    REJECT 炎の剣 攻撃力が高すぎます   (却下 …)
    GIVE alice 赤竜            (配布 alice 赤竜: an official hands a player a card)
    RELEASE 歩兵               (手放す 歩兵: a card leaves the poster's collection)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lark import Token, Transformer
from pydantic import ValidationError

from app.games.base import CommandParser, SyntaxErrorDetail, normalise
from app.games.cardbattle.cards import (
    EFFECT_JA,
    MAX_AMOUNT,
    MAX_ATTACK,
    MAX_COST,
    MAX_DURABILITY,
    NO_AMOUNT,
    TIMING_JA,
    Ability,
    CardSpec,
)

__all__ = [
    "LANGUAGE",
    "MAX_ABILITIES",
    "MAX_NAME_CHARS",
    "MAX_REASON_CHARS",
    "MAX_TEXT_CHARS",
    "PARSER",
    "SYNTAX_EXAMPLES",
    "TERMINAL_LABELS",
    "Approve",
    "Give",
    "NewCard",
    "PromoteCard",
    "RegistryCommand",
    "Reject",
    "Release",
    "card_text",
    "name_key",
    "parse",
]

MAX_NAME_CHARS = 16  # CardSpec.name
MAX_ABILITIES = 4  # CardSpec: at most 4 abilities
MAX_TEXT_CHARS = 200  # a card's text (flavour)
MAX_REASON_CHARS = 500  # a REJECT's reason
# Characters a card name may not hold: list separators (a deck line lists cards), the slash
# the bot prints between abilities, and the arrows of ATTACK 1>2 and >>N anchors.
NAME_FORBIDDEN = frozenset(",、/<>")
_TIMING_WORDS = {**{t: t for t in TIMING_JA}, **{ja: t for t, ja in TIMING_JA.items()}}
_EFFECT_WORDS = {**{e: e for e in EFFECT_JA}, **{ja: e for e, ja in EFFECT_JA.items()}}


def name_key(name: str) -> str:
    """What makes two card names the same name: NFKC, case folded (MAKI and maki are one)."""
    return normalise(name).casefold()


# --------------------------------------------------------------------------- commands


def _ability_canonical(ability: Ability) -> str:
    parts: list[str] = [ability.timing] if ability.timing is not None else []
    parts.append(ability.effect)
    if ability.effect not in NO_AMOUNT:
        parts.append(str(ability.amount))
    return " ".join(parts)


def card_text(card: CardSpec) -> str:
    """The card part of a CARD line, canonical (English keywords):
    ``炎の剣 COST 300 ATK 200 DUR 300 ABILITY entry damage 100``."""
    if card.kind == "normal":
        text = f"{card.name} COST {card.cost} ATK {card.attack} DUR {card.durability}"
    else:
        text = f"{card.name} MAGIC COST {card.cost}"
    if card.abilities:
        text += " ABILITY " + ", ".join(_ability_canonical(a) for a in card.abilities)
    if card.text:
        text += f" TEXT {card.text}"
    return text


@dataclass(frozen=True)
class NewCard:
    """Propose a new card (version 1 of its name); an official approves it."""

    card: CardSpec

    def canonical(self) -> str:
        return f"CARD NEW {card_text(self.card)}"


@dataclass(frozen=True)
class PromoteCard:
    """Propose new stats for a card that was used in a game (its next version)."""

    card: CardSpec

    def canonical(self) -> str:
        return f"CARD PROMOTE {card_text(self.card)}"


@dataclass(frozen=True)
class Approve:
    name: str

    def canonical(self) -> str:
        return f"APPROVE {self.name}"


@dataclass(frozen=True)
class Reject:
    name: str
    reason: str

    def canonical(self) -> str:
        return f"REJECT {self.name} {self.reason}"


@dataclass(frozen=True)
class Give:
    """An official hands ``player`` the card ``name`` (R 「イベントなどで配布される」)."""

    player: str
    name: str

    def canonical(self) -> str:
        return f"GIVE {self.player} {self.name}"


@dataclass(frozen=True)
class Release:
    """The poster lets the card ``name`` go from their collection (to make room)."""

    name: str

    def canonical(self) -> str:
        return f"RELEASE {self.name}"


RegistryCommand = NewCard | PromoteCard | Approve | Reject | Give | Release


# --------------------------------------------------------------------------- the transformer


@dataclass(frozen=True)
class _WrittenAbility:
    timing: Token | None
    effect: Token
    amount: Token | None

    @property
    def first(self) -> Token:
        return self.timing if self.timing is not None else self.effect

    def data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"effect": _EFFECT_WORDS[str(self.effect).lower()]}
        if self.timing is not None:
            data["timing"] = _TIMING_WORDS[str(self.timing).lower()]
        if self.amount is not None:
            data["amount"] = _number(self.amount)
        return data


@dataclass(frozen=True)
class _Body:
    """A card line's part after the name, as written (tokens kept for error positions)."""

    kind: str
    cost: Token
    attack: Token | None
    durability: Token | None
    abilities: tuple[_WrittenAbility, ...]
    text: Token | None


# Beyond every range. Longer numbers are not converted (Python refuses int() of thousands of
# digits, and a line may be that long): they stand as this, which every range refuses.
_TOO_BIG = 10_000_000


def _number(token: Token) -> int:
    text = str(token).replace("\u2212", "-")
    digits = text.lstrip("+-").lstrip("0")
    if len(digits) >= len(str(_TOO_BIG)):
        return -_TOO_BIG if text.startswith("-") else _TOO_BIG
    return int(text)


_RANGES: dict[str, tuple[str, int, int]] = {
    "cost": ("コスト", 0, MAX_COST),
    "attack": ("攻撃力", 0, MAX_ATTACK),
    "durability": ("耐久力", 1, MAX_DURABILITY),
}


def _friendly(errors: ValidationError, body: _Body) -> tuple[str, Token | None]:
    """A card's first pydantic error as a Japanese message and the token it is about (None:
    the name)."""
    error = errors.errors()[0]
    loc = error["loc"]
    message = str(error.get("msg", ""))
    if loc and loc[0] in _RANGES:
        field = str(loc[0])
        label, low, high = _RANGES[field]
        token: Token | None = getattr(body, field)
        return f"{label}は {low}〜{high} です（{token} は書けません）。", token
    if loc and loc[0] == "name":
        if error["type"] == "string_too_long":
            return f"カード名は{MAX_NAME_CHARS}文字までです。", None
        return "カード名は空白を含まない1語にしてください。", None
    if len(loc) >= 2 and loc[0] == "abilities" and isinstance(loc[1], int):
        ability = body.abilities[loc[1]]
        effect = EFFECT_JA[_EFFECT_WORDS[str(ability.effect).lower()]]
        if len(loc) >= 3 and loc[2] == "amount":
            return (
                f"能力の量は {-MAX_AMOUNT}〜{MAX_AMOUNT} です（{ability.amount} は書けません）。",
                ability.amount,
            )
        if "takes no amount" in message:
            return f"「{effect}」には量を書きません。", ability.amount
        if "amount other than 0" in message:
            return (
                f"「{effect}」には増減する量を 0 以外で書いてください（下げるなら -100 など）。",
                ability.amount or ability.effect,
            )
        if "needs an amount" in message:
            return (
                f"「{effect}」には 1 以上の量を書いてください（例: {effect} 100）。",
                ability.amount or ability.effect,
            )
        return f"能力「{effect}」が正しくありません（{message}）。", ability.first
    if "durability 1 or more" in message:
        return (
            f"通常カードの耐久力は 1〜{MAX_DURABILITY} です（{body.durability} は書けません）。",
            body.durability,
        )
    if "at most" in message and len(body.abilities) > MAX_ABILITIES:
        return f"能力は{MAX_ABILITIES}つまでです。", body.abilities[MAX_ABILITIES].first
    return f"カードが正しくありません（{message}）。", None


def _spec(name: Token, body: _Body) -> CardSpec:
    """The card as written, validated by `CardSpec`; its first problem at the token it is about."""
    _check_name(name)
    data: dict[str, Any] = {
        "name": str(name),
        "kind": body.kind,
        "cost": _number(body.cost),
        "abilities": [ability.data() for ability in body.abilities],
    }
    if body.attack is not None and body.durability is not None:
        data["attack"] = _number(body.attack)
        data["durability"] = _number(body.durability)
    if body.text is not None:
        data["text"] = str(body.text)
        if len(data["text"]) > MAX_TEXT_CHARS:
            raise SyntaxErrorDetail(body.text, f"カードの説明は{MAX_TEXT_CHARS}文字までです。")
    try:
        return CardSpec.model_validate(data)
    except ValidationError as error:
        message, token = _friendly(error, body)
        raise SyntaxErrorDetail(token or name, message) from None


def _check_name(name: Token) -> None:
    text = str(name)
    bad = sorted(NAME_FORBIDDEN & set(text))
    if bad:
        shown = " ".join(bad)
        raise SyntaxErrorDetail(name, f"カード名に {shown} は使えません（{text}）。")
    if len(text) > MAX_NAME_CHARS:
        raise SyntaxErrorDetail(name, f"カード名は{MAX_NAME_CHARS}文字までです。")
    if text.isdigit():
        raise SyntaxErrorDetail(name, "数字だけのカード名は使えません。")
    if PARSER.is_keyword(text):
        raise SyntaxErrorDetail(name, f"「{text}」は命令の言葉なので、カード名には使えません。")


class RegistryTransformer(Transformer[Token, Any]):
    def start(self, children: list[Any]) -> Any:
        return children[0]

    def new_card(self, children: list[Any]) -> NewCard:
        _, _, name, body = children
        return NewCard(_spec(name, body))

    def promote_card(self, children: list[Any]) -> PromoteCard:
        _, _, name, body = children
        return PromoteCard(_spec(name, body))

    def approve(self, children: list[Token]) -> Approve:
        return Approve(str(children[1]))

    def reject(self, children: list[Token]) -> Reject:
        _, name, reason = children
        text = str(reason)
        if len(text) > MAX_REASON_CHARS:
            raise SyntaxErrorDetail(reason, f"却下の理由は{MAX_REASON_CHARS}文字までです。")
        return Reject(str(name), text)

    def give(self, children: list[Token]) -> Give:
        return Give(str(children[1]), str(children[2]))

    def release(self, children: list[Token]) -> Release:
        return Release(str(children[1]))

    def normal_body(self, children: list[Any]) -> _Body:
        _, cost, _, attack, _, durability, ability_kw, abilities, flavour = children
        del ability_kw  # present exactly when abilities are (the grammar)
        written: tuple[_WrittenAbility, ...] = tuple(abilities or ())
        return _Body("normal", cost, attack, durability, written, flavour)

    def magic_body(self, children: list[Any]) -> _Body:
        _, _, cost, _, abilities, flavour = children
        return _Body("magic", cost, None, None, tuple(abilities), flavour)

    def normal_abilities(self, children: list[_WrittenAbility]) -> list[_WrittenAbility]:
        return list(children)

    def magic_abilities(self, children: list[_WrittenAbility]) -> list[_WrittenAbility]:
        return list(children)

    def normal_ability(self, children: list[Token | None]) -> _WrittenAbility:
        timing, effect, amount = children
        assert timing is not None and effect is not None
        return _WrittenAbility(timing, effect, amount)

    def magic_ability(self, children: list[Token | None]) -> _WrittenAbility:
        effect, amount = children
        assert effect is not None
        return _WrittenAbility(None, effect, amount)

    def flavour(self, children: list[Token]) -> Token:
        return children[1]


# --------------------------------------------------------------------------- friendly errors

_NEW = "CARD NEW 炎の剣"
_PROMOTE = "CARD PROMOTE 炎の剣"
_MAGIC = "CARD NEW 火球 MAGIC COST 200"
_MAGIC_PROMOTE = "CARD PROMOTE 火球 MAGIC COST 200"
_NORMAL_EXAMPLE = "CARD NEW 炎の剣 COST 300 ATK 200 DUR 300 ABILITY 登場時 ダメージ 100"
_MAGIC_EXAMPLE = "CARD NEW 火球 MAGIC COST 200 ABILITY 全体ダメージ 100"
_TIMINGS = "・".join(TIMING_JA.values())
_EFFECTS = "・".join(EFFECT_JA.values())


def _card_prefixes(tail: str) -> list[str]:
    return [f"{_NEW}{tail}", f"{_PROMOTE}{tail}"]


def _normal(tail: str) -> list[str]:
    return _card_prefixes(f" COST 300 ATK 200 DUR 300{tail}")


def _magic(tail: str) -> list[str]:
    return [f"{_MAGIC}{tail}", f"{_MAGIC_PROMOTE}{tail}"]


def _after_normal_abilities(tail: str) -> list[str]:
    """Lines broken after a list of one, two and three abilities (each length has its own
    parser stack), separated by a comma or by a space."""
    heads = [
        " ABILITY 登場時 ダメージ 100",
        " ABILITY 登場時 除外",
        " ABILITY 登場時 ダメージ 100, 破壊時 回復 50",
        " ABILITY 登場時 ダメージ 100 破壊時 回復 50",
        " ABILITY 登場時 ダメージ 100, 破壊時 回復 50, 攻撃時 攻撃強化 10",
    ]
    return [line for head in heads for line in _normal(head + tail)]


def _after_magic_abilities(tail: str) -> list[str]:
    heads = [
        " ABILITY ダメージ 100",
        " ABILITY 除外",
        " ABILITY ダメージ 100, 回復 50",
        " ABILITY ダメージ 100 回復 50",
        " ABILITY ダメージ 100, 回復 50, コスト -50",
    ]
    return [line for head in heads for line in _magic(head + tail)]


# Friendly messages: label -> malformed lines failing in the same parser state (see
# CommandParser). The tests parse every example and check it yields its own label.
SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "命令が分かりません。カード登録所で使える命令は CARD NEW(カード 新規)、CARD PROMOTE"
    "(カード 昇格)、APPROVE(承認)、REJECT(却下)、GIVE(配布)、RELEASE(手放す) です"
    f"(例: {_NORMAL_EXAMPLE})。": ["こんにちは", "+1", "NEW 炎の剣"],
    f"CARD の後には NEW(新規) か PROMOTE(昇格) を書いてください(例: {_NORMAL_EXAMPLE})。": [
        "CARD",
        "CARD 炎の剣",
        "CARD APPROVE",
    ],
    f"CARD NEW / CARD PROMOTE の後にはカードの名前を書いてください(例: {_NORMAL_EXAMPLE})。": [
        "CARD NEW",
        "CARD PROMOTE",
    ],
    "カード名の後には COST(コスト) を、魔法カードなら MAGIC(魔法) COST を書いてください"
    f"(例: {_NORMAL_EXAMPLE}、{_MAGIC_EXAMPLE})。": [
        *_card_prefixes(""),
        *_card_prefixes(" x"),
        *_card_prefixes(" ATK 200"),
        *_card_prefixes(" 300"),
    ],
    "COST の後にはコストを数字で書いてください(例: COST 300)。": [
        *_card_prefixes(" COST"),
        *_card_prefixes(" COST x"),
        *_card_prefixes(" COST -5"),
        *_card_prefixes(" MAGIC COST"),
        *_card_prefixes(" MAGIC COST x"),
    ],
    "コストの後には ATK(攻撃) と攻撃力を書いてください(例: COST 300 ATK 200 DUR 300)。"
    "魔法カードなら名前の後に MAGIC と書きます。": [
        *_card_prefixes(" COST 300"),
        *_card_prefixes(" COST 300 x"),
        *_card_prefixes(" COST 300 DUR 300"),
        *_card_prefixes(" COST 300 ABILITY ダメージ 100"),
    ],
    "ATK の後には攻撃力を数字で書いてください(例: ATK 200)。": [
        *_card_prefixes(" COST 300 ATK"),
        *_card_prefixes(" COST 300 ATK x"),
    ],
    "攻撃力の後には DUR(耐久) と耐久力を書いてください(例: COST 300 ATK 200 DUR 300)。": [
        *_card_prefixes(" COST 300 ATK 200"),
        *_card_prefixes(" COST 300 ATK 200 x"),
        *_card_prefixes(" COST 300 ATK 200 ABILITY 登場時 ダメージ 100"),
    ],
    "DUR の後には耐久力を数字で書いてください(例: DUR 300)。": [
        *_card_prefixes(" COST 300 ATK 200 DUR"),
        *_card_prefixes(" COST 300 ATK 200 DUR x"),
    ],
    f"耐久力の後に書けるのは ABILITY(能力) … と TEXT(説明) … だけです(例: {_NORMAL_EXAMPLE})。": [
        *_normal(" x"),
        *_normal(" 100"),
        *_normal(" 登場時"),
    ],
    "通常カードの能力は、タイミング(" + _TIMINGS + ")、効果、量の順に書きます"
    "(例: ABILITY 登場時 ダメージ 100、次の能力は , で区切って)。": [
        *_normal(" ABILITY"),
        *_normal(" ABILITY x"),
        *_normal(" ABILITY ダメージ 100"),
        *_after_normal_abilities(","),
        *_after_normal_abilities(", x"),
        *_after_normal_abilities(", ダメージ 100"),
    ],
    "タイミングの後には効果(" + _EFFECTS + ")を書いてください(例: 登場時 ダメージ 100)。": [
        *_normal(" ABILITY 登場時"),
        *_normal(" ABILITY 登場時 x"),
        *_normal(" ABILITY 登場時 100"),
        *_normal(" ABILITY 登場時 ダメージ 100, 破壊時"),
        *_normal(" ABILITY 登場時 ダメージ 100, 破壊時 x"),
        *_normal(" ABILITY 登場時 ダメージ 100 破壊時"),
    ],
    "能力の後に書けるのは、量(数字)、次の能力(タイミングから。, で区切れます)、"
    "TEXT(説明) … だけです(例: ABILITY 登場時 ダメージ 100, 破壊時 回復 50)。": [
        *_after_normal_abilities(" x"),
        *_after_normal_abilities(" ダメージ 100"),
        *_normal(" ABILITY 登場時 ダメージ x"),
        *_normal(" ABILITY 登場時 ダメージ 100, 破壊時 回復 x"),
        *_normal(" ABILITY 登場時 ダメージ 100 破壊時 回復 x"),
    ],
    f"MAGIC の後には COST(コスト) とコストを書いてください(例: {_MAGIC_EXAMPLE})。": [
        *_card_prefixes(" MAGIC"),
        *_card_prefixes(" MAGIC x"),
        *_card_prefixes(" MAGIC ABILITY ダメージ 100"),
    ],
    "魔法カードにはコストの後に ABILITY(能力) を書きます(攻撃力と耐久力はありません。"
    f"例: {_MAGIC_EXAMPLE})。": [*_magic(""), *_magic(" x"), *_magic(" ATK 100")],
    "魔法カードの能力は効果と量で書きます(タイミングは書きません。効果: " + _EFFECTS + "。"
    f"例: {_MAGIC_EXAMPLE})。": [
        *_magic(" ABILITY"),
        *_magic(" ABILITY x"),
        *_magic(" ABILITY 登場時 ダメージ 100"),
        *_after_magic_abilities(","),
        *_after_magic_abilities(", x"),
        *_after_magic_abilities(", 登場時 ダメージ 100"),
    ],
    "魔法カードの能力の後に書けるのは、量(数字)、次の能力(, で区切れます)、TEXT(説明) … だけ"
    f"です(例: {_MAGIC_EXAMPLE}, 回復 50)。": [
        *_after_magic_abilities(" x"),
        *_after_magic_abilities(" 登場時 回復 50"),
        *_magic(" ABILITY ダメージ x"),
        *_magic(" ABILITY ダメージ 100, 回復 x"),
        *_magic(" ABILITY ダメージ 100 回復 x"),
    ],
    "TEXT の後にはカードの説明を書いてください(例: TEXT 伝説の剣)。": [
        *_normal(" TEXT"),
        *_after_normal_abilities(" TEXT"),
        *_after_magic_abilities(" TEXT"),
    ],
    "APPROVE の後には承認するカードの名前を1枚だけ書いてください(例: APPROVE 炎の剣)。": [
        "APPROVE",
        "APPROVE 炎の剣 火球",
    ],
    "REJECT の後にはカードの名前と却下の理由を書いてください"
    "(例: REJECT 炎の剣 攻撃力が高すぎます)。": ["REJECT"],
    "REJECT <カード名> の後には却下の理由を書いてください"
    "(例: REJECT 炎の剣 攻撃力が高すぎます)。": ["REJECT 炎の剣"],
    "GIVE の後にはプレイヤーの名前とカードの名前を書いてください(例: GIVE alice 赤竜)。": [
        "GIVE",
        "GIVE alice",
        "GIVE alice 赤竜 火球",
    ],
    "RELEASE の後には手放すカードの名前を1枚だけ書いてください(例: RELEASE 歩兵)。": [
        "RELEASE",
        "RELEASE 歩兵 弓兵",
    ],
}

TERMINAL_LABELS: dict[str, str] = {
    "CARD": "CARD(カード)",
    "NEW": "NEW(新規)",
    "PROMOTE": "PROMOTE(昇格)",
    "APPROVE": "APPROVE(承認)",
    "REJECT": "REJECT(却下)",
    "GIVE": "GIVE(配布)",
    "RELEASE": "RELEASE(手放す)",
    "COST": "COST(コスト)",
    "ATK": "ATK(攻撃)",
    "DUR": "DUR(耐久)",
    "ABILITY": "ABILITY(能力)",
    "MAGIC": "MAGIC(魔法)",
    "TEXT": "TEXT(説明)",
    "TIMING": "タイミング(" + _TIMINGS + ")",
    "EFFECT": "効果(" + _EFFECTS + ")",
    "NAME": "カード名",
    "INT": "数字",
    "SIGNED_INT": "量(数字)",
    "REASON": "理由",
    "_ABILITY_SEP": "区切り(, 、 /)",
}

# The keywords of the language: a card may not be named after one (「MAGIC」, 「コスト」).
_KEYWORDS: tuple[str, ...] = ("CARD", "NEW", "PROMOTE", "APPROVE", "REJECT", "COST", "ATK")
_KEYWORDS += ("DUR", "ABILITY", "MAGIC", "TEXT", "TIMING", "EFFECT", "GIVE", "RELEASE")


class RegistryParser(CommandParser):
    def is_keyword(self, word: str) -> bool:
        """Is ``word`` (whole) one of the language's keywords, in any spelling?"""
        for name in _KEYWORDS:
            pattern = self.lark.get_terminal(name).pattern.to_regexp()
            if re.fullmatch(pattern, word) is not None:
                return True
        return False


def make_transformer() -> Transformer[Token, Any]:
    return RegistryTransformer()


PARSER = RegistryParser(
    "cardbattle_registry.lark", make_transformer, SYNTAX_EXAMPLES, TERMINAL_LABELS
)


def parse(line: str) -> RegistryCommand:
    """One line into a command; raises `CommandSyntaxError` (with its column) when it is not
    one the registry can take."""
    command = PARSER.parse(line)
    assert isinstance(command, NewCard | PromoteCard | Approve | Reject | Give | Release)
    return command


# --------------------------------------------------------------------------- lines of a post


class RegistryLanguage:
    """The registry's lines as the bot reads a post (app/gm/lines.py, the same reading as a
    game thread's): its parser and its parse."""

    parser: CommandParser = PARSER

    def parse(self, line: str) -> RegistryCommand:
        return parse(line)


LANGUAGE = RegistryLanguage()
