"""The event deck as data: 15 kinds × 4 cards, each with its playable effect.

The rulebook names all 15 kinds (section 3) but gives effects for two only (2−4 イベント修正);
the other 13 are house rules (docs/rules/eitsuku.md, "Event cards"). Every card is played in the
action phase (`EVENT <name> [args]`) from the stock into the player's event field, where it
stays. `effect` says what happens; rules.py and scoring.py carry it out, keyed by `name`.
Effects that touch the scout phase follow R 2−2: 「このとき【イベントカード】の効果が優先される」.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.games.eitsuku.cards import COMPOSER, DIRECTOR, LEAD, SCREENWRITER

Arg = Literal["number", "card", "slot", "player"]
# When the effect happens: on placing, for the rest of this week, at scoring, or next week.
Timing = Literal["now", "this_week", "scoring", "next_week"]

TIE_UP = "タイアップキャンペーン"
RUSH = "巻きを入れる"
NEW_CHANCE = "新たなるチャンス"
AD_AGENCY = "広告代理店の努力"
LOCAL_SUPPORT = "地元の協力"
SURPRISE_ANNOUNCEMENT = "電撃発表"
ACTOR_AWARD = "役者大賞"
SCREENWRITER_AWARD = "脚本家大賞"
COMPOSER_AWARD = "音楽家大賞"
DIRECTOR_AWARD = "演出家大賞"
BUZZ_MONOPOLY = "話題の独占"
OWN_NETWORK = "独自の情報網"
STRIKE = "ストライキ"
PROMOTER = "プロモーターの介入"
POLICY_CHANGE = "方針転換"


@dataclass(frozen=True)
class EventCard:
    name: str
    args: tuple[Arg, ...]
    timing: Timing
    effect: str
    source: str
    # Plain numbers the effect uses, so that the table alone says how strong a card is.
    amount: int = 0
    # For the awards: the slot whose number is added.
    slot: str | None = None
    # For "this_week" / "next_week" cards: what the effect does while it is active, in a few
    # words for the board summary (the view's `active_effects`).
    active: str = ""


HOUSE = "house rule"
SCOUT_PRECEDENCE = (
    "house rule; R 2−2 スカウトフェイズ「このとき【イベントカード】の効果が優先される」"
)

EVENT_CARDS: tuple[EventCard, ...] = (
    EventCard(
        TIE_UP,
        (),
        "scoring",
        "最終得点 +10。",
        "R 2−4 イベント修正「【タイアップキャンペーン】 最終得点+10点」",
        amount=10,
    ),
    EventCard(
        RUSH,
        (),
        "this_week",
        "この週のセットフェイズで行動をもう1回できる(予算カード5枚までの制限はそのまま)。",
        HOUSE,
        amount=1,
        active="セットフェイズの行動が1回多い",
    ),
    EventCard(
        NEW_CHANCE,
        ("card",),
        "now",
        "ストックの役割カード1枚をその山に戻して切り直し、同じ山から1枚引く。",
        HOUSE,
    ),
    EventCard(
        AD_AGENCY,
        (),
        "this_week",
        "この週のスカウトフェイズで予算カードを得るコストが3少ない(中は0、大は3)。",
        SCOUT_PRECEDENCE,
        amount=3,
        active="予算カードを得るコストが3少ない",
    ),
    EventCard(
        LOCAL_SUPPORT,
        (),
        "this_week",
        "この週のセットフェイズで役割カードを配置するコストが2少ない(数字ぶんで配置できる)。",
        HOUSE,
        amount=2,
        active="役割カードを配置するコストが2少ない",
    ),
    EventCard(
        SURPRISE_ANNOUNCEMENT,
        (),
        "scoring",
        "最終得点で公開週補正を5点まで打ち消す(補正が0より良くなることはない)。",
        "house rule; R 2−4 公開週補正",
        amount=5,
    ),
    EventCard(
        ACTOR_AWARD,
        (),
        "scoring",
        "最終得点 + 主演の数字(主演が空なら0)。",
        HOUSE,
        slot=LEAD,
    ),
    EventCard(
        SCREENWRITER_AWARD,
        (),
        "scoring",
        "最終得点 + 脚本家の数字(空なら0)。",
        HOUSE,
        slot=SCREENWRITER,
    ),
    EventCard(
        COMPOSER_AWARD,
        (),
        "scoring",
        "最終得点 + 音楽家の数字(空なら0)。",
        HOUSE,
        slot=COMPOSER,
    ),
    EventCard(
        DIRECTOR_AWARD,
        (),
        "scoring",
        "最終得点 + 演出家の数字(空なら0)。",
        HOUSE,
        slot=DIRECTOR,
    ),
    EventCard(
        BUZZ_MONOPOLY,
        (),
        "scoring",
        "最初に公開があった週に公開したのが自分ひとりなら最終得点 +10。",
        HOUSE,
        amount=10,
    ),
    EventCard(
        OWN_NETWORK,
        ("card",),
        "now",
        "役割カードの山から指定したカードを探してストックに加え、山を切り直す。"
        "この週のスカウトフェイズの行動の代わりになる(スカウト済みなら使えない)。",
        SCOUT_PRECEDENCE,
    ),
    EventCard(
        STRIKE,
        ("player",),
        "next_week",
        "公開前のほかのプレイヤー1人を指定する。その人は次の週、役割カードを配置できない"
        "(イベントカードのドローはできる)。最終週には使えない。",
        HOUSE,
        active="役割カードを配置できない(ドローはできる)",
    ),
    EventCard(
        PROMOTER,
        ("number",),
        "now",
        "数字 n(1〜6)を宣言し、予算の山からちょうど n ぶんの予算カードを"
        "できるだけ少ない枚数でストックに加える(山で n を作れなければ宣言できない)。最終得点 −n。",
        "R 2−4 イベント修正「【プロモーターの介入】 最終得点−宣言した数字」; "
        "宣言の範囲と予算の受け取りは house rule",
        amount=6,
    ),
    EventCard(
        POLICY_CHANGE,
        ("slot", "card"),
        "now",
        "自分の役割場のカード1枚を、そこに置けるストックの役割カードと入れ替える"
        "(支払いなし、予算カードの枚数にも数えない)。外したカードはストックへ。",
        "house rule; I「埋まった役割場はイベントでしか変えられない」",
    ),
)

EVENTS: dict[str, EventCard] = {card.name: card for card in EVENT_CARDS}
EVENT_NAMES: tuple[str, ...] = tuple(EVENTS)
# R 2−1: 【イベント】カード: 15種 × 4枚.
EVENT_COPIES = 4
PROMOTER_MAX = EVENTS[PROMOTER].amount


def event_deck_cards() -> list[str]:
    """The 60 event cards, unshuffled."""
    return [name for name in EVENT_NAMES for _ in range(EVENT_COPIES)]
