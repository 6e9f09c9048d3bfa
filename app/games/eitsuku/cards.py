"""えいつく's cards, written the way the rulebook writes them (section 3, カードリスト).

Card ids in the state and in canonical lines: ``予算・小`` / ``予算・中`` / ``予算・大``, role cards
as deck + number (``役者3``, ``脚本家6``), event cards by name (events.py).
"""

from __future__ import annotations

SMALL = "予算・小"
MEDIUM = "予算・中"
LARGE = "予算・大"
BUDGET_CARDS: tuple[str, ...] = (SMALL, MEDIUM, LARGE)
# R 2−3: 【予算・小】: 1 : 0コスト, 【予算・中】: 2 : 3コスト, 【予算・大】: 3 : 6コスト
BUDGET_VALUE: dict[str, int] = {SMALL: 1, MEDIUM: 2, LARGE: 3}
BUY_COST: dict[str, int] = {SMALL: 0, MEDIUM: 3, LARGE: 6}
# How BUY names them in canonical lines (`BUY 中`).
SIZE: dict[str, str] = {SMALL: "小", MEDIUM: "中", LARGE: "大"}
BY_SIZE: dict[str, str] = {size: card for card, size in SIZE.items()}
# R 2−1: each budget pile holds PL数×6 cards.
PILE_PER_PLAYER = 6

ACTOR = "役者"
SCREENWRITER = "脚本家"
COMPOSER = "音楽家"
DIRECTOR = "演出家"
ROLE_DECKS: tuple[str, ...] = (ACTOR, SCREENWRITER, COMPOSER, DIRECTOR)
EVENT_DECK = "イベント"

LEAD = "主演"
SUPPORT = "助演"
# 役割場: 主演, 助演, 脚本家, 音楽家, 演出家 (the scoring section's 舞台 is 演出家).
SLOTS: tuple[str, ...] = (LEAD, SUPPORT, SCREENWRITER, COMPOSER, DIRECTOR)
# R 2−2 エンドフェイズ: 公開 needs 主演, 脚本家, 音楽家, 演出家.
REQUIRED_SLOTS: tuple[str, ...] = (LEAD, SCREENWRITER, COMPOSER, DIRECTOR)
# I: 役者 cards go to 主演 or 助演; every other role card only to its own slot.
SLOT_DECK: dict[str, str] = {
    LEAD: ACTOR,
    SUPPORT: ACTOR,
    SCREENWRITER: SCREENWRITER,
    COMPOSER: COMPOSER,
    DIRECTOR: DIRECTOR,
}

# R 2−1: 『1〜3』×各3枚, 『4〜6』×各2枚 in every role deck.
ROLE_COPIES: dict[int, int] = {1: 3, 2: 3, 3: 3, 4: 2, 5: 2, 6: 2}
ROLE_NUMBERS: tuple[int, ...] = tuple(ROLE_COPIES)
# R 2−2: ダイスを振って決定する。1・2役者、3音楽、4演出、5脚本、6任意
DIE_DECK: dict[int, str] = {1: ACTOR, 2: ACTOR, 3: COMPOSER, 4: DIRECTOR, 5: SCREENWRITER}
CHOICE_FACE = 6

# R 2−2 ゲームの開始: 予算・小 5, 予算・中 2, 役割カード 2, イベントカード 2.
START_SMALL = 5
START_MEDIUM = 2
START_ROLES = 2
START_EVENTS = 2

# R 2−2 セットフェイズ: 『数字+2』のコスト.
SET_COST_EXTRA = 2
# R 2−2 セットフェイズ: 『裏返し』と『捨て札場』を合わせて5枚まで.
BUDGET_CARDS_PER_WEEK = 5
# R 2−3 えいつくの終了: 12ターンが経過したとき.
WEEKS = 12
# R 2−4 公開週補正: 1週ごとに−5点.
RELEASE_PENALTY_PER_WEEK = 5


def role_card(deck: str, number: int) -> str:
    return f"{deck}{number}"


ALL_ROLE_CARDS: tuple[str, ...] = tuple(role_card(d, n) for d in ROLE_DECKS for n in ROLE_NUMBERS)
_DECK_OF: dict[str, str] = {role_card(d, n): d for d in ROLE_DECKS for n in ROLE_NUMBERS}
_NUMBER_OF: dict[str, int] = {role_card(d, n): n for d in ROLE_DECKS for n in ROLE_NUMBERS}


def role_deck_of(card: str) -> str | None:
    """The deck of a role card id (``役者3`` -> ``役者``), None for any other card."""
    return _DECK_OF.get(card)


def role_number(card: str) -> int:
    try:
        return _NUMBER_OF[card]
    except KeyError:
        raise ValueError(f"not a role card: {card}") from None


def is_role_card(card: str) -> bool:
    return role_deck_of(card) is not None


def is_budget_card(card: str) -> bool:
    return card in BUDGET_VALUE


def role_deck_cards(deck: str) -> list[str]:
    """The 15 cards of one role deck, unshuffled."""
    return [role_card(deck, n) for n, copies in ROLE_COPIES.items() for _ in range(copies)]


def fits(card: str, slot: str) -> bool:
    """May this role card be set into this slot (I: 役者 -> 主演/助演, others -> own slot)?"""
    return role_deck_of(card) == SLOT_DECK[slot]


def budget_value(cards: dict[str, int]) -> int:
    return sum(BUDGET_VALUE[card] * count for card, count in cards.items())


def format_cards(cards: dict[str, int]) -> str:
    """``予算・小×3、予算・中`` — for messages."""
    parts = [card if count == 1 else f"{card}×{count}" for card, count in cards.items() if count]
    return "、".join(parts) if parts else "なし"
