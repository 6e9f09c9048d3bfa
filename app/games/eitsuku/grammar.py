"""えいつく's command grammar (grammar/eitsuku.lark): Transformer and friendly-error tables."""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer
from lark.visitors import merge_transformers

from app.games.base import CommandParser, SyntaxErrorDetail
from app.games.commands import PlatformTransformer
from app.games.eitsuku.cards import (
    BUDGET_CARDS_PER_WEEK,
    BY_SIZE,
    EVENT_DECK,
    ROLE_DECKS,
    ROLE_NUMBERS,
    SLOTS,
    role_card,
)
from app.games.eitsuku.commands import (
    Buy,
    Choose,
    Draw,
    End,
    PlayEvent,
    Release,
    Scout,
    SetRole,
    Shuffle,
)
from app.games.eitsuku.events import (
    EVENT_NAMES,
    EVENTS,
    NEW_CHANCE,
    OWN_NETWORK,
    POLICY_CHANGE,
    PROMOTER,
    PROMOTER_MAX,
    STRIKE,
)

_ROLE_CARD = re.compile(r"【?(?P<deck>役者|脚本家|音楽家|演出家)/?(?P<number>[0-9]+)】?")
_BUDGET_CARD = re.compile(r"【?(?:予算[・/]?)?(?P<size>[小中大])】?(?:[×xX*](?P<count>[0-9]+))?")


# The rulebook's short deck names (2−2: 1・2役者、3音楽、4演出、5脚本), as a deck or a slot.
_SHORT_ROLE_NAMES: dict[str, str] = {"脚本": "脚本家", "音楽": "音楽家", "演出": "演出家"}


def _role_name(token: Token) -> str:
    return _SHORT_ROLE_NAMES.get(str(token), str(token))


def _strip_brackets(text: str) -> str:
    return text.removeprefix("【").removesuffix("】")


def _role_card(token: Token) -> str:
    match = _ROLE_CARD.fullmatch(str(token))
    if match is None:  # the terminal and the regex above describe the same strings
        raise SyntaxErrorDetail(token, f"役割カード {token} が読めません。")
    number = int(match["number"])
    if number not in ROLE_NUMBERS:
        raise SyntaxErrorDetail(
            token,
            f"役割カードの数字は 1〜6 です({match['deck']}{number} というカードはありません)。",
            [f"{match['deck']}{n}" for n in ROLE_NUMBERS],
        )
    return role_card(match["deck"], number)


def _budget_cards(token: Token) -> tuple[str, ...]:
    match = _BUDGET_CARD.fullmatch(str(token))
    if match is None:
        raise SyntaxErrorDetail(token, f"予算カード {token} が読めません。")
    card = BY_SIZE[match["size"]]
    count = 1 if match["count"] is None else int(match["count"])
    if not 1 <= count <= BUDGET_CARDS_PER_WEEK:
        raise SyntaxErrorDetail(
            token,
            f"× の後の枚数は 1〜{BUDGET_CARDS_PER_WEEK} です"
            f"(予算カードは1週に{BUDGET_CARDS_PER_WEEK}枚までしか使えません)。",
        )
    return (card,) * count


class EitsukuTransformer(Transformer[Token, Any]):
    """Tree -> command dataclass. Platform rules come from PlatformTransformer (merged)."""

    def start(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> Any:
        return children[0]

    def deck(self, children: list[Token]) -> str:
        return _role_name(children[0])

    def slot(self, children: list[Token]) -> str:
        return _role_name(children[0])

    def role_card(self, children: list[Token]) -> str:
        return _role_card(children[0])

    def budget_card(self, children: list[Token]) -> str:
        cards = _budget_cards(children[0])
        if len(cards) != 1:
            raise SyntaxErrorDetail(
                children[0],
                "BUY で得られる予算カードは1枚だけです(例: BUY 中)。",
                ["小", "中", "大"],
            )
        return cards[0]

    def budget_list(self, children: list[Token]) -> tuple[str, ...]:
        cards: list[str] = []
        for token in children:
            cards.extend(_budget_cards(token))
        return tuple(cards)

    # -- EVENT (also 配置 <event card>)
    def event(self, children: list[Any]) -> PlayEvent:
        body = children[1]
        assert isinstance(body, PlayEvent)
        return body

    def plain_event(self, children: list[Token]) -> PlayEvent:
        return PlayEvent(_strip_brackets(str(children[0])))

    def promoter_event(self, children: list[Token]) -> PlayEvent:
        token = children[1]
        number = int(token)
        if not 1 <= number <= PROMOTER_MAX:
            raise SyntaxErrorDetail(
                token,
                f"プロモーターの介入 で宣言できる数字は 1〜{PROMOTER_MAX} です"
                f"({number} は書けません)。",
                [str(n) for n in range(1, PROMOTER_MAX + 1)],
            )
        return PlayEvent(PROMOTER, number=number)

    def new_chance_event(self, children: list[Any]) -> PlayEvent:
        return PlayEvent(NEW_CHANCE, card=children[1])

    def network_event(self, children: list[Any]) -> PlayEvent:
        return PlayEvent(OWN_NETWORK, card=children[1])

    def strike_event(self, children: list[Any]) -> PlayEvent:
        return PlayEvent(STRIKE, player=str(children[1]))

    def policy_change_event(self, children: list[Any]) -> PlayEvent:
        return PlayEvent(POLICY_CHANGE, slot=children[1], card=children[2])

    # -- the other verbs
    def scout(self, children: list[Any]) -> Scout:
        return Scout(children[1])

    def buy(self, children: list[Any]) -> Buy:
        _, card, _, flip = children
        return Buy(card, flip)

    def draw(self, _: list[Any]) -> Draw:
        return Draw()

    def set_role(self, children: list[Any]) -> SetRole:  # SET or 配置 <slot> <card>
        _, slot, card, _, pay = children
        return SetRole(slot, card, pay)

    def release(self, _: list[Any]) -> Release:
        return Release()

    def end(self, _: list[Any]) -> End:
        return End()

    def choose(self, children: list[Any]) -> Choose:
        return Choose(children[1])

    def shuffle(self, children: list[Any]) -> Shuffle:
        return Shuffle(children[1])

    def shuffle_events(self, _: list[Any]) -> Shuffle:
        return Shuffle(EVENT_DECK)


def make_transformer() -> Transformer[Token, Any]:
    merged: Transformer[Token, Any] = merge_transformers(  # type: ignore[no-untyped-call]
        EitsukuTransformer(), common=PlatformTransformer()
    )
    return merged


_PLAIN_EVENTS = [name for name in EVENT_NAMES if not EVENTS[name].args]
_DECKS_LIST = "役者・脚本家・音楽家・演出家"
_SLOTS_LIST = "主演・助演・脚本家・音楽家・演出家"

_EVENT_WHAT = (
    "EVENT の後にはストックにあるイベントカードの名前を書いてください"
    "(例: EVENT タイアップキャンペーン)。"
)
_SET_WHAT = (
    f"SET の後には役割場({_SLOTS_LIST})を書いてください(例: SET 主演 役者3)。"
    "イベントカードは EVENT か 配置 で出します(例: 配置 タイアップキャンペーン)。"
)
_HAICHI_WHAT = (
    f"配置 の後には、役割カードなら役割場({_SLOTS_LIST})とカード(例: 配置 主演 役者3)を、"
    "イベントカードならその名前(例: 配置 タイアップキャンペーン)を書いてください。"
)

# Friendly messages: label -> malformed lines failing in the same parser state (see
# CommandParser). The tests parse every example and check it yields its own label.
_EXAMPLES: dict[str, list[str]] = {
    _EVENT_WHAT: ["EVENT", "EVENT 未知のカード", "EVENT 役者3"],
    "このイベントカードには続きを書きません(例: EVENT タイアップキャンペーン)。": [
        f"EVENT {name} x" for name in _PLAIN_EVENTS
    ],
    "プロモーターの介入 には宣言する数字(1〜6)を1つだけ書いてください"
    "(例: EVENT プロモーターの介入 3)。": [
        "EVENT プロモーターの介入",
        "EVENT プロモーターの介入 x",
        "EVENT プロモーターの介入 3 x",
    ],
    "新たなるチャンス には山に戻すストックの役割カードを1枚だけ書いてください"
    "(例: EVENT 新たなるチャンス 役者3)。": [
        "EVENT 新たなるチャンス",
        "EVENT 新たなるチャンス x",
        "EVENT 新たなるチャンス 役者3 x",
        "EVENT 新たなるチャンス 役者3 PAY",
    ],
    "独自の情報網 には山から探す役割カードを1枚だけ書いてください"
    "(例: EVENT 独自の情報網 脚本家5)。": [
        "EVENT 独自の情報網",
        "EVENT 独自の情報網 x",
        "EVENT 独自の情報網 役者3 x",
        "EVENT 独自の情報網 役者3 PAY",
    ],
    "ストライキ には相手のプレイヤーの名前を1人だけ書いてください(例: EVENT ストライキ 太郎)。": [
        "EVENT ストライキ",
        "EVENT ストライキ 太郎 次郎",
    ],
    f"方針転換 には役割場({_SLOTS_LIST})を書いてください(例: EVENT 方針転換 主演 役者5)。": [
        "EVENT 方針転換",
        "EVENT 方針転換 x",
        "EVENT 方針転換 役者",
    ],
    "方針転換 <役割場> の後には入れ替えるストックの役割カードを1枚だけ書いてください"
    "(例: EVENT 方針転換 主演 役者5)。": [
        example
        for slot in SLOTS
        for example in (f"EVENT 方針転換 {slot}", f"EVENT 方針転換 {slot} x")
    ]
    + ["EVENT 方針転換 主演 役者5 x", "EVENT 方針転換 主演 役者5 PAY"],
    f"SCOUT の後には役割カードの山の名前({_DECKS_LIST})を1つだけ書いてください(例: SCOUT 役者)。": [
        "SCOUT",
        "SCOUT x",
        "SCOUT 主演",
    ]
    + [example for deck in ROLE_DECKS for example in (f"SCOUT {deck} x", f"SCOUT {deck}3")],
    f"CHOOSE の後には山の名前({_DECKS_LIST})を1つだけ書いてください(例: CHOOSE 役者)。": [
        "CHOOSE",
        "CHOOSE x",
    ]
    + [f"CHOOSE {deck} x" for deck in ROLE_DECKS],
    f"SHUFFLE の後には切り直す山の名前({_DECKS_LIST}・{EVENT_DECK})を1つだけ書いてください"
    "(例: SHUFFLE 役者)。": ["SHUFFLE", "SHUFFLE x", "SHUFFLE 主演"]
    + [f"SHUFFLE {deck} x" for deck in (*ROLE_DECKS, EVENT_DECK)],
    "BUY の後には得る予算カードの大きさ(小・中・大)を書いてください(例: BUY 中)。": [
        "BUY",
        "BUY x",
        "BUY 役者3",
    ],
    "BUY <小・中・大> の後に書けるのは WITH <裏返す予算カード> だけです"
    "(例: BUY 中 WITH 小 小 小)。": [
        "BUY 中 x",
        "BUY 中 小",
    ],
    "WITH の後には裏返す予算カードを書いてください(例: BUY 中 WITH 小 小 小)。": [
        "BUY 中 WITH",
        "BUY 中 WITH x",
    ],
    "WITH の後には予算カード(予算・小、予算・中、予算・大)だけを並べてください"
    "(例: BUY 大 WITH 中, 中, 小, 小)。": ["BUY 中 WITH 小 x", "BUY 中 WITH 小,"],
    _SET_WHAT: [
        "SET",
        "SET x",
        "SET 役者3",
        "SET 役者",
    ],
    "SET <役割場> の後には配置する役割カードを書いてください(例: SET 主演 役者3)。": [
        example for slot in SLOTS for example in (f"SET {slot}", f"SET {slot} x")
    ],
    "SET <役割場> <役割カード> の後に書けるのは PAY <支払う予算カード> だけです"
    "(例: SET 主演 役者3 PAY 中 中 小)。": ["SET 主演 役者3 x", "SET 主演 役者3 役者4"],
    "PAY の後には支払う予算カードを書いてください(例: SET 主演 役者3 PAY 中 中 小)。": [
        "SET 主演 役者3 PAY",
        "SET 主演 役者3 PAY x",
    ],
    "PAY の後には予算カード(予算・小、予算・中、予算・大)だけを並べてください"
    "(例: SET 主演 役者3 PAY 中, 中, 小)。": ["SET 主演 役者3 PAY 小 x", "SET 主演 役者3 PAY 小,"],
    "DRAW・END・RELEASE には続きを書きません(例: END)。": ["DRAW x", "END x", "RELEASE x"],
}


def _as_haichi(line: str) -> str | None:
    """A malformed SET or EVENT line written with 配置, their shared alias (None for others)."""
    verb, _, rest = line.partition(" ")
    if verb not in ("SET", "EVENT"):
        return None
    return f"配置 {rest}" if rest else "配置"


# 配置 reaches the same errors as SET and EVENT by another parser stack, so each example is
# also written with 配置. Right after 配置 a slot and an event name may both stand: one label.
SYNTAX_EXAMPLES: dict[str, list[str]] = {
    label: lines
    + ([] if label in (_EVENT_WHAT, _SET_WHAT) else [h for h in map(_as_haichi, lines) if h])
    for label, lines in _EXAMPLES.items()
}
SYNTAX_EXAMPLES[_HAICHI_WHAT] = list(
    dict.fromkeys(
        h for label in (_EVENT_WHAT, _SET_WHAT) for h in map(_as_haichi, _EXAMPLES[label]) if h
    )
)

# Display names of the game's terminals in "expected one of" messages.
TERMINAL_LABELS: dict[str, str] = {
    "EVENT": "EVENT(イベント)",
    "SCOUT": "SCOUT(スカウト)",
    "BUY": "BUY(購入)",
    "WITH": "WITH(裏返し)",
    "DRAW": "DRAW(ドロー)",
    "SET": "SET(配置)",
    "HAICHI": "配置(SET・EVENT)",
    "PAY": "PAY(支払)",
    "RELEASE": "RELEASE(公開)",
    "END": "END(終了)",
    "CHOOSE": "CHOOSE(選択)",
    "SHUFFLE": "SHUFFLE(切り直し)",
    "SCREENWRITER": "脚本家",
    "COMPOSER": "音楽家",
    "DIRECTOR": "演出家",
    "ROLE_CARD": "役割カード(例: 役者3)",
    "BUDGET_CARD": "予算カード(例: 予算・小)",
    "PLAIN_EVENT": "イベントカード名",
    "PROMOTER": "プロモーターの介入",
    "NEW_CHANCE": "新たなるチャンス",
    "NETWORK": "独自の情報網",
    "STRIKE": "ストライキ",
    "POLICY_CHANGE": "方針転換",
}

PARSER = CommandParser("eitsuku.lark", make_transformer, SYNTAX_EXAMPLES, TERMINAL_LABELS)
