"""Real games played to several points, for the fuzz tests (tests/test_fuzz_grammar.py).

`script(kind, names)` plays one game of each registered kind with the game library alone, move
by move, and names the points ("stops") worth fuzzing from: recruiting, a fresh start, the
middle of a turn, later weeks or rounds, a pending judgment, the end. `Table` plays the same
script through the game master (app.gm.service, on a database session) as the players, the GM
and the sealed endpoint would, so the stored game reaches exactly those states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from random import Random
from typing import Any

from sqlalchemy.orm import Session

from app.db.models import Game as GameRow
from app.db.models import User
from app.games import find_game
from app.games.base import Actor, Game, Rng, State
from app.games.eleusis.rules import hint_allowed
from app.gm import service as gm

RECRUITING = -1  # Stop.at of the stop before START


@dataclass(frozen=True)
class Step:
    actor: Actor
    line: str
    sealed: bool = False


@dataclass(frozen=True)
class Stop:
    label: str
    at: int  # moves played since START (RECRUITING: not started)
    state: State  # after those moves (RECRUITING: the state START would deal)


@dataclass
class Script:
    kind: str
    names: list[str]
    seed: str
    options: dict[str, Any]
    steps: list[Step] = field(default_factory=list)
    stops: list[Stop] = field(default_factory=list)

    @property
    def impl(self) -> Game:
        impl = find_game(self.kind)
        assert impl is not None
        return impl

    def stop(self, label: str) -> Stop:
        return next(stop for stop in self.stops if stop.label == label)


class _Recorder:
    """Applies lines with the game library as the pipeline would (move seq from 1)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.impl = script.impl
        self.state = self.impl.setup(script.names, script.options, Rng(script.seed, 0))
        script.stops.append(Stop("募集中", RECRUITING, self.state))

    def do(self, actor: Actor, line: str, *, sealed: bool = False) -> None:
        command = self.impl.parse(line)
        assert command.canonical() == line, line
        seq = len(self.script.steps) + 1
        self.state, _ = self.impl.apply(
            self.state, actor, command, Rng(self.script.seed, seq), sealed=sealed
        )
        self.script.steps.append(Step(actor, line, sealed))

    def stop(self, label: str) -> None:
        self.script.stops.append(Stop(label, len(self.script.steps), self.state))


def _eitsuku(script: Script) -> None:
    """Random legal lines (eager to make films, like tests/games/test_eitsuku_property.py),
    one player finishing their week before the next starts; stops in weeks 1, 3, 7, 12 and
    at the end."""
    game = _Recorder(script)
    choices = Random(script.seed)
    game.stop("第1週の始め")
    weeks = {3: "第3週", 7: "第7週", 12: "第12週"}
    seat: int | None = None
    for _ in range(5000):
        if game.impl.is_over(game.state):
            break
        waiting = game.impl.waiting_for(game.state)
        seat = seat if seat in waiting else choices.choice(waiting)
        lines = game.impl.legal(game.state, seat)
        eager = [
            line for line in lines if line.startswith(("SET", "RELEASE", "CHOOSE", "BUY", "SCOUT"))
        ]
        game.do(seat, choices.choice(eager if eager and choices.random() < 0.6 else lines))
        if len(script.steps) == 3:
            game.stop("第1週の途中")
        label = weeks.pop(game.state["week"], None)
        if label is not None:
            game.stop(label)
    assert game.impl.is_over(game.state), "the scripted えいつく game did not finish"
    game.stop("終了")


def _eleusis(script: Script) -> None:
    """Round 1: a formal rule the bot judges, plays until a hint and a prophet's declaration
    are possible, a prophet, a play the prophet must judge sealed; the GM ends it. Round 2: a
    hand-judged rule, a play the parent judges in public; the GM ends it and the game."""
    game = _Recorder(script)
    choices = Random(script.seed)

    def state() -> State:
        return game.state

    def play() -> None:
        seat = state()["turn"]
        card = choices.choice(state()["players"][seat]["hand"])
        game.do(seat, f"PLAY {choices.choice(['○', '●'])} {card}")

    game.stop("第1ラウンドのルール待ち")
    game.do(state()["parent"], "RULE card.color != prev.color", sealed=True)
    for _ in range(2):
        play()
    game.stop("第1ラウンドのプレイ中")
    while state()["played"] < 10 or state()["window"] is None:
        play()
    assert hint_allowed(state())
    game.stop("ヒントと預言者の宣言ができる")
    game.do(state()["window"], "PROPHET")
    play()
    assert state()["phase"] == "judge" and state()["pending"]["secret"]
    game.stop("預言者の判定待ち（封印）")
    prophet = state()["pending"]["judges"][0]["seat"]
    game.do(prophet, f"JUDGE {state()['pending']['parent_judgment']}", sealed=True)
    game.do("gm", "ENDROUND")
    game.stop("第2ラウンドのルール待ち")
    parent = state()["parent"]
    game.do(parent, "RULE TEXT 前のカードより大きい数", sealed=True)
    play()
    assert state()["phase"] == "judge" and not state()["pending"]["secret"]
    game.stop("親の判定待ち")
    game.do(parent, "JUDGE ○")
    game.do("gm", "ENDROUND")
    assert game.impl.is_over(state())
    game.stop("終了")


def _idolwp(script: Script) -> None:
    """The open draft, then random legal lines (eager to enter events and use cards) to the
    end; stops in the draft, at round 1's start, on a pending event, at a results round, in
    the last round, at the final 特訓 and the end."""
    game = _Recorder(script)
    choices = Random(script.seed)
    game.stop("指名中")
    labels = {2: "第2ラウンド", 4: "第4ラウンド", 7: "第7ラウンド", 9: "最終ラウンド"}
    for _ in range(5000):
        state = game.state
        if game.impl.is_over(state):
            break
        seat = game.impl.waiting_for(state)[0]
        lines = _idolwp_first_listing(state, game.impl.legal(state, seat))
        eager = [line for line in lines if line.startswith(("EVENT LV", "CARD", "MOVE"))]
        game.do(seat, choices.choice(eager if eager and choices.random() < 0.5 else lines))
        state = game.state
        if state["phase"] == "play" and not any(
            stop.label == "第1ラウンド" for stop in script.stops
        ):
            game.stop("第1ラウンド")
        pending = state["pending"]
        if (
            pending is not None
            and pending["kind"] == "event"
            and not any(stop.label == "イベント参加待ち" for stop in script.stops)
        ):
            game.stop("イベント参加待ち")
        label = labels.pop(state["round"], None) if state["phase"] == "play" else None
        if label is not None:
            game.stop(label)
        if state["phase"] == "final" and not any(
            stop.label == "最後の特訓" for stop in script.stops
        ):
            game.stop("最後の特訓")
    assert game.impl.is_over(game.state), "the scripted idolwp game did not finish"
    game.stop("終了")


def _idolwp_first_listing(state: State, lines: list[str]) -> list[str]:
    """The lines the script's first version of `legal` listed (issue 40 offers more), so the
    scripted game walks the same path and reaches the same stops."""
    from app.games.idolwp.rules import content

    pending = state["pending"]
    if pending is not None and pending["kind"] in ("event", "training"):
        cards = content().cards
        lines = [
            line
            for line in lines
            if not line.startswith("CARD ") or cards[line.split()[1]].timing == "event"
        ]

    def first(line: str) -> bool:
        words = line.split()
        if words[0] == "DISCARD":  # only over the limit
            return pending is not None and pending["kind"] == "discard"
        if words[0] in ("CONVERT", "CARD"):  # one ability repeated
            return len(set(words[2:])) <= 1
        if words[0] == "TRAIN":  # one level
            return words[1:] in ([], ["Vo1"], ["Da1"], ["Vi1"])
        return "BOOST" not in words and not (words[0] == "MOVE" and "VO" in words)

    return [line for line in lines if first(line)]


def _cardbattle(script: Script) -> None:
    """Both decks sealed (the second player's with magic), then random legal lines to the end:
    stops before the decks, after one deck, in the window after the reveal, on an attack, in a
    window after a result, and at the end."""
    game = _Recorder(script)
    choices = Random(script.seed)
    state = game.state
    game.stop("デッキ封印待ち")
    decks = [line for line in game.impl.sealed_legal(state, 0)]
    game.do(0, decks[0], sealed=True)
    game.stop("片方のデッキ封印済み")
    held = state["collections"][1] or state["pool"]
    magic = [name for name in held if state["pool"][name]["kind"] == "magic"]
    game.do(1, f"{decks[-1]} MAGIC {' '.join(sorted(magic)[:2])}", sealed=True)
    game.stop("公開後の宣言受付")
    for _ in range(500):
        state = game.state
        if game.impl.is_over(state):
            break
        seat = choices.choice(game.impl.waiting_for(state))
        game.do(seat, choices.choice(game.impl.legal(state, seat)))
        state = game.state
        if state["phase"] == "attack" and not any(s.label == "攻撃待ち" for s in script.stops):
            game.stop("攻撃待ち")
        if (
            state["phase"] == "window"
            and state["turn"] >= 1
            and not any(s.label == "結果の後の宣言受付" for s in script.stops)
        ):
            game.stop("結果の後の宣言受付")
    assert game.impl.is_over(game.state), "the scripted cardbattle game did not finish"
    game.stop("終了")


def _populous(script: Script) -> None:
    """Races in the open, the sealed draft and cubes, then random legal lines (eager to place,
    move and discard, seldom END) to the end of round 12; stops while races are chosen, in the
    draft, before the cubes, at round 1's start, in the middle of a turn, on a war choice, on a
    settlement's choice, in round 7 and at the end."""
    game = _Recorder(script)
    choices = Random(script.seed)
    state = game.state
    game.stop("種族選択中")
    game.do(state["turn"], game.impl.legal(state, state["turn"])[0])
    while game.state["phase"] == "race":
        seat = game.state["turn"]
        game.do(seat, game.impl.legal(game.state, seat)[-1])
    game.stop("スキルのドラフト中")
    while game.state["phase"] == "draft":
        for seat in list(game.impl.waiting_for(game.state)):
            game.do(seat, game.impl.sealed_legal(game.state, seat)[0], sealed=True)
            if game.state["phase"] == "draft" and not any(
                stop.label == "ドラフトの封印待ち" for stop in script.stops
            ):
                game.stop("ドラフトの封印待ち")
    game.stop("リソースの配分待ち")
    for seat in list(game.impl.waiting_for(game.state)):
        game.do(seat, "CUBES 情熱 2 食料 3 信仰 2", sealed=True)
    game.stop("第1ラウンド")
    labels = {
        "wrath": "神の怒りか配置を待つ手番の途中",
        "after": "啓示の移動か捨て札を待つ手番の途中",
        "war": "戦争か調停の選択待ち",
        "town": "決算のタウン待ち",
        "reveal": "決算のスキル公開待ち",
    }
    for _ in range(5000):
        state = game.state
        if game.impl.is_over(state):
            break
        seat = game.impl.waiting_for(state)[0]
        lines = [line for line in game.impl.legal(state, seat) if line != "END"]
        if state["step"] == "after":  # the 決算 offered early: the script waits for its steps
            lines = [line for line in lines if not line.startswith(("TOWN", "REVEAL"))]
        eager = [line for line in lines if line.startswith(("PLACE", "MOVE", "NEWGEN", "WAR"))]
        if state["step"] == "area":  # areas where others stand, for wars and mediations
            eager = [line for line in lines if _crowded(state, line, seat)]
        if not lines or choices.random() < 0.03:
            line = "END"
        elif eager and choices.random() < 0.5:
            line = choices.choice(eager)
        else:
            line = choices.choice(lines)
        game.do(seat, line)
        state = game.state
        label = labels.get(state["step"] or "")
        if label is not None and not any(stop.label == label for stop in script.stops):
            game.stop(label)
        if state["round"] == 7 and not any(stop.label == "第7ラウンド" for stop in script.stops):
            game.stop("第7ラウンド")
    assert game.impl.is_over(game.state), "the scripted populous game did not finish"
    for label in labels.values():
        assert any(stop.label == label for stop in script.stops), label
    game.stop("終了")


def _crowded(state: State, line: str, seat: int) -> bool:
    """Does the area of an AREA line hold another player's piece?"""
    numbers = sorted(int(card.lstrip("F")) for card in line.split()[1:])
    prefix = f"{numbers[0]}{numbers[1]}"
    return any(
        piece[0] != seat for letter in "abc" for piece in state["pieces"].get(prefix + letter, ())
    )


def _cardbattle_options() -> dict[str, Any]:
    from app.games.cardbattle.content import starter_pool

    return {"pool": {card.name: card.model_dump(mode="json") for card in starter_pool()}}


def _cardbattle_collection() -> list[str]:
    """The starter cards and a few given ones, in the order a collection lists them."""
    from app.games.cardbattle.content import starter_cards

    return [card.name for card in starter_cards()] + ["赤竜", "士翼号", "雷鳴", "吹雪"]


PLAYERS = {"eitsuku": 3, "eleusis": 4, "populous": 3, "idolwp": 3, "cardbattle": 2}
DRIVERS = {
    "eitsuku": _eitsuku,
    "eleusis": _eleusis,
    "populous": _populous,
    "idolwp": _idolwp,
    "cardbattle": _cardbattle,
}
_OPTIONS: dict[str, dict[str, Any]] = {
    "eitsuku": {},
    "eleusis": {"rounds": 2},
    "populous": {},
    "idolwp": {},
    "cardbattle": _cardbattle_options(),
}


def script(kind: str, names: list[str]) -> Script:
    """The scripted game of ``kind`` for these player names (the moves do not depend on them)."""
    played = Script(kind, list(names), f"fuzz-{kind}-1", dict(_OPTIONS[kind]))
    if kind == "cardbattle":  # each player's collection (docs/cards.md), given by Table
        played.options["collections"] = {name: _cardbattle_collection() for name in names}
    DRIVERS[kind](played)
    return played


def seed_lines(played: Script, stop: Stop, outsider: str = "五郎") -> list[str]:
    """Valid lines at ``stop``: the platform's (with real names), what every seat and the GM
    may play there, multi-card plays and hints, and the GM's AS for each seat's moves."""
    impl, state, names = played.impl, stop.state, played.names
    first = names[0]
    lines = [
        "JOIN",
        "参加",
        "LEAVE",
        "START",
        "UNDO",
        "PAUSE",
        "RESUME",
        "ABORT",
        f"KICK {first}",
        f"REPLACE {first} {outsider}",
        "DEADLINE 24",
        "ABSENT 48",
        f"ADJUST {first} -3 読み違い",
    ]
    lines.extend(impl.legal(state, "gm"))
    for seat, name in enumerate(names):
        own = impl.legal(state, seat)
        lines.extend(own)
        lines.extend(f"{verb} {name} {line}" for verb in ("AS", "代理") for line in own[:3])
    if played.kind == "eleusis" and state["phase"] == "play":
        hand = state["players"][state["turn"]]["hand"]
        lines.extend(f"PLAY ● {' '.join(hand[:count])}" for count in (2, 4))
        lines.append("HINT 色に注目")
    return sorted(set(lines))


class Table:
    """A game of ``played.kind`` on the board, seated as the script says, moved to a stop
    by posting each actor's lines (consecutive lines of one actor in one post; secret ones
    through the sealed endpoint)."""

    def __init__(
        self,
        session: Session,
        played: Script,
        master: User,
        players: list[User],
        secret: str,
    ) -> None:
        assert [user.name for user in players] == played.names
        self.session = session
        self.played = played
        self.master = master
        self.players = players
        self.secret = secret
        self.game: GameRow = gm.create_game(
            session, master, played.kind, "ファズ卓", played.options, secret, seed=played.seed
        )
        if played.kind == "cardbattle":  # decks come from collections (docs/cards.md)
            from tests.support.cardbattle import hold

            for user in players:
                hold(session, user, played.options["collections"][user.name])
        for user in players:
            self.post(user, "JOIN")
        self.at = RECRUITING

    def user(self, actor: Actor) -> User:
        return self.master if actor == "gm" else self.players[int(actor)]

    def post(self, user: User, body: str) -> None:
        _mine, replies = gm.submit_post(self.session, self.game.thread_id, user, body, self.secret)
        assert replies and replies[0].reply_ok, (body, replies and replies[0].body)

    def advance(self, stop: Stop) -> None:
        assert stop.at >= self.at, (stop.label, self.at)
        if stop.at == RECRUITING:
            return
        if self.at == RECRUITING:
            self.post(self.master, "START")
            self.at = 0
        while self.at < stop.at:
            step = self.played.steps[self.at]
            if step.sealed:
                row, _public = gm.submit_sealed(
                    self.session, self.game.id, self.user(step.actor), step.line, self.secret
                )
                assert row.ok, (step, row.reply)
                self.at += 1
                continue
            group = [step.line]
            self.at += 1
            while (
                self.at < stop.at
                and len(group) < 40
                and self.played.steps[self.at].actor == step.actor
                and not self.played.steps[self.at].sealed
            ):
                group.append(self.played.steps[self.at].line)
                self.at += 1
            self.post(self.user(step.actor), "\n".join(group))
        self.session.refresh(self.game)
        assert self.game.state == stop.state, f"the stored game is not at {stop.label}"
