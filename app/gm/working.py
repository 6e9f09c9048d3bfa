"""A game as one submission changes it: the working copy (seats, state, moves, what the reply
says), written back by app/gm/store.py only when every line went through; and the game's own
commands applied to it — a player's, the GM's, the bot's for a kicked or late seat."""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import datetime
from typing import Any, TypeVar

from app.db.models import Game, User
from app.games.base import Actor, Rng, State
from app.games.base import Game as GameImpl
from app.gm.submission import LineError, Refusal

T = TypeVar("T")

# Bound on the bot's automatic moves for kicked seats after one submission.
MAX_AUTOPLAY = 200


@dataclass
class Seat:
    user_id: int | None
    name: str
    kicked: bool = False
    absences_used: int = 0
    bot: bool = False  # a bot's seat (docs/bots.md): played by ``Game.bot_lines``


@dataclass
class NewMove:
    seq: int
    seat: int | None
    actor_name: str
    line: str
    parsed: dict[str, Any]
    by_bot: bool = False
    sealed: bool = False


@dataclass
class Submitter:
    """Who sends the commands: a user, or the bot itself (deadlines, kicked seats), or a bot
    seated at ``bot_seat`` playing its own turn (app/gm/bots.py)."""

    user: User | None
    name: str
    bot_seat: int | None = None

    @property
    def user_id(self) -> int | None:
        return self.user.id if self.user is not None else None


@dataclass
class Working:
    """The game as one submission changes it; written back only if everything succeeded."""

    status: str
    paused: bool
    seats: list[Seat]
    state: State | None
    next_seq: int
    deadline_hours: int | None
    deadline_at: datetime | None
    started: bool = False
    moves: list[NewMove] = field(default_factory=list)
    public: list[str] = field(default_factory=list)
    private: list[str] = field(default_factory=list)
    undone_moves: list[int] = field(default_factory=list)
    adjustments: list[tuple[int, int, str]] = field(default_factory=list)
    log: list[tuple[str, str]] = field(default_factory=list)
    board_changed: bool = False
    # BOARD / 盤面 was asked: the reply carries the full board, not the compact one of a turn.
    board_asked: bool = False
    # The seats the last applied command's own events said the game waits for (told_waiting):
    # the reply then says no 手番待ち line for the same seats (issue #43: one line, not two).
    turn_told: list[int] = field(default_factory=list)
    # Set by success_text: the reply shows the board, and beside it its picture.
    board_shown: bool = False
    deadline_reset: bool = False
    # How many game commands drew on the move's randomness (a die, a shuffle): app/gm/play.py
    # keeps such a line whatever follows it (docs/security.md).
    rolled: int = 0


@dataclass
class Outcome:
    ok: bool
    error: LineError | None
    public_text: str  # for the thread ("" = nothing to post)
    private_text: str  # for the submitter of a sealed command
    applied: int = 0  # refused, yet the lines before kept (a draw, a die): how many
    stopped: tuple[int, str] | None = None  # a preview's stop: that line, and what it says


@dataclass
class Submission:
    game: Game
    impl: GameImpl
    by: Submitter
    lines: list[tuple[int, str]]
    now: datetime
    anchor: str = ""  # ">>N" of the post answered
    sealed: bool = False


def working_copy(game: Game) -> Working:
    return Working(
        status=game.status,
        paused=game.paused,
        seats=[
            Seat(p.user_id, p.name, p.kicked, p.absences_used, p.bot)
            for p in sorted(game.players, key=lambda p: p.seat)
        ],
        # Not copied: a game's ``apply`` never mutates the state it is given (it returns a new
        # one), and nothing here writes into it, so the row's state is shared until replaced.
        state=game.state,
        next_seq=game.last_seq + 1,
        deadline_hours=game.deadline_hours,
        deadline_at=game.deadline_at,
    )


def apply_game_command(
    sub: Submission,
    work: Working,
    actor: Actor,
    command: Any,
    *,
    proxy: str = "",
    by_bot: bool = False,
    sealed: bool | None = None,
    even_paused: bool = False,
) -> None:
    """``even_paused``: the bot's moves after an UNDO, which a paused game allows too."""
    if work.status == "recruiting":
        raise Refusal("まだ始まっていません。GM が START するまでお待ちください。")
    if work.status in ("finished", "aborted"):
        raise Refusal("このゲームは終わっています。")
    if work.paused and not even_paused:
        raise Refusal("GM がゲームを中断しています。RESUME までお待ちください。")
    assert work.state is not None
    impl = sub.impl
    rng = _Watched(sub.game.seed, work.next_seq)
    sealed = sub.sealed if sealed is None else sealed
    state, events = impl.apply(work.state, actor, command, rng, sealed=sealed)
    work.rolled += rng.used
    seat = None if actor == "gm" else int(actor)
    name = "GM" if seat is None else work.seats[seat].name
    line = command.canonical()
    work.moves.append(
        NewMove(work.next_seq, seat, name, line, parsed_json(command), by_bot, sealed)
    )
    work.next_seq += 1
    work.state = state
    # One event a line: the first beside the command, each further one on a line of its own.
    public = "\n".join(str(e["text"]) for e in events if e.get("text") and not e.get("private"))
    private = "\n".join(str(e["text"]) for e in events if e.get("text") and e.get("private"))
    work.turn_told = sorted(told_waiting(events))
    shown = "（封印）" if sealed else line
    work.public.append(f"✔ {shown}{proxy} → {public}" if public else f"✔ {name}{proxy}: {shown}")
    if private:
        work.private.append(f"✔ {line} → {private}")
    if impl.is_over(state):
        work.status = "finished"
        # The end said once: a kind whose own end event says it (「えいつく終了。成績発表です。」,
        # 「【決着】…」) gets no 「ゲーム終了！」 beneath it.
        if not any(e.get("type") == "game_over" and e.get("text") for e in events):
            work.public.append("ゲーム終了！")


def told_waiting(events: list[dict[str, Any]]) -> set[int]:
    """The seats the move's public events said the game now waits for: a "turn" event's
    ``seat`` (「次の手番: 花子さん。」), or any event's ``waiting`` list (「選びました(待っている人:
    次郎、花子)」, app.games.base.event)."""
    told: set[int] = set()
    for e in events:
        if e.get("private"):
            continue
        if e.get("type") == "turn" and isinstance(e.get("seat"), int):
            told.add(e["seat"])
        waiting = e.get("waiting")
        if isinstance(waiting, list):
            told.update(seat for seat in waiting if isinstance(seat, int))
    return told


class _Watched(Rng):
    """The move's randomness, remembering whether the rules drew on it."""

    used = False

    def randint(self, a: int, b: int) -> int:
        self.used = True
        return super().randint(a, b)

    def shuffle(self, items: MutableSequence[Any]) -> None:
        self.used = True
        super().shuffle(items)

    def choice(self, items: Sequence[T]) -> T:
        self.used = True
        return super().choice(items)


def autoplay_kicked(sub: Submission, work: Working) -> None:
    """Kicked seats with no replacement move by the bot as soon as the game waits for them."""
    if work.state is None or work.status != "active" or work.paused:
        return
    for _ in range(MAX_AUTOPLAY):
        assert work.state is not None
        waiting = [s for s in sub.impl.waiting_for(work.state) if work.seats[s].kicked]
        if not waiting or work.status != "active":
            return
        seat = waiting[0]
        # The game's own play for a dropped seat (Game.autoplay: from that seat's view only),
        # so a film can still be made and a round go on; the default moves at a deadline.
        play_defaults(
            sub, work, seat, reason="追放された席", lines=sub.impl.autoplay(work.state, seat)
        )


def play_defaults(
    sub: Submission, work: Working, seat: int, *, reason: str, lines: list[str] | None = None
) -> None:
    """The seat's default moves (or ``lines``), each sealed when the rules want it sealed (a
    secret judge)."""
    assert work.state is not None
    chosen = sub.impl.default_commands(work.state, seat) if lines is None else lines
    for line in chosen:
        command = sub.impl.parse(line)
        sealed = sub.impl.needs_seal(work.state, command) is True
        apply_game_command(
            sub, work, seat, command, proxy=f"（ボット: {reason}）", by_bot=True, sealed=sealed
        )


def parsed_json(command: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type(command).__name__}
    if is_dataclass(command) and not isinstance(command, type):
        data.update(asdict(command))
    return _jsonable(data)  # type: ignore[no-any-return]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
