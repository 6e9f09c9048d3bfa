"""掲示板進行カードゲーム's command parser: grammar/cardbattle.lark, a Transformer to the
dataclasses of commands.py, and the friendly error table (docs/rules/cardbattle.md)."""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer
from lark.visitors import merge_transformers

from app.games.base import CommandParser, SyntaxErrorDetail
from app.games.cardbattle.commands import Attack, Deck, Magic, Pass
from app.games.commands import PlatformTransformer

__all__ = ["PARSER"]

_PAIR = re.compile(r"([0-9]+) ?(?:>|->|→) ?([0-9]+)")
MAX_MAGIC = 3
DECK_SIZE = 3


class CardbattleTransformer(Transformer[Token, Any]):
    def start(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> Any:
        return children[0]

    def names(self, items: list[Token]) -> tuple[str, ...]:
        return tuple(str(item) for item in items)

    def pair(self, items: list[Token]) -> tuple[int, int]:
        token = items[0]
        found = _PAIR.fullmatch(str(token))
        assert found is not None
        attacker, target = int(found.group(1)), int(found.group(2))
        for number in (attacker, target):
            if not 1 <= number <= DECK_SIZE:
                raise SyntaxErrorDetail(
                    token, "カードの番号は 1〜3 です(デッキの順、例: ATTACK 1>2)。"
                )
        return attacker, target

    def deck(self, items: list[Any]) -> Deck:
        cards = items[1]
        magic = items[3] if len(items) > 3 and items[3] is not None else ()
        if len(cards) != DECK_SIZE:
            raise SyntaxErrorDetail(
                items[0], f"デッキの通常カードはちょうど3枚です(今は {len(cards)} 枚)。"
            )
        if len(magic) > MAX_MAGIC:
            raise SyntaxErrorDetail(
                items[2], f"マジックカードは3枚までです(今は {len(magic)} 枚)。"
            )
        return Deck(tuple(cards), tuple(magic))

    def attack(self, items: list[Any]) -> Attack:
        return Attack(tuple(items[1:]))

    def magic(self, items: list[Any]) -> Magic:
        target = items[2]
        if target is not None and not 1 <= int(target) <= DECK_SIZE:
            raise SyntaxErrorDetail(target, "対象のカードの番号は 1〜3 です(例: MAGIC 火の玉 2)。")
        return Magic(str(items[1]), int(target) if target is not None else None)

    def pass_(self, items: list[Any]) -> Pass:
        return Pass()


def make_transformer() -> Transformer[Token, Any]:
    merged: Transformer[Token, Any] = merge_transformers(  # type: ignore[no-untyped-call]
        CardbattleTransformer(), common=PlatformTransformer()
    )
    return merged


SYNTAX_EXAMPLES: dict[str, list[str]] = {
    "DECK の後には通常カード3枚の名前を書いてください(例: DECK 舞踏子 ホープ MAKI MAGIC "
    "火の玉)。": [
        "DECK",
    ],
    "MAGIC の後にはマジックカードの名前を書いてください(例: DECK 舞踏子 ホープ MAKI MAGIC "
    "火の玉)。": [
        "DECK a b c MAGIC",
    ],
    "ATTACK の後には「攻撃するカードの番号>対象の番号」を書きます(例: ATTACK 1>2 2>1)。"
    "何も書かなければ自動で決めます。": [
        "ATTACK x",
        "ATTACK 1",
        "ATTACK 1>2 x",
    ],
    "MAGIC の後にはマジックカードの名前と、あれば対象の番号を書いてください(例: MAGIC 火の玉 "
    "2)。": [
        "MAGIC",
        "MAGIC x y",
        "MAGIC x 2 3",
    ],
    "PASS には続きを書きません。": ["PASS x"],
}

TERMINAL_LABELS: dict[str, str] = {
    "DECK": "DECK(デッキ)",
    "ATTACK": "ATTACK(攻撃)",
    "MAGIC": "MAGIC(魔法)",
    "PASS": "PASS(パス)",
    "PAIR": "攻撃の組(例: 1>2)",
    "CARD": "カードの名前",
    "INT": "番号",
}

PARSER = CommandParser("cardbattle.lark", make_transformer, SYNTAX_EXAMPLES, TERMINAL_LABELS)
