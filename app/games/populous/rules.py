"""ポピュラス 草案21 — the rules as the bot runs them (docs/rules/populous.md).

The state is plain JSON. A game goes through four phases: ``race`` (each player picks a race,
in reverse turn order), ``draft`` (five sealed PICKs, passing the packs left), ``cubes`` (the
sealed split of 7 cubes) and ``play`` (12 rounds of turns), then ``over``.

A turn is a chain of steps, kept in ``state["step"]``: ``area`` → ``wrath`` (optional) →
``place`` → ``play`` → ``after`` (啓示 moves and discards, optional) → ``war`` (the choice
between war and mediation) → ``town`` → ``reveal`` (the 決算's choices). A step that offers no
choice runs by itself (`_advance`): a forced war, the refill, the settlement's counting. A
command of a later step closes the optional steps before it, so ``PLACE`` skips the wrath and
``WAR`` ends the moves. ``END`` finishes the turn, taking every remaining decision by the
default rule (also what the bot plays for a late player).

Each rule's source line and each decision (D) is in docs/rules/populous.md; the messages name
the rule a command breaks.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations_with_replacement, pairwise
from typing import Any

from pydantic import BaseModel, ConfigDict

from app.games.base import Actor, Rng, RuleError, State, copy_json, event, private_event
from app.games.kit import decks, seats, secret
from app.games.populous import board
from app.games.populous.commands import (
    Area,
    Catastrophe,
    Cubes,
    Discard,
    End,
    GameCommand,
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
from app.games.populous.content import KINDS, RESOURCES, TERRAINS, Content, Skill, load

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PopulousOptions",
    "copy_state",
    "default_commands",
    "execute",
    "legal_commands",
    "needs_seal",
    "setup",
    "turn_key",
    "waiting_for",
]

MIN_PLAYERS = 3
MAX_PLAYERS = 5
ROUNDS = 12
RESOURCE_CAP = 6  # R: each resource slot holds at most 6 (神の怒り too)
CUBE_SLOTS = ("情熱", "食料", "信仰")  # CUBES' order
WRATH = "神の怒り"
START_CUBES = 7
WORKERS = 10
TOWNS = 5
DRAFT_HAND = 5
# R: rings are a limited supply — blue (海) 8, every other colour 3.
RING_SUPPLY = {"平地": 3, "山岳": 3, "砂漠": 3, "凍土": 3, "海": 8}
# R: extra workers for 食料 and extra actions for 情熱: 1 → +1, 3 → +2, 6 → +3.
EXTRA_COST = (0, 1, 3, 6)
WRATH_BUY_COST = 3
MEDIATE_COST = 3
FREE_COST = (0, 1, 3)  # Free once: 1 信仰; both Free: 3
# R: extra genesis: 4 players add 2 doubles, 5 add 4.
EXTRA_DOUBLES = {3: 0, 4: 2, 5: 4}
DEFAULT_CUBES = Cubes(2, 3, 2)  # D: the bot's split for a missing player

STEPS = ("area", "wrath", "place", "play", "after", "war", "town", "reveal")
STEP_JA = {
    "area": "エリア選択",
    "wrath": "神の怒り",
    "place": "ワーカー配置",
    "play": "手札配置",
    "after": "アクションの続き(啓示の移動・捨て札)",
    "war": "戦争/調停の選択",
    "town": "決算のタウン建設",
    "reveal": "決算のスキル公開",
}
OPTIONAL_STEPS = ("wrath", "after")

Events = list[dict[str, Any]]


class PopulousOptions(BaseModel):
    """ポピュラス has no options yet: the map, seats and start player come from the seed."""

    model_config = ConfigDict(extra="forbid")


def content() -> Content:
    return load()


# --------------------------------------------------------------------------- small helpers


def _name(state: State, seat: int) -> str:
    return str(state["players"][seat]["name"])


def copy_state(state: State) -> State:
    """A copy for `execute` that copies only what a move may change, one level below each
    mutable part: the map (replaced, never edited, after setup), the race order, the last
    war and the final scores are shared; a generation's card dicts are never edited (cards
    are appended), so the generations' lists are copied, not their cards; a square's pieces
    are never edited either (a rebuilt town is a new piece), so each square's list is copied,
    not its pieces."""
    copied: State = dict(state)
    copied["pieces"] = {square: list(pieces) for square, pieces in state["pieces"].items()}
    copied["rings"] = dict(state["rings"])
    copied["markers"] = list(state["markers"])
    copied["deck"] = list(state["deck"])
    copied["discard"] = list(state["discard"])
    copied["players"] = [
        {
            **player,
            "res": dict(player["res"]),
            "hand": list(player["hand"]),
            "gens": [list(gen) for gen in player["gens"]],
            "skills": list(player["skills"]),
            "revealed": list(player["revealed"]),
        }
        for player in state["players"]
    ]
    for key in ("draft", "secret"):
        if state[key] is not None:
            copied[key] = copy_json(state[key])
    if state["t"] is not None:  # the turn's record: only its movers list is ever edited
        copied["t"] = {**state["t"], "movers": list(state["t"]["movers"])}
    return copied


def _key(state: State) -> board.MapKey:
    return board.map_key(state["map"])


def _tile(state: State, tile_id: str) -> Mapping[str, Any] | None:
    for tile in state["map"]:
        if tile["id"] == tile_id:
            return tile  # type: ignore[no-any-return]
    return None


def area_squares(area: str) -> list[str]:
    prefix = area.replace("-", "")
    return [prefix + letter for letter in ("a", "b", "c")]


def all_squares(state: State) -> list[str]:
    return [square for tile in state["map"] for square in area_squares(tile["id"])]


def terrain(state: State, square: str) -> str:
    """The square's terrain: the tile's newest ring, else the printed one."""
    tile = _tile(state, board.tile_of(square))
    assert tile is not None
    if tile["ring"] is not None:
        return str(tile["ring"])
    return str(tile["squares"]["abc".index(square[-1])])


def on_map(state: State, square: str) -> bool:
    return _tile(state, board.tile_of(square)) is not None


def _pieces(state: State, square: str) -> list[list[Any]]:
    pieces: list[list[Any]] = state["pieces"].setdefault(square, [])
    return pieces


def live(piece: Sequence[Any]) -> bool:
    """Workers and intact towns (a destroyed town neither contests a square nor fights)."""
    return piece[1] in ("w", "t")


def _owners(state: State, square: str) -> set[int]:
    return {int(p[0]) for p in state["pieces"].get(square, ()) if live(p)}


def _remove_worker(state: State, seat: int, square: str) -> None:
    pieces = state["pieces"][square]
    for index, piece in enumerate(pieces):
        if piece[0] == seat and piece[1] == "w":
            del pieces[index]
            break
    if not pieces:
        del state["pieces"][square]


def _send_home(state: State, square: str, seat_filter: set[int] | None, towns: bool) -> list[str]:
    """Workers on `square` (of the seats in `seat_filter`, or all) go home; with `towns`, their
    intact towns are destroyed. Returns what happened, for the event text."""
    said: list[str] = []
    kept: list[list[Any]] = []
    for piece in state["pieces"].get(square, []):
        seat = int(piece[0])
        if seat_filter is not None and seat not in seat_filter:
            kept.append(piece)
        elif piece[1] == "w":
            state["players"][seat]["workers"] += 1
            said.append(f"{_name(state, seat)}のワーカーが手元へ")
        elif piece[1] == "t" and towns:
            kept.append([seat, "x"])
            said.append(f"{_name(state, seat)}のタウンが破壊")
        else:
            kept.append(piece)
    if kept:
        state["pieces"][square] = kept
    else:
        state["pieces"].pop(square, None)
    return said


def _gain(player: dict[str, Any], resource: str, amount: int) -> int:
    """Add up to the cap of 6; returns what was actually gained (the rest goes to the stock)."""
    before = int(player["res"][resource])
    player["res"][resource] = min(RESOURCE_CAP, before + amount)
    return int(player["res"][resource]) - before


# --------------------------------------------------------------------------- skills


def active_skills(state: State, seat: int) -> list[Skill]:
    """The seat's revealed skills that work now (a skill revealed this turn works from the end
    of the turn: R 「この手番の終了後から」)."""
    player = state["players"][seat]
    skills = content().skills
    return [skills[name] for name in player["revealed"] if name in skills]


def _skill_total(state: State, seat: int, effect: str, **match: str) -> int:
    total = 0
    for skill in active_skills(state, seat):
        if skill.effect != effect:
            continue
        if all(getattr(skill, key) == value for key, value in match.items()):
            total += skill.amount
    return total


def aptitudes(state: State, seat: int) -> set[str]:
    """The race's aptitude terrain (D: on the race board, always on) and aptitude skills."""
    player = state["players"][seat]
    found: set[str] = set()
    if player["race"] is not None:
        found.add(content().races[player["race"]].aptitude)
    for skill in active_skills(state, seat):
        if skill.effect == "aptitude" and skill.terrain is not None:
            found.add(skill.terrain)
    return found


def hand_size(state: State, seat: int) -> int:
    return content().epic.hand_size + _skill_total(state, seat, "hand_size")


# --------------------------------------------------------------------------- setup


def setup(players: list[str], options: PopulousOptions, rng: Rng) -> State:
    data = content()
    count = len(players)
    start = seats.random_seat(rng, count)
    state: State = {
        "kind": "populous",
        "over": False,
        "phase": "race",
        "round": 1,
        "rounds": ROUNDS,
        "start": start,
        "turn": start,
        "map": _deal_map(data, count, rng),
        "pieces": {},
        "rings": dict(RING_SUPPLY),
        "markers": ["F", "F"],
        "deck": decks.make_deck(decks.expand(dict(data.epic.counts)), rng),
        "discard": [],
        "players": [_new_player(name) for name in players],
        # D: races are chosen openly in reverse turn order (the start player last).
        "race_order": list(reversed(seats.round_order(start, count))),
        "draft": None,
        "secret": None,
        "step": None,
        "t": None,
        "last_war": None,
        "final": None,
    }
    # R: shuffle the skills (basic ones excluded) and deal 5 to each player.
    pool = list(data.drafted)
    rng.shuffle(pool)
    state["draft"] = {
        "packs": [pool[seat * DRAFT_HAND : (seat + 1) * DRAFT_HAND] for seat in range(count)],
        "pick": 1,
    }
    # R: 4 epic cards each (the maximum hand size).
    decks.deal(state["deck"], [p["hand"] for p in state["players"]], data.epic.hand_size)
    state["turn"] = state["race_order"][0]
    return state


def _new_player(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "race": None,
        "res": {"情熱": 0, "食料": 0, "信仰": 0, WRATH: 0},
        "vp": 0,
        "hand": [],
        "gens": [],
        "skills": [],
        "revealed": [],
        "workers": WORKERS,
        "towns": TOWNS,
    }


def _deal_map(data: Content, count: int, rng: Rng) -> list[dict[str, Any]]:
    """R: the ten non-doubles shuffled: one in the centre, six around it, three on the ring
    around that base; 4 players add 2 random doubles, 5 players 4, also on that ring.
    D: the outer positions and every tile's rotation come from the seed."""
    singles = [tile for tile in data.tiles.values() if not tile.double]
    doubles = [tile for tile in data.tiles.values() if tile.double]
    rng.shuffle(singles)
    rng.shuffle(doubles)
    outer = board.ring(2)
    rng.shuffle(outer)
    positions = [(0, 0), *board.ring(1), *outer]
    chosen = singles + doubles[: EXTRA_DOUBLES[count]]
    tiles = []
    for tile, (q, r) in zip(chosen, positions, strict=False):
        tiles.append(
            {
                "id": tile.id,
                "q": q,
                "r": r,
                "rot": rng.randint(0, 2),
                "squares": list(tile.squares),
                "ring": None,
            }
        )
    return tiles


# --------------------------------------------------------------------------- sealing


def needs_seal(state: State, command: Any) -> bool | None:
    """PICK and CUBES are simultaneous secrets; a face-down play naming its card is sealed
    (the card would be seen); everything else is public."""
    if isinstance(command, Pick | Cubes):
        return True
    return isinstance(command, Play) and command.card is not None


# --------------------------------------------------------------------------- execute


def execute(state: State, seat: int, command: GameCommand, rng: Rng, sealed: bool) -> Events:
    events: Events = []
    phase = state["phase"]
    if isinstance(command, Race):
        _race(state, seat, command, events)
    elif isinstance(command, Pick):
        _pick(state, seat, command, events)
    elif isinstance(command, Cubes):
        _cubes(state, seat, command, events)
    else:
        if phase != "play":
            raise RuleError(_setup_message(state))
        if seat != state["turn"]:
            raise RuleError(
                f"今は{_name(state, state['turn'])}の手番です(第{state['round']}ラウンド)。"
            )
        _turn_command(state, seat, command, rng, events)
    return events


def _setup_message(state: State) -> str:
    phase = state["phase"]
    if phase == "race":
        return f"まだ準備中です: {_name(state, state['turn'])}が種族を選んでいます(RACE <種族>)。"
    if phase == "draft":
        return "まだ準備中です: スキルのドラフト中です(封印して PICK <スキル>)。"
    return "まだ準備中です: リソースの配分中です(封印して CUBES 情熱 a 食料 b 信仰 c)。"


# -- setup phases


def _race(state: State, seat: int, command: Race, events: Events) -> None:
    if state["phase"] != "race":
        raise RuleError("種族はゲームの準備で選びます(もう選び終わっています)。")
    if seat != state["turn"]:
        raise RuleError(f"今は{_name(state, state['turn'])}が種族を選ぶ番です。")
    races = content().races
    if command.name not in races:
        raise RuleError(f"種族「{command.name}」はありません(選べるのは {'、'.join(races)})。")
    taken = {p["race"] for p in state["players"]}
    if command.name in taken:
        left = [name for name in races if name not in taken]
        raise RuleError(f"{command.name}はもう選ばれています(残りの種族: {'、'.join(left)})。")
    race = races[command.name]
    player = state["players"][seat]
    player["race"] = race.name
    player["skills"].extend(race.basic)
    events.append(
        event(
            "race",
            f"{player['name']}は{race.name}(適性: {race.aptitude})を選びました。"
            "基本スキル2枚は伏せて置きます。",
        )
    )
    order = state["race_order"]
    index = order.index(seat)
    if index + 1 < len(order):
        state["turn"] = order[index + 1]
        events.append(
            event(
                "next",
                f"次は{_name(state, state['turn'])}が種族を選びます。",
                waiting=[state["turn"]],
            )
        )
        return
    state["phase"] = "draft"
    state["turn"] = state["start"]
    state["secret"] = secret.open_step("draft", range(len(state["players"])))
    events.append(
        event(
            "draft",
            "スキルのドラフトを始めます(配られた5枚から1枚ずつ)。",
        )
    )


def _pick(state: State, seat: int, command: Pick, events: Events) -> None:
    if state["phase"] != "draft":
        raise RuleError("スキルのドラフトは準備のときだけです。")
    pack = state["draft"]["packs"][seat]
    if command.skill not in pack:
        raise RuleError(
            f"{command.skill}は今の手札(ドラフト)にありません(選べるのは {'、'.join(pack)})。"
        )
    step = state["secret"]
    secret.seal(step, seat, command.skill)
    events.append(private_event("pick", f"{command.skill}を選びました(伏せて置きます)。", seat))
    if secret.is_complete(step):
        _finish_pick(state, events)
    else:
        events.append(_sealed(state, seat, "選択"))


def _sealed(state: State, seat: int, done: str) -> dict[str, Any]:
    """A sealed choice in: who chose, and whom the step still waits for (one line)."""
    missing = secret.missing(state["secret"])
    waiting = "、".join(_name(state, s) for s in missing)
    return event("sealed", f"{_name(state, seat)}が{done}(残り: {waiting})", waiting=missing)


def _finish_pick(state: State, events: Events) -> None:
    picks = secret.reveal(state["secret"])
    draft = state["draft"]
    for seat, skill in picks.items():
        draft["packs"][seat].remove(skill)
        state["players"][seat]["skills"].append(skill)
    seats.pass_hands(draft["packs"], "left")
    done = draft["pick"]
    if draft["packs"][0]:
        draft["pick"] = done + 1
        state["secret"] = secret.open_step("draft", range(len(state["players"])))
        everyone = list(range(len(state["players"])))
        events.append(
            event(
                "draft",
                f"全員が選び、残りを左隣へ渡しました。ドラフト({done + 1}/5): 全員 封印して "
                "PICK <スキル>",
                waiting=everyone,
            )
        )
        return
    state["draft"] = None
    state["phase"] = "cubes"
    state["secret"] = secret.open_step("cubes", range(len(state["players"])))
    events.append(
        event(
            "cubes",
            "ドラフト終了: 各自スキル7枚(基本2枚と選んだ5枚)を伏せて持っています。",
        )
    )


def _cubes(state: State, seat: int, command: Cubes, events: Events) -> None:
    if state["phase"] != "cubes":
        raise RuleError("リソースの配分はゲームの準備(ドラフトの後)で行います。")
    values = (command.passion, command.food, command.faith)
    if sum(values) != START_CUBES:
        raise RuleError(f"キューブは合計{START_CUBES}個を配分します(今は{sum(values)}個)。")
    over = [
        (where, count)
        for where, count in zip(CUBE_SLOTS, values, strict=True)
        if count > RESOURCE_CAP
    ]
    if over:
        where, count = over[0]
        raise RuleError(f"{where}に{count}個は置けません(1つの置き場には{RESOURCE_CAP}個まで)。")
    step = state["secret"]
    secret.seal(step, seat, list(values))
    events.append(private_event("cubes", f"配分: {command.canonical()[6:]}", seat))
    if not secret.is_complete(step):
        events.append(_sealed(state, seat, "配分"))
        return
    said = []
    for split_seat, split in secret.reveal(step).items():
        player = state["players"][split_seat]
        for resource, amount in zip(RESOURCES, split, strict=True):
            player["res"][resource] = int(amount)
        said.append(f"{player['name']} 情熱{split[0]} 食料{split[1]} 信仰{split[2]}")
    # Every split on one line (they wrap on a phone), not a line a player (issue #43).
    events.append(event("cubes", "配分: " + "、".join(said) + "。"))
    state["secret"] = None
    state["phase"] = "play"
    state["turn"] = state["start"]
    events.append(event("start", "準備完了。"))
    _begin_turn(state, events)


# -- the turn


def _fresh_turn() -> dict[str, Any]:
    return {
        "area": None,
        "wrath": False,
        "moves": 0,
        "movers": [],
        "discards": 0,
        "newgen": False,
        "played": None,
        "revealed": None,
        "town": None,
    }


def _begin_turn(state: State, events: Events) -> None:
    state["step"] = "area"
    state["t"] = _fresh_turn()
    seat = state["turn"]
    # A round's first turn (the first after the setup too) moves the board's round or phase:
    # the reply carries the board, which says whose turn it is and what to write; said here
    # too, it would be said twice (issue #43).
    if seat == state["start"]:
        events.append(event("turn", ""))
    else:
        events.append(event("turn", _prompt(state), waiting=[seat]))


def _turn_command(state: State, seat: int, command: GameCommand, rng: Rng, events: Events) -> None:
    if isinstance(command, End):
        _end_command(state, seat, rng, events)
    else:
        _run_step(state, seat, command, rng, events)
    if state["phase"] == "play" and state["turn"] == seat and state["step"] != "area":
        events.append(event("next", _prompt(state), waiting=[seat]))


def _run_step(state: State, seat: int, command: GameCommand, rng: Rng, events: Events) -> None:
    if not _reach(state, _step_of(command), rng, events):
        return
    if isinstance(command, Area):
        _area(state, seat, command, events)
    elif isinstance(command, WrathBuy):
        _wrath_buy(state, seat, events)
    elif isinstance(command, Catastrophe):
        _catastrophe(state, seat, command, rng, events)
    elif isinstance(command, Place):
        _place(state, seat, command, events)
    elif isinstance(command, Play):
        _play(state, seat, command, events)
    elif isinstance(command, Move):
        _move(state, seat, command, events)
    elif isinstance(command, Discard):
        _discard(state, seat, command, events)
    elif isinstance(command, War):
        _war(state, rng, events)
        _after_war(state, rng, events)
    elif isinstance(command, Mediate):
        _mediate(state, seat, events)
        _after_war(state, rng, events)
    elif isinstance(command, Town):
        _town(state, seat, command.square, events)
    elif isinstance(command, Reveal):
        _reveal(state, seat, command.skill, events)
    else:  # pragma: no cover - the setup commands were handled before
        raise RuleError(f"{command.canonical()} は今は使えません。")
    _advance(state, rng, events)


def _step_of(command: GameCommand) -> str:
    if isinstance(command, Area):
        return "area"
    if isinstance(command, WrathBuy | Catastrophe):
        return "wrath"
    if isinstance(command, Place):
        return "place"
    if isinstance(command, Play):
        return "play"
    if isinstance(command, Move | Discard):
        return "after"
    if isinstance(command, War | Mediate):
        return "war"
    if isinstance(command, Town):
        return "town"
    return "reveal"


def _next_in_parentheses(state: State) -> str:
    """What the active player may write next, as a refusal's parenthesis ("" when nothing)."""
    prompt = _prompt(state).removesuffix("。")
    return f"({prompt})" if prompt else ""


def _reach(state: State, target: str, rng: Rng, events: Events) -> bool:
    """Close the optional steps before `target`; refuse a command out of its step. False
    (told as the line's result) when an automatic war fought on the way left no such choice:
    whether it did can hang on its dice, and no refusal may (docs/security.md)."""
    for _ in range(len(STEPS) + 1):
        step = state["step"]
        if step == target:
            return True
        if STEPS.index(step) > STEPS.index(target):
            if target == "wrath":
                raise RuleError(
                    "神の怒りはワーカー配置の前に1手番1回だけです(もう配置したか、使いました)。"
                )
            raise RuleError(f"{STEP_JA[target]}はもう終わっています{_next_in_parentheses(state)}。")
        if step not in OPTIONAL_STEPS:
            raise RuleError(f"まず{STEP_JA[step]}です{_next_in_parentheses(state)}。")
        seat = state["turn"]
        newgen = state["t"]["newgen"]
        choice = _next_after_optional(state, seat) == "war"
        mark = len(events)
        _close(state, rng, events)
        if (
            state["phase"] != "play"  # the game's last turn ended inside the closing
            or state["step"] == "area"
            or STEPS.index(state["step"]) > STEPS.index(target)
        ):
            # The rest of the turn ran by itself: there was no such choice to make.
            if target == "war" and not choice:
                raise RuleError(
                    "この手番には戦争/調停の選択がないので、手番を終えるには END と書いてください"
                    "(創世エリアに係争マスがないか、手番プレイヤーの駒がない・調停の食料が"
                    "足りないため戦争は自動です)。"
                )
            if target in ("town", "reveal") and not newgen:
                raise RuleError(
                    "決算(TOWN・REVEAL)は世代交代(NEWGEN)をした手番の終わりだけです"
                    "(手番を終えるには END)。"
                )
            if any(e["type"] == "war" for e in events[mark:]):
                text = f"{STEP_JA[target]}は戦争のあと自動で済みました"
                events.append(event("skipped", text + "(選ぶものがありませんでした)。"))
                return False
            raise RuleError(
                f"{STEP_JA[target]}は自動で済みました(選ぶものがなかったので、"
                "手番を終えるには END)。"
            )
    raise AssertionError("the step machine did not reach its target")  # pragma: no cover


def _close(state: State, rng: Rng, events: Events) -> None:
    """Leave an optional step without using it."""
    step = state["step"]
    if step == "wrath":
        state["step"] = "place"
    elif step == "after":
        state["step"] = "war"
    _advance(state, rng, events)


def _advance(state: State, rng: Rng, events: Events) -> None:
    """Run the steps that offer no choice until one does (or the turn ends)."""
    for _ in range(64):
        if state["phase"] != "play":
            return
        step = state["step"]
        seat = state["turn"]
        player = state["players"][seat]
        t = state["t"]
        if step == "wrath":
            if _can_wrath(state, seat):
                return
            state["step"] = "place"
        elif step == "place":
            if _placements(state, seat, limit=1):
                return
            events.append(event("place", f"{player['name']}は配置できるワーカーがありません。"))
            state["step"] = "play"
        elif step == "play":
            if player["hand"]:
                return
            events.append(event("play", f"{player['name']}は手札がないので手札配置はありません。"))
            state["step"] = "after"
        elif step == "after":
            if (t["moves"] > 0 and t["movers"]) or (
                player["hand"] and (t["discards"] is None or t["discards"] > 0)
            ):
                return
            state["step"] = "war"
        elif step == "war":
            contested = _contested(state)
            if contested and _war_choice_open(state, seat, contested):
                return
            if contested:
                if seat not in _participants(state, contested):
                    events.append(event("war", "係争マスに手番プレイヤーの駒がないので戦争です。"))
                else:
                    events.append(event("war", "調停の食料が足りないので戦争です。"))
                _war(state, rng, events)
            _end_phase(state, rng, events)
            if t["newgen"]:
                state["step"] = "town"
            else:
                _finish_turn(state, events)
        elif step == "town":
            options = town_options(state, seat)
            if len(options) > 1:
                return
            if options:
                _build_town(state, seat, options[0], events)
            else:
                events.append(event("town", "決算: タウンを建てられるマスがありません。"))
            state["step"] = "reveal"
        elif step == "reveal":
            hidden = _face_down_skills(state, seat)
            if len(hidden) > 1:
                return
            if hidden:
                _reveal_skill(state, seat, hidden[0], events)
            _settle(state, events)
            _finish_turn(state, events)
        else:  # "area": always a decision
            return
    raise AssertionError("the turn did not settle")  # pragma: no cover


# -- area


def _free_cost(count: int) -> int:
    return FREE_COST[count]


def _resolve_free(state: State, command: Area) -> Area:
    """``AREA F 3``: Free whose number is not written stands for the one number that makes an
    area of the map; with several, the player is asked which (D). Markers and the cost are
    checked after, as for any area."""

    def numbers(card: str) -> list[str]:
        return [f"F{n}" for n in range(1, 6)] if card == "F" else [card]

    found: dict[tuple[str, str], Area] = {}
    for one in numbers(command.cards[0]):
        for two in numbers(command.cards[1]):
            low, high = sorted((one, two), key=card_order)
            area = Area((low, high))
            if _tile(state, "-".join(map(str, area.numbers))) is not None:
                found[area.cards] = area
    fits = sorted(found.values(), key=lambda area: area.numbers)
    if len(fits) == 1:
        return fits[0]
    written = " ".join(command.cards)
    if not fits:
        raise RuleError(
            f"AREA {written}: 【フリー】をどの数字にしても、このマップのエリアになりません。"
        )
    raise RuleError(
        f"AREA {written}: 【フリー】をどの数字として使うかを書いてください"
        f"({'、'.join(area.canonical() for area in fits)})。"
    )


def _area(state: State, seat: int, command: Area, events: Events) -> None:
    if "F" in command.cards:
        command = _resolve_free(state, command)
    player = state["players"][seat]
    markers = state["markers"]
    numbered = [card for card in command.cards if not card.startswith("F")]
    if len(numbered) == 2 and numbered[0] == numbered[1]:
        raise RuleError(
            f"【{numbered[0]}】は1枚しかありません。同じ数字を2つ使うには【フリー】を使います"
            f"(例: AREA {numbered[0]} F{numbered[0]})。"
        )
    for card in numbered:
        if card in markers:
            raise RuleError(
                f"【{card}】にはマーカーが乗っています(前の手番で選ばれたカードは選べません)。"
            )
    cost = _free_cost(command.free)
    if player["res"]["信仰"] < cost:
        raise RuleError(
            f"【フリー】{'2枚' if command.free == 2 else ''}には信仰{cost}個が要ります"
            f"(持っているのは{player['res']['信仰']}個)。支払えない【フリー】は選べません。"
        )
    low, high = command.numbers
    area = f"{low}-{high}"
    if _tile(state, area) is None:
        raise RuleError(f"エリア {low}−{high} のタイルはこのマップにありません。")
    player["res"]["信仰"] -= cost
    state["markers"] = ["F" if card.startswith("F") else card for card in command.cards]
    state["t"]["area"] = area
    frees = "・".join(f"【フリー】({card[1:]})" for card in command.cards if card.startswith("F"))
    paid = f"({frees}、信仰{cost}を支払い)" if frees else ""
    events.append(event("area", f"創世エリア {low}−{high}{paid}。"))
    state["step"] = "wrath"


# -- wrath


def _buy_cost(state: State, seat: int) -> int:
    return max(1, WRATH_BUY_COST - _skill_total(state, seat, "wrath_discount"))


def _can_wrath(state: State, seat: int) -> bool:
    res = state["players"][seat]["res"]
    buy = int(res["信仰"]) >= _buy_cost(state, seat) and int(res[WRATH]) < RESOURCE_CAP
    return buy or int(res[WRATH]) >= 3


def _wrath_buy(state: State, seat: int, events: Events) -> None:
    res = state["players"][seat]["res"]
    cost = _buy_cost(state, seat)
    if res["信仰"] < cost:
        raise RuleError(
            f"神の怒りを得るには信仰{cost}個が要ります(持っているのは{res['信仰']}個)。"
        )
    if res[WRATH] >= RESOURCE_CAP:
        raise RuleError(f"神の怒りはもう{res[WRATH]}個です(置き場は{RESOURCE_CAP}個まで)。")
    res["信仰"] -= cost
    res[WRATH] += 1
    events.append(
        event("wrath", f"信仰{cost}を支払い、神の怒りを1個得ました(神の怒り{res[WRATH]})。")
    )
    state["t"]["wrath"] = True
    state["step"] = "place"


def rings_available(state: State) -> list[str]:
    """Colours that can be put on the genesis area now (the ring already there comes back)."""
    tile = _tile(state, state["t"]["area"])
    assert tile is not None
    return [colour for colour in TERRAINS if state["rings"][colour] > 0 or (tile["ring"] == colour)]


def _catastrophe(state: State, seat: int, command: Catastrophe, rng: Rng, events: Events) -> None:
    player = state["players"][seat]
    res = player["res"]
    paid = command.paid
    if paid < 3:
        raise RuleError(f"天変地異は神の怒り{paid}個ではできません(3個以上支払います)。")
    if res[WRATH] < paid:
        raise RuleError(f"神の怒り{paid}個には足りません(持っているのは{res[WRATH]}個)。")
    area = state["t"]["area"]
    squares = area_squares(area)
    for square in command.squares:
        if square not in squares:
            raise RuleError(
                f"{square}は創世エリア {area} のマスではありません(マス: {'・'.join(squares)})。"
            )
    twice = next((sq for sq in command.squares if command.squares.count(sq) > 1), None)
    if twice is not None:
        raise RuleError(f"{twice}を2回選んでいます(マスは別々に選びます)。")
    chosen = len(command.squares)
    if paid == 3 and command.squares:
        raise RuleError(
            f"神の怒り3個ではマスを選べません(サイコロで決まります。選んだマス: "
            f"{'・'.join(command.squares)})。"
        )
    if paid == 4 and chosen != 1:
        raise RuleError(
            f"神の怒り4個ではマスを1つ選びます(選んだのは{chosen}マス。"
            "例: WRATH 4 SQUARE 24b RING …)。"
        )
    if paid >= 5 and not 1 <= chosen <= 2:
        raise RuleError(f"神の怒り{paid}個ではマスを1つか2つ選びます(選んだのは{chosen}マス)。")
    if command.ring not in rings_available(state):
        raise RuleError(
            f"{command.ring}の地形リングはもう残っていません"
            f"(使えるのは {'・'.join(rings_available(state)) or 'なし'})。"
        )
    res[WRATH] -= paid
    if paid == 3:
        face = rng.randint(1, 6)
        letter = content().letter_for(face)
        hit = [area.replace("-", "") + letter]
        how = f"サイコロ{face} → {hit[0]}"
    else:
        hit = list(command.squares)
        how = "選んだマス " + "・".join(hit)
    said: list[str] = []
    for square in hit:
        said.extend(_send_home(state, square, None, towns=True))
    tile = next(t for t in state["map"] if t["id"] == area)
    # The map list is shared between states (copy_state): replace the tile, do not edit it.
    state["map"] = [{**t, "ring": command.ring} if t["id"] == area else t for t in state["map"]]
    if tile["ring"] is not None:
        state["rings"][tile["ring"]] += 1
    state["rings"][command.ring] -= 1
    effect = "、".join(said) if said else "駒はありませんでした"
    events.append(
        event(
            "catastrophe",
            f"天変地異(神の怒り{paid}): {how}: {effect}。{area} に{command.ring}の地形リング"
            f"(全マスが{command.ring})。",
        )
    )
    state["t"]["wrath"] = True
    state["step"] = "place"


# -- placement


def _square_cost(state: State, seat: int, square: str) -> int:
    """R: 1 食料 unless the square is 平地 or an aptitude terrain."""
    here = terrain(state, square)
    return 0 if here == "平地" or here in aptitudes(state, seat) else 1


def placement_cost(state: State, seat: int, squares: Sequence[str]) -> int:
    return EXTRA_COST[len(squares) - 1] + sum(_square_cost(state, seat, sq) for sq in squares)


def _placements(state: State, seat: int, limit: int | None = None) -> list[Place]:
    """The affordable placements on the genesis area (up to three extras), cheapest first."""
    player = state["players"][seat]
    squares = area_squares(state["t"]["area"])
    found: list[tuple[int, Place]] = []
    most = min(len(EXTRA_COST), player["workers"])
    each = {square: _square_cost(state, seat, square) for square in squares}
    for size in range(1, most + 1):
        for chosen in combinations_with_replacement(squares, size):
            cost = EXTRA_COST[size - 1] + sum(each[square] for square in chosen)
            if cost <= player["res"]["食料"]:
                found.append((cost, Place(tuple(chosen))))
                if limit is not None and len(found) >= limit:
                    return [place for _, place in found]
    return [place for _, place in found]


def _place(state: State, seat: int, command: Place, events: Events) -> None:
    player = state["players"][seat]
    area = state["t"]["area"]
    squares = area_squares(area)
    for square in command.squares:
        if square not in squares:
            raise RuleError(
                f"{square}は創世エリア {area} のマスではありません"
                f"(置けるのは {'・'.join(squares)})。"
            )
    if len(command.squares) > len(EXTRA_COST):
        raise RuleError(
            f"ワーカー{len(command.squares)}個は置けません(追加のワーカーは"
            f"{len(EXTRA_COST) - 1}個まで、1個目と合わせて{len(EXTRA_COST)}個まで)。"
        )
    if len(command.squares) > player["workers"]:
        raise RuleError(
            f"ワーカー{len(command.squares)}個は置けません(手元のワーカーは{player['workers']}個)。"
        )
    cost = placement_cost(state, seat, command.squares)
    if cost > player["res"]["食料"]:
        raise RuleError(
            f"この配置には食料{cost}個が要ります(追加{len(command.squares) - 1}個に"
            f"{EXTRA_COST[len(command.squares) - 1]}、平地でも適性地形でもないマスに1個ずつ。"
            f"持っているのは{player['res']['食料']}個)。"
        )
    player["res"]["食料"] -= cost
    player["workers"] -= len(command.squares)
    for square in command.squares:
        _pieces(state, square).append([seat, "w"])
    counts = Counter(command.squares)
    where = "・".join(
        f"{sq}({terrain(state, sq)})" + (f"×{n}" if n > 1 and len(counts) > 1 else "")
        for sq, n in counts.items()
    )
    paid = f"、食料{cost}を支払い" if cost else ""
    events.append(event("place", f"{where}にワーカー{len(command.squares)}個{paid}。"))
    state["step"] = "play"


# -- hand play


def _play_candidates(state: State, seat: int) -> Iterator[Play]:
    player = state["players"][seat]
    hand = player["hand"]
    if not hand:
        return
    kinds = tuple(kind for kind in KINDS if kind in hand)
    extras = tuple(n for n, cost in enumerate(EXTRA_COST) if cost <= player["res"]["情熱"])
    yield from _plays(kinds, extras, _newgen_allowed(state, seat))


@functools.lru_cache(maxsize=512)
def _plays(kinds: tuple[str, ...], extras: tuple[int, ...], newgen: bool) -> tuple[Play, ...]:
    """Every hand play of a hand holding ``kinds`` with ``extras`` affordable: the same few
    hundred commands at most hand plays of a game, made once (their canonical lines with
    them, ``Play.canonical``)."""
    found: list[Play] = []
    for change in (False, True) if newgen else (False,):
        for kind in kinds:
            for extra in extras:
                found.append(Play(kind, extra, newgen=change))
        for action in KINDS:
            for extra in extras:
                found.append(Play(action, extra, newgen=change, down=True))
                for card in kinds:
                    found.append(Play(action, extra, newgen=change, down=True, card=card))
    return tuple(found)


def _newgen_allowed(state: State, seat: int) -> bool:
    """R: from round 2; D: the present generation must hold a card to be left behind."""
    return state["round"] >= 2 and bool(state["players"][seat]["gens"])


def actions_for(state: State, seat: int, kind: str, down: bool, newgen: bool) -> tuple[int, int]:
    """(actions before extras, the inheritance) for a card played now (before it is placed)."""
    gens = state["players"][seat]["gens"]
    if newgen or not gens:
        present = 1
        old = gens
    else:
        present = len(gens[-1]) + 1
        old = gens[:-1]
    inheritance = 0
    if not down:
        inheritance = max(
            (len(g) for g in old if g and not g[-1]["down"] and g[-1]["kind"] == kind),
            default=0,
        )
    return max(present, inheritance), inheritance


def _play(state: State, seat: int, command: Play, events: Events) -> None:
    player = state["players"][seat]
    res = player["res"]
    hand = player["hand"]
    t = state["t"]
    if command.newgen and not _newgen_allowed(state, seat):
        if state["round"] < 2:
            raise RuleError("世代交代は2ラウンド目からです。")
        raise RuleError("世代交代するには今の【現代】にカードが必要です。")
    if command.down:
        card = command.card if command.card is not None else hand[-1]
    else:
        card = command.kind
    if card not in hand:
        raise RuleError(f"手札に{card}がありません。")
    cost = EXTRA_COST[command.extra]
    if res["情熱"] < cost:
        raise RuleError(
            f"アクション+{command.extra}には情熱{cost}個が要ります(持っているのは{res['情熱']}個)。"
        )
    base, inheritance = actions_for(state, seat, command.kind, command.down, command.newgen)
    bonus = _skill_total(state, seat, "action_bonus", kind=command.kind)
    actions = base + command.extra + bonus
    res["情熱"] -= cost
    hand.remove(card)
    if command.newgen:
        player["gens"].append([])
        t["newgen"] = True
    elif not player["gens"]:
        player["gens"].append([])
    player["gens"][-1].append({"kind": card, "down": command.down, "action": command.kind})
    t["played"] = {"kind": command.kind, "down": command.down, "actions": actions}
    parts = []
    if command.newgen:
        parts.append(f"世代交代(第{len(player['gens'])}世代)")
        gained = _newgen_resources(state, seat)
        if gained:
            parts.append(gained)
    how = f"{command.kind}を裏面配置" if command.down else f"{command.kind}を通常配置"
    count = f"【現代】{len(player['gens'][-1])}枚"
    if inheritance > len(player["gens"][-1]) and not command.down:
        count += f"、継承力{inheritance}"
    if command.extra:
        count += f"、情熱{cost}で+{command.extra}"
    if bonus:
        count += f"、スキルで+{bonus}"
    parts.append(f"{how}({count}): アクション{actions}回")
    parts.append(_action_effect(state, seat, command.kind, actions))
    events.append(event("play", "。".join(p for p in parts if p) + "。"))
    if command.down:
        events.append(private_event("facedown", f"裏向きに置いたカード: {card}", seat))
    if command.newgen:
        t["discards"] = None
    state["step"] = "after"


def _newgen_resources(state: State, seat: int) -> str:
    player = state["players"][seat]
    said = []
    for skill in active_skills(state, seat):
        if skill.effect == "newgen_resource" and skill.resource is not None:
            gained = _gain(player, skill.resource, skill.amount)
            said.append(f"{skill.name}で{skill.resource}+{gained}")
    return "、".join(said)


def _action_effect(state: State, seat: int, kind: str, actions: int) -> str:
    player = state["players"][seat]
    res = player["res"]
    t = state["t"]
    if kind in ("祝福", "労働", "奇跡"):
        resource = {"祝福": "情熱", "労働": "食料", "奇跡": "信仰"}[kind]
        before = res[resource]
        gained = _gain(player, resource, actions)
        lost = actions - gained
        extra = f"(6を超えた{lost}個はストックへ)" if lost else ""
        return f"{resource} {before}→{res[resource]}{extra}"
    if kind == "啓示":
        movers = [
            square
            for square in area_squares(t["area"])
            for piece in state["pieces"].get(square, [])
            if piece[0] == seat and piece[1] == "w"
        ]
        t["moves"] = actions
        t["movers"] = movers
        if not movers:
            t["moves"] = 0
            return "創世エリアに自分のワーカーがいないので移動はありません"
        return f"創世エリアのワーカーを合計{actions}マスまで移動できます"
    # 繁栄
    cap = res["信仰"] + _skill_total(state, seat, "prosperity_cap")
    gained = min(actions, cap)
    player["vp"] += gained
    t["discards"] = actions
    lost = 1 if res["信仰"] > 0 else 0
    res["信仰"] -= lost
    # What may be discarded is the next prompt's 「DISCARD(n枚まで)」.
    return f"{gained}VP(信仰{cap}まで)、その後 信仰-{lost}"


def _move(state: State, seat: int, command: Move, events: Events) -> None:
    t = state["t"]
    if t["played"] is None or t["played"]["kind"] != "啓示" or not t["movers"]:
        raise RuleError(
            "ワーカーの移動は、啓示のアクションで創世エリアのワーカーを動かすときだけです。"
        )
    path = command.path
    if path[0] not in t["movers"]:
        raise RuleError(
            f"{path[0]}には動かせる自分のワーカーがいません(動かせるのは創世エリアにいた"
            f"ワーカー: {'・'.join(sorted(set(t['movers'])))})。"
        )
    steps = len(path) - 1
    if steps > t["moves"]:
        raise RuleError(f"残りのアクションは{t['moves']}回です({steps}マス進もうとしています)。")
    near = board.adjacency(_key(state))
    for here, there in pairwise(path):
        if not on_map(state, there):
            raise RuleError(f"{there}はこのマップにありません。")
        if there not in near.get(here, ()):
            raise RuleError(f"{here}と{there}は隣接していません。")
    _remove_worker(state, seat, path[0])
    _pieces(state, path[-1]).append([seat, "w"])
    t["movers"].remove(path[0])
    t["movers"].append(path[-1])
    t["moves"] -= steps
    events.append(event("move", f"ワーカーを {'→'.join(path)} へ。"))


def _discard(state: State, seat: int, command: Discard, events: Events) -> None:
    t = state["t"]
    player = state["players"][seat]
    allowed = t["discards"]
    if allowed is not None and allowed <= 0:
        raise RuleError(
            "今は手札を捨てられません(繁栄のアクション1回につき1枚、世代交代の後は好きなだけ)。"
        )
    if allowed is not None and len(command.kinds) > allowed:
        raise RuleError(f"{len(command.kinds)}枚は捨てられません(捨てられるのはあと{allowed}枚)。")
    if len(command.kinds) > 1 and Counter(command.kinds) - Counter(player["hand"]):
        # Which of them is missing would tell the thread a card of a secret hand (docs/gm.md).
        raise RuleError(
            f"{' '.join(command.kinds)} のうち手札にないカードがあります(どれかはスレッドでは"
            "言いません: ゲームページの「あなたの手元」で確かめてください)。"
        )
    decks.discard(player["hand"], state["discard"], command.kinds)
    if allowed is not None:
        t["discards"] = allowed - len(command.kinds)
    events.append(event("discard", f"{'・'.join(command.kinds)}を捨てました。"))


# -- war and mediation


def contested_squares(state: State) -> list[str]:
    """R: squares of the genesis area with pieces of several players (destroyed towns aside)."""
    if state["t"] is None or state["t"]["area"] is None:
        return []
    area = state["t"]["area"]
    return [square for square in area_squares(area) if len(_owners(state, square)) >= 2]


_contested = contested_squares


def _participants(state: State, contested: Sequence[str]) -> list[int]:
    found: set[int] = set()
    for square in contested:
        found |= _owners(state, square)
    return sorted(found)


def _mediate_cost(state: State, seat: int) -> int:
    return max(0, MEDIATE_COST - _skill_total(state, seat, "mediate_discount"))


def _can_mediate(state: State, seat: int, contested: Sequence[str]) -> bool:
    others = [s for s in _participants(state, contested) if s != seat]
    return int(state["players"][seat]["res"]["食料"]) >= _mediate_cost(state, seat) * len(others)


def _war_choice_open(state: State, seat: int, contested: Sequence[str]) -> bool:
    """The active player chooses only when involved (else war is forced) and, D, when the
    mediation is affordable (else the only choice is war)."""
    return seat in _participants(state, contested) and _can_mediate(state, seat, contested)


def _after_war(state: State, rng: Rng, events: Events) -> None:
    _end_phase(state, rng, events)
    if state["t"]["newgen"]:
        state["step"] = "town"
    else:
        _finish_turn(state, events)


def _war(state: State, rng: Rng, events: Events) -> None:
    contested = _contested(state)
    active = state["turn"]
    involved = _participants(state, contested)
    zone = set(contested) | board.neighbours(_key(state), contested)
    order = [s for s in seats.round_order(active, len(state["players"])) if s in involved]
    fighters: list[dict[str, Any]] = []
    for seat in order:
        player = state["players"][seat]
        pieces = sum(
            1
            for square in zone
            for piece in state["pieces"].get(square, ())
            if piece[0] == seat and live(piece)
        )
        cap = player["res"]["情熱"]
        apt = any(terrain(state, sq) in aptitudes(state, seat) for sq in contested)
        roll: int | None = None
        if cap == 0:
            die, how, way = 0, "情熱0でサイコロは0", "no_passion"
        elif apt:
            die, how, way = cap, f"適性によりサイコロは振らず{cap}", "aptitude"
        else:
            roll = rng.randint(1, 6)
            die, way = min(roll, cap), "roll"
            how = f"サイコロ{roll}" + (f"→情熱{cap}まで{die}" if roll > cap else "")
        bonus = _skill_total(state, seat, "war_strength")
        strength = pieces + die + bonus
        fighter: dict[str, Any] = {
            "seat": seat,
            "pieces": pieces,
            "roll": roll,
            "die": die,
            "die_by": way,
            "bonus": bonus,
            "strength": strength,
        }
        fighters.append(fighter)
        extra = f"+スキル{bonus}" if bonus else ""
        events.append(
            event(
                "war",
                f"{player['name']}: 駒{pieces}+{how}{extra} = 戦力{strength}",
            )
        )
    top = max(f["strength"] for f in fighters)
    best = [f["seat"] for f in fighters if f["strength"] == top]
    losers = [f["seat"] for f in fighters if f["strength"] < top]
    outcome: dict[str, str] = {}
    if len(best) == 1:
        winner = state["players"][best[0]]
        if winner["res"]["情熱"] > 0:
            winner["res"]["情熱"] -= 1
        outcome[str(best[0])] = "win"
        said = [f"{winner['name']}の勝利(情熱-1)"]
    else:
        for seat in best:
            outcome[str(seat)] = "draw"
        said = ["・".join(_name(state, s) for s in best) + "は引き分け"]
    for seat in losers:
        outcome[str(seat)] = "lose"
        for square in contested:
            _send_home(state, square, {seat}, towns=True)
        player = state["players"][seat]
        _gain(player, WRATH, 1)
        said.append(f"{player['name']}の敗北(係争マスのワーカーは手元へ・タウン破壊・神の怒り+1)")
    state["last_war"] = {
        "round": state["round"],
        "area": state["t"]["area"],
        "contested": list(contested),
        "fighters": fighters,
        "outcome": outcome,
    }
    events.append(event("war", f"戦争({'・'.join(contested)}): " + "、".join(said) + "。"))


def _mediate(state: State, seat: int, events: Events) -> None:
    contested = _contested(state)
    if seat not in _participants(state, contested):
        raise RuleError("係争マスに自分の駒がないので調停は選べません(戦争になります)。")
    others = [s for s in _participants(state, contested) if s != seat]
    cost = _mediate_cost(state, seat)
    player = state["players"][seat]
    if player["res"]["食料"] < cost * len(others):
        raise RuleError(
            f"調停には食料{cost * len(others)}個が要ります({len(others)}人に{cost}個ずつ。"
            f"持っているのは{player['res']['食料']}個)。"
        )
    said = []
    for other in others:
        player["res"]["食料"] -= cost
        gained = _gain(state["players"][other], "食料", cost)
        for square in contested:
            _send_home(state, square, {other}, towns=False)
        said.append(f"{_name(state, other)}に食料{cost}(受け取り{gained})")
    events.append(
        event(
            "mediate",
            f"調停: {'、'.join(said)}。受け取った人は係争マスのワーカーを手元へ戻します"
            "(タウンはそのまま)。",
        )
    )


# -- the end of a turn


def _end_phase(state: State, rng: Rng, events: Events) -> None:
    """R: refill to the hand size (reshuffling the discard), rebuild destroyed towns where an
    own worker stands, and keep one own piece per square (a town beats a worker)."""
    seat = state["turn"]
    player = state["players"][seat]
    size = hand_size(state, seat)
    reshuffled = len(state["deck"]) < size - len(player["hand"]) and bool(state["discard"])
    drawn = decks.refill(player["hand"], state["deck"], size, rng, state["discard"])
    said = [f"{len(drawn)}枚補充して手札{len(player['hand'])}枚"]
    if reshuffled:
        said.append("山札が尽きたので捨て札をシャッフルして山札にしました")
    for square in sorted(state["pieces"]):
        pieces = state["pieces"][square]
        mine = [p for p in pieces if p[0] == seat]
        if not mine:
            continue
        if any(p[1] == "x" for p in mine) and any(p[1] == "w" for p in mine):
            for index, piece in enumerate(pieces):
                if piece[0] == seat and piece[1] == "x":
                    pieces[index] = [seat, "t"]  # a new piece: pieces are shared by copies
                    break
            _remove_worker(state, seat, square)
            player["workers"] += 1
            said.append(f"{square}のタウンを再建")
            pieces = state["pieces"].get(square, [])
            mine = [p for p in pieces if p[0] == seat]
        has_town = any(p[1] == "t" for p in mine)
        workers = [p for p in mine if p[1] == "w"]
        keep = 0 if has_town else 1
        extra = len(workers) - keep
        for _ in range(max(0, extra)):
            _remove_worker(state, seat, square)
            player["workers"] += 1
        if extra > 0:
            said.append(f"{square}の余分なワーカー{extra}個を手元へ")
    events.append(event("end", "終了フェイズ: " + "、".join(said) + "。"))


def town_options(state: State, seat: int) -> list[str]:
    """R: a square with an own worker and no town at all (intact or destroyed, anyone's)."""
    if state["players"][seat]["towns"] <= 0:
        return []
    options = []
    placed = state["pieces"]
    for square in all_squares(state):
        pieces = placed.get(square)
        if not pieces or any(p[1] in ("t", "x") for p in pieces):
            continue
        if any(p[0] == seat and p[1] == "w" for p in pieces):
            options.append(square)
    return options


def _build_town(state: State, seat: int, square: str, events: Events) -> None:
    player = state["players"][seat]
    _remove_worker(state, seat, square)
    player["workers"] += 1
    _pieces(state, square).append([seat, "t"])
    player["towns"] -= 1
    state["t"]["town"] = square
    events.append(event("town", f"決算: {square} のワーカーをタウンに。"))


def _town(state: State, seat: int, square: str, events: Events) -> None:
    options = town_options(state, seat)
    if square not in options:
        raise RuleError(
            f"{square}にはタウンを建てられません(自分のワーカーがいて、タウンのないマスだけ。"
            f"建てられるのは {'・'.join(options) or 'なし'})。"
        )
    _build_town(state, seat, square, events)
    state["step"] = "reveal"


def _face_down_skills(state: State, seat: int) -> list[str]:
    player = state["players"][seat]
    return [name for name in player["skills"] if name not in player["revealed"]]


def _reveal_skill(state: State, seat: int, name: str, events: Events) -> None:
    state["t"]["revealed"] = name
    skill = content().skills[name]
    events.append(event("reveal", f"決算: スキル「{name}」を公開({skill.text} 次の手番から有効)。"))


def _reveal(state: State, seat: int, name: str, events: Events) -> None:
    hidden = _face_down_skills(state, seat)
    if name not in hidden:
        raise RuleError(f"伏せてあるスキルに「{name}」はありません。")
    _reveal_skill(state, seat, name, events)
    _settle(state, events)
    _finish_turn(state, events)


def majorities(state: State, seat: int) -> list[str]:
    """R: areas where the seat has workers on two squares or more, or an intact town."""
    found = []
    placed = state["pieces"]
    for tile in state["map"]:
        squares = area_squares(tile["id"])
        with_worker = 0
        town = False
        for square in squares:
            pieces = placed.get(square)
            if not pieces:  # most squares: the view asks this for every seat on every post
                continue
            if any(p[0] == seat and p[1] == "w" for p in pieces):
                with_worker += 1
            if any(p[0] == seat and p[1] == "t" for p in pieces):
                town = True
        if with_worker >= 2 or town:
            found.append(tile["id"])
    return found


def _settle(state: State, events: Events) -> None:
    """R: (cards of the previous 現代) × majorities VP; skills' settle VP (D: those revealed
    before this turn)."""
    seat = state["turn"]
    player = state["players"][seat]
    areas = majorities(state, seat)
    previous = len(player["gens"][-2]) if len(player["gens"]) >= 2 else 0
    gained = previous * len(areas)
    bonus = _skill_total(state, seat, "settle_vp")
    player["vp"] += gained + bonus
    where = "・".join(areas) if areas else "なし"
    extra = f"、スキルで+{bonus}VP" if bonus else ""
    events.append(
        event(
            "settle",
            f"決算: 前の【現代】{previous}枚×マジョリティ{len(areas)}({where})={gained}VP{extra}。",
        )
    )


def _finish_turn(state: State, events: Events) -> None:
    seat = state["turn"]
    player = state["players"][seat]
    revealed = state["t"]["revealed"]
    if revealed is not None:
        player["revealed"].append(revealed)
    count = len(state["players"])
    nxt = (seat + 1) % count
    if nxt == state["start"]:
        if state["round"] >= ROUNDS:
            _finish_game(state, events)
            return
        state["round"] += 1
    state["turn"] = nxt
    _begin_turn(state, events)


def _finish_game(state: State, events: Events) -> None:
    from app.games.populous.scoring import final_scores

    state["step"] = None
    state["t"] = None
    state["phase"] = "over"
    state["over"] = True
    state["final"] = final_scores(state)
    events.append(
        event(
            "game_over",
            f"第{ROUNDS}ラウンド終了。ポピュラス 草案21 終了、最終決算です"
            "(ワーカー1VP・タウン3VP・世代ごとのマジョリティ4VP・スキル)。",
        )
    )


# -- END: the rest of the turn by the default rule


def _end_command(state: State, seat: int, rng: Rng, events: Events) -> None:
    """D: END finishes the turn; the optional steps left are skipped and every decision left
    is made by the default rule (`_default_step`)."""
    turn = (state["round"], state["turn"])
    for _ in range(len(STEPS) * 2):
        if state["phase"] != "play" or (state["round"], state["turn"]) != turn:
            return
        if state["step"] in OPTIONAL_STEPS:
            _close(state, rng, events)
            continue
        command = _default_step(state, seat)
        events.append(event("default", f"(既定の手) {command.canonical()}"))
        _run_step(state, seat, command, rng, events)
    raise AssertionError("END did not finish the turn")  # pragma: no cover


def _default_step(state: State, seat: int) -> GameCommand:
    """D (docs/rules/populous.md, "Defaults"): the first legal area (numbered cards before
    Free), one worker on the cheapest square, the first card of the hand face up with no
    extras, war, the first square for the town, the first face-down skill."""
    step = state["step"]
    if step == "area":
        return _areas(state, seat)[0]
    if step == "place":
        options = _placements(state, seat)
        return min(options, key=lambda p: (len(p.squares), placement_cost(state, seat, p.squares)))
    if step == "play":
        return Play(state["players"][seat]["hand"][0])
    if step == "war":
        return War()
    if step == "town":
        return Town(town_options(state, seat)[0])
    return Reveal(_face_down_skills(state, seat)[0])


# --------------------------------------------------------------------------- legal lines


def _areas(state: State, seat: int) -> list[Area]:
    faith = state["players"][seat]["res"]["信仰"]
    frees = sum(cost <= faith for cost in FREE_COST) - 1  # how many Free cards it can pay
    unmarked = tuple(str(n) for n in range(1, 6) if str(n) not in state["markers"])
    tiles = frozenset(tile["id"] for tile in state["map"])
    return list(_area_choices(unmarked, frees, tiles))


@functools.lru_cache(maxsize=256)
def _area_choices(unmarked: tuple[str, ...], frees: int, tiles: frozenset[str]) -> tuple[Area, ...]:
    """The areas a player may choose with these cards unmarked, paying for up to ``frees``
    Free cards, on a map of these tiles: a few dozen, the same at most turns of a game."""
    free = [f"F{n}" for n in range(1, 6)]
    found: list[Area] = []
    seen: set[tuple[str, str]] = set()
    for first in [*unmarked, *free]:
        for second in [*unmarked, *free]:
            if first == second and not first.startswith("F"):
                continue
            low, high = sorted((first, second), key=card_order)
            if (low, high) in seen:
                continue
            seen.add((low, high))
            command = Area((low, high))
            if command.free > frees:
                continue
            numbers = command.numbers
            if f"{numbers[0]}-{numbers[1]}" not in tiles:
                continue
            found.append(command)
    found.sort(key=lambda a: (a.free, a.numbers))
    return tuple(found)


def _wrath_candidates(state: State, seat: int) -> Iterator[GameCommand]:
    res = state["players"][seat]["res"]
    if res["信仰"] >= _buy_cost(state, seat) and res[WRATH] < RESOURCE_CAP:
        yield WrathBuy()
    squares = area_squares(state["t"]["area"])
    rings = rings_available(state)
    for paid in range(3, res[WRATH] + 1):
        if paid == 3:
            choices: list[tuple[str, ...]] = [()]
        elif paid == 4:
            choices = [(sq,) for sq in squares]
        else:
            choices = [(sq,) for sq in squares] + [
                (a, b) for i, a in enumerate(squares) for b in squares[i + 1 :]
            ]
        for chosen in choices:
            for colour in rings:
                yield Catastrophe(paid, chosen, colour)


def _step_candidates(state: State, seat: int, step: str) -> list[GameCommand]:
    t = state["t"]
    player = state["players"][seat]
    if step == "area":
        return list(_areas(state, seat))
    if step == "wrath":
        return list(_wrath_candidates(state, seat))
    if step == "place":
        return list(_placements(state, seat))
    if step == "play":
        return list(_play_candidates(state, seat))
    if step == "after":
        found: list[GameCommand] = []
        if t["moves"] > 0:
            near = board.adjacency(_key(state))
            for here in sorted(set(t["movers"])):
                for there in near.get(here, ()):
                    found.append(Move((here, there)))
        if player["hand"] and (t["discards"] is None or t["discards"] > 0):
            for kind in KINDS:
                if kind in player["hand"]:
                    found.append(Discard((kind,)))
        return found
    if step == "war":
        contested = _contested(state)
        if contested and _war_choice_open(state, seat, contested):
            return [War(), Mediate()]
        return []
    if step == "town":
        return [Town(square) for square in town_options(state, seat)]
    if step == "reveal":
        return [Reveal(name) for name in _face_down_skills(state, seat)]
    return []


def _next_after_optional(state: State, seat: int) -> str | None:
    """The step that closing the present optional step leads to, when that is known without
    rolling a die (wrath → place or play; after → the war choice)."""
    step = state["step"]
    if step == "wrath":
        if _placements(state, seat, limit=1):
            return "place"
        return "play" if state["players"][seat]["hand"] else None
    if step == "after":
        contested = _contested(state)
        if contested and _war_choice_open(state, seat, contested):
            return "war"
    return None


def legal_commands(state: State, actor: Actor) -> list[GameCommand]:
    if actor == "gm" or state["over"]:
        return []
    seat = actor
    phase = state["phase"]
    if phase == "race":
        if seat != state["turn"]:
            return []
        taken = {p["race"] for p in state["players"]}
        return [Race(name) for name in content().races if name not in taken]
    if phase == "draft":
        if seat not in secret.seats(state["secret"]):
            return []
        return [Pick(name) for name in state["draft"]["packs"][seat]]
    if phase == "cubes":
        return [
            Cubes(a, b, START_CUBES - a - b)
            for a in range(RESOURCE_CAP + 1)
            for b in range(RESOURCE_CAP + 1)
            if 0 <= START_CUBES - a - b <= RESOURCE_CAP
        ]
    if phase != "play" or seat != state["turn"]:
        return []
    step = state["step"]
    found = _step_candidates(state, seat, step)
    if step in OPTIONAL_STEPS:
        following = _next_after_optional(state, seat)
        if following is not None:
            found.extend(_step_candidates(state, seat, following))
        elif step == "after" and state["t"]["newgen"]:
            found.extend(_settlement_candidates(state, seat))
    found.append(End())
    return found


def _settlement_candidates(state: State, seat: int) -> list[GameCommand]:
    """The 決算's choices, offered from the moves and discards after NEWGEN (R 「タウンは好きな
    エリア…に建設」, 「伏せてあるスキルカードの中から好きな1枚を選んで」): the step is closed on a
    copy to see where the turn stops. Only lines accepted whatever a die rolls on the way are
    offered: with an automatic war, the towns on squares the war cannot touch (when two or
    more of them remain, so the town step waits), and no REVEAL (the war decides whether the
    town step waits first)."""
    trial = copy_state(state)
    _close(trial, Rng("legal", 0), [])
    if trial["phase"] != "play" or trial["turn"] != seat:
        return []
    contested = set(_contested(state))
    if trial["step"] == "town":
        squares = [sq for sq in town_options(trial, seat) if sq not in contested]
        return [Town(square) for square in squares] if len(squares) > 1 else []
    if trial["step"] == "reveal" and not contested:
        return [Reveal(name) for name in _face_down_skills(trial, seat)]
    return []


def waiting_for(state: State) -> list[int]:
    if state["over"]:
        return []
    if state["phase"] in ("draft", "cubes"):
        return secret.missing(state["secret"])
    return [int(state["turn"])]


def default_commands(state: State, seat: int) -> list[str]:
    """What the bot posts for a seat past its deadline (D, docs/rules/populous.md): the first
    race left; the first skill of the pack; 情熱2 食料3 信仰2; in a turn, END (the rest of the
    turn by the default rule)."""
    if seat not in waiting_for(state):
        return []
    phase = state["phase"]
    if phase == "race":
        return [legal_commands(state, seat)[0].canonical()]
    if phase == "draft":
        return [Pick(state["draft"]["packs"][seat][0]).canonical()]
    if phase == "cubes":
        return [DEFAULT_CUBES.canonical()]
    return [End().canonical()]


def turn_key(state: State) -> str:
    if state["over"]:
        return "over"
    phase = state["phase"]
    if phase == "race":
        return f"race:{state['turn']}"
    if phase == "draft":
        return f"draft:{state['draft']['pick']}"
    if phase == "cubes":
        return "cubes"
    return f"play:{state['round']}:{state['turn']}"


# --------------------------------------------------------------------------- prompts


def _prompt(state: State) -> str:
    """What the active player may write next, in words."""
    if state["phase"] != "play":
        return ""
    seat = state["turn"]
    step = state["step"]
    name = _name(state, seat)
    t = state["t"]
    # One line on a phone (issue #43): the step, its command and what it may name; the
    # commands' full forms are on the 遊び方 page.
    if step == "area":
        marked = [m for m in state["markers"] if m != "F"]
        blocked = f"({'・'.join(marked)}以外)" if marked else ""
        return f"次: {name}のエリア AREA <数> <数>{blocked}"
    if step == "wrath":
        return f"次: {name}の配置 PLACE <マス>…(先に神の怒り WRATH … も可)"
    if step == "place":
        first, *others = area_squares(t["area"])
        squares = "/".join([first, *(square[-1] for square in others)])  # 34a/b/c
        return f"次: {name}の配置 PLACE <マス>…({squares})"
    if step == "play":
        return f"次: {name}の手札 PLAY / FACEDOWN / NEWGEN"
    if step == "after":
        parts = []
        if t["moves"] > 0 and t["movers"]:
            parts.append(f"MOVE <元> <先>(残り{t['moves']}マス)")
        if t["discards"] is None or t["discards"] > 0:
            limit = "好きなだけ" if t["discards"] is None else f"{t['discards']}枚まで"
            parts.append(f"DISCARD({limit})")
        return f"次: {name}は {' / '.join(parts)} か END"
    if step == "war":
        squares = "・".join(_contested(state))
        return f"次: {name}は係争マス {squares} で WAR(戦争)か MEDIATE(調停)"
    if step == "town":
        return f"次: {name}の決算 TOWN <マス>({'・'.join(town_options(state, seat))})"
    if step == "reveal":
        return f"次: {name}の決算 REVEAL <伏せたスキル>"
    return ""


def reveals(state: State, command: Any) -> str | None:
    """``Game.reveals``: the dice of a war (a WAR, or a line that closes the steps before an
    automatic one) and of a 3-wrath catastrophe, and the secret steps whose last choice
    shows everyone's (draws: the platform sees them change ``hidden``)."""
    if isinstance(command, War):
        return "サイコロを振る"
    before_war = state.get("step") in STEPS[: STEPS.index("war")]
    if isinstance(command, Town | Reveal | End) and before_war:
        return "手番の戦争をサイコロで決めることがある"
    if isinstance(command, Catastrophe) and command.paid == 3:
        return "サイコロでマスが決まる"
    if isinstance(command, Cubes | Pick):
        return "全員の選択がそろうと公開される"
    return None
