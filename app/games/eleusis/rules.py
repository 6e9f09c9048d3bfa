"""新新エリューシス's rules as pure functions over a JSON state.

R = the source (seeds/002_…txt, 改良案), I = the project's fixed interpretation, D = ours;
docs/rules/eleusis.md lists each with the source line it reads.

A round goes: the parent seals a rule (phase "rule") → children play in turn (phase "play") →
a play waits for judgments when the parent judges by hand or prophets judge (phase "judge") →
… → the round ends and is scored → the next parent seals a rule, or the game is over.
`apply` copies the state, checks the command (RuleError, nothing changed) and runs it.

Hidden in the state and never shown but to their owner (view.py): hands, the rule text and its
salt before the round's end, secret judgments before they are all in, deck order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.games.base import Actor, Rng, RuleError, State, event, private_event
from app.games.eleusis import scoring
from app.games.eleusis.bot import house_rules
from app.games.eleusis.cards import HAND_SIZE, full_deck, sort_cards
from app.games.eleusis.commands import (
    FORMAL,
    HAND,
    ChooseParent,
    EndRound,
    GameCommand,
    Hint,
    Judge,
    Play,
    Prophet,
    SealRule,
)
from app.games.eleusis.rule import (
    FAILURE,
    MIXED,
    SUCCESS,
    RuleLanguageError,
    commitment,
    judge,
    parse_rule,
)

Events = list[dict[str, Any]]

MIN_PLAYERS = 4  # R 準備 3「人数は4〜6人」
MAX_PLAYERS = 6
MAX_ROUNDS = 24
PENALTY_PER_CARD = 2  # R「出したカード枚数×2枚」
DISQUALIFY_AFTER = 40  # R「全体でカードが40枚出された以降」
HINT_AFTER: tuple[int, ...] = (10, 20, 30)  # R「10枚目、20枚目、30枚目のカードが出された後」
# D「間もなくラウンドが終了しそうな状態」: a child still in the round holds at most this many
# cards, so one play (1–4 cards) could empty that hand.
ABOUT_TO_END = 4

JUDGMENTS: tuple[str, ...] = (SUCCESS, FAILURE, MIXED)

# The lines legal() suggests to a parent who has not sealed a rule yet (any rule will do).
EXAMPLE_RULES: dict[str, str] = {
    FORMAL: "RULE card.color != prev.color",
    HAND: "RULE TEXT 前のカードと色が違う",
}


class EleusisOptions(BaseModel):
    """`parent`: the first parent's name (default: the first seat). `rounds`: how many rounds,
    the parent rotating in seat order (default: one per player). `rules`: which kind of rule a
    parent may seal — "any", "formal" (the bot judges) or "hand" (the parent judges)."""

    model_config = ConfigDict(extra="forbid")

    parent: str | None = None
    rounds: int | None = Field(default=None, ge=1, le=MAX_ROUNDS)
    rules: Literal["any", "formal", "hand"] = "any"


# --------------------------------------------------------------------------- small helpers


def _in_words(rule: str) -> str:
    """A house rule (a bot parent's, content/house_rules.toml) in its own words beside its
    formula: 「card.color != prev.color」 is 「(前のカードと違う色)」 to a newcomer. A rule a
    person wrote is shown as written (the hash is of those very words)."""
    words = next((house.ja for house in house_rules() if house.text == rule), "")
    return f"({words})" if words else ""


def _name(state: State, seat: int) -> str:
    name: str = state["players"][seat]["name"]
    return name


def _names(state: State, seats: Iterable[int]) -> str:
    return "、".join(_name(state, seat) for seat in seats) or "なし"


def _cards(cards: Iterable[str]) -> str:
    return " ".join(cards)


def copy_state(state: State) -> State:
    """A deep copy (every mutable part copied; much faster than copy.deepcopy)."""
    copied = dict(state)
    copied["players"] = [{**player, "hand": list(player["hand"])} for player in state["players"]]
    copied["deck"] = list(state["deck"])
    copied["line"] = [
        {"card": entry["card"], "failed": [list(run) for run in entry["failed"]]}
        for entry in state["line"]
    ]
    copied["hints"] = [dict(hint) for hint in state["hints"]]
    pending = state["pending"]
    if pending is not None:
        copied["pending"] = {
            **pending,
            "cards": list(pending["cards"]),
            "judges": [dict(entry) for entry in pending["judges"]],
        }
    if state["last_play"] is not None:
        last = state["last_play"]
        copied["last_play"] = {
            **last,
            "cards": list(last["cards"]),
            "judgments": [dict(entry) for entry in last["judgments"]],
            "disqualified": list(last["disqualified"]),
        }
    # Finished rounds never change again; sharing them is safe.
    copied["history"] = list(state["history"])
    return copied


def children(state: State) -> list[int]:
    return [seat for seat in range(len(state["players"])) if seat != state["parent"]]


def in_round(state: State) -> list[int]:
    """Children not disqualified this round."""
    return [seat for seat in children(state) if not state["players"][seat]["disqualified"]]


def prophets(state: State) -> list[int]:
    return [seat for seat in in_round(state) if state["players"][seat]["prophet"]]


def main_line(state: State) -> list[str]:
    return [entry["card"] for entry in state["line"]]


def _next_child(state: State, after: int) -> int | None:
    """The next child in seat order after `after` who is still in the round."""
    count = len(state["players"])
    for step in range(1, count + 1):
        seat = (after + step) % count
        if seat != state["parent"] and not state["players"][seat]["disqualified"]:
            return seat
    return None


def hints_left(state: State) -> int:
    earned = sum(1 for threshold in HINT_AFTER if state["played"] >= threshold)
    return earned - len(state["hints"])


def about_to_end(state: State) -> bool:
    """D: some child still in the round could empty their hand with one play."""
    return any(len(state["players"][seat]["hand"]) <= ABOUT_TO_END for seat in in_round(state))


def hint_allowed(state: State) -> bool:
    """R: after the 10th/20th/30th card, 但し預言者が存在していて間もなくラウンドが終了しそうな
    状態であればこの限りではない."""
    if state["phase"] not in ("play", "judge") or hints_left(state) <= 0:
        return False
    return not (prophets(state) and about_to_end(state))


def card_census(state: State) -> Counter[str]:
    """Every card wherever it lies: deck, hands, main line, failed strings, a pending play.
    Equal to Counter(full_deck()) in every reachable state (104 cards, R 準備 1)."""
    census: Counter[str] = Counter(state["deck"])
    for player in state["players"]:
        census.update(player["hand"])
    for entry in state["line"]:
        census[entry["card"]] += 1
        for run in entry["failed"]:
            census.update(run)
    if state["pending"] is not None:
        census.update(state["pending"]["cards"])
    return census


# --------------------------------------------------------------------------- setup


def _new_player(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "hand": [],
        "prophet": False,
        "prophet_at": None,  # the index in the main line of the card the marker is on
        "disqualified": False,
        # Per round: correct secret judgments as a prophet, whether the prophecy failed,
        # how many prophets this child's plays disqualified.
        "correct": 0,
        "prophet_failed": False,
        "caused": 0,
        "score": 0,
    }


def setup(players: list[str], chosen: EleusisOptions, rng: Rng) -> State:
    """The game before round 1: everyone seated, the first parent to seal a rule."""
    del rng  # I: cards are shuffled and dealt when a round's rule is sealed
    parent = 0
    if chosen.parent is not None:
        if chosen.parent not in players:
            raise RuleError(
                f"オプション parent の {chosen.parent} はプレイヤーにいません"
                f"(プレイヤー: {'、'.join(players)})。"
            )
        parent = players.index(chosen.parent)
    return {
        "kind": "eleusis",
        "players": [_new_player(name) for name in players],
        "rounds": chosen.rounds if chosen.rounds is not None else len(players),
        "rules": chosen.rules,
        "round": 1,
        "parent": parent,
        "phase": "rule",
        "mode": None,
        "rule": None,
        "salt": None,
        "rule_hash": None,
        "deck": full_deck(),
        "line": [],
        "played": 0,
        "turn": None,
        "window": None,
        "pending": None,
        "last_play": None,
        "hints": [],
        "step": 0,
        "history": [],
        "over": False,
    }


# --------------------------------------------------------------------------- sealing


def needs_seal(state: State, command: GameCommand) -> bool | None:
    """True: must come sealed; False: must come public; None: either way.

    RULE is always sealed; JUDGE while prophets judge (secret judgments) too, otherwise it may
    come either way; every other command is a public act and may not be sealed.
    """
    if isinstance(command, SealRule):
        return True
    if isinstance(command, Judge):
        pending = state["pending"]
        if pending is not None and pending["secret"]:
            return True
        return None
    return False


MUST_BE_SEALED = {
    "rule": (
        "ルールは封印して RULE で送り、スレッドに書いてしまったルールは皆に見えたので別のルールを"
        "考えてください(ルールブック「親プレイヤーはルールを決め紙に記録しておく」)。"
    ),
    "judge": (
        "預言者がいるので、判定は封印して JUDGE で送ってください"
        "(ルールブック「判定マーカーを秘密裏に握って判定を行う」)。"
    ),
}
# Why ENDROUND and PARENT are the GM's (said after "X は GM の命令です").
GM_COMMAND_NOTE = "(ラウンドの終了は協議のうえ GM が ENDROUND、親の指名は GM が PARENT)"


# --------------------------------------------------------------------------- checks


def _verb(command: GameCommand) -> str:
    return command.canonical().split(" ", 1)[0]


def check(state: State, actor: Actor, command: GameCommand, sealed: bool) -> None:
    """Raise RuleError if `command` is illegal for `actor` now. Never mutates."""
    phase = state["phase"]
    if isinstance(command, ChooseParent):
        if phase != "rule":
            raise RuleError(
                "親を指名できるのは、そのラウンドのルールが封をされる前だけです"
                f"(第{state['round']}ラウンドはもう始まっています)。"
            )
        names = [player["name"] for player in state["players"]]
        if command.name not in names:
            raise RuleError(
                f"{command.name} はプレイヤーにいません(プレイヤー: {'、'.join(names)})。"
            )
        return
    if isinstance(command, EndRound):
        return
    assert isinstance(actor, int)
    name = _name(state, actor)
    parent = state["parent"]
    if isinstance(command, SealRule):
        if actor != parent:
            raise RuleError(
                f"ルールを決めるのは親({_name(state, parent)}さん)です"
                "(ルールブック「親プレイヤーはルールを決め紙に記録しておく」)。"
            )
        if phase != "rule":
            raise RuleError(
                f"第{state['round']}ラウンドのルールはもう封をされています。ルールは変えられません"
                "(ラウンドの終わりに公開され、SHA-256 で確かめられます)。"
            )
        allowed = state["rules"]
        if allowed != "any" and allowed != command.mode:
            wanted = (
                "形式ルール(RULE <式>)" if allowed == FORMAL else "文章のルール(RULE TEXT <文章>)"
            )
            raise RuleError(f"このゲームのオプションでは、ルールは{wanted}で決めます。")
        if command.mode == FORMAL:
            try:
                parse_rule(command.text)  # cached: a replay checks the same rule again
            except RuleLanguageError as error:
                raise RuleError(error.message) from None
        return
    if phase == "rule":
        raise RuleError(
            f"第{state['round']}ラウンドは、親の{_name(state, parent)}さんがルールを非公開で"
            "封をするのを待っています(RULE)。"
        )
    if isinstance(command, Play):
        _check_play(state, actor, command)
        return
    if isinstance(command, Judge):
        pending = state["pending"]
        if pending is None:
            raise RuleError("いま判定を待っているプレイはありません。")
        judges = [entry for entry in pending["judges"] if entry["seat"] == actor]
        if not judges:
            who = _names(state, [entry["seat"] for entry in pending["judges"]])
            reason = (
                "形式ルールでは親の判定はボットが行います"
                if actor == parent
                else "判定するのは親と、プレイした子以外の預言者です"
            )
            raise RuleError(f"{name}さんはこのプレイを判定しません({reason}。判定する人: {who})。")
        if judges[0]["judgment"] is not None:
            raise RuleError(f"{name}さんはこのプレイをもう判定しました(判定は変えられません)。")
        return
    if isinstance(command, Prophet):
        player = state["players"][actor]
        if actor == parent:
            raise RuleError("親は預言者になれません(預言者は子の宣言です)。")
        if player["prophet"]:
            raise RuleError(f"{name}さんはもう預言者です。")
        if player["disqualified"]:
            raise RuleError(f"{name}さんはこのラウンドは失格しています。")
        if state["window"] != actor:
            raise RuleError(
                "預言者の宣言ができるのは、自分の手番の最後(判定が済んでから次の子が出すまで)"
                "です(ルールブック「手番の最後に預言者の宣言ができる」)。"
            )
        return
    if isinstance(command, Hint):
        if actor != parent:
            raise RuleError(
                "ヒントを出せるのは親だけです(ルールブック「親プレイヤーのヒントタイム」)。"
            )
        if hints_left(state) <= 0:
            given = len(state["hints"])
            raise RuleError(
                f"いまはヒントを出せません。ヒントは10枚目・20枚目・30枚目のカードが出された後に"
                f"1回ずつです(出されたカード {state['played']} 枚、出したヒント {given} 回)。"
            )
        if prophets(state) and about_to_end(state):
            raise RuleError(
                "預言者がいて、ラウンドが間もなく終わりそう(手札が4枚以下の子がいる)なので"
                "ヒントは出せません(ルールブック「但し預言者が存在していて間もなくラウンドが終了しそうな"
                "状態であればこの限りではない」)。"
            )
        return
    raise RuleError(f"{command!r} は新新エリューシスの命令ではありません。")


def _check_play(state: State, actor: int, command: Play) -> None:
    name = _name(state, actor)
    if state["phase"] == "judge":
        pending = state["pending"]
        waiting = [entry["seat"] for entry in pending["judges"] if entry["judgment"] is None]
        raise RuleError(
            f"{_name(state, pending['seat'])}さんのプレイの判定待ちです"
            f"(まだ判定していない人: {_names(state, waiting)})。"
        )
    if actor == state["parent"]:
        raise RuleError("親はカードを出しません(カードを出すのは子です)。")
    if state["players"][actor]["disqualified"]:
        raise RuleError(f"{name}さんはこのラウンドは失格しています。")
    if state["turn"] != actor:
        raise RuleError(f"いまは{_name(state, state['turn'])}さんの手番です。")
    if command.declaration not in (SUCCESS, FAILURE):
        raise RuleError("宣言は ○(全部成功)か ●(全部失敗)です。")
    if not 1 <= len(command.cards) <= 4:
        raise RuleError(
            "一度に出せるのは 1〜4 枚です(ルールブック「手札より1枚以上4枚以下のカード」)。"
        )
    missing = Counter(command.cards) - Counter(state["players"][actor]["hand"])
    if missing:
        # Neither the hand nor which of the cards are missing is named: rule errors are posted
        # in the thread.
        raise RuleError(
            f"{_cards(command.cards)} のうち手札にないカードがあります(手札は秘密なので、どれかは"
            "スレッドでは言いません: ゲームページの「あなたの手元」で確かめてください)。"
        )


# --------------------------------------------------------------------------- running


def execute(state: State, actor: Actor, command: GameCommand, rng: Rng, sealed: bool) -> Events:
    """Check and run one command on `state` (mutated: pass a copy)."""
    check(state, actor, command, sealed)
    events: Events = []
    if isinstance(command, ChooseParent):
        state["parent"] = [p["name"] for p in state["players"]].index(command.name)
        events.append(
            event(
                "parent",
                f"GM が第{state['round']}ラウンドの親に{command.name}さんを指名しました。"
                "親は非公開で RULE を送ってください。",
                seat=state["parent"],
                waiting=[state["parent"]],
            )
        )
    elif isinstance(command, EndRound):
        _end_by_agreement(state, events)
    elif isinstance(command, SealRule):
        assert isinstance(actor, int)
        _seal_rule(state, actor, command, rng, events)
    elif isinstance(command, Play):
        assert isinstance(actor, int)
        _play(state, actor, command, events)
    elif isinstance(command, Judge):
        assert isinstance(actor, int)
        _judge(state, actor, command, sealed, events)
    elif isinstance(command, Prophet):
        assert isinstance(actor, int)
        # D: the picture marks the prophet on the card last on the main line when they spoke.
        state["players"][actor].update(prophet=True, prophet_at=len(state["line"]) - 1)
        state["window"] = None
        # The turn stays with the next child, named here (waiting): the reply adds no
        # 手番待ち line.
        events.append(
            event(
                "prophet",
                f"{_name(state, actor)}さんが預言者に(以後、秘密で JUDGE)。"
                f"次の手番: {_name(state, state['turn'])}さん。",
                seat=actor,
                waiting=[state["turn"]],
            )
        )
    elif isinstance(command, Hint):
        state["hints"].append({"played": state["played"], "text": command.text})
        events.append(
            event(
                "hint", f"親のヒント({state['played']}枚目の後): {command.text}", hint=command.text
            )
        )
    return events


def _seal_rule(state: State, parent: int, command: SealRule, rng: Rng, events: Events) -> None:
    """The round starts: commit to the rule, shuffle, deal 12 to each child, turn the starter."""
    salt = f"{rng.randint(0, 2**64 - 1):016x}"
    digest = commitment(salt, command.text)
    state.update(mode=command.mode, rule=command.text, salt=salt, rule_hash=digest)
    deck = _gather(state)
    rng.shuffle(deck)
    count = len(state["players"])
    # The deal and the turns start with the child after the parent.
    order = [(parent + step) % count for step in range(1, count)]
    for _ in range(HAND_SIZE):
        for seat in order:
            state["players"][seat]["hand"].append(deck.pop())
    for seat in order:
        state["players"][seat]["hand"] = sort_cards(state["players"][seat]["hand"])
    starter = deck.pop()
    state["deck"] = deck
    state["line"] = [{"card": starter, "failed": []}]
    state.update(phase="play", turn=order[0], window=None, played=0, step=state["step"] + 1)
    how = "形式ルール(RULE <式>)" if command.mode == FORMAL else "文章のルール(RULE TEXT)"
    events.append(
        private_event(
            "rule_sealed",
            f"ルールを封しました({how}): {command.text} / ソルト {salt} / SHA-256 {digest}",
            parent,
        )
    )
    judged = "形式ルール・ボットが判定" if command.mode == FORMAL else "文章のルール・親が判定"
    # One text, the first turn named in it (waiting): the reply adds no 手番待ち line. The
    # parent is named by the line above it (「… さんから封印コマンドが届きました。」).
    events.append(
        event(
            "round_start",
            f"第{state['round']}ラウンド開始({judged})。"
            f"ルールの SHA-256: {digest}。"
            f"最初のカード {starter}、手番 {_name(state, order[0])}さん。",
            round=state["round"],
            rule_hash=digest,
            starter=starter,
            waiting=[order[0]],
        )
    )


def _gather(state: State) -> list[str]:
    """Every card back into one deck (in display order, so the order tells nothing)."""
    cards = list(card_census(state).elements())
    for player in state["players"]:
        player["hand"] = []
    state["line"] = []
    state["pending"] = None
    return sort_cards(cards)


def _play(state: State, seat: int, command: Play, events: Events) -> None:
    player = state["players"][seat]
    hand = Counter(player["hand"])
    hand.subtract(command.cards)
    player["hand"] = sort_cards(hand.elements())
    state["window"] = None
    judges: list[dict[str, Any]] = [
        {"seat": p, "judgment": None} for p in prophets(state) if p != seat
    ]
    parent_judgment: str | None = None
    if state["mode"] == HAND:
        judges.insert(0, {"seat": state["parent"], "judgment": None})
    else:
        parent_judgment = judge(parse_rule(state["rule"]), main_line(state), command.cards)
    secret = any(entry["seat"] != state["parent"] for entry in judges)
    state["pending"] = {
        "seat": seat,
        "declaration": command.declaration,
        "cards": list(command.cards),
        "parent_judgment": parent_judgment,
        "judges": judges,
        "secret": secret,
    }
    # No text: the reply's "✔ PLAY ○ ♠3" says the declaration and the cards already; the
    # judgment (or the judges awaited) follows on the same line.
    events.append(
        event(
            "play",
            "",
            seat=seat,
            cards=list(command.cards),
            declaration=command.declaration,
        )
    )
    if not judges:
        _resolve(state, seat, events)
        return
    state["phase"] = "judge"
    state["step"] += 1
    seats = [entry["seat"] for entry in judges]
    how = "非公開で " if secret else ""
    events.append(
        event(
            "judging",
            f"判定待ち: {_names(state, seats)}({how}JUDGE ○|●|○●)。",
            waiting=seats,
        )
    )


def _judge(state: State, actor: int, command: Judge, sealed: bool, events: Events) -> None:
    pending = state["pending"]
    for entry in pending["judges"]:
        if entry["seat"] == actor:
            entry["judgment"] = command.judgment
    if actor == state["parent"]:
        pending["parent_judgment"] = command.judgment
    waiting = [entry["seat"] for entry in pending["judges"] if entry["judgment"] is None]
    if pending["secret"] or sealed:
        events.append(
            private_event("judged", f"判定 {command.judgment} を受け付けました(非公開)。", actor)
        )
        # The last judgment: no text, the reveal or the judgment follows on its line (and a
        # sealed one's notice has named who sent it).
        said = f"{_name(state, actor)}さんが判定しました(まだの人: {_names(state, waiting)})。"
        events.append(event("judged", said if waiting else "", seat=actor, waiting=waiting))
    if waiting:
        return
    if pending["secret"]:
        parts = [f"親 {pending['parent_judgment']}"]
        parts += [
            f"{_name(state, entry['seat'])} {entry['judgment']}"
            for entry in pending["judges"]
            if entry["seat"] != state["parent"]
        ]
        events.append(
            event(
                "reveal",
                "開票: " + "、".join(parts) + "。",
                judgments=[dict(entry) for entry in pending["judges"]],
            )
        )
    _resolve(state, actor, events)


def _resolve(state: State, actor: Actor, events: Events) -> None:
    """All judgments are in: prophets are checked, the cards follow the parent's judgment, a
    wrong declaration draws the penalty, disqualifications, then the round's end or the next
    turn."""
    pending = state["pending"]
    seat: int = pending["seat"]
    player = state["players"][seat]
    cards: list[str] = pending["cards"]
    verdict: str = pending["parent_judgment"]
    parent = state["parent"]
    judgments = [dict(entry) for entry in pending["judges"] if entry["seat"] != parent]
    disqualified: list[int] = []

    # R: 親プレイヤーと預言者プレイヤーの判定が異なっていた場合には預言者プレイヤーは失格.
    for entry in judgments:
        prophet = state["players"][entry["seat"]]
        if entry["judgment"] == verdict:
            prophet["correct"] += 1
            continue
        prophet["prophet_failed"] = True
        prophet["disqualified"] = True
        player["caused"] += 1
        disqualified.append(entry["seat"])
        events.append(
            event(
                "prophet_failed",
                f"預言者 {prophet['name']}さんの判定 {entry['judgment']} は親の判定 {verdict} と"
                f"違うので失格です(預言者失格 −5、このラウンドの預言点は0。親 +3、"
                f"{player['name']}さん +2)。",
                seat=entry["seat"],
            )
        )

    # I: ○ goes on the main line in order; ● and ○● become one failed string under the last
    # main-line card.
    if verdict == SUCCESS:
        state["line"].extend({"card": card, "failed": []} for card in cards)
    else:
        state["line"][-1]["failed"].append(list(cards))
    state["played"] += len(cards)
    pending_declaration = pending["declaration"]
    state["pending"] = None

    wrong = pending_declaration != verdict
    # Judged in the move that played (the bot's judgment): the line begins "✔ PLAY ○ ♠3 →",
    # which says whose declaration it was. Judged later (JUDGE): named.
    text = f"判定 {verdict}: "
    if pending["judges"]:
        text += f"{player['name']}さんの宣言 {pending_declaration} は"
    else:
        text += "宣言は"
    drawn: list[str] = []
    reasons: list[str] = []
    if not wrong:
        text += "正しい。"
    else:
        owed = PENALTY_PER_CARD * len(cards)
        drawn = [state["deck"].pop() for _ in range(min(owed, len(state["deck"])))]
        player["hand"] = sort_cards(player["hand"] + drawn)
        text += f"誤り、{len(drawn)}枚引きました"
        text += f"(出した{len(cards)}枚×{PENALTY_PER_CARD})。" if len(drawn) == owed else "。"
        if len(drawn) < owed:
            reasons.append(
                "山札が足りない(ルールブック「山札のカードを引き切ってそのラウンドは失格」)"
                if drawn
                else "山札が無い(ルールブック「山札が無い状態で…失格」)"
            )
        if player["prophet"]:
            reasons.append(
                "預言者の宣言違い(ルールブック「そのラウンドは即失格…預言者失格のペナルティ」)"
            )
            player["prophet_failed"] = True
        if state["played"] >= DISQUALIFY_AFTER:
            reasons.append(f"{DISQUALIFY_AFTER}枚が出された以降の宣言失敗")
    judged = event(
        "judgment",
        text,
        seat=seat,
        judgment=verdict,
        declaration=pending_declaration,
        penalty=len(drawn),
    )
    events.append(judged)
    if drawn and actor == seat:
        events.append(private_event("drawn", f"引いたカード: {_cards(sort_cards(drawn))}", seat))
    if reasons:
        player["disqualified"] = True
        disqualified.append(seat)
        events.append(
            event(
                "disqualified",
                f"{player['name']}さんはこのラウンドは失格です: " + "、".join(reasons) + "。",
                seat=seat,
            )
        )
    state["last_play"] = {
        "seat": seat,
        "declaration": pending_declaration,
        "cards": list(cards),
        "judgment": verdict,
        "judgments": judgments,
        "penalty": len(drawn),
        "disqualified": disqualified,
    }
    state["step"] += 1

    # R ラウンド終了条件.
    if not player["hand"] and not player["disqualified"]:
        _end_round(state, "emptied", seat, events)
        return
    if not in_round(state):
        _end_round(state, "all_disqualified", None, events)
        return
    following = _next_child(state, seat)
    assert following is not None
    state.update(phase="play", turn=following)
    state["window"] = seat if not player["disqualified"] and not player["prophet"] else None
    turn = f"次の手番: {_name(state, following)}さん。"
    if events[-1] is judged or (events[-1].get("private") and events[-2] is judged):
        # Nothing public since the judgment: the next turn goes on its line.
        judged["text"] = f"{judged['text']}{turn}"
        turn = ""
    events.append(event("turn", turn, seat=following))


def _end_by_agreement(state: State, events: Events) -> None:
    """I: the GM's ENDROUND ends the round by agreement. A play still being judged is taken
    back (its cards return to the hand, its judgments are dropped unseen); a round whose rule
    was never sealed is void: nobody scores, the next parent follows."""
    if state["phase"] == "rule":
        events.append(
            event(
                "round_void",
                f"GM が第{state['round']}ラウンドを終了しました"
                "(ルールが封をされる前なので得点なし)。",
            )
        )
        _end_round(state, "void", None, events)
        return
    pending = state["pending"]
    if pending is not None:
        player = state["players"][pending["seat"]]
        player["hand"] = sort_cards(player["hand"] + pending["cards"])
        state["pending"] = None
        events.append(
            event(
                "play_withdrawn",
                f"判定中だった{player['name']}さんの {_cards(pending['cards'])} は"
                "手札に戻しました。",
                seat=pending["seat"],
            )
        )
    # No text: the round_end line that follows says 「協議による終了」.
    events.append(event("agreement", ""))
    _end_round(state, "agreement", None, events)


ENDED_JA: dict[str, str] = {
    "emptied": "手札が無くなった子がいる",
    "all_disqualified": "子が全員失格",
    "agreement": "協議による終了",
    "void": "ルールなしで終了",
}


def _end_round(state: State, ended_by: str, emptied: int | None, events: Events) -> None:
    """Score the round, reveal its rule, and begin the next round or end the game."""
    scores = scoring.round_scores(state, ended_by, emptied)
    for seat, line in enumerate(scores):
        state["players"][seat]["score"] += line["total"]
    state["history"].append(
        {
            "round": state["round"],
            "parent": state["parent"],
            "mode": state["mode"],
            "rule": state["rule"],
            "salt": state["salt"],
            "rule_hash": state["rule_hash"],
            "ended_by": ended_by,
            "emptied": emptied,
            "played": state["played"],
            "hands": [list(player["hand"]) for player in state["players"]],
            "prophets": [seat for seat in children(state) if state["players"][seat]["prophet"]],
            "hints": [dict(hint) for hint in state["hints"]],
            "scores": scores,
        }
    )
    round_number = state["round"]
    text = f"第{round_number}ラウンド終了({ENDED_JA[ended_by]}"
    if emptied is not None:
        text += f": {_name(state, emptied)}さん"
    text += ")。"
    if state["rule"] is not None:
        # The hash was posted when the round started; SHA-256("ソルト:ルール") checks it.
        text += f"ルール「{state['rule']}」{_in_words(state['rule'])}、ソルト {state['salt']}。"
    events.append(event("round_end", text, round=round_number, rule=state["rule"]))
    events.append(
        event(
            "round_scores",
            "このラウンドの得点: "
            + "、".join(
                f"{_name(state, seat)} {line['total']:+d}" for seat, line in enumerate(scores)
            ),
        )
    )
    state.update(turn=None, window=None, pending=None, step=state["step"] + 1)
    if round_number >= state["rounds"]:
        state.update(phase="over", over=True)
        # No text: the reply says ゲーム終了！ and gives the final result.
        events.append(event("game_over", ""))
        return
    state["deck"] = _gather(state)
    for player in state["players"]:
        player.update(
            prophet=False,
            prophet_at=None,
            disqualified=False,
            correct=0,
            prophet_failed=False,
            caused=0,
        )
    next_parent = (state["parent"] + 1) % len(state["players"])
    state.update(
        round=round_number + 1,
        parent=next_parent,
        phase="rule",
        mode=None,
        rule=None,
        salt=None,
        rule_hash=None,
        played=0,
        hints=[],
        last_play=None,
    )
    # No text: the round's turn shows the board, which names the parent awaited for a rule.
    events.append(event("round_next", "", seat=next_parent))


# --------------------------------------------------------------------------- queries


def waiting_for(state: State) -> list[int]:
    """Seats that must act before the game can go on."""
    phase = state["phase"]
    if phase == "rule":
        return [state["parent"]]
    if phase == "play":
        return [state["turn"]]
    if phase == "judge":
        return [e["seat"] for e in state["pending"]["judges"] if e["judgment"] is None]
    return []


def legal_commands(state: State, actor: Actor) -> list[GameCommand]:
    """Commands `actor` may give now, in the thread or sealed. PLAY is listed for single cards
    only (any 1–4 cards of the hand may be played); HINT takes free words and RULE a rule of
    the parent's own: neither is listed."""
    if state["over"]:
        return []
    if actor == "gm":
        commands: list[GameCommand] = [EndRound()]
        if state["phase"] == "rule":
            commands += [
                ChooseParent(player["name"])
                for seat, player in enumerate(state["players"])
                if seat != state["parent"]
            ]
        return commands
    if not isinstance(actor, int) or not 0 <= actor < len(state["players"]):
        return []
    commands = []
    phase = state["phase"]
    if phase == "play" and actor == state["turn"]:
        for card in dict.fromkeys(state["players"][actor]["hand"]):
            commands += [Play(SUCCESS, (card,)), Play(FAILURE, (card,))]
    if phase == "judge" and actor in waiting_for(state):
        commands += [Judge(judgment) for judgment in JUDGMENTS]
    if phase == "play" and state["window"] == actor:
        commands.append(Prophet())
    return commands


def default_commands(state: State, seat: int) -> list[str]:
    """What the bot posts for a seat past the deadline (docs/rules/eleusis.md, "Deadlines").

    - the child to play: ``PLAY ○ <the first card of the hand>`` (the rules have no pass);
    - a judge (the parent of a hand-judged rule, a prophet): ``JUDGE <the player's
      declaration>`` — it takes the player at their word; apply it sealed while judgments
      are secret (needs_seal);
    - the parent who has not sealed a rule: nothing (no one can invent it; the GM may end the
      round with ENDROUND, which voids it).
    """
    if seat not in waiting_for(state):
        return []
    if state["phase"] == "play":
        return [Play(SUCCESS, (state["players"][seat]["hand"][0],)).canonical()]
    if state["phase"] == "judge":
        return [Judge(state["pending"]["declaration"]).canonical()]
    return []


def turn_key(state: State) -> str:
    if state["over"]:
        return "over"
    return f"round{state['round']}:{state['phase']}:{state['step']}"


def reveals(state: State, command: Any) -> str | None:
    """``Game.reveals``: a play judged against the secret rule, the judgment that completes
    one (and its penalty drawn from the deck), the deal, the rule shown at a round's end."""
    if isinstance(command, Play):
        return "出したカードが秘密のルールで判定される"
    if isinstance(command, Judge):
        return "判定がそろうと結果が出て、山札から引くことがある"
    if isinstance(command, SealRule):
        return "山札を切ってカードを配る"
    if isinstance(command, EndRound):
        return "ラウンドが終わり、秘密のルールが公開される"
    return None
