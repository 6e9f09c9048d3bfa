"""IM@S x Workerplacement as the bot runs it: docs/rules/idolwp.md.

R = the source (seeds/003_…txt, section numbers as printed there), I = the project's fixed
interpretation (shared/rules/idolwp.md), D = a decision taken here; each written beside the line
it interprets in docs/rules/idolwp.md.

The game: an open snake draft of two idols each (PICK), then 9 rounds on 9 round boards. On
their turn a player moves one idol along the board's arrows to a free space and resolves it
(レッスン, 特訓, ある日の日常, 営業, イベント); idols alternate turn by turn; a round ends when
every idol stands at the goal. Results after rounds 1, 3, 6 and 9; after the last, a final 特訓
and the ability ranking.

State (plain JSON): ``players[i]`` with ``idols`` (names, A first once the round fixed it),
``abilities``/``chips`` (Vo, Da, Vi), ``memory``, ``money``, ``points``, ``evp``,
``event_points``/``ability_points`` (the breakdown), ``hand`` (face-down cards), ``kept``
(face-up ones), ``positions`` (idol -> space); ``phase`` draft | play | final | over; ``round``;
``boards`` (9 board ids); ``event``, ``event_deck``, ``card_deck``, ``card_discard``;
``turn`` (the seat on turn), ``turn_state`` (what this turn did); ``pending`` (an event to enter,
a 特訓 to do, cards to discard); ``finished`` (seats whose two idols reached the goal, in
order); ``results``; ``final_order``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.games.base import Actor, Rng, RuleError, State, competition_ranks, event
from app.games.idolwp.commands import (
    ABILITIES,
    CardPlay,
    Convert,
    Discard,
    EventEntry,
    GameCommand,
    Move,
    Pick,
    Skip,
    Train,
)
from app.games.idolwp.content import Board, Card, Content, Event, Idol, Level, Space, load
from app.games.kit import decks, legal, seats

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "IdolwpOptions",
    "copy_state",
    "default_commands",
    "examples",
    "execute",
    "legal_commands",
    "setup",
    "turn_key",
    "waiting_for",
]

MIN_PLAYERS = 2
MAX_PLAYERS = 5  # R 6: the last board's goal spaces are numbered 1–5
ROUNDS = 9
MEMORY_CHIPS = 3  # R 4.6: a 思い出 chip gives 3 ability chips of your choice
MONEY_CHIPS = 2  # R 4.6: a マニー chip gives 2
ABILITY_JA = {"Vo": "Vo", "Da": "Da", "Vi": "Vi"}
SPACE_JA = {
    "start": "スタート",
    "goal": "ゴール",
    "lesson": "レッスン",
    "training": "特訓",
    "daily": "ある日の日常",
    "sales": "営業",
    "event": "イベント",
}

Events = list[dict[str, Any]]


class IdolwpOptions(BaseModel):
    """`idols`: the GM sets each player's two idols instead of the draft (player name -> two
    idol names, every player given)."""

    model_config = ConfigDict(extra="forbid")

    idols: dict[str, list[str]] | None = Field(default=None)


# --------------------------------------------------------------------------- small helpers


def content() -> Content:
    return load()


def _name(state: State, seat: int) -> str:
    name: str = state["players"][seat]["name"]
    return name


def _amounts(amounts: Mapping[Any, int]) -> str:
    shown = [f"{ability}{count}" for ability, count in amounts.items() if count]
    return " ".join(shown) if shown else "なし"


def copy_state(state: State) -> State:
    """A deep copy (every mutable part copied; the finished results are shared: they never
    change again)."""
    copied = dict(state)
    copied["players"] = [
        {
            **player,
            "idols": list(player["idols"]),
            "abilities": dict(player["abilities"]),
            "chips": dict(player["chips"]),
            "hand": list(player["hand"]),
            "kept": list(player["kept"]),
            "positions": dict(player["positions"]),
        }
        for player in state["players"]
    ]
    for key in ("boards", "event_deck", "card_deck", "card_discard", "finished", "final_order"):
        copied[key] = list(state[key])
    copied["results"] = list(state["results"])
    turn_state = state["turn_state"]
    copied["turn_state"] = {**turn_state, "boost": dict(turn_state["boost"])}
    if state["draft"] is not None:
        draft = state["draft"]
        copied["draft"] = {**draft, "order": list(draft["order"]), "pool": list(draft["pool"])}
    if state["pending"] is not None:
        copied["pending"] = dict(state["pending"])
    return copied


def board_of(state: State) -> Board:
    return content().boards[state["boards"][state["round"] - 1]]


def space_of(board: Board, space_id: str) -> Space | None:
    return next((space for space in board.spaces if space.id == space_id), None)


def _start(board: Board) -> str:
    return _ends(board.id)[0]


def _goal(board: Board) -> str:
    return _ends(board.id)[1]


@functools.lru_cache(maxsize=256)
def _ends(board_id: int) -> tuple[str, str]:
    """(start, goal) of a board: content is frozen and shared, so computed once per board."""
    board = content().boards[board_id]
    start = next(space.id for space in board.spaces if space.type == "start")
    goal = next(space.id for space in board.spaces if space.type == "goal")
    return start, goal


def reachable(board: Board, source: str) -> list[str]:
    """Spaces reachable from `source` along one or more arrows (R 4.3), in board order."""
    return list(_reachable(board.id, source))


@functools.lru_cache(maxsize=4096)
def _reachable(board_id: int, source: str) -> tuple[str, ...]:
    board = content().boards[board_id]
    following: dict[str, list[str]] = {}
    for start, end in board.edges:
        following.setdefault(start, []).append(end)
    seen: set[str] = set()
    todo = [source]
    while todo:
        for target in following.get(todo.pop(), []):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return tuple(space.id for space in board.spaces if space.id in seen)


def _powers(state: State, seat: int, kind: str) -> Iterator[Any]:
    for name in state["players"][seat]["idols"]:
        power = content().idols[name].power
        if power is not None and power.kind == kind:
            yield power


def _kept(state: State, seat: int, effect: str) -> int:
    cards = content().cards
    return sum(
        cards[name].amount
        for name in state["players"][seat]["kept"]
        if cards[name].effect == effect
    )


# --------------------------------------------------------------------------- setup


def setup(players: list[str], options: IdolwpOptions, rng: Rng) -> State:
    """R 3.1 / 3.2: boards, events, cards, the start player (I: the seed decides), then the
    open snake draft (or the GM's `idols` option)."""
    data = content()
    middle = [board.id for board in data.boards.values() if board.role == "middle"]
    rng.shuffle(middle)
    boards = [data.first_board.id, *middle[:7], data.last_board.id]
    others = [name for name, ev in data.events.items() if not ev.first]
    event_deck = decks.make_deck(others, rng)
    card_deck = decks.make_deck(
        decks.expand({card.name: card.count for card in data.cards.values()}), rng
    )
    start = seats.random_seat(rng, len(players))
    state: State = {
        "kind": "idolwp",
        "players": [_new_player(name) for name in players],
        "phase": "draft",
        "round": 1,
        "boards": boards,
        "event": data.first_event.name,
        "event_deck": event_deck,
        "card_deck": card_deck,
        "card_discard": [],
        "start_player": start,
        "turn": start,
        "turn_state": _fresh_turn(),
        "pending": None,
        "finished": [],
        "results": [],
        "final_order": [],
        "draft": None,
        "over": False,
        "step": 0,
    }
    if options.idols is not None:
        _set_idols(state, options.idols)
        _begin_game(state, [])
    else:
        order = [(start + seat) % len(players) for seat in seats.snake_order(len(players))]
        state["draft"] = {"order": order, "index": 0, "pool": list(data.idols)}
        state["turn"] = order[0]
    return state


def _new_player(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "idols": [],
        "abilities": {"Vo": 0, "Da": 0, "Vi": 0},
        "chips": {"Vo": 0, "Da": 0, "Vi": 0},
        "memory": 0,
        "money": 0,
        "points": 0,
        "evp": 0,
        "event_points": 0,
        "ability_points": 0,
        "hand": [],
        "kept": [],
        "positions": {},
        "a_idol": None,  # the idol moved first this round (A), None until the first move
        "last_moved": None,
        "finish_rank": None,  # the last round's goal order (1–5)
        "trained_final": False,
    }


def _fresh_turn() -> dict[str, Any]:
    return {"moved": False, "pre_trained": False, "free_idol": False, "boost": {}}


def _set_idols(state: State, chosen: Mapping[str, list[str]]) -> None:
    names = [player["name"] for player in state["players"]]
    if sorted(chosen) != sorted(names):
        raise RuleError(
            f"オプション idols にはプレイヤー全員({'、'.join(names)})の2人ずつを書きます。"
        )
    taken: set[str] = set()
    for player in state["players"]:
        idols = chosen[player["name"]]
        for idol in idols:
            if idol not in content().idols:
                raise RuleError(f"オプション idols の {idol} というアイドルはいません。")
            if idol in taken:
                raise RuleError(f"オプション idols で {idol} が2人に選ばれています。")
            taken.add(idol)
        if len(idols) != 2:
            raise RuleError(
                f"オプション idols: {player['name']}さんのアイドルは2人です"
                f"({len(idols)}人書かれています)。"
            )
        player["idols"] = list(idols)


def initial_abilities(idols: Iterable[Idol]) -> tuple[dict[str, int], int]:
    """R 3.2: the starting Vo/Da/Vi levels are the sums of the two idols' abilities (2/0/1 +
    1/1/1 -> 3/1/2), and their 思い出 add up too (春香 + 千早 -> 5/2/2 and 1 思い出)."""
    chosen = list(idols)
    levels = {ability: sum(getattr(idol, ability) for idol in chosen) for ability in ABILITIES}
    return levels, sum(idol.memory for idol in chosen)


def _begin_game(state: State, events: Events) -> None:
    """R 3.2: abilities and 思い出 from the two idols; then "at game start" effects from the
    start player clockwise; then round 1."""
    data = content()
    for player in state["players"]:
        levels, memory = initial_abilities(data.idols[name] for name in player["idols"])
        player["abilities"] = levels
        player["memory"] = memory
    for seat in seats.round_order(state["start_player"], len(state["players"])):
        player = state["players"][seat]
        for name in player["idols"]:
            power = data.idols[name].power
            if power is None:
                continue
            if power.kind == "start_chips":
                for ability, count in power.chips.items():
                    player["chips"][ability] += count
                events.append(
                    event(
                        "start",
                        f"{player['name']}: {name}の効果で {_amounts(power.chips)} を得ました。",
                        seat=seat,
                    )
                )
            elif power.kind == "start_money":
                player["money"] += power.amount
                events.append(
                    event(
                        "start",
                        f"{player['name']}: {name}の効果でマニー {power.amount} を得ました。",
                        seat=seat,
                    )
                )
            elif power.kind == "start_memory":
                player["memory"] += power.amount
                events.append(
                    event(
                        "start",
                        f"{player['name']}: {name}の効果で思い出 {power.amount} を得ました。",
                        seat=seat,
                    )
                )
    state["phase"] = "play"
    state["draft"] = None
    _begin_round(state, state["start_player"], events)


def _begin_round(state: State, start: int, events: Events) -> None:
    board = board_of(state)
    origin = _start(board)
    for player in state["players"]:
        player["positions"] = {idol: origin for idol in player["idols"]}
        player["a_idol"] = None
        player["last_moved"] = None
    state["finished"] = []
    state["turn"] = start
    state["turn_state"] = _fresh_turn()
    state["pending"] = None
    events.append(
        event(
            "round",
            f"第{state['round']}ラウンド開始: ボード{board.id}「{board.name}」。",
            round=state["round"],
        )
    )
    _announce_turn(state, events)


# --------------------------------------------------------------------------- whose turn


def due_idols(state: State, seat: int) -> list[str]:
    """The idols `seat` may move now: R 4.3 — if one idol is at the goal, the other (which
    must go to the goal); otherwise the one not moved last turn (A/B alternation by turn, the
    first move of a round fixing A), or either with a card that lifts it."""
    player = state["players"][seat]
    goal = _goal(board_of(state))
    away = [idol for idol in player["idols"] if player["positions"][idol] != goal]
    if len(away) < 2:
        return away
    if state["turn_state"]["free_idol"] or player["last_moved"] is None:
        return list(away)
    return [idol for idol in away if idol != player["last_moved"]]


def _both_at_goal(state: State, seat: int) -> bool:
    goal = _goal(board_of(state))
    return all(space == goal for space in state["players"][seat]["positions"].values())


def _announce_turn(state: State, events: Events) -> None:
    seat = state["turn"]
    idols = "・".join(due_idols(state, seat)) or "動かせるアイドルなし"
    events.append(
        event(
            "turn",
            f"次の手番: {_name(state, seat)}さん({idols})。",
            seat=seat,
        )
    )


def _end_turn(state: State, events: Events) -> None:
    """Next seat clockwise. A player whose two idols stand at the goal takes a マニー chip
    instead of acting (R 4.3, automatic); when every idol is at the goal the round ends."""
    state["step"] += 1
    count = len(state["players"])
    seat = state["turn"]
    for _ in range(count * 2):
        if all(_both_at_goal(state, s) for s in range(count)):
            _end_round(state, events)
            return
        seat = (seat + 1) % count
        if _both_at_goal(state, seat):
            state["players"][seat]["money"] += 1
            events.append(
                event(
                    "money",
                    f"{_name(state, seat)}さんはゴール済みでマニー+1。",
                    seat=seat,
                )
            )
            continue
        state["turn"] = seat
        state["turn_state"] = _fresh_turn()
        _announce_turn(state, events)
        return
    raise AssertionError("no seat could take a turn")


def _end_round(state: State, events: Events) -> None:
    """R 4.5; results after rounds 1, 3, 6, 9 (R 5.2); the next event after 1, 3, 6 (I)."""
    data = content()
    round_number = state["round"]
    events.append(event("round_end", f"第{round_number}ラウンド終了。", round=round_number))
    if round_number in data.tables.results_rounds:
        _results(state, events)
        if round_number < ROUNDS and state["event_deck"]:
            state["event"] = state["event_deck"].pop()
            events.append(event("event", f"次のイベントは「{state['event']}」です。"))
    if round_number == ROUNDS:
        _begin_final(state, events)
        return
    start = state["finished"][0]
    state["round"] = round_number + 1
    _begin_round(state, start, events)


def _results(state: State, events: Events) -> None:
    """R 5.2: EVP to points first; rank by EVP (ties share a rank); rank rewards, tied ranks
    adding theirs and splitting them, rounding down; EVP back to 0. D: a player with 0 EVP
    takes no rank reward."""
    event_card: Event = content().events[state["event"]]
    players = state["players"]
    order = sorted(range(len(players)), key=lambda s: -players[s]["evp"])
    ranks = competition_ranks([players[s]["evp"] for s in order])
    rewards: dict[int, int] = {}
    index = 0
    while index < len(order):
        tied = [i for i in range(index, len(order)) if ranks[i] == ranks[index]]
        pool = sum(event_card.rewards[i] if i < len(event_card.rewards) else 0 for i in tied)
        share = pool // len(tied)
        for i in tied:
            seat = order[i]
            rewards[seat] = share if players[seat]["evp"] > 0 else 0
        index = tied[-1] + 1
    rows = []
    lines = [f"【第{state['round']}ラウンド イベント結果発表: {event_card.name}】"]
    # Nobody scored: one line, not a ranking of ties at +0 (a newcomer's read).
    scored = any(players[seat]["evp"] + rewards[seat] for seat in order)
    if not scored:
        totals = "、".join(f"{players[seat]['name']} {players[seat]['points']}点" for seat in order)
        lines.append(f"今回は誰も得点しませんでした(計 {totals})。")
    for i, seat in enumerate(order):
        player = players[seat]
        gain = player["evp"] + rewards[seat]
        player["points"] += gain
        player["event_points"] += gain
        rows.append({"name": player["name"], "evp": player["evp"], "reward": rewards[seat]})
        if scored:
            lines.append(
                f"{ranks[i]}位 {player['name']}: {player['evp']}EVP + 順位報酬 {rewards[seat]} = "
                f"+{gain}点(計 {player['points']}点)"
            )
        player["evp"] = 0
    state["results"].append({"round": state["round"], "event": event_card.name, "rows": rows})
    events.append(event("results", "\n".join(lines), round=state["round"]))


def _begin_final(state: State, events: Events) -> None:
    """R 6: latest finisher first, each player takes one 特訓 action (resources may be used
    before it; money can no longer enter an event)."""
    state["phase"] = "final"
    state["final_order"] = list(reversed(state["finished"]))
    state["turn"] = state["final_order"][0]
    state["turn_state"] = _fresh_turn()
    state["pending"] = None
    rate = content().tables.training_rate
    events.append(
        event(
            "final",
            f"最後の特訓: 後からゴールした人から順に TRAIN を1回ずつ(1レベルにチップ {rate} 枚)。",
        )
    )


def _finish(state: State, events: Events) -> None:
    """R 6: each ability ranked across players on its own; points by player count from the
    house table, ties adding and splitting (rounding down); highest points win, ties share."""
    players = state["players"]
    table = content().tables.final_points[str(len(players))]
    lines = ["【最後の能力順位】"]
    for ability in ABILITIES:
        order = sorted(range(len(players)), key=lambda s: -players[s]["abilities"][ability])
        ranks = competition_ranks([players[s]["abilities"][ability] for s in order])
        index = 0
        parts = []
        while index < len(order):
            tied = [i for i in range(index, len(order)) if ranks[i] == ranks[index]]
            share = sum(table[i] for i in tied) // len(tied)
            for i in tied:
                player = players[order[i]]
                player["points"] += share
                player["ability_points"] += share
                parts.append(
                    f"{ranks[i]}位 {player['name']}({player['abilities'][ability]}) +{share}"
                )
            index = tied[-1] + 1
        lines.append(f"{ability}: " + "、".join(parts))
    state["phase"] = "over"
    state["over"] = True
    state["pending"] = None
    events.append(event("final_ranking", "\n".join(lines)))
    events.append(event("game_over", "IM@S x Workerplacement 終了。成績発表です。"))


# --------------------------------------------------------------------------- events (R 5)


def level_target(
    state: State, level: Level, event_card: Event
) -> tuple[str, dict[str, int] | list[int]]:
    """The level's target this round: the printed one plus the round modifier (house table)
    on every number when the event takes it."""
    plus = content().tables.round_modifier[state["round"] - 1] if event_card.modifier else 0
    if level.fixed:
        return "fixed", {ability: count + plus for ability, count in level.fixed.items()}
    return "any", [count + plus for count in level.any]


def meets(abilities: Mapping[str, int], kind: str, target: dict[str, int] | list[int]) -> bool:
    """R 5.1 / A2: fixed — each named ability ≥ its number; any — the numbers given to Vo/Da/Vi
    freely: the abilities sorted high to low each ≥ the numbers sorted high to low."""
    if kind == "fixed":
        assert isinstance(target, dict)
        return all(abilities[ability] >= count for ability, count in target.items())
    assert isinstance(target, list)
    mine = sorted(abilities.values(), reverse=True)
    wanted = sorted(target, reverse=True) + [0] * (3 - len(target))
    return all(have >= need for have, need in zip(mine, wanted, strict=True))


def target_text(kind: str, target: dict[str, int] | list[int]) -> str:
    if kind == "fixed":
        assert isinstance(target, dict)
        return " ".join(f"{ability}{count}" for ability, count in target.items())
    assert isinstance(target, list)
    return "(" + ", ".join(str(count) for count in target) + ")"


def _enter_event(state: State, seat: int, entry: EventEntry, rng: Rng, events: Events) -> None:
    player = state["players"][seat]
    event_card = content().events[state["event"]]
    level = event_card.levels[entry.level - 1]
    boost = dict(entry.boost)
    for ability, count in boost.items():
        if player["chips"][ability] < count:
            raise RuleError(
                f"{ability}チップが足りません(ブースト {count} 枚、手元 {player['chips'][ability]} "
                "枚)。"
            )
    if entry.double and player["memory"] < 1:
        raise RuleError("DOUBLE には思い出チップが1枚要りますが、持っていません。")
    kind, target = level_target(state, level, event_card)
    shown = dict(player["abilities"])
    for ability, count in boost.items():
        player["chips"][ability] -= count
        shown[ability] += count
    for ability, count in state["turn_state"]["boost"].items():
        shown[ability] += count
    for seat_power in _powers(state, seat, "event_bonus"):
        if seat_power.ability is not None:
            shown[seat_power.ability] += seat_power.amount
    state["turn_state"]["boost"] = {}
    # The event's name is on the round's board; the reply says the target and the outcome.
    head = f"Lv{entry.level} 目標 {target_text(kind, target)}、能力 {_amounts(shown)}" + (
        f"(ブースト {_amounts(boost)})" if boost else ""
    )
    if not meets(shown, kind, target):
        events.append(event("event_failed", f"{head} → 失敗。", seat=seat))
        return
    evp = level.evp + _kept(state, seat, "evp_plus")
    if entry.double:
        player["memory"] -= 1
        evp *= 2
    player["evp"] += evp
    player["memory"] += level.memory
    gained = [f"{evp}EVP" + ("(思い出で2倍)" if entry.double else "")]
    if level.memory:
        gained.append(f"思い出+{level.memory}")
    events.append(event("event_success", f"{head} → 成功! " + "、".join(gained) + "。", seat=seat))
    if level.cards:
        _draw_cards(state, seat, level.cards, rng, events)


# --------------------------------------------------------------------------- cards


def _draw_cards(state: State, seat: int, count: int, rng: Rng, events: Events) -> None:
    player = state["players"][seat]
    pending_before = state["pending"]
    drawn = decks.draw(state["card_deck"], count, rng, state["card_discard"])
    player["hand"].extend(drawn)
    events.append(
        event(
            "cards",
            f"アピールカードを{len(drawn)}枚引きました"
            f"(手元 {len(player['hand']) + len(player['kept'])} 枚)。",
            seat=seat,
        )
    )
    limit = content().tables.hold_limit
    over = len(player["hand"]) + len(player["kept"]) - limit
    if over > 0:
        # A card drawn while the turn waits on its event or 特訓: the discards come first, then
        # that step waits again (`then`).
        state["pending"] = {"kind": "discard", "seat": seat, "count": over}
        if pending_before is not None:
            state["pending"]["then"] = pending_before
        events.append(
            event(
                "discard",
                f"{player['name']}さんはカードが上限 {limit} 枚を {over} 枚超えています。"
                "DISCARD <カード> で捨ててください。",
                seat=seat,
                waiting=[seat],
            )
        )


def _play_card(state: State, seat: int, command: CardPlay, rng: Rng, events: Events) -> None:
    player = state["players"][seat]
    card: Card | None = content().cards.get(command.name)
    if card is None or command.name not in player["hand"]:
        # The refusal is posted in the thread: it never lists the face-down hand (the owner
        # sees it on the game page).
        raise RuleError(
            f"{command.name} は手札にありません(手札はゲームのページの「あなたの手元」にあります)。"
        )
    pending = state["pending"]
    if card.timing == "event":
        if pending is None or pending["kind"] != "event":
            raise RuleError(f"{card.name} はイベントに参加するとき、判定の前に使うカードです。")
    elif pending is not None and pending["kind"] not in ("event", "training"):
        raise RuleError(_pending_message(state))
    elif pending is not None and card.effect in ("event_now", "free_idol"):
        # R 4.6: a turn card may be used while the turn waits on its event or 特訓 (any time
        # on one's turn), but these two act on a step already past: D refused, with why.
        raise RuleError(
            f"{card.name} はアイドルを動かす前に使うカードです。" + _pending_message(state)
        )
    wanted = {"choice": card.amount, "ability": card.amount}.get(card.effect, 0)
    if len(command.abilities) != wanted:
        if wanted:
            raise RuleError(
                f"{card.name} には能力を {wanted} つ書きます(例: CARD {card.name} "
                + " ".join(["Vo"] * wanted)
                + ")。"
            )
        raise RuleError(f"{card.name} には能力を書きません(CARD {card.name})。")
    player["hand"].remove(card.name)
    # The command line names the card ("✔ CARD 差し入れ Vo Da → …"): the text says what it did.
    text = ""
    if card.timing == "keep":
        player["kept"].append(card.name)
        events.append(event("card", f"表向きに出しました({card.text})。", seat=seat))
        return
    state["card_discard"].append(card.name)
    effect = card.effect
    if effect == "chips":
        for gained, count in card.chips.items():
            player["chips"][gained] += count
        text += f"チップ {_amounts(card.chips)} を得ました。"
    elif effect == "choice":
        for ability in command.abilities:
            player["chips"][ability] += 1
        text += f"{' '.join(command.abilities)} のチップを得ました。"
    elif effect == "memory":
        player["memory"] += card.amount
        text += f"思い出 {card.amount} を得ました。"
    elif effect == "money":
        player["money"] += card.amount
        text += f"マニー {card.amount} を得ました。"
    elif effect == "ability":
        for ability in command.abilities:
            player["abilities"][ability] += 1
        text += f"{' '.join(command.abilities)} を1つずつ上げました。"
    elif effect == "boost":
        boost = state["turn_state"]["boost"]
        for raised, count in card.chips.items():
            boost[raised] = boost.get(raised, 0) + count
        text += f"このイベントの判定に {_amounts(card.chips)} を加えます。"
    elif effect == "free_idol":
        state["turn_state"]["free_idol"] = True
        text += "この手番はどちらのアイドルも動かせます。"
    elif effect == "event_now":
        if state["phase"] != "play":
            raise RuleError("イベントはもう終わっています。")
        state["pending"] = {"kind": "event", "seat": seat, "by": "card"}
        text += f"今イベントに参加します。{player['name']}さん、EVENT LV<n> を書いてください。"
        events.append(event("card", text, seat=seat, waiting=[seat]))
        return
    elif effect == "draw":
        events.append(event("card", "使いました。", seat=seat))
        _draw_cards(state, seat, card.amount, rng, events)
        return
    events.append(event("card", text, seat=seat))


def _discard(state: State, seat: int, command: Discard, events: Events) -> None:
    player = state["players"][seat]
    if command.name in player["hand"]:
        player["hand"].remove(command.name)
    elif command.name in player["kept"]:
        player["kept"].remove(command.name)
    else:
        face_up = "、".join(player["kept"]) or "なし"
        raise RuleError(
            f"{command.name} は持っていません(表向きのカード: {face_up}。"
            "伏せたカードはゲームのページの「あなたの手元」にあります)。"
        )
    state["card_discard"].append(command.name)
    events.append(event("discarded", f"カード「{command.name}」を捨てました。", seat=seat))
    pending = state["pending"]
    if pending is not None and pending["kind"] == "discard" and pending["seat"] == seat:
        pending["count"] -= 1
        if pending["count"] <= 0:
            state["pending"] = pending.get("then")


# --------------------------------------------------------------------------- training


def _train(
    state: State, seat: int, levels: Iterable[tuple[str, int]], rate: int, events: Events
) -> None:
    """特訓 (R 4.4): raise abilities, paying `rate` chips of that ability a level."""
    player = state["players"][seat]
    wanted = dict(levels)
    for ability, count in wanted.items():
        cost = count * rate
        if player["chips"][ability] < cost:
            raise RuleError(
                f"{ability}を{count}上げるには{ability}チップが {cost} 枚要ります"
                f"(手元 {player['chips'][ability]} 枚、1レベル {rate} 枚)。"
            )
    for ability, count in wanted.items():
        player["chips"][ability] -= count * rate
        player["abilities"][ability] += count
    now = _amounts(player["abilities"])
    text = f"{_amounts(wanted)} 上げて能力 {now}。" if wanted else f"何も上げません(能力 {now})。"
    events.append(event("train", text, seat=seat))


# --------------------------------------------------------------------------- the move


def _resolve_space(
    state: State, seat: int, command: Move, space: Space, rng: Rng, events: Events
) -> None:
    """R 4.4: the space's action, or the event for a マニー chip (R 4.6, 5.1)."""
    player = state["players"][seat]
    if command.money:
        if space.type in ("start", "goal"):
            raise RuleError(
                f"{space.id} ではマニーでイベントに参加できません(スタートとゴール以外のマスだけ)。"
            )
        if state["phase"] != "play":
            raise RuleError("イベントはもう終わっています。")
        if player["money"] < 1:
            raise RuleError("マニーチップを持っていません。")
        player["money"] -= 1
        events.append(
            event(
                "money_event",
                f"マニーを使い、{space.id}の代わりにイベントに参加します。",
                seat=seat,
            )
        )
        state["pending"] = {"kind": "event", "seat": seat, "by": "money"}
    elif space.type == "lesson":
        chips: dict[str, int] = {str(kind): count for kind, count in space.chips.items()}
        if command.vo:
            if not any(True for _ in _powers(state, seat, "lesson_vo")):
                raise RuleError(
                    "VO(Da/Vi の代わりに Vo "
                    "を得る)は千早のようにその効果を持つアイドルがいるときだけです。"
                )
            moved = chips.pop("Da", 0) + chips.pop("Vi", 0)
            if not moved:
                raise RuleError("このレッスンには Da/Vi のチップがないので VO は使えません。")
            chips["Vo"] = chips.get("Vo", 0) + moved
        for power in _powers(state, seat, "lesson_bonus"):
            if power.ability is not None:
                chips[power.ability] = chips.get(power.ability, 0) + power.amount
        plus = _kept(state, seat, "lesson_plus")
        if plus:
            printed = {str(kind): count for kind, count in space.chips.items()}
            kinds = [ability for ability in ABILITIES if printed.get(ability)]
            chips[kinds[0]] = chips.get(kinds[0], 0) + plus
        for ability, count in chips.items():
            player["chips"][ability] += count
        events.append(event("lesson", f"チップ {_amounts(chips)} を得ました。", seat=seat))
    elif space.type == "daily":
        amount = space.amount + sum(p.amount for p in _powers(state, seat, "daily_bonus"))
        player["memory"] += amount
        events.append(event("daily", f"思い出 {amount} を得ました。", seat=seat))
    elif space.type == "sales":
        amount = space.amount + sum(p.amount for p in _powers(state, seat, "sales_bonus"))
        events.append(event("sales", "営業に出ました。", seat=seat))
        _draw_cards(state, seat, amount, rng, events)
    elif space.type == "training":
        state["pending"] = {"kind": "training", "seat": seat, "rate": space.rate}
    elif space.type == "event":
        state["pending"] = {"kind": "event", "seat": seat, "by": "space"}
    if command.vo and space.type != "lesson":
        raise RuleError(f"{space.id} はレッスンのマスではないので VO は書けません。")
    pending = state["pending"]
    if command.event is not None:
        if pending is None or pending["kind"] != "event":
            raise RuleError(
                f"{space.id} はイベントのマスではありません(イベントには MONEY "
                "かイベントのマスで)。"
            )
        state["pending"] = None
        _enter_event(state, seat, command.event, rng, events)
    elif command.train is not None:
        if pending is None or pending["kind"] != "training":
            raise RuleError(f"{space.id} は特訓のマスではありません。")
        state["pending"] = None
        _train(state, seat, command.train.levels, int(pending["rate"]), events)
    elif state["pending"] is not None and state["pending"]["kind"] in ("event", "training"):
        what = (
            "EVENT LV<n> [BOOST …] [DOUBLE]"
            if state["pending"]["kind"] == "event"
            else "TRAIN <能力と数>"
        )
        name = player["name"]
        events.append(
            event("waiting", f"{name}さん、続けて {what} か SKIP。", seat=seat, waiting=[seat])
        )


def _move(state: State, seat: int, command: Move, rng: Rng, events: Events) -> None:
    player = state["players"][seat]
    name = player["name"]
    if command.idol not in player["idols"]:
        raise RuleError(
            f"{command.idol} は{name}さんのアイドルではありません(あなたのアイドル: "
            f"{'・'.join(player['idols'])})。"
        )
    if state["turn_state"]["moved"]:
        raise RuleError("この手番はもうアイドルを動かしました(アクションは1手番に1回)。")
    board = board_of(state)
    goal = _goal(board)
    current = player["positions"][command.idol]
    if current == goal:
        raise RuleError(f"{command.idol} はもうゴールにいます。")
    due = due_idols(state, seat)
    if command.idol not in due:
        raise RuleError(
            f"この手番に動かせるのは {'・'.join(due)} です(前の手番に {command.idol} "
            "を動かしました。"
            "A と B は手番ごとに交互)。"
        )
    target = space_of(board, command.space)
    if target is None:
        raise RuleError(
            f"ボード{board.id}に {command.space} というマスはありません(マス: "
            f"{' '.join(s.id for s in board.spaces)})。"
        )
    if command.space not in reachable(board, current):
        raise RuleError(
            f"{current} から矢印をたどって {command.space} には行けません(行けるマス: "
            f"{' '.join(reachable(board, current))})。"
        )
    other = [idol for idol in player["idols"] if idol != command.idol]
    if other and player["positions"][other[0]] == goal and command.space != goal:
        raise RuleError(
            f"{other[0]} がゴールにいるので、{command.idol} はゴール({goal})へ"
            "動かすしかありません。"
        )
    if command.space != goal:
        for other_player in state["players"]:
            for idol, space in other_player["positions"].items():
                if space == command.space:
                    raise RuleError(
                        f"{command.space} にはもう {idol} がいます(ゴール以外のマスには1人だけ)。"
                    )
    player["positions"][command.idol] = command.space
    if player["a_idol"] is None:
        player["a_idol"] = command.idol
        player["idols"].sort(key=lambda idol: idol != command.idol)  # A first
    player["last_moved"] = command.idol
    state["turn_state"]["moved"] = True
    # The mover is the post's author (and owns the idol): the text says the way taken.
    events.append(
        event(
            "move",
            f"{command.idol} {current}→{command.space}({SPACE_JA[target.type]})",
            seat=seat,
        )
    )
    if command.space == goal and _both_at_goal(state, seat):
        state["finished"].append(seat)
        rank = len(state["finished"])
        if state["round"] == ROUNDS:
            player["finish_rank"] = rank
        events.append(event("finished", f"{name}さんは2人ともゴール({rank}番目)。", seat=seat))
    _resolve_space(state, seat, command, target, rng, events)


# --------------------------------------------------------------------------- checks


def _pending_message(state: State) -> str:
    pending = state["pending"]
    assert pending is not None
    name = _name(state, pending["seat"])
    if pending["kind"] == "event":
        return (
            f"{name}さんのイベント参加が先です: EVENT LV<n> [BOOST …] [DOUBLE] か SKIP "
            "を書いてください。"
        )
    if pending["kind"] == "training":
        return (
            f"{name}さんの特訓が先です: TRAIN <能力と数>(例: TRAIN Vo1)か SKIP を書いてください。"
        )
    return f"{name}さんはカードを {pending['count']} 枚捨てる必要があります: DISCARD <カード>。"


def _check_turn(state: State, seat: int, command: GameCommand) -> None:
    phase = state["phase"]
    if phase == "draft":
        if not isinstance(command, Pick):
            raise RuleError("まずアイドルを選びます(PICK <アイドル>、カタン取りの順)。")
        if seat != state["turn"]:
            raise RuleError(
                f"今アイドルを選ぶのは{_name(state, state['turn'])}さんです(指名は順番に)。"
            )
        return
    if isinstance(command, Pick):
        raise RuleError("アイドルの指名はもう終わっています。")
    if seat != state["turn"]:
        raise RuleError(f"今は{_name(state, state['turn'])}さんの手番です。")


def execute(state: State, seat: int, command: GameCommand, rng: Rng) -> Events:
    """Check and run one command on `state` (mutated: pass a copy)."""
    _check_turn(state, seat, command)
    events: Events = []
    player = state["players"][seat]
    pending = state["pending"]
    phase = state["phase"]
    if isinstance(command, Pick):
        draft = state["draft"]
        if command.idol not in draft["pool"]:
            left = "・".join(draft["pool"])
            raise RuleError(f"{command.idol} は選べません(残りのアイドル: {left})。")
        draft["pool"].remove(command.idol)
        player["idols"].append(command.idol)
        events.append(event("pick", f"{command.idol} を選びました。", seat=seat))
        draft["index"] += 1
        if draft["index"] >= len(draft["order"]):
            _begin_game(state, events)
        else:
            state["turn"] = draft["order"][draft["index"]]
            events.append(
                event(
                    "turn",
                    f"次の指名: {_name(state, state['turn'])}さん。",
                    seat=state["turn"],
                )
            )
        return events
    if isinstance(command, Discard):
        _discard(state, seat, command, events)
        _maybe_end_turn(state, events)
        return events
    if pending is not None and pending["kind"] == "discard":
        raise RuleError(_pending_message(state))
    if isinstance(command, Convert):
        want = MEMORY_CHIPS if command.chip == "MEMORY" else MONEY_CHIPS
        if len(command.abilities) != want:
            raise RuleError(
                f"{command.chip} で得るチップは {want} 枚です(例: CONVERT {command.chip} "
                f"{' '.join(['Vo'] * want)})。"
            )
        key = "memory" if command.chip == "MEMORY" else "money"
        if player[key] < 1:
            raise RuleError(f"{'思い出' if key == 'memory' else 'マニー'}チップを持っていません。")
        player[key] -= 1
        for ability in command.abilities:
            player["chips"][ability] += 1
        events.append(
            event(
                "convert",
                f"{'思い出' if key == 'memory' else 'マニー'}→{' '.join(command.abilities)}",
                seat=seat,
            )
        )
        return events
    if isinstance(command, CardPlay):
        _play_card(state, seat, command, rng, events)
        return events
    if phase == "final":
        if not isinstance(command, Train):
            raise RuleError("最後の特訓です: TRAIN <能力と数>(何も上げないなら TRAIN)。")
        _train(state, seat, command.levels, content().tables.training_rate, events)
        state["players"][seat]["trained_final"] = True
        order = state["final_order"]
        index = order.index(seat) + 1
        if index < len(order):
            state["turn"] = order[index]
            events.append(
                event(
                    "turn", f"次の特訓は{_name(state, state['turn'])}さんです。", seat=state["turn"]
                )
            )
        else:
            _finish(state, events)
        return events
    if isinstance(command, Move):
        if pending is not None:
            raise RuleError(_pending_message(state))
        _move(state, seat, command, rng, events)
    elif isinstance(command, EventEntry):
        if pending is None or pending["kind"] != "event":
            raise RuleError("今はイベントに参加できません(イベントのマスか、移動の直後に MONEY)。")
        state["pending"] = None
        _enter_event(state, seat, command, rng, events)
    elif isinstance(command, Train):
        if pending is not None and pending["kind"] == "training":
            state["pending"] = None
            _train(state, seat, command.levels, int(pending["rate"]), events)
        elif pending is None and not state["turn_state"]["moved"]:
            powers = list(_powers(state, seat, "pre_turn_training"))
            if not powers:
                raise RuleError(
                    "特訓は特訓のマスに止まったときだけです(手番の前に特訓できるのは美希のような効果があるとき)。"
                )
            if state["turn_state"]["pre_trained"]:
                raise RuleError("手番の前の特訓はもう行いました。")
            state["turn_state"]["pre_trained"] = True
            _train(state, seat, command.levels, powers[0].rate, events)
            return events
        else:
            raise RuleError(
                _pending_message(state) if pending is not None else "今は特訓できません。"
            )
    elif isinstance(command, Skip):
        if pending is None or pending["kind"] not in ("event", "training"):
            raise RuleError("見送るもの(イベントや特訓)がありません。")
        what = "イベント" if pending["kind"] == "event" else "特訓"
        state["pending"] = None
        if pending["kind"] == "event":
            # R 5.1 「この判定に限り」: a boost card played for this check goes with it.
            state["turn_state"]["boost"] = {}
        events.append(event("skip", f"{what}を見送りました。", seat=seat))
    _maybe_end_turn(state, events)
    return events


def _maybe_end_turn(state: State, events: Events) -> None:
    if state["phase"] == "play" and state["turn_state"]["moved"] and state["pending"] is None:
        _end_turn(state, events)


# --------------------------------------------------------------------------- queries


def waiting_for(state: State) -> list[int]:
    if state["over"]:
        return []
    pending = state["pending"]
    if pending is not None:
        return [pending["seat"]]
    return [state["turn"]]


def _candidates(state: State, seat: int) -> Iterator[GameCommand]:
    player = state["players"][seat]
    phase = state["phase"]
    if phase == "draft":
        for idol in state["draft"]["pool"]:
            yield Pick(idol)
        return
    pending = state["pending"]
    cards = content().cards
    if pending is not None and pending["kind"] == "discard":
        for name in dict.fromkeys([*player["hand"], *player["kept"]]):
            yield Discard(name)
        return
    if pending is not None and pending["kind"] == "event":
        for level in (1, 2, 3):
            yield EventEntry(level)
            if player["memory"]:
                yield EventEntry(level, double=True)
        for level, boost in _cheapest_boosts(state, seat):
            yield EventEntry(level, boost)
            if player["memory"]:
                yield EventEntry(level, boost, double=True)
        yield Skip()
    if pending is not None and pending["kind"] == "training":
        yield from _train_candidates(player, int(pending["rate"]))
        yield Skip()
    if pending is None and phase == "play" and not state["turn_state"]["moved"]:
        board = board_of(state)
        vo = any(True for _ in _powers(state, seat, "lesson_vo"))
        for idol in due_idols(state, seat):
            for space in reachable(board, player["positions"][idol]):
                yield Move(idol, space)
                kind = space_of(board, space)
                if vo and kind is not None and kind.type == "lesson":
                    yield Move(idol, space, vo=True)  # 千早: refused where it changes nothing
                if player["money"] and kind is not None and kind.type not in ("start", "goal"):
                    yield Move(idol, space, money=True)
        powers = list(_powers(state, seat, "pre_turn_training"))
        if powers and not state["turn_state"]["pre_trained"]:
            yield from _train_candidates(player, powers[0].rate)
    if phase == "final":
        yield from _train_candidates(player, content().tables.training_rate)
    for name in dict.fromkeys(player["hand"]):
        card = cards[name]
        count = {"choice": card.amount, "ability": card.amount}.get(card.effect, 0)
        for chosen in itertools.combinations_with_replacement(ABILITIES, count):
            yield CardPlay(name, chosen)  # every mix of its abilities (none: the card alone)
    if player["memory"]:
        for chosen in itertools.combinations_with_replacement(ABILITIES, MEMORY_CHIPS):
            yield Convert("MEMORY", chosen)
    if player["money"]:
        for chosen in itertools.combinations_with_replacement(ABILITIES, MONEY_CHIPS):
            yield Convert("MONEY", chosen)
    for name in dict.fromkeys([*player["hand"], *player["kept"]]):
        yield Discard(name)  # a held card let go at will (R 4.6: the choice is the player's)


def _train_candidates(player: Mapping[str, Any], rate: int) -> Iterator[Train]:
    """TRAIN alone, and each number of levels of one ability the chips pay for (a 特訓 mixing
    abilities is shown as a pattern: `examples`)."""
    yield Train()
    for ability in ABILITIES:
        for levels in range(1, player["chips"][ability] // rate + 1):
            yield Train(((ability, levels),))


def _check_abilities(state: State, seat: int) -> dict[str, int]:
    """The abilities the event check of `seat` sees before BOOST chips: its own, the boost
    cards played for this check and its idols' event bonuses (as `_enter_event` counts)."""
    shown = dict(state["players"][seat]["abilities"])
    for ability, count in state["turn_state"]["boost"].items():
        shown[ability] += count
    for power in _powers(state, seat, "event_bonus"):
        if power.ability is not None:
            shown[power.ability] += power.amount
    return shown


def _cheapest_boosts(state: State, seat: int) -> list[tuple[int, tuple[tuple[str, int], ...]]]:
    """D: for each level the check fails without chips, the boosts (within the chips held)
    that make it pass with no chip to spare — one for a fixed target, one per way of giving an
    any-target's numbers to Vo/Da/Vi. Other boosts are written by hand (`examples`)."""
    chips = state["players"][seat]["chips"]
    shown = _check_abilities(state, seat)
    event_card = content().events[state["event"]]
    found: list[tuple[int, tuple[tuple[str, int], ...]]] = []
    for level in event_card.levels:
        kind, target = level_target(state, level, event_card)
        if meets(shown, kind, target):
            continue
        if isinstance(target, dict):
            wanted = [dict(target)]
        else:
            numbers = sorted(target, reverse=True) + [0] * (len(ABILITIES) - len(target))
            wanted = [
                dict(zip(ABILITIES, order, strict=True))
                for order in set(itertools.permutations(numbers))
            ]
        needs: list[dict[str, int]] = []
        for need in wanted:
            boost = {a: max(0, need.get(a, 0) - shown[a]) for a in ABILITIES}
            if all(boost[a] <= chips[a] for a in ABILITIES) and boost not in needs:
                needs.append(boost)
        for boost in needs:
            if any(
                other != boost and all(other[a] <= boost[a] for a in ABILITIES) for other in needs
            ):
                continue  # another way spends fewer of every chip
            found.append((level.level, tuple((a, n) for a, n in boost.items() if n)))
    found.sort()
    return found


def examples(state: State, actor: Actor) -> list[tuple[str, bool]]:
    """Lines `legal` does not list one by one, one example each to follow (none is sealed):
    a boost mixing abilities, a 特訓 of several abilities, and a whole turn on one line."""
    if state["over"] or not isinstance(actor, int) or isinstance(actor, bool):
        return []
    if actor not in waiting_for(state):
        return []
    player = state["players"][actor]
    chips = {a: n for a, n in player["chips"].items() if n}
    pending = state["pending"]
    shown: list[GameCommand] = []
    if pending is not None and pending["kind"] == "event" and len(chips) > 1:
        shown.append(EventEntry(1, tuple((a, 1) for a in ABILITIES if a in chips)))
    rate = 0
    if pending is not None and pending["kind"] == "training":
        rate = int(pending["rate"])
    elif state["phase"] == "final":
        rate = content().tables.training_rate
    trainable = [a for a in ABILITIES if rate and player["chips"][a] >= rate]
    if len(trainable) > 1:
        shown.append(Train(tuple((a, 1) for a in trainable)))
    if pending is None and state["phase"] == "play" and not state["turn_state"]["moved"]:
        board = board_of(state)
        wanted = {"event", "training"}  # one whole turn on one line of each
        for command in legal_commands(state, actor):
            space = space_of(board, command.space) if isinstance(command, Move) else None
            if not isinstance(command, Move) or space is None or space.type not in wanted:
                continue
            wanted.discard(space.type)
            if space.type == "event":
                shown.append(Move(command.idol, command.space, event=EventEntry(1)))
            else:
                shown.append(Move(command.idol, command.space, train=Train()))
    accepted: list[tuple[str, bool]] = []
    for command in shown:
        try:
            execute(copy_state(state), actor, command, Rng("legal", 0))
        except RuleError:
            continue
        accepted.append((command.canonical(), False))
    return accepted


def legal_commands(state: State, actor: Actor) -> list[GameCommand]:
    """Commands `actor` may give now: every candidate that the rules accept (checked on a
    copy). Enumerable prefixes: EVENT without BOOST, TRAIN one level, CONVERT one ability."""
    if state["over"] or not isinstance(actor, int) or isinstance(actor, bool):
        return []
    if actor not in waiting_for(state):
        return []
    return legal.accepted(state, actor, _candidates(state, actor), execute, copy_state)


def default_commands(state: State, seat: int) -> list[str]:
    """What the bot posts for a seat past its deadline (D, docs/rules/idolwp.md): the first
    idol left in the draft; the highest event level that succeeds without chips, else SKIP;
    no training (TRAIN alone); the cards over the limit, last drawn first; the due idol to the
    nearest free space (the goal when nothing else is free)."""
    if seat not in waiting_for(state):
        return []
    player = state["players"][seat]
    if state["phase"] == "draft":
        return [Pick(state["draft"]["pool"][0]).canonical()]
    if state["phase"] == "final":
        return [Train().canonical()]
    pending = state["pending"]
    if pending is not None:
        if pending["kind"] == "discard":
            names = [*player["hand"], *player["kept"]]
            return [Discard(name).canonical() for name in reversed(names[-pending["count"] :])]
        if pending["kind"] == "training":
            return [Train().canonical()]
        event_card = content().events[state["event"]]
        for level in reversed(event_card.levels):
            kind, target = level_target(state, level, event_card)
            if meets(player["abilities"], kind, target):
                return [EventEntry(level.level).canonical()]
        return [Skip().canonical()]
    board = board_of(state)
    for command in legal_commands(state, seat):
        if isinstance(command, Move) and not command.money:
            lines = [command.canonical()]
            space = space_of(board, command.space)
            if space is not None and space.type == "event":
                lines.append(Skip().canonical())
            if space is not None and space.type == "training":
                lines.append(Train().canonical())
            return lines
    return []


def turn_key(state: State) -> str:
    if state["over"]:
        return "over"
    return f"{state['phase']}:{state['round']}:{state['step']}:{state['turn']}"
