"""掲示板進行カードゲーム as the bot runs it: docs/rules/cardbattle.md.

R = the source (seeds/004_…txt, its L:/f: headings quoted), I = the project's fixed
interpretation (shared/rules/cardbattle.md), D = a decision taken here; each written beside the
line it interprets in docs/rules/cardbattle.md. The source has no worked example: every D has a
test named after it.

A battle: two players seal a deck each (3 normal cards, up to 3 magic cards) through /sealed;
both are revealed at once; 10 turns a player, alternating, the first player decided by the dice
before the decks; on a turn the player's cards attack (the automatic rule, or ATTACK 1>2 …);
after each result a response window for MAGIC, closed when both players PASS; abilities fire by
their timing, each once a game; losing conditions (total cost over 1,000) come first.

State (plain JSON): ``pool`` (the game's cards, name -> CardSpec as JSON, from the options the
app filled in), ``players[i]`` with ``field`` (three cards in deck order: ``name``, ``cost``,
``attack``, ``durability`` (printed), ``left``, ``state`` active | destroyed | removed,
``shield``, ``bonus`` (attack raised), ``ability`` (the one the die chose, or None),
``ability_used``), ``magic`` (undeclared), ``magic_used``, ``cost_change``; ``step`` (the
simultaneous deck step, kit.secret); ``first``, ``dice``; ``phase`` deck | attack | window |
over; ``turn`` 0–20; ``passed`` (seats that passed in this window); ``log`` (the last result's
rows); ``winner``, ``reason``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

from app.games.base import Actor, Rng, RuleError, State, event, private_event
from app.games.cardbattle.cards import (
    TIMING_JA,
    Ability,
    CardSpec,
    ability_text,
)
from app.games.cardbattle.commands import Attack, Deck, GameCommand, Magic, Pass
from app.games.cardbattle.content import starter_pool
from app.games.kit import legal, secret

__all__ = [
    "INITIAL_COST",
    "LAST_TURN",
    "PLAYERS",
    "TURNS_EACH",
    "CardbattleOptions",
    "copy_state",
    "deck_cost",
    "default_commands",
    "execute",
    "legal_commands",
    "needs_seal",
    "reason_text",
    "setup",
    "total_cost",
    "turn_key",
    "waiting_for",
]

PLAYERS = 2
INITIAL_COST = 1000  # R 初期コスト ← 1000 (増えることは無い)
TURNS_EACH = 10  # R 1プレイヤー毎の手番数 = 10
LAST_TURN = TURNS_EACH * PLAYERS
DECK_SIZE = 3
SUGGESTED_DECKS = 5

Events = list[dict[str, Any]]


class CardbattleOptions(BaseModel):
    """``pool``: the game's cards (name -> card), put in by the app from the site's card
    registry when the game is made (docs/cards.md); a game's record names the versions it was
    played with. Without it (the library alone) the starter pool is the game's."""

    model_config = ConfigDict(extra="forbid")

    pool: dict[str, CardSpec] = Field(default_factory=dict)
    # Player name -> the pool's cards that player holds (R 規定枚数; docs/cards.md
    # "Collections"), put in by the app when the game starts: a deck is drawn from these only.
    # A player not named (the library alone, a bot's seat) may use the whole pool.
    collections: dict[str, list[str]] = Field(default_factory=dict)


# --------------------------------------------------------------------------- small helpers


def _name(state: State, seat: int) -> str:
    name: str = state["players"][seat]["name"]
    return name


def copy_state(state: State) -> State:
    """A deep copy; the pool never changes and is shared."""
    copied = dict(state)
    copied["players"] = [
        {
            **player,
            "field": [dict(card) for card in player["field"]],
            "magic": list(player["magic"]),
            "magic_used": list(player["magic_used"]),
        }
        for player in state["players"]
    ]
    step = state["step"]
    if step is not None:
        copied["step"] = {**step, "waiting": list(step["waiting"]), "sealed": dict(step["sealed"])}
    copied["passed"] = list(state["passed"])
    copied["log"] = list(state["log"])
    copied["dice"] = list(state["dice"])
    return copied


def spec(state: State, name: str) -> CardSpec:
    return _spec(orjson.dumps(state["pool"][name], option=orjson.OPT_SORT_KEYS))


@functools.lru_cache(maxsize=2048)
def _spec(card: bytes) -> CardSpec:
    """A pool entry's model, by its JSON: validated once, not at every look-up of a post
    (a dozen a post; CardSpec is frozen, so one object may serve every game)."""
    return CardSpec.model_validate(orjson.loads(card))


def deck_cost(player: Mapping[str, Any]) -> int:
    """R デッキコスト: the normal cards' costs."""
    return sum(int(card["cost"]) for card in player["field"])


def total_cost(state: State, seat: int) -> int:
    """R 総コスト: the deck cost, the declared magic cards' costs, and cost abilities (D)."""
    player = state["players"][seat]
    magic = sum(int(state["pool"][name]["cost"]) for name in player["magic_used"])
    return deck_cost(player) + magic + int(player["cost_change"])


def turn_player(state: State) -> int:
    """Odd turns are the first player's, even turns the second's."""
    first: int = state["first"]
    return first if state["turn"] % 2 == 1 else 1 - first


def active(player: Mapping[str, Any]) -> list[int]:
    return [i for i, card in enumerate(player["field"]) if card["state"] == "active"]


def _card_label(state: State, seat: int, index: int) -> str:
    return f"{_name(state, seat)}の{index + 1}番 {state['players'][seat]['field'][index]['name']}"


def _own_label(state: State, seat: int, index: int) -> str:
    """A card of the side whose ability or magic card is told just before it."""
    return f"{index + 1}番 {state['players'][seat]['field'][index]['name']}"


def _their_label(state: State, seat: int, index: int) -> str:
    """A card of the other side, as an ability or magic card of `1 - seat` reaches it."""
    return f"相手の{index + 1}番 {state['players'][seat]['field'][index]['name']}"


# --------------------------------------------------------------------------- setup


def setup(players: list[str], options: CardbattleOptions, rng: Rng) -> State:
    """D: each player rolls a die (again on a tie); the higher moves first, announced before
    the decks are sealed (every timeout win goes to the second player, so it is told first)."""
    pool = dict(options.pool) or {card.name: card for card in starter_pool()}
    dice = [rng.randint(1, 6), rng.randint(1, 6)]
    while dice[0] == dice[1]:
        dice = [rng.randint(1, 6), rng.randint(1, 6)]
    first = 0 if dice[0] > dice[1] else 1
    return {
        "kind": "cardbattle",
        "pool": {name: card.model_dump(mode="json") for name, card in pool.items()},
        # Per seat, the cards its player holds, or None: the whole pool (docs/cards.md).
        "collections": [options.collections.get(name) for name in players],
        "players": [
            {"name": name, "field": [], "magic": [], "magic_used": [], "cost_change": 0}
            for name in players
        ],
        "dice": dice,
        "first": first,
        "step": secret.open_step("decks", range(len(players))),
        "phase": "deck",
        "turn": 0,
        "passed": [],
        "log": [],
        "log_turn": None,  # the turn and the attacking seat of `log`
        "log_seat": None,
        "seq": 0,
        "winner": None,
        "reason": None,
        "over": False,
    }


def needs_seal(state: State, command: GameCommand) -> bool | None:
    """DECK is sealed until both are in (R: decks are prepared in secret); the rest is public."""
    return isinstance(command, Deck)


# --------------------------------------------------------------------------- decks


def held(state: State, seat: int) -> list[str] | None:
    """The cards the seat's player holds (their collection when the game started), or None:
    the whole pool. A state from before collections has none."""
    collections = state.get("collections")
    return collections[seat] if collections else None


def check_deck(state: State, seat: int, command: Deck) -> list[CardSpec]:
    pool = state["pool"]
    unknown = [name for name in (*command.cards, *command.magic) if name not in pool]
    if unknown:
        raise RuleError(
            f"{'、'.join(unknown)} はこのゲームのカードプールにありません"
            "(カード一覧 /cards、承認されたカードだけが使えます)。"
        )
    twice = next((name for name in command.cards if command.cards.count(name) > 1), None)
    if twice is not None:
        raise RuleError(
            f"{twice} が2枚あります(コレクションに同じカードは1枚なので、デッキの3枚は"
            "別々のカードです)。"
        )
    holding = held(state, seat)
    missing = [
        n for n in (*command.cards, *command.magic) if holding is not None and n not in holding
    ]
    if missing:
        raise RuleError(
            f"{'、'.join(missing)} はあなたのコレクションにありません(デッキは持っているカード"
            "から組みます)。"
        )
    cards = [spec(state, name) for name in command.cards]
    magic = [spec(state, name) for name in command.magic]
    wrong = [card.name for card in cards if card.kind != "normal"]
    if wrong:
        raise RuleError(
            f"{'、'.join(wrong)} はマジックカードなので、デッキの3枚には入りません"
            "(3枚は通常カード、マジックカードは MAGIC の後に書きます)。"
        )
    wrong = [card.name for card in magic if card.kind != "magic"]
    if wrong:
        raise RuleError(
            f"{'、'.join(wrong)} は通常カードなので、MAGIC の後には書けません"
            "(MAGIC の後はマジックカード)。"
        )
    again = next((name for name in command.magic if command.magic.count(name) > 1), None)
    if again is not None:
        raise RuleError(f"{again} が2枚あります(同じマジックカードは1枚まで、一枚毎に1回)。")
    cost = sum(card.cost for card in cards)
    if cost > INITIAL_COST:
        raise RuleError(
            f"デッキコストが {cost} で、初期コスト {INITIAL_COST} を超えています"
            f"(総コストが{INITIAL_COST}を超えると負けるため、超えるデッキは受け付けません)。"
        )
    return cards


def _seal_deck(state: State, seat: int, command: Deck, rng: Rng, events: Events) -> None:
    check_deck(state, seat, command)
    step = state["step"]
    already = str(seat) in step["sealed"]
    secret.seal(step, seat, {"cards": list(command.cards), "magic": list(command.magic)})
    events.append(
        private_event(
            "deck_sealed",
            f"デッキを封印しました: {command.canonical()}(相手も封印するまで非公開。"
            "出し直すと置き換わります)",
            seat,
        )
    )
    events.append(
        event(
            "deck",
            f"{_name(state, seat)}さんがデッキを"
            f"{'封印し直しました' if already else '封印しました'}。",
            seat=seat,
        )
    )
    if secret.is_complete(step):
        _reveal(state, rng, events)


def _reveal(state: State, rng: Rng, events: Events) -> None:
    """R: both decks at once; D: the die picks which ability a card with several will use (R
    複数記載されている場合、ランダムで実行される内容が選ばれる 追記: 選出方法はダイス); entry
    abilities fire, the first player's cards first, each in deck order."""
    decks = secret.reveal(state["step"])
    state["step"] = None
    lines = ["【デッキ公開】(能力が複数あるカードは、使う1つをダイスで決めました)"]
    for seat in _order(state):
        chosen = decks[seat]
        player = state["players"][seat]
        player["magic"] = list(chosen["magic"])
        player["field"] = []
        for name in chosen["cards"]:
            card = spec(state, name)
            ability: dict[str, Any] | None = None
            if card.abilities:
                index = rng.randint(1, len(card.abilities)) - 1 if len(card.abilities) > 1 else 0
                ability = card.abilities[index].model_dump(mode="json")
            player["field"].append(
                {
                    "name": name,
                    "cost": card.cost,
                    "attack": card.attack,
                    "durability": card.durability,
                    "left": card.durability,
                    "state": "active",
                    "shield": 0,
                    "bonus": 0,
                    "ability": ability,
                    "ability_used": False,
                }
            )
        lines.append(
            f"{_name(state, seat)}: " + "、".join(_revealed(card) for card in player["field"])
        )
    events.append(event("reveal", "\n".join(lines)))
    for seat in _order(state):
        for index in range(DECK_SIZE):
            _fire(state, seat, index, "entry", events)
    state["phase"] = "window"
    state["passed"] = []
    if not _check_end(state, events):
        events.append(_window(state, "、両者 PASS で第1手番"))


def _revealed(card: Mapping[str, Any]) -> str:
    """A revealed card as the thread shows it: its name and the ability it will use (the die
    chose it among several); its attack and durability, the magic cards left and the total
    cost are on the board beneath, the rest of the card on the game page."""
    ability = card["ability"]
    if ability is None:
        return f"{card['name']}(能力なし)"
    return f"{card['name']}({ability_text(Ability.model_validate(ability))})"


def _window(state: State, then: str) -> dict[str, Any]:
    """The response window's line: who may still write MAGIC or PASS (the reply adds no
    手番待ち line for them), and after the reveal what both PASSes lead to."""
    seats = waiting_for(state)
    names = "両者" if len(seats) == PLAYERS else "、".join(_name(state, seat) for seat in seats)
    return event("window", f"魔法の宣言受付: {names}(MAGIC か PASS{then})", waiting=seats)


def _order(state: State) -> list[int]:
    return [state["first"], 1 - state["first"]]


# --------------------------------------------------------------------------- abilities


def _fire(state: State, seat: int, index: int, timing: str, events: Events) -> None:
    """A normal card's ability at its timing, once a game (R 一枚毎に1回)."""
    card = state["players"][seat]["field"][index]
    ability = card["ability"]
    if ability is None or card["ability_used"] or ability["timing"] != timing:
        return
    if timing != "destroyed" and card["state"] != "active":
        return
    card["ability_used"] = True
    what = Ability.model_validate(ability)
    text = f"{_card_label(state, seat, index)}({TIMING_JA[timing]})"
    _effect(state, seat, what, index, None, text, events)


def _effect(
    state: State,
    seat: int,
    ability: Ability,
    source: int | None,
    target: int | None,
    text: str,
    events: Events,
) -> None:
    """Run an ability for `seat`. `source`: the card it is on (None for a magic card);
    `target`: a card number chosen by the player (0-based), else the automatic rule (D)."""
    own = state["players"][seat]
    other_seat = 1 - seat
    other = state["players"][other_seat]
    effect = ability.effect
    amount = ability.amount
    if effect in ("damage", "remove"):
        index = target if target is not None else _auto_enemy(other, effect)
        if index is None or other["field"][index]["state"] != "active":
            events.append(event("ability", f"{text} → 対象がいません。"))
            return
        if effect == "remove":
            other["field"][index]["state"] = "removed"
            events.append(
                event("ability", f"{text} → {_their_label(state, other_seat, index)} を除外。")
            )
            return
        _hurt(state, other_seat, index, amount, text, events)
    elif effect == "damage_all":
        targets = active(other)
        events.append(event("ability", f"{text} → 相手の全カードに {amount}。"))
        for index in targets:
            # R 除外 (耐久力の値は関係しない): a card removed (or destroyed) by what an earlier
            # target set off is off the field: the rest of the damage does not reach it.
            if other["field"][index]["state"] == "active":
                _hurt(state, other_seat, index, amount, "", events)
    elif effect == "heal":
        index = target if target is not None else _auto_hurt_own(own)
        if index is None or own["field"][index]["state"] != "active":
            events.append(event("ability", f"{text} → 回復するカードがいません。"))
            return
        card = own["field"][index]
        card["left"] = min(card["durability"], card["left"] + amount)
        events.append(
            event("ability", f"{text} → {_own_label(state, seat, index)} 耐久 {card['left']}。")
        )
    elif effect in ("shield", "attack_up"):
        index = source if source is not None else target
        if index is None:
            index = _auto_own(own, effect)
        if index is None or own["field"][index]["state"] != "active":
            events.append(event("ability", f"{text} → 対象がいません。"))
            return
        card = own["field"][index]
        if effect == "shield":
            card["shield"] += amount
            said = f"次の攻撃を {card['shield']} 防ぐ"
        else:
            card["bonus"] += amount
            said = f"攻撃力 {card['attack'] + card['bonus']}"
        # A card's own ability on itself names it once.
        who = "" if index == source else f" {_own_label(state, seat, index)}"
        events.append(event("ability", f"{text} →{who} {said}。"))
    elif effect == "revive":
        down = [i for i, card in enumerate(own["field"]) if card["state"] == "destroyed"]
        index = target if target is not None and target in down else (down[0] if down else None)
        if index is None:
            events.append(event("ability", f"{text} → 破壊されたカードがありません。"))
            return
        card = own["field"][index]
        card["state"] = "active"
        card["left"] = min(card["durability"], amount)
        events.append(
            event(
                "ability",
                f"{text} → {_own_label(state, seat, index)} が耐久 {card['left']} で復活。",
            )
        )
    elif effect == "cost":
        own["cost_change"] += amount
        events.append(
            event(
                "ability",
                f"{text} → {_name(state, seat)}の総コスト {total_cost(state, seat)}"
                + f"{_over_note(state, seat)}。",
            )
        )


def _auto_enemy(player: Mapping[str, Any], effect: str) -> int | None:
    """D: harm goes to the opposing card in action with the lowest durability left (removal:
    the highest attack); ties to the lower number."""
    cards = [(i, card) for i, card in enumerate(player["field"]) if card["state"] == "active"]
    if not cards:
        return None
    if effect == "remove":
        return min(cards, key=lambda item: (-(item[1]["attack"] + item[1]["bonus"]), item[0]))[0]
    return min(cards, key=lambda item: (item[1]["left"], item[0]))[0]


def _auto_hurt_own(player: Mapping[str, Any]) -> int | None:
    cards = [(i, card) for i, card in enumerate(player["field"]) if card["state"] == "active"]
    if not cards:
        return None
    return min(cards, key=lambda item: (item[1]["left"] - item[1]["durability"], item[0]))[0]


def _auto_own(player: Mapping[str, Any], effect: str) -> int | None:
    cards = [(i, card) for i, card in enumerate(player["field"]) if card["state"] == "active"]
    if not cards:
        return None
    if effect == "attack_up":
        return min(cards, key=lambda item: (-(item[1]["attack"] + item[1]["bonus"]), item[0]))[0]
    return min(cards, key=lambda item: (item[1]["left"], item[0]))[0]


def _hurt(state: State, seat: int, index: int, amount: int, text: str, events: Events) -> int:
    """Durability down by `amount`; below 0 counts as 0 (R 耐久力 0以下は0として扱う); at 0 the
    card is destroyed and its destroyed ability fires."""
    card = state["players"][seat]["field"][index]
    if card["state"] != "active":  # R 除外: off the field, a card takes nothing
        return int(card["left"])
    card["left"] = max(0, card["left"] - amount)
    destroyed = card["left"] <= 0
    if text:
        events.append(
            event(
                "ability",
                f"{text} → {_their_label(state, seat, index)} に {amount}、耐久 {card['left']}"
                + ("、破壊。" if destroyed else "。"),
            )
        )
    if destroyed:
        card["state"] = "destroyed"
        _fire(state, seat, index, "destroyed", events)
    return int(card["left"])


# --------------------------------------------------------------------------- a turn


def _begin_turn(state: State, events: Events) -> None:
    state["turn"] += 1
    state["phase"] = "attack"
    state["passed"] = []
    seat = turn_player(state)
    events.append(
        event(
            "turn",
            f"第{state['turn']}手番: {_name(state, seat)}の攻撃"
            + ("(ATTACK か ATTACK 1>2)" if state["turn"] <= PLAYERS else "(ATTACK)"),
            seat=seat,
        )
    )
    for index in range(DECK_SIZE):
        _fire(state, seat, index, "turn_start", events)
    _check_end(state, events)


def _attack(state: State, seat: int, command: Attack, events: Events) -> None:
    """R 通常カードによる攻撃: each card in action attacks once, lowering the target's
    durability by its attack. D: the pairs written first, in their order; the other cards then
    attack by the automatic rule (attackers in deck order, target the opposing card with the
    lowest durability left, ties to the lower number); a written target no longer in action
    is replaced by the automatic one."""
    own = state["players"][seat]
    other_seat = 1 - seat
    other = state["players"][other_seat]
    attackers = [a - 1 for a, _ in command.pairs]
    twice = next((a for a in attackers if attackers.count(a) > 1), None)
    if twice is not None:
        raise RuleError(
            f"{twice + 1}番 {own['field'][twice]['name']} を2回攻撃させています"
            "(1枚の通常カードが攻撃できるのは手番に1回)。"
        )
    for number, target in command.pairs:
        card = own["field"][number - 1]
        if card["state"] != "active":
            raise RuleError(f"{number}番 {card['name']} は戦闘不能なので攻撃できません。")
        if other["field"][target - 1]["state"] == "removed":
            raise RuleError(f"相手の{target}番は除外されています。")
    chosen = dict((a - 1, t - 1) for a, t in command.pairs)
    order = attackers + [i for i in range(DECK_SIZE) if i not in chosen]
    rows: list[dict[str, Any]] = []
    for index in order:
        card = own["field"][index]
        if card["state"] != "active":
            continue
        _fire(state, seat, index, "attack", events)
        if card["state"] != "active":
            continue
        written = chosen.get(index)
        if written is not None and other["field"][written]["state"] == "active":
            target = written
        else:
            automatic = _auto_enemy(other, "damage")
            if automatic is None:
                break
            target = automatic
        victim = other["field"][target]
        power = card["attack"] + card["bonus"]
        blocked = min(victim["shield"], power)
        victim["shield"] -= blocked
        damage = power - blocked
        left = _hurt(state, other_seat, target, damage, "", events)
        rows.append(
            {
                "attacker": card["name"],
                "attacker_number": index + 1,
                "target": victim["name"],
                "target_number": target + 1,
                "damage": damage,
                "blocked": blocked,
                "left": left,
                "destroyed": victim["state"] != "active",
            }
        )
    state.update(log=rows, log_turn=state["turn"], log_seat=seat)
    lines = [f"【第{state['turn']}手番】{_name(state, seat)}の攻撃"]
    for row in rows:
        blocked = f"(防御 {row['blocked']})" if row["blocked"] else ""
        lines.append(
            f"{row['attacker_number']}.{row['attacker']} → 相手{row['target_number']}."
            f"{row['target']} {row['damage']}{blocked}、"
            + ("破壊" if row["destroyed"] else f"残り {row['left']}")
        )
    if not rows:
        lines.append("攻撃できるカードがありません。")
    events.append(event("result", "\n".join(lines), seat=seat))


def _declare(state: State, seat: int, command: Magic, rng: Rng, events: Events) -> None:
    """R マジックカード使用の宣言: the card's ability runs as it is declared (I: in answer to the
    last posted result, in the response window); its cost joins the total."""
    player = state["players"][seat]
    if command.card not in player["magic"]:
        if command.card in player["magic_used"]:
            raise RuleError(f"{command.card} はもう宣言しました(一枚毎に1回)。")
        raise RuleError(f"{command.card} はあなたのデッキのマジックカードではありません。")
    card = spec(state, command.card)
    target = None if command.target is None else command.target - 1
    # Decided before the die (docs/security.md): the target must do for every ability the die
    # may choose, so no refusal tells the roll, and a retry cannot pick its ability.
    for possible in card.abilities if target is not None else ():
        side = state["players"][1 - seat] if possible.effect in ("damage", "remove") else player
        if side["field"][target]["state"] == "removed":
            raise RuleError(f"{command.target}番のカードは除外されているので対象にできません。")
    ability = card.abilities[0]
    if len(card.abilities) > 1:
        # R 複数記載されている場合、ランダムで実行される内容が選ばれる (追記: ダイス).
        roll = rng.randint(1, len(card.abilities))
        ability = card.abilities[roll - 1]
        events.append(
            event("dice", f"ダイス {roll}: {command.card} の能力は「{ability_text(ability)}」。")
        )
    player["magic"].remove(command.card)
    player["magic_used"].append(command.card)
    # The declaration's cost in one line (the card is named by 「✔ MAGIC 火花」 before it), then
    # what the card did (its effect says its amount: 「火花 → 相手の3番 … に 50、耐久 260」).
    events.append(
        event(
            "magic",
            f"{_name(state, seat)}の総コスト {total_cost(state, seat)}(+{card.cost})"
            + _over_note(state, seat),
            seat=seat,
        )
    )
    _effect(state, seat, ability, None, target, command.card, events)
    state["passed"] = []


def _over_note(state: State, seat: int) -> str:
    """Said where a total cost goes over 1,000: the battle is then lost at its end, whatever
    the fields (the board's 「(超過)」 alone did not tell a newcomer)."""
    if total_cost(state, seat) <= INITIAL_COST:
        return ""
    return "、1000超過(このまま決着すると負け)"


# --------------------------------------------------------------------------- the end


def _check_end(state: State, events: Events) -> bool:
    """R 勝利/敗北: a side with no normal card in action loses (the other wiped it out)."""
    wiped = [seat for seat, player in enumerate(state["players"]) if not active(player)]
    if state["phase"] == "deck" or not wiped:
        return False
    _finish(state, wiped, events)
    return True


def _finish(state: State, wiped: list[int], events: Events) -> None:
    """Losing conditions first (R 敗北条件を満たした場合は、これが優先される): a total cost over
    1,000 at the end loses, exactly 1,000 does not; D both over: a draw. Then a wiped-out side
    loses; D both wiped out at once: a draw. After 20 turns with both sides standing, the
    second player wins (R 後攻のプレイヤー)."""
    over = [seat for seat in range(PLAYERS) if total_cost(state, seat) > INITIAL_COST]
    names = [_name(state, seat) for seat in range(PLAYERS)]
    second = 1 - state["first"]
    if len(over) == PLAYERS:
        winner, reason = None, "両者とも総コストが1000を超えたため引き分け"
    elif over:
        loser = over[0]
        winner = 1 - loser
        reason = (
            f"{names[loser]}の総コスト {total_cost(state, loser)} が1000を超えたため"
            f"{names[winner]}の勝ち{STORED_OVER_NOTE}"
        )
    elif len(wiped) == PLAYERS:
        winner, reason = None, "両者の通常カードが同時に全て戦闘不能になったため引き分け"
    elif wiped:
        winner = 1 - wiped[0]
        reason = f"{names[wiped[0]]}の通常カードが全て戦闘不能になったため{names[winner]}の勝ち"
    else:
        winner = second
        reason = f"10ターン経過時に両陣営にカードが残ったため、後攻の{names[second]}の勝ち"
    state.update(over=True, phase="over", winner=winner, reason=reason, passed=[])
    events.append(event("game_over", f"【決着】{reason_text(state)}。"))


# The note the state's ``reason`` ends with when a total cost over 1,000 decided the battle.
# It is in every stored game's state, which replays compare: it must stay these very words.
# Players read the reason through `reason_text`, which says it in their words (issue #43).
STORED_OVER_NOTE = "(R 敗北条件が優先)"  # not shown to players: reason_text says it
SHOWN_OVER_NOTE = "(超過の負けが優先)"


def reason_text(state: State) -> str | None:
    """Why the battle ended, as players read it (the end's post, the result's breakdown, the
    game page): the state's ``reason`` without the rule book's label."""
    reason: str | None = state["reason"]
    if reason is None:
        return None
    return reason.replace(STORED_OVER_NOTE, SHOWN_OVER_NOTE)


# --------------------------------------------------------------------------- commands


def execute(state: State, seat: int, command: GameCommand, rng: Rng) -> Events:
    """Check and run one command on `state` (mutated: pass a copy)."""
    events: Events = []
    phase = state["phase"]
    state["seq"] += 1
    if isinstance(command, Deck):
        if phase != "deck":
            raise RuleError("デッキはもう公開されています(封印は開始前だけ)。")
        _seal_deck(state, seat, command, rng, events)
        return events
    if phase == "deck":
        missing = "、".join(_name(state, s) for s in secret.missing(state["step"]))
        raise RuleError(
            f"まずデッキを封印します(DECK <通常カード3枚> [MAGIC <魔法>…] を非公開で、"
            f"まだの人: {missing})。"
        )
    if isinstance(command, Attack):
        if phase != "attack":
            raise RuleError(
                "今は魔法の宣言受付中です: MAGIC <カード> [対象] か PASS を書いてください。"
            )
        if seat != turn_player(state):
            raise RuleError(
                f"第{state['turn']}手番は{_name(state, turn_player(state))}さんの手番です。"
            )
        _attack(state, seat, command, events)
        if not _check_end(state, events):
            state["phase"] = "window"
            state["passed"] = []
            events.append(_window(state, ""))
        return events
    if phase != "window":
        raise RuleError(f"今は{_name(state, turn_player(state))}さんの攻撃を待っています(ATTACK)。")
    if isinstance(command, Magic):
        _declare(state, seat, command, rng, events)
        _check_end(state, events)
        return events
    assert isinstance(command, Pass)
    if seat in state["passed"]:
        raise RuleError("もう PASS しています。相手の PASS か魔法を待っています。")
    state["passed"].append(seat)
    left = waiting_for(state)
    if left:  # the other still to answer: named here, not again in a 手番待ち line
        other = "、".join(_name(state, s) for s in left)
        events.append(
            event("pass", f"{_name(state, seat)}: PASS、あとは {other}", seat=seat, waiting=left)
        )
    else:
        events.append(event("pass", f"{_name(state, seat)}: PASS。", seat=seat))
    if len(state["passed"]) == PLAYERS:
        if state["turn"] >= LAST_TURN:
            _finish(state, [], events)
        else:
            _begin_turn(state, events)
    return events


# --------------------------------------------------------------------------- queries


def waiting_for(state: State) -> list[int]:
    if state["over"]:
        return []
    if state["phase"] == "deck":
        return secret.missing(state["step"])
    if state["phase"] == "attack":
        return [turn_player(state)]
    return [seat for seat in range(PLAYERS) if seat not in state["passed"]]


def suggested_decks(state: State, seat: int) -> list[Deck]:
    """D: the sealed list offers a few decks (all 3-card decks are too many): those spending the
    most of the 1,000, no magic; any deck of the seat's collection may be written."""
    holding = held(state, seat)
    normal = sorted(
        (
            name
            for name, card in state["pool"].items()
            if card["kind"] == "normal" and (holding is None or name in holding)
        ),
        key=lambda name: (-int(state["pool"][name]["cost"]), name),
    )
    decks = [
        combo
        for combo in itertools.combinations(normal, DECK_SIZE)
        if sum(int(state["pool"][name]["cost"]) for name in combo) <= INITIAL_COST
    ]
    decks.sort(key=lambda combo: (-sum(int(state["pool"][n]["cost"]) for n in combo), combo))
    return [Deck(tuple(combo)) for combo in decks[:SUGGESTED_DECKS]]


def _candidates(state: State, seat: int) -> Iterator[GameCommand]:
    phase = state["phase"]
    if phase == "deck":
        yield from suggested_decks(state, seat)
        return
    if phase == "attack":
        yield Attack()
        own = state["players"][seat]["field"]
        other = state["players"][1 - seat]["field"]
        for a in range(DECK_SIZE):
            for t in range(DECK_SIZE):
                if own[a]["state"] == "active" and other[t]["state"] == "active":
                    yield Attack(((a + 1, t + 1),))
        return
    for name in state["players"][seat]["magic"]:
        yield Magic(name)
    yield Pass()


def legal_commands(state: State, actor: Actor) -> list[GameCommand]:
    if state["over"] or not isinstance(actor, int) or isinstance(actor, bool):
        return []
    if actor not in waiting_for(state) and not (
        state["phase"] == "window" and state["players"][actor]["magic"]
    ):
        return []
    return legal.accepted(state, actor, _candidates(state, actor), execute, copy_state)


def default_commands(state: State, seat: int) -> list[str]:
    """D: past the deadline the bot seals the first suggested deck (no magic), attacks by the
    automatic rule, and passes."""
    if seat not in waiting_for(state):
        return []
    if state["phase"] == "deck":
        decks = suggested_decks(state, seat)
        return [decks[0].canonical()] if decks else []
    if state["phase"] == "attack":
        return [Attack().canonical()]
    return [Pass().canonical()]


def turn_key(state: State) -> str:
    if state["over"]:
        return "over"
    return f"{state['phase']}:{state['turn']}:{len(state['passed'])}:{state['seq']}"


def reveals(state: State, command: Any) -> str | None:
    """``Game.reveals``: the die that picks the ability of a magic card with several (R 複数
    記載されている場合、ランダム), and the decks' reveal with its dice."""
    if isinstance(command, Deck):
        return "デッキがそろうと公開され、ダイスで能力が決まる"
    card = state.get("pool", {}).get(command.card) if isinstance(command, Magic) else None
    if card is not None and len(card.get("abilities", ())) > 1:
        return "ダイスで能力が決まる"
    return None
