"""えいつく's rules as pure functions over a JSON state.

R = rulebook (seeds/000_…txt, section numbers as printed there), I = the project's fixed
interpretation, D/house rule = ours; docs/rules/eitsuku.md lists every one with its source line.

Every player runs the week's phases on their own board at the same time (I); the week ends
when every player who has not released has posted END or RELEASE. Checking a command
(`check`) never mutates; running it (`execute`) mutates the copy `apply` made.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from app.games.base import Actor, Rng, RuleError, State, event
from app.games.eitsuku.cards import (
    ALL_ROLE_CARDS,
    BUDGET_CARDS,
    BUDGET_CARDS_PER_WEEK,
    BUDGET_VALUE,
    BUY_COST,
    CHOICE_FACE,
    DIE_DECK,
    EVENT_DECK,
    LARGE,
    MEDIUM,
    PILE_PER_PLAYER,
    REQUIRED_SLOTS,
    ROLE_DECKS,
    SET_COST_EXTRA,
    SLOT_DECK,
    SLOTS,
    SMALL,
    START_EVENTS,
    START_MEDIUM,
    START_ROLES,
    START_SMALL,
    WEEKS,
    fits,
    format_cards,
    is_role_card,
    role_deck_cards,
    role_deck_of,
    role_number,
)
from app.games.eitsuku.commands import (
    Buy,
    Choose,
    Draw,
    End,
    GameCommand,
    PlayEvent,
    Release,
    Scout,
    SetRole,
    Shuffle,
)
from app.games.eitsuku.events import (
    AD_AGENCY,
    EVENT_NAMES,
    EVENTS,
    LOCAL_SUPPORT,
    NEW_CHANCE,
    OWN_NETWORK,
    POLICY_CHANGE,
    PROMOTER,
    PROMOTER_MAX,
    RUSH,
    STRIKE,
    event_deck_cards,
)
from app.games.kit.dice import roll_one

Events = list[dict[str, Any]]

# The phases a player goes through each week; the start phase runs by itself (R 2−2).
PHASES: tuple[str, ...] = ("action", "scout", "set", "end")
PHASE_RANK: dict[str, int] = {phase: rank for rank, phase in enumerate(PHASES)}
PHASE_JA: dict[str, str] = {
    "action": "アクションフェイズ",
    "scout": "スカウトフェイズ",
    "set": "セットフェイズ",
    "end": "エンドフェイズ",
}
PHASE_ORDER_TEXT = "スタート→アクション→スカウト→セット→エンド"

MIN_PLAYERS = 2
MAX_PLAYERS = 6

# Canonical order of card keys in stock/discard dicts: budget, role cards, events.
CARD_ORDER: dict[str, int] = {
    card: index for index, card in enumerate((*BUDGET_CARDS, *ALL_ROLE_CARDS, *EVENT_NAMES))
}


# --------------------------------------------------------------------------- small helpers


def sorted_cards(counter: Mapping[str, int]) -> dict[str, int]:
    """Cards in canonical order: budget (小, 中, 大), role cards by deck and number, events."""
    return {card: counter[card] for card in sorted(counter, key=CARD_ORDER.__getitem__)}


def _add(counter: dict[str, int], card: str, count: int = 1) -> None:
    if card in counter:
        counter[card] += count
        return
    # Keep keys in canonical order, so that equal states serialise alike.
    counter[card] = count
    ordered = sorted_cards(counter)
    counter.clear()
    counter.update(ordered)


def _remove(counter: dict[str, int], card: str, count: int = 1) -> None:
    left = counter.get(card, 0) - count
    if left < 0:
        raise AssertionError(f"removing {count} × {card} from {counter}")
    if left:
        counter[card] = left
    else:
        del counter[card]


def copy_state(state: State) -> State:
    """A deep copy of the state (every mutable part copied; faster than copy.deepcopy)."""
    copied = dict(state)
    copied["players"] = [_copy_player(player) for player in state["players"]]
    copied["piles"] = dict(state["piles"])
    copied["decks"] = {deck: list(cards) for deck, cards in state["decks"].items()}
    copied["discard"] = dict(state["discard"])
    return copied


def _copy_player(player: Mapping[str, Any]) -> dict[str, Any]:
    copied = dict(player)
    for key in ("stock", "flipped", "slots"):
        copied[key] = dict(player[key])
    for key in ("dice", "moves"):
        copied[key] = list(player[key])
    copied["events"] = [dict(entry) for entry in player["events"]]
    return copied


def _names(state: State, seats: Iterable[int]) -> str:
    return "、".join(state["players"][seat]["name"] for seat in seats) or "なし"


def _role_cards_in(stock: Mapping[str, int]) -> list[str]:
    return [card for card in stock if is_role_card(card)]


def _event_cards_in(stock: Mapping[str, int]) -> list[str]:
    return [card for card in stock if card in EVENTS]


def _face_up_budget(player: Mapping[str, Any]) -> dict[str, int]:
    return {card: player["stock"].get(card, 0) for card in BUDGET_CARDS}


def _budget_left(player: Mapping[str, Any]) -> int:
    return BUDGET_CARDS_PER_WEEK - int(player["budget_used"])


def is_active(player: Mapping[str, Any]) -> bool:
    """Still playing weeks: has not released."""
    return player["released_week"] is None


def can_release(player: Mapping[str, Any]) -> bool:
    return all(player["slots"][slot] is not None for slot in REQUIRED_SLOTS)


def first_release_week(state: State) -> int | None:
    """The week of the first release so far (R 2−4 公開週補正 counts from it), None before."""
    released = [p["released_week"] for p in state["players"] if p["released_week"] is not None]
    return min(released) if released else None


# --------------------------------------------------------------------------- setup


def _new_player(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "stock": {},
        "flipped": {},
        "slots": {slot: None for slot in SLOTS},
        "events": [],
        "released_week": None,
        "status": "playing",  # "playing" | "released" | "unfinished"
        "done": False,
        "phase": "action",
        "pending_choices": 0,
        "dice": [],
        "budget_used": 0,
        "scouts_left": 1,
        "sets_left": 1,
        "buy_discount": 0,
        "set_discount": 0,
        "set_blocked": False,
        "strikes_next": 0,
        "moves": [],
    }


def _take_from_pile(state: State, player: dict[str, Any], card: str, count: int = 1) -> int:
    taken = min(count, int(state["piles"][card]))
    if taken:
        state["piles"][card] -= taken
        _add(player["stock"], card, taken)
    return taken


def _draw(state: State, deck: str) -> str:
    # The end of the list is the top of the deck; its order is never shown.
    card: str = state["decks"][deck].pop()
    return card


# The rules' editions (EitsukuOptions.edition, docs/rules/eitsuku.md "Editions"): 1 took the
# starting budget cards out of the piles; 2 (games made since) does not. A game keeps the
# edition it was made with, so games recorded before replay by their own rules.
Edition = Literal[1, 2]
EDITION: Edition = 2


class EitsukuOptions(BaseModel):
    """えいつく's options: only the rules' edition, which the app sets (never a player)."""

    model_config = ConfigDict(extra="forbid")

    edition: Edition = EDITION


def setup(players: list[str], rng: Rng, edition: int = EDITION) -> tuple[State, Events]:
    """R 2−1 / 2−2 ゲームの開始, then week 1's start phase."""
    count = len(players)
    decks: dict[str, list[str]] = {deck: role_deck_cards(deck) for deck in ROLE_DECKS}
    decks[EVENT_DECK] = event_deck_cards()
    for deck in decks.values():
        rng.shuffle(deck)
    state: State = {
        "week": 1,
        "weeks": WEEKS,
        "over": False,
        "players": [_new_player(name) for name in players],
        "piles": {card: count * PILE_PER_PLAYER for card in BUDGET_CARDS},
        "decks": decks,
        "discard": {},
        "first_release_week": None,
        "edition": edition,
    }
    events: Events = []
    for seat, player in enumerate(state["players"]):
        if edition >= 2:
            # I: the starting budget cards are not taken from the piles (docs/rules/eitsuku.md:
            # the PL数×6 piles are the start and scout phases' supply for the 12 weeks).
            _add(player["stock"], SMALL, START_SMALL)
            _add(player["stock"], MEDIUM, START_MEDIUM)
        else:  # edition 1, as games made before it were dealt
            _take_from_pile(state, player, SMALL, START_SMALL)
            _take_from_pile(state, player, MEDIUM, START_MEDIUM)
        for _ in range(START_ROLES):
            face = roll_one(rng)
            player["dice"].append(face)
            if face == CHOICE_FACE:
                player["pending_choices"] += 1
            else:
                _add(player["stock"], _draw(state, DIE_DECK[face]))
        for _ in range(START_EVENTS):
            _add(player["stock"], _draw(state, EVENT_DECK))
        dice = "・".join(map(str, player["dice"]))
        text = f"{player['name']}: ダイス {dice}、ストック {format_cards(player['stock'])}"
        if player["pending_choices"]:
            text += f"(6 が出たので CHOOSE <山> で {player['pending_choices']} 枚選んでください)"
        events.append(event("setup", text, seat=seat))
    _begin_week(state, events)
    return state, events


# --------------------------------------------------------------------------- the week


def _begin_week(state: State, events: Events, ended: dict[str, Any] | None = None) -> None:
    """Reset every active player's week and run their start phase (R 2−2 スタートフェイズ).
    ``ended``: the event of the week that just ended, whose text then says both (「第1週が
    終わり、第2週が始まりました。」, one line in the thread)."""
    begun = event("week", f"第{state['week']}週が始まりました。", week=state["week"])
    if ended is not None:
        ended["text"] = f"第{ended['week']}週が終わり、{begun['text']}"
        begun["text"] = ""
    events.append(begun)
    gains: list[dict[str, Any]] = []
    for seat, player in enumerate(state["players"]):
        if not is_active(player):
            continue
        player.update(
            done=False,
            phase="action",
            budget_used=0,
            scouts_left=1,
            sets_left=1,
            buy_discount=0,
            set_discount=0,
            set_blocked=player["strikes_next"] > 0,
            strikes_next=0,
            moves=[],
        )
        # R: add one 予算・小; if that pile is empty, one 予算・中. I: if both are empty, nothing.
        for card in (SMALL, MEDIUM):
            if _take_from_pile(state, player, card):
                gain = event("start", f"{player['name']}: {card} を得ました。", seat=seat)
                gain["gained"] = card
                break
        else:
            text = f"{player['name']}: 予算の山が尽きていて何も得られません。"
            gain = event("start", text, seat=seat)
        events.append(gain)
        gains.append(gain)
        if player["set_blocked"]:
            text = f"{player['name']}: ストライキのため今週は役割カードを配置できません。"
            events.append(event("strike", text, seat=seat))
    _join_gains(state, gains)


def _join_gains(state: State, gains: list[dict[str, Any]]) -> None:
    """The start phase's gains said in one line for each outcome, not one line a player: the
    first event of an outcome names every player it befell (「制作中の全員: 予算・小 を得まし
    た。」), the others' texts are left empty (the thread shows no line for them)."""
    outcomes: dict[str | None, list[dict[str, Any]]] = {}
    for gain in gains:
        outcomes.setdefault(gain.get("gained"), []).append(gain)
    for card, same in outcomes.items():
        names = [str(state["players"][gain["seat"]]["name"]) for gain in same]
        who = "制作中の全員" if len(same) == len(gains) > 1 else "、".join(names)
        said = f"{card} を得ました。" if card else "予算の山が尽きていて何も得られません。"
        same[0]["text"] = f"{who}: {said}"
        for gain in same[1:]:
            gain["text"] = ""
        for gain in same:
            gain.pop("gained", None)


def _end_week(state: State, events: Events) -> None:
    """Everyone has ended: flipped cards turn face up (I), then next week or the end."""
    week = state["week"]
    ended = event("week_end", f"第{week}週が終わりました。", week=week)
    events.append(ended)
    for player in state["players"]:
        for card, count in player["flipped"].items():
            _add(player["stock"], card, count)
        player["flipped"] = {}
    if week >= state["weeks"] or not any(is_active(p) for p in state["players"]):
        _finish(state, events)
    else:
        state["week"] = week + 1
        _begin_week(state, events, ended)


def _finish(state: State, events: Events) -> None:
    """R 2−3: the game ends; I: at the end of week 12 complete films are released that week."""
    week = state["week"]
    unfinished: list[dict[str, Any]] = []
    for seat, player in enumerate(state["players"]):
        player["done"] = True
        if not is_active(player):
            continue
        if can_release(player):
            player["released_week"] = week
            player["status"] = "released"
            text = f"{player['name']}: 第{week}週の終わりに公開しました(最終週)。"
            events.append(event("release", text, seat=seat))
        else:
            player["status"] = "unfinished"
            text = f"{player['name']}: 映画が完成しませんでした(未完成)。"
            unfinished.append(event("unfinished", text, seat=seat))
            events.append(unfinished[-1])
    if len(unfinished) > 1:
        # One line for all whose film is unfinished (「次郎、花子: 映画が…」); the others' empty.
        names = "、".join(str(state["players"][e["seat"]]["name"]) for e in unfinished)
        unfinished[0]["text"] = f"{names}: 映画が完成しませんでした(未完成)。"
        for e in unfinished[1:]:
            e["text"] = ""
    state["first_release_week"] = first_release_week(state)
    state["over"] = True
    events.append(event("game_over", "えいつく終了。成績発表です。"))


# --------------------------------------------------------------------------- checks


def _verb(command: GameCommand) -> str:
    return command.canonical().split(" ", 1)[0]


def _phase_of(command: GameCommand) -> str | None:
    if isinstance(command, PlayEvent):
        return "action"
    if isinstance(command, Scout | Buy):
        return "scout"
    if isinstance(command, Draw | SetRole):
        return "set"
    if isinstance(command, End | Release):
        return "end"
    return None


def _check_turn(state: State, seat: int, command: GameCommand) -> dict[str, Any]:
    """Whose turn and which phase: the checks every command shares."""
    if state["over"]:
        raise RuleError("ゲームはすでに終了しています。")
    player: dict[str, Any] = state["players"][seat]
    name = player["name"]
    if not is_active(player):
        raise RuleError(
            f"{name}さんは第{player['released_week']}週に公開を宣言したので、もう行動できません"
            "(ルールブック「宣言を行った場合、次の週より行動することはできない」)。"
        )
    if player["done"]:
        waiting = waiting_for(state)
        raise RuleError(
            f"{name}さんは第{state['week']}週をすでに終えたので、"
            f"ほかのプレイヤー({_names(state, waiting)})が週を終えるのを待っています。"
        )
    if player["pending_choices"] and not isinstance(command, Choose):
        raise RuleError(
            f"{name}さんはゲーム開始時のダイスで 6 が出た役割カードの山をまだ選んでいないので、"
            f"先に CHOOSE <山>({'・'.join(ROLE_DECKS)})を書いてください。"
        )
    phase = _phase_of(command)
    if phase is not None and PHASE_RANK[phase] < PHASE_RANK[player["phase"]]:
        raise RuleError(
            f"{_verb(command)} は{PHASE_JA[phase]}の行動ですが、{name}さんは今週すでに"
            f"{PHASE_JA[player['phase']]}に進んでいます"
            f"(フェイズは {PHASE_ORDER_TEXT} の順)。"
        )
    return player


def _check_payment(
    what: str, player: Mapping[str, Any], cost: int, cards: tuple[str, ...] | None, *, flip: bool
) -> dict[str, int]:
    """The budget cards to flip (BUY) or discard (SET): given ones checked, or the bot's choice."""
    available = _face_up_budget(player)
    limit = _budget_left(player)
    # R 2−2 セットフェイズ「『裏返し』にしたものと『捨て札場』を合わせて5枚までとし、
    # 『裏返し』にされた【予算カード】はコストとして『捨て札場』に移動させることはできない」
    if cards is None:
        chosen = auto_flip(available, cost, limit) if flip else auto_pay(available, cost, limit)
        if chosen is None:
            raise RuleError(
                f"{what}のコスト {cost} を払えません(表向きの予算カード: "
                f"{format_cards(available)}、1週に{BUDGET_CARDS_PER_WEEK}枚までで"
                f"今週はあと {limit} 枚)。"
            )
        return chosen
    given = Counter(cards)
    for card, count in given.items():
        if count > available[card]:
            raise RuleError(
                f"ストックに表向きの{card}は {available[card]} 枚しかありません"
                f"(表向きの予算カード: {format_cards(available)}、裏返したカードは使えません)。"
            )
    if len(cards) > limit:
        raise RuleError(
            f"予算カード {len(cards)} 枚は使えません(1週に{BUDGET_CARDS_PER_WEEK}枚まで、"
            f"今週はすでに {player['budget_used']} 枚使ったので、あと {limit} 枚)。"
        )
    value = sum(BUDGET_VALUE[card] for card in cards)
    if value < cost:
        raise RuleError(
            f"{what}のコストは {cost} ですが、{' '.join(cards)} は {value} にしかなりません。"
        )
    if cards and value - min(BUDGET_VALUE[card] for card in cards) >= cost:
        raise RuleError(
            f"{what}のコスト {cost} に {' '.join(cards)}(計 {value})では余分なカードがあります"
            + (
                "(コスト 0 なら何も書きません)。"
                if cost == 0
                else "(どの1枚を除いても足りなくなるように選びます)。"
            )
        )
    return {card: given[card] for card in BUDGET_CARDS if given[card]}


def _combinations(available: Mapping[str, int], limit: int) -> Iterator[tuple[int, int, int]]:
    """(small, medium, large) counts that the stock has and the week's limit allows."""
    for large in range(min(available[LARGE], limit) + 1):
        for medium in range(min(available[MEDIUM], limit - large) + 1):
            for small in range(min(available[SMALL], limit - large - medium) + 1):
                yield small, medium, large


def _as_cards(small: int, medium: int, large: int) -> dict[str, int]:
    counts = {SMALL: small, MEDIUM: medium, LARGE: large}
    return {card: count for card, count in counts.items() if count}


def auto_flip(available: Mapping[str, int], cost: int, limit: int) -> dict[str, int] | None:
    """BUY without WITH: waste the least value, then prefer small cards (fewest 大, then 中)."""
    best: tuple[int, int, int] | None = None
    best_key: tuple[int, int, int] | None = None
    for small, medium, large in _combinations(available, limit):
        value = small + 2 * medium + 3 * large
        if value < cost:
            continue
        key = (value - cost, large, medium)
        if best_key is None or key < best_key:
            best, best_key = (small, medium, large), key
    return None if best is None else _as_cards(*best)


def auto_pay(available: Mapping[str, int], cost: int, limit: int) -> dict[str, int] | None:
    """SET without PAY: overpay least, then fewest cards, then keep the large ones."""
    best: tuple[int, int, int] | None = None
    best_key: tuple[int, int, int, int] | None = None
    for small, medium, large in _combinations(available, limit):
        value = small + 2 * medium + 3 * large
        if value < cost:
            continue
        key = (value - cost, small + medium + large, large, medium)
        if best_key is None or key < best_key:
            best, best_key = (small, medium, large), key
    return None if best is None else _as_cards(*best)


def promoter_funds(piles: Mapping[str, int], number: int) -> dict[str, int] | None:
    """House rule: プロモーターの介入 n brings budget cards worth exactly n from the piles,
    in as few cards as possible (larger cards first); None if the piles cannot make n."""
    best: tuple[int, int, int] | None = None
    best_key: tuple[int, int, int] | None = None
    for small, medium, large in _combinations(piles, number):
        if small + 2 * medium + 3 * large != number:
            continue
        key = (small + medium + large, -large, -medium)
        if best_key is None or key < best_key:
            best, best_key = (small, medium, large), key
    return None if best is None else _as_cards(*best)


def buy_cost(player: Mapping[str, Any], card: str) -> int:
    return max(0, BUY_COST[card] - int(player["buy_discount"]))


def set_cost(player: Mapping[str, Any], card: str) -> int:
    return max(0, role_number(card) + SET_COST_EXTRA - int(player["set_discount"]))


def _check_scout_action(player: Mapping[str, Any]) -> None:
    if player["scouts_left"] <= 0:
        raise RuleError(
            f"{player['name']}さんは今週のスカウトフェイズの行動をもう行いました"
            "(ルールブック「次のうちいずれか1つの行動」)。"
        )


def _check_set_action(player: Mapping[str, Any]) -> None:
    if player["sets_left"] <= 0:
        raise RuleError(
            f"{player['name']}さんは今週のセットフェイズの行動をもう行いました"
            "(セットフェイズの行動は役割カードの配置かイベントカードのドローのどちらか1つ。"
            "ルールブックは「次の行動を行うことができる」とだけ書き、回数を決めていません。"
            "例の「コストが支払えないため、イベントカードを1枚引きます」から1つと解釈しています。"
            "巻きを入れる で1回増やせます)。"
        )


def _check_role_in_stock(player: Mapping[str, Any], card: str) -> None:
    if not is_role_card(card) or player["stock"].get(card, 0) <= 0:
        held = _role_cards_in(player["stock"])
        raise RuleError(
            f"{player['name']}さんのストックに {card} はありません"
            f"(ストックの役割カード: {'、'.join(held) or 'なし'})。"
        )


def _check_fits(card: str, slot: str) -> None:
    if not fits(card, slot):
        deck = role_deck_of(card)
        where = "主演か助演" if deck == SLOT_DECK["主演"] else f"{deck}"
        raise RuleError(
            f"{card} は{slot}には置けません。{deck}のカードは{where}の役割場にだけ置けます"
            "(役者は主演・助演、ほかの役割カードは同じ名前の役割場)。"
        )


def _check_event(state: State, seat: int, player: Mapping[str, Any], command: PlayEvent) -> None:
    name = command.name
    card = EVENTS.get(name)
    if card is None:
        raise RuleError(
            f"{name} というイベントカードはありません(イベントカード: {'、'.join(EVENT_NAMES)})。"
        )
    if player["stock"].get(name, 0) <= 0:
        held = _event_cards_in(player["stock"])
        raise RuleError(
            f"{player['name']}さんのストックに {name} はありません"
            f"(ストックのイベントカード: {'、'.join(held) or 'なし'})。"
        )
    given = {
        arg
        for arg, value in (
            ("number", command.number),
            ("card", command.card),
            ("slot", command.slot),
            ("player", command.player),
        )
        if value is not None
    }
    if given != set(card.args):
        example = {
            PROMOTER: "EVENT プロモーターの介入 3",
            NEW_CHANCE: "EVENT 新たなるチャンス 役者3",
            OWN_NETWORK: "EVENT 独自の情報網 役者5",
            STRIKE: "EVENT ストライキ <名前>",
            POLICY_CHANGE: "EVENT 方針転換 主演 役者5",
        }.get(name, f"EVENT {name}")
        raise RuleError(f"{name} の書き方が違います(例: {example})。")
    if name == PROMOTER:
        assert command.number is not None
        if not 1 <= command.number <= PROMOTER_MAX:
            raise RuleError(
                f"プロモーターの介入 で {command.number} は宣言できません"
                f"(宣言できる数字は 1〜{PROMOTER_MAX})。"
            )
        if promoter_funds(state["piles"], command.number) is None:
            raise RuleError(
                f"予算の山(予算・小 {state['piles'][SMALL]}、予算・中 {state['piles'][MEDIUM]}、"
                f"予算・大 {state['piles'][LARGE]})からは ちょうど {command.number} の予算を"
                "用意できません。"
            )
    elif name == NEW_CHANCE:
        assert command.card is not None
        _check_role_in_stock(player, command.card)
    elif name == OWN_NETWORK:
        assert command.card is not None
        _check_scout_action(player)
        deck = role_deck_of(command.card)
        if deck is None or command.card not in state["decks"][deck]:
            raise RuleError(
                f"{command.card} は山に残っていません"
                "(独自の情報網 は山に残っているカードだけを探せます)。"
            )
    elif name == STRIKE:
        _check_strike_target(state, seat, command.player)
    elif name == POLICY_CHANGE:
        assert command.slot is not None and command.card is not None
        if command.slot not in SLOTS:
            raise RuleError(
                f"{command.slot} という役割場はありません(役割場: {'・'.join(SLOTS)})。"
            )
        if player["slots"][command.slot] is None:
            raise RuleError(
                f"{player['name']}さんの{command.slot}は空なので、方針転換 ではなく SET で"
                "配置します(方針転換 は埋まっている役割場のカードを入れ替えます)。"
            )
        _check_role_in_stock(player, command.card)
        _check_fits(command.card, command.slot)


def _decks_left(state: State) -> str:
    """The role decks with cards left, for a refusal: a deck's size is public, its cards not."""
    return "・".join(deck for deck in ROLE_DECKS if state["decks"][deck]) or "なし"


def _check_strike_target(state: State, seat: int, target: str | None) -> int:
    if state["week"] >= state["weeks"]:
        raise RuleError("最終週には次の週がないので ストライキ は使えません。")
    names = [p["name"] for p in state["players"]]
    if target not in names:
        raise RuleError(f"{target} というプレイヤーはいません(プレイヤー: {'、'.join(names)})。")
    target_seat = names.index(target)
    if target_seat == seat:
        raise RuleError("ストライキ は自分には使えません。ほかのプレイヤーを指定してください。")
    if not is_active(state["players"][target_seat]):
        raise RuleError(f"{target}さんはもう公開しているので ストライキ の対象にできません。")
    return target_seat


def check(state: State, seat: int, command: GameCommand) -> dict[str, int] | None:
    """Raise RuleError if `command` is illegal for `seat` now; return the budget plan if any."""
    player = _check_turn(state, seat, command)
    name = player["name"]
    if isinstance(command, Choose):
        if not player["pending_choices"]:
            raise RuleError(
                f"{name}さんが選ぶ山はありません"
                "(CHOOSE はゲーム開始時のダイスで 6 が出たときだけ使います)。"
            )
        if command.deck not in ROLE_DECKS:
            raise RuleError(f"{command.deck} という山はありません(山: {'・'.join(ROLE_DECKS)})。")
        if not state["decks"][command.deck]:
            raise RuleError(
                f"{command.deck}の山は残っていないので、ほかの山を選んでください"
                f"(残っている山: {_decks_left(state)})。"
            )
        return None
    if isinstance(command, PlayEvent):
        _check_event(state, seat, player, command)
        return None
    if isinstance(command, Scout | Buy):
        _check_scout_action(player)
        if isinstance(command, Scout):
            if command.deck not in ROLE_DECKS:
                raise RuleError(
                    f"{command.deck} という山はありません(山: {'・'.join(ROLE_DECKS)})。"
                )
            if not state["decks"][command.deck]:
                raise RuleError(
                    f"{command.deck}の山はもう残っていません(残っている山: {_decks_left(state)})。"
                )
            return None
        if command.card not in BUDGET_CARDS:
            raise RuleError(
                f"{command.card} という予算カードはありません"
                f"(予算カード: {'・'.join(BUDGET_CARDS)})。"
            )
        if state["piles"][command.card] <= 0:
            raise RuleError(f"{command.card}の山はもう残っていません。")
        cost = buy_cost(player, command.card)
        return _check_payment(f"{command.card}を得る", player, cost, command.flip, flip=True)
    if isinstance(command, Draw | SetRole):
        _check_set_action(player)
        if isinstance(command, Draw):
            if not state["decks"][EVENT_DECK]:
                raise RuleError("イベントカードの山はもう残っていません。")
            return None
        if player["set_blocked"]:
            raise RuleError(
                f"{name}さんはストライキのため今週は役割カードを配置できません(DRAW はできます)。"
            )
        if command.slot not in SLOTS:
            raise RuleError(
                f"{command.slot} という役割場はありません(役割場: {'・'.join(SLOTS)})。"
            )
        _check_role_in_stock(player, command.card)
        _check_fits(command.card, command.slot)
        occupant = player["slots"][command.slot]
        if occupant is not None:
            raise RuleError(
                f"{name}さんの{command.slot}にはすでに {occupant} があります。"
                "埋まった役割場はイベント(方針転換)でしか変えられません。"
            )
        cost = set_cost(player, command.card)
        return _check_payment(f"{command.card}の配置", player, cost, command.pay, flip=False)
    if isinstance(command, Release):
        missing = [slot for slot in REQUIRED_SLOTS if player["slots"][slot] is None]
        if missing:
            raise RuleError(
                f"{'・'.join(missing)}が空なので公開できません"
                "(ルールブック「『主演』『脚本家』『音楽家』『演出家』の4つの『役割場』に"
                "役割が配置されている場合、公開を宣言する」)。END で週を終えてください。"
            )
        return None
    if isinstance(command, End):
        return None
    raise RuleError(f"{command.canonical()} はえいつくの命令ではありません。")


# --------------------------------------------------------------------------- running


def execute(state: State, seat: int, command: GameCommand, rng: Rng) -> Events:
    """Check and run one command on `state` (mutated: pass a copy)."""
    plan = check(state, seat, command)
    player: dict[str, Any] = state["players"][seat]
    name = player["name"]
    events: Events = []
    line = command.canonical()

    if isinstance(command, Choose):
        card = _draw(state, command.deck)
        _add(player["stock"], card)
        player["pending_choices"] -= 1
        text = f"{name}: {command.deck}の山から {card} を引きました。"
        events.append(event("choose", text, seat=seat))
    elif isinstance(command, PlayEvent):
        _run_event(state, seat, command, rng, events)
    elif isinstance(command, Scout):
        card = _draw(state, command.deck)
        _add(player["stock"], card)
        _spend_scout(player)
        text = f"{name}: {command.deck}の山から {card} をスカウトしました。"
        events.append(event("scout", text, seat=seat))
    elif isinstance(command, Buy):
        assert plan is not None
        for card, count in plan.items():
            _remove(player["stock"], card, count)
            _add(player["flipped"], card, count)
        player["budget_used"] += sum(plan.values())
        _take_from_pile(state, player, command.card)
        _spend_scout(player)
        said = (
            f"{name}: {format_cards(plan)} を裏返して {command.card} を得ました。"
            if plan
            else f"{name}: {command.card} を得ました(裏返すカードなし)。"
        )
        events.append(event("buy", said, seat=seat))
        line = Buy(command.card, _expand(plan)).canonical()
    elif isinstance(command, Draw):
        card = _draw(state, EVENT_DECK)
        _add(player["stock"], card)
        _spend_set(player)
        events.append(event("draw", f"{name}: イベントカード {card} を引きました。", seat=seat))
    elif isinstance(command, SetRole):
        assert plan is not None
        for card, count in plan.items():
            _remove(player["stock"], card, count)
            _add(state["discard"], card, count)
        player["budget_used"] += sum(plan.values())
        _remove(player["stock"], command.card)
        player["slots"][command.slot] = command.card
        _spend_set(player)
        paid = format_cards(plan) if plan else "なし"
        events.append(
            event(
                "set",
                f"{name}: {command.slot}に {command.card} を配置しました(支払い {paid})。",
                seat=seat,
            )
        )
        line = SetRole(command.slot, command.card, _expand(plan)).canonical()
    elif isinstance(command, Release | End):
        player["done"] = True
        player["phase"] = "end"
        if isinstance(command, Release):
            player["released_week"] = state["week"]
            player["status"] = "released"
            # Known from the first release on: the running 公開週補正 counts from it.
            state["first_release_week"] = first_release_week(state)
            text = f"{name}: 第{state['week']}週に公開を宣言しました。"
            events.append(event("release", text, seat=seat))
        else:
            events.append(event("end", f"{name}: 第{state['week']}週を終えました。", seat=seat))
    player["moves"].append(line)
    if isinstance(command, Release | End) and not waiting_for(state):
        _end_week(state, events)
    return events


# --------------------------------------------------------------------------- the GM's SHUFFLE


def shuffle(state: State, command: Shuffle, rng: Rng) -> Events:
    """D: the GM's SHUFFLE <deck> shuffles a closed deck (mutates: pass a copy). Its text names
    no card; deck sizes, the one thing shown of a deck, do not change. Always allowed while
    the game runs, so a kept SHUFFLE replays wherever an UNDO leaves it in the log."""
    if command.deck not in state["decks"]:
        raise RuleError(f"{command.deck} という山はありません(山: {'・'.join(state['decks'])})。")
    rng.shuffle(state["decks"][command.deck])
    return [event("shuffle", f"GM が{command.deck}の山を切り直しました。", deck=command.deck)]


def undo_lines(before: State, after: State) -> list[str]:
    """D: after an UNDO, a SHUFFLE of every deck (all are closed, R 2−1) that got back a card
    the undone moves had drawn: the thread read that card's name (SCOUT, CHOOSE, DRAW, 新たなる
    チャンス), and the rebuilt state has it on top again. The physical table's remedy for a card
    seen by mistake: it is shuffled back into its deck."""
    if after["over"]:
        return []
    lines: list[str] = []
    for deck, cards in after["decks"].items():
        if Counter(cards) - Counter(before["decks"].get(deck, [])):
            lines.append(Shuffle(deck).canonical())
    return lines


def _expand(plan: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(card for card, count in plan.items() for _ in range(count))


def _spend_scout(player: dict[str, Any]) -> None:
    player["scouts_left"] -= 1
    player["phase"] = "scout"


def _spend_set(player: dict[str, Any]) -> None:
    player["sets_left"] -= 1
    player["phase"] = "set"


def _run_event(state: State, seat: int, command: PlayEvent, rng: Rng, events: Events) -> None:
    player: dict[str, Any] = state["players"][seat]
    name = player["name"]
    _remove(player["stock"], command.name)
    entry: dict[str, Any] = {"name": command.name, "week": state["week"]}
    text = f"{name}: {command.name} を配置しました。"
    if command.name == PROMOTER:
        assert command.number is not None
        entry["number"] = command.number
        funds = promoter_funds(state["piles"], command.number)
        assert funds is not None
        for card, count in funds.items():
            _take_from_pile(state, player, card, count)
        text += (
            f"{command.number}を宣言(最終得点 −{command.number})して {format_cards(funds)} を"
            "得ました。"
        )
    elif command.name == RUSH:
        player["sets_left"] += EVENTS[RUSH].amount
        text += "今週はセットフェイズの行動がもう1回できます。"
    elif command.name == AD_AGENCY:
        player["buy_discount"] += EVENTS[AD_AGENCY].amount
        text += f"今週の予算カードのコストが {EVENTS[AD_AGENCY].amount} 下がります。"
    elif command.name == LOCAL_SUPPORT:
        player["set_discount"] += EVENTS[LOCAL_SUPPORT].amount
        text += f"今週の配置コストが {EVENTS[LOCAL_SUPPORT].amount} 下がります。"
    elif command.name == NEW_CHANCE:
        assert command.card is not None
        deck = role_deck_of(command.card)
        assert deck is not None
        entry["card"] = command.card
        _remove(player["stock"], command.card)
        state["decks"][deck].append(command.card)
        rng.shuffle(state["decks"][deck])
        drawn = _draw(state, deck)
        _add(player["stock"], drawn)
        text += f"{command.card} を{deck}の山に戻して切り直し、{drawn} を引きました。"
    elif command.name == OWN_NETWORK:
        assert command.card is not None
        deck = role_deck_of(command.card)
        assert deck is not None
        entry["card"] = command.card
        state["decks"][deck].remove(command.card)
        rng.shuffle(state["decks"][deck])
        _add(player["stock"], command.card)
        # It replaces the scout action; the player stays in the action phase for more events.
        player["scouts_left"] -= 1
        text += f"{deck}の山から {command.card} を見つけました(今週のスカウトの代わり)。"
    elif command.name == STRIKE:
        target_seat = _check_strike_target(state, seat, command.player)
        entry["player"] = command.player
        state["players"][target_seat]["strikes_next"] += 1
        text += f"{command.player}さんは次の週、役割カードを配置できません。"
    elif command.name == POLICY_CHANGE:
        assert command.slot is not None and command.card is not None
        entry.update(slot=command.slot, card=command.card)
        old = player["slots"][command.slot]
        _remove(player["stock"], command.card)
        _add(player["stock"], old)
        player["slots"][command.slot] = command.card
        text += f"{command.slot}の {old} を {command.card} と入れ替えました。"
    else:
        text += EVENTS[command.name].effect
    player["events"].append(entry)
    events.append(event("event", text, seat=seat, card=command.name))


# --------------------------------------------------------------------------- queries


def full_census(player_count: int, edition: int = EDITION) -> Counter[str]:
    """Every card of a game for `player_count` players: R 2−1 用意するもの, plus the starting
    budget cards of R 2−2 ゲームの開始, which (I) do not come out of the piles."""
    census: Counter[str] = Counter({card: player_count * PILE_PER_PLAYER for card in BUDGET_CARDS})
    if edition >= 2:
        census.update({SMALL: player_count * START_SMALL, MEDIUM: player_count * START_MEDIUM})
    for deck in ROLE_DECKS:
        census.update(role_deck_cards(deck))
    census.update(event_deck_cards())
    return census


def card_census(state: State) -> Counter[str]:
    """Count every card wherever it lies: piles, decks, discard, stocks, flipped, slots,
    event fields. Equal to `full_census` in every reachable state (cards are conserved)."""
    census: Counter[str] = Counter(state["piles"])
    for cards in state["decks"].values():
        census.update(cards)
    census.update(state["discard"])
    for player in state["players"]:
        census.update(player["stock"])
        census.update(player["flipped"])
        census.update(card for card in player["slots"].values() if card is not None)
        census.update(entry["name"] for entry in player["events"])
    return +census


def active_effects(state: State, seat: int) -> list[dict[str, Any]]:
    """Event effects that bear on this seat's current week, oldest first: the seat's own
    "this_week" cards placed this week (巻きを入れる, 広告代理店の努力, 地元の協力) and the
    "next_week" cards other players placed on it last week (ストライキ). Each is
    `{"name", "week", "by", "by_seat", "effect"}`; `week` is the week the card was placed.
    Empty once the game is over or for a player who has released."""
    player = state["players"][seat]
    if state["over"] or not is_active(player):
        return []
    week = state["week"]
    found: list[dict[str, Any]] = []
    for other_seat, other in enumerate(state["players"]):
        for entry in other["events"]:
            card = EVENTS[entry["name"]]
            own_now = other_seat == seat and card.timing == "this_week" and entry["week"] == week
            aimed = (
                card.timing == "next_week"
                and entry["week"] == week - 1
                and entry.get("player") == player["name"]
            )
            if own_now or aimed:
                found.append(
                    {
                        "name": entry["name"],
                        "week": entry["week"],
                        "by": other["name"],
                        "by_seat": other_seat,
                        "effect": card.active,
                    }
                )
    found.sort(key=lambda effect: int(effect["week"]))
    return found


def waiting_for(state: State) -> list[int]:
    if state["over"]:
        return []
    return [
        seat
        for seat, player in enumerate(state["players"])
        if is_active(player) and not player["done"]
    ]


def _event_candidates(state: State, seat: int, player: Mapping[str, Any]) -> Iterator[PlayEvent]:
    for name in _event_cards_in(player["stock"]):
        args = EVENTS[name].args
        if not args:
            yield PlayEvent(name)
        elif name == PROMOTER:
            for number in range(1, PROMOTER_MAX + 1):
                yield PlayEvent(name, number=number)
        elif name == NEW_CHANCE:
            for card in _role_cards_in(player["stock"]):
                yield PlayEvent(name, card=card)
        elif name == OWN_NETWORK:
            for deck in ROLE_DECKS:
                for card in sorted(set(state["decks"][deck]), key=CARD_ORDER.__getitem__):
                    yield PlayEvent(name, card=card)
        elif name == STRIKE:
            for other, target in enumerate(state["players"]):
                if other != seat:
                    yield PlayEvent(name, player=target["name"])
        elif name == POLICY_CHANGE:
            for slot in SLOTS:
                if player["slots"][slot] is None:
                    continue
                for card in _role_cards_in(player["stock"]):
                    yield PlayEvent(name, slot=slot, card=card)


def _candidates(state: State, seat: int) -> Iterator[GameCommand]:
    player = state["players"][seat]
    if player["pending_choices"]:
        for deck in ROLE_DECKS:
            yield Choose(deck)
        return
    # Phases already left and actions already used are skipped here only to save time;
    # `check` would reject those candidates anyway.
    phase = PHASE_RANK[player["phase"]]
    if phase <= PHASE_RANK["action"]:
        yield from _event_candidates(state, seat, player)
    if phase <= PHASE_RANK["scout"] and player["scouts_left"] > 0:
        for deck in ROLE_DECKS:
            yield Scout(deck)
        for card in BUDGET_CARDS:
            yield Buy(card)
    if player["sets_left"] > 0:
        yield Draw()
        if not player["set_blocked"]:
            for card in _role_cards_in(player["stock"]):
                for slot in SLOTS:
                    if fits(card, slot):
                        yield SetRole(slot, card)
    yield Release()
    yield End()


def legal_commands(state: State, actor: Actor) -> list[GameCommand]:
    """Commands `actor` may give now (BUY/SET in their no-argument form)."""
    if not isinstance(actor, int) or isinstance(actor, bool):
        return []
    if not 0 <= actor < len(state["players"]) or actor not in waiting_for(state):
        return []
    commands: list[GameCommand] = []
    for command in _candidates(state, actor):
        try:
            check(state, actor, command)
        except RuleError:
            continue
        commands.append(command)
    return commands


def default_commands(state: State, seat: int) -> list[str]:
    """What the bot posts for a player past the deadline: choose 役者 for a pending 6, END."""
    if seat not in waiting_for(state):
        return []
    player = state["players"][seat]
    lines: list[str] = []
    sizes = {deck: len(state["decks"][deck]) for deck in ROLE_DECKS}
    for _ in range(player["pending_choices"]):
        deck = next((d for d in ROLE_DECKS if sizes[d] > 0), ROLE_DECKS[0])
        sizes[deck] -= 1
        lines.append(Choose(deck).canonical())
    lines.append(End().canonical())
    return lines


def reveals(state: State, command: Any) -> str | None:
    """``Game.reveals``: the lines that draw from a closed deck or shuffle one (R 2−2)."""
    if isinstance(command, Scout | Choose | Draw):
        return "山札からカードを引く"
    if isinstance(command, PlayEvent) and command.name == NEW_CHANCE:
        return "山札を切り直してカードを引く"
    if isinstance(command, Shuffle) or (
        isinstance(command, PlayEvent) and command.name == OWN_NETWORK
    ):
        return "山札を切り直す"
    return None
