"""The game master's work on one submission — a post, a sealed command, a deadline — all or
nothing: parse every command line, apply them to a copy of the game under its row lock, and
write moves, state and log only when all succeeded."""

from __future__ import annotations

import difflib
import functools
import hashlib
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Integer,
    Table,
    bindparam,
    cast,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app import notify
from app.db import Loading, Prepared, insert_json_rows, is_postgres
from app.forum import service as forum
from app.forum.service import MAX_BODY_CHARS, format_bbs_time
from app.games import commands as platform
from app.games.base import Actor, CommandSyntaxError, Rng, RuleError, State, normalise
from app.games.base import Game as GameImpl
from app.gm import replay
from app.gm.results import breakdown_text, final_result
from app.gm.text import render_board_summary
from app.models import (
    Adjustment,
    Game,
    GamePlayer,
    ModerationEntry,
    Move,
    Post,
    SealedCommand,
    User,
    in_utc,
)

BOT_NAME = "★GM"
MAX_COMMAND_LINES = 50
DEADLINE_HOURS = (1, 672)  # the grammar (common.lark, _hours) allows the same
ABSENT_HOURS = (1, 168)
MAX_ABSENCES = 3
# Bound on the bot's automatic moves for kicked seats after one submission.
MAX_AUTOPLAY = 200


class Refusal(Exception):
    """A platform command that may not be given now (the platform's RuleError)."""

    def __init__(self, message: str, legal: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.legal = legal or []


@dataclass
class LineError:
    line: int
    column: int | None
    message: str
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "column": self.column, "message": self.message}


@dataclass
class Seat:
    user_id: int | None
    name: str
    kicked: bool = False
    absences_used: int = 0


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
    """Who sends the commands: a user, or the bot itself (deadlines, kicked seats)."""

    user: User | None
    name: str

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
    # Set by success_text: the reply shows the board, and beside it its picture.
    board_shown: bool = False
    deadline_reset: bool = False


@dataclass
class Outcome:
    ok: bool
    error: LineError | None
    public_text: str  # for the thread ("" = nothing to post)
    private_text: str  # for the submitter of a sealed command
    applied: int = 0


@dataclass
class Submission:
    game: Game
    impl: GameImpl
    by: Submitter
    lines: list[tuple[int, str]]
    now: datetime
    anchor: str = ""  # ">>N" of the post answered
    sealed: bool = False


# --- classification --------------------------------------------------------------------------


# How close a first word must be to a verb to be read as a misspelling of it (difflib's ratio):
# SCUOT/SCOUT 0.8, スカウド/スカウト 0.75, ドロ一/ドロー 0.67; a two-character verb with one
# character changed (パス/バス, 開始/開催: 0.5) is another word.
ENGLISH_VERB_CUTOFF = 0.75
JAPANESE_VERB_CUTOFF = 0.6


@dataclass(frozen=True)
class _Spelling:
    """A verb as misspelt_verb compares it (in capitals for an English verb)."""

    verb: str
    counts: dict[str, int]

    def ratio(self, word: str, counts: dict[str, int], cutoff: float, gap: int) -> float:
        """difflib's ratio of the word to the verb; 0 when their lengths differ by more than
        gap, or a cheap bound puts it below cutoff (difflib.get_close_matches builds a
        SequenceMatcher for every verb, ~9 µs each, and this runs on every line of talk)."""
        size, total = len(self.verb), len(word) + len(self.verb)
        if abs(len(word) - size) > gap or 2 * min(len(word), size) < cutoff * total:
            return 0.0
        shared = sum(min(n, self.counts.get(char, 0)) for char, n in counts.items())
        if 2 * shared < cutoff * total:
            return 0.0
        return difflib.SequenceMatcher(None, word, self.verb).ratio()


@dataclass(frozen=True)
class _Spellings:
    """One game's verbs by the characters in them, English and Japanese apart (built once per
    game): a word is compared only with the verbs it shares a character with."""

    english: dict[str, tuple[_Spelling, ...]]
    japanese: dict[str, tuple[_Spelling, ...]]

    @staticmethod
    def of(verbs: list[str]) -> _Spellings:
        english: dict[str, tuple[_Spelling, ...]] = {}
        japanese: dict[str, tuple[_Spelling, ...]] = {}
        for verb in dict.fromkeys(verb.upper() if verb.isascii() else verb for verb in verbs):
            spelling = _Spelling(verb, _letter_counts(verb))
            index = english if verb.isascii() else japanese
            for char in spelling.counts:
                index[char] = (*index.get(char, ()), spelling)
        return _Spellings(english, japanese)

    def near(self, word: str, cutoff: float, gap: int) -> list[str]:
        """The verbs (English ones for an ASCII word, compared in capitals; else Japanese ones)
        at most gap characters longer or shorter whose ratio to the word is cutoff or more,
        closest first."""
        english = word.isascii()
        key = word.upper() if english else word
        index = self.english if english else self.japanese
        counts = _letter_counts(key)
        candidates = {s.verb: s for char in counts for s in index.get(char, ())}
        scored = [(s.ratio(key, counts, cutoff, gap), s.verb) for s in candidates.values()]
        return [verb for score, verb in sorted(scored, reverse=True) if score >= cutoff]


_SPELLINGS: dict[GameImpl, _Spellings] = {}


def _letter_counts(word: str) -> dict[str, int]:
    return {char: word.count(char) for char in set(word)}


def _spellings(impl: GameImpl) -> _Spellings:
    spellings = _SPELLINGS.get(impl)
    if spellings is None:
        spellings = _SPELLINGS[impl] = _Spellings.of(impl.verbs())
    return spellings


def misspelt_verb(impl: GameImpl, line: str) -> str | None:
    """For a first word that is no verb but close to one: that verb (docs/forum.md).

    A word in capitals (SCUOT) is a misspelt verb on its own. Any other (scuot, Scuot, スカウド)
    only when the rest of the line reads as that verb's arguments — the line parses with the
    verb in its place, with one of the game's own terms right after it — so talk that merely
    begins with a similar word (スカッとした, Sets are fun, 交換 したい 人) stays talk.
    """
    text = normalise(line)
    first, _, rest = text.partition(" ")
    if not first or impl.is_command_line(text):
        return None  # a verb (every command line of a post comes here first: the cheap test)
    shouted = first.isascii() and first.isupper()
    if first.isascii() and (len(first) < 3 or not first.isalpha()):
        return None
    if not shouted and not (rest and impl.parser.may_begin_arguments(rest)):
        return None  # the cheap test first: most talk stops here
    if first.isascii():
        close = _spellings(impl).near(first, ENGLISH_VERB_CUTOFF, len(first))[:1]
        if close and shouted:
            return close[0]
    else:
        close = _spellings(impl).near(first, JAPANESE_VERB_CUTOFF, 1)[:3]
    if not close:
        return None
    return next((verb for verb in close if impl.parser.reads_as_arguments(verb, rest)), None)


def classify_line(impl: GameImpl, line: str) -> str:
    """ "command", "misspelt" or "talk".

    A line is a command when its first word is a verb. An English verb not written in capitals
    ("End of story", "start は明日") counts only if the whole line parses, so ordinary talk
    that happens to begin with such a word is not answered with an error.
    """
    text = normalise(line)
    if not text:
        return "talk"
    if impl.is_command_line(text):
        first = text.split(" ", 1)[0]
        if first.isascii() and not first.isupper():
            try:
                impl.parse(text)
            except CommandSyntaxError:
                return "talk"
        return "command"
    return "misspelt" if misspelt_verb(impl, text) is not None else "talk"


def command_lines(impl: GameImpl, body: str) -> list[tuple[int, str]]:
    return [
        (number, line)
        for number, line in enumerate(body.split("\n"), start=1)
        if classify_line(impl, line) != "talk"
    ]


# --- the run -------------------------------------------------------------------------------


def lock_game(
    session: Session, game_id: int | None = None, *, thread_id: int | None = None
) -> Game | None:
    """The game row (by id, or by the thread it hosts), locked until commit, with its seats
    loaded afresh (SQLite: the write lock of BEGIN IMMEDIATE is held already).

    The seats come from a second statement, never joined into the locking one: on
    PostgreSQL a ``SELECT … FOR UPDATE`` that waited for the lock re-reads the locked row
    only, and rows joined to it keep the snapshot taken before the wait — seats taken by the
    post that held the lock would be missing (tests/test_load_concurrency.py).
    """
    if thread_id is not None:
        rows = _LOCK_BY_THREAD.load(session, {"thread_id": thread_id})
    else:
        rows = _LOCK_BY_ID.load(session, {"game_id": game_id})
    if not rows:
        return None
    game: Game = rows[0][0]
    read_seats(session, game)
    return game


def read_seats(session: Session, game: Game) -> None:
    """What selectinload would do, without its per-call loader setup: the game's seats, read
    afresh in seat order, set as the collection's loaded value."""
    seats = [seat for seat, _ in _SEATS.load(session, {"game_id": game.id})]
    set_committed_value(game, "players", seats)


# Built once and run as ``Loading`` statements (app/db.py): the ORM's SELECT spent more in
# Python than the rest of the game's reading. Read afresh each time (``refresh``), as
# ``populate_existing`` did: another transaction may have changed the row since this session
# last read it.
_GAMES: Table = Game.__table__  # type: ignore[assignment]
_SEATS_TABLE: Table = GamePlayer.__table__  # type: ignore[assignment]
# The options are read only by START and UNDO (``impl.setup``), and never change: left to be
# read then (a card game's are its ~10 KB card pool, parsed on every post, docs/benchmarks.md,
# round 11).
_DEFERRED = ("options",)
_LOCK = select(*(c for c in _GAMES.c if c.name not in _DEFERRED)).with_for_update()
_LOCK_BY_THREAD = Loading(
    Game,
    _LOCK.where(_GAMES.c.thread_id == bindparam("thread_id")),
    refresh=True,
    deferred=_DEFERRED,
)
_LOCK_BY_ID = Loading(
    Game, _LOCK.where(_GAMES.c.id == bindparam("game_id")), refresh=True, deferred=_DEFERRED
)
_SEATS = Loading(
    GamePlayer,
    select(*_SEATS_TABLE.c)
    .where(_SEATS_TABLE.c.game_id == bindparam("game_id"))
    .order_by(_SEATS_TABLE.c.seat),
    refresh=True,
)


def working_copy(game: Game) -> Working:
    return Working(
        status=game.status,
        paused=game.paused,
        seats=[
            Seat(p.user_id, p.name, p.kicked, p.absences_used)
            for p in sorted(game.players, key=lambda p: p.seat)
        ],
        # Not copied: a game's ``apply`` never mutates the state it is given (it returns a new
        # one), and nothing here writes into it, so the row's state is shared until replaced.
        state=game.state,
        next_seq=game.last_seq + 1,
        deadline_hours=game.deadline_hours,
        deadline_at=game.deadline_at,
    )


def run(session: Session, sub: Submission) -> tuple[Outcome, Working | None]:
    """Parse and apply ``sub.lines`` all or nothing. The caller has locked the game row."""
    game, impl = sub.game, sub.impl
    if len(sub.lines) > MAX_COMMAND_LINES:
        number, line = sub.lines[MAX_COMMAND_LINES]
        message = f"1つの書き込みの命令は{MAX_COMMAND_LINES}行までです。"
        return _failure(sub, LineError(number, None, message, normalise(line)), []), None
    parsed: list[tuple[int, str, Any]] = []
    for number, line in sub.lines:
        guess = misspelt_verb(impl, line)
        if guess is not None:
            word = normalise(line).split(" ", 1)[0]
            message = f"「{word}」という命令はありません。もしかして {guess} ですか？"
            error = LineError(number, 1, message, normalise(line))
            return _failure(sub, error, legal_for(game, impl, sub.by.user, public=True)), None
        try:
            parsed.append((number, line, impl.parse(line)))
        except CommandSyntaxError as exc:
            error = LineError(number, exc.column, exc.message, exc.line)
            return _failure(sub, error, legal_for(game, impl, sub.by.user, public=True)), None
    undo = next(((n, line) for n, line, c in parsed if isinstance(c, platform.Undo)), None)
    if undo is not None and len(parsed) > 1:
        # docs/gm.md: an UNDO takes back the last post as a whole; beside other commands it
        # would be unclear which post it takes back, so it stands alone.
        number, line = undo
        error = LineError(number, None, UNDO_ALONE, normalise(line))
        return _failure(sub, error, []), None
    work = working_copy(game)
    turn_before = impl.turn_key(work.state) if work.state is not None else None
    for index, (number, line, command) in enumerate(parsed):
        try:
            apply_command(session, sub, work, command)
        except (RuleError, Refusal) as exc:
            message, legal = exc.message, exc.legal
            if index > 0:
                message, legal = _refusal_before_the_post(session, sub, command)
            error = LineError(number, None, message, normalise(line))
            return _failure(sub, error, legal), None
    autoplay_kicked(sub, work)
    turn_after = impl.turn_key(work.state) if work.state is not None else None
    if turn_before != turn_after or work.started:
        work.deadline_reset = True
    work.board_changed = work.started or work.board_changed or turn_before != turn_after
    return Outcome(True, None, "", ""), work


UNDO_ALONE = (
    "UNDO は1つの書き込みに単独で書いてください（ほかの命令と一緒には使えません。"
    "取り消したあとの手は、次の書き込みで）。"
)

AFTER_EARLIER_LINES = (
    "前の行を適用したあとでは、この命令は受け付けられません。投稿全体を取り消しました"
    "（取り消した行の結果は明かしません）。"
)


def _refusal_before_the_post(
    session: Session, sub: Submission, command: Any
) -> tuple[str, list[str]]:
    """Why a line that follows applied lines of the same post is refused, told from the game
    as it stands — the post is undone. The refusal as it happened speaks of the game after the
    earlier lines (a card just scouted in the stock and the legal lines, a draw after a
    judged PLAY), which nobody may learn from a post that is not kept (or from a preview,
    asked again and again). The line is checked alone against the game before the post: if
    it is refused there too, that reason and the lines legal now; if not, only that it cannot
    follow the lines before it."""
    message = AFTER_EARLIER_LINES
    try:
        apply_command(session, sub, working_copy(sub.game), command)
    except (RuleError, Refusal) as exc:
        message = exc.message
    return message, legal_for(sub.game, sub.impl, sub.by.user, public=True)


def _failure(sub: Submission, error: LineError, legal: list[str]) -> Outcome:
    text = failure_text(sub.anchor, error, legal)
    return Outcome(False, error, "" if sub.sealed else text, text if sub.sealed else "")


# --- applying one command ------------------------------------------------------------------


def _seat_by_name(work: Working, name: str) -> int:
    wanted = unicodedata.normalize("NFKC", name).casefold()
    for index, seat in enumerate(work.seats):
        if unicodedata.normalize("NFKC", seat.name).casefold() == wanted:
            return index
    names = "、".join(s.name for s in work.seats) or "（なし）"
    raise Refusal(f"「{name}」という名前のプレイヤーはいません。プレイヤー: {names}")


def is_gm(game: Game, user: User | None) -> bool:
    return user is not None and game.gm_id == user.id


def _require_gm(sub: Submission, verb: str) -> None:
    if not is_gm(sub.game, sub.by.user):
        raise Refusal(f"{verb} は GM だけが使える命令です。")


def _require_status(work: Working, verb: str, *allowed: str) -> None:
    if work.status not in allowed:
        names = {
            "recruiting": "募集中",
            "active": "進行中",
            "finished": "終了後",
            "aborted": "中止後",
        }
        where = "・".join(names[s] for s in allowed)
        raise Refusal(f"{verb} は{where}のゲームにだけ使えます。")


def _own_seat(work: Working, sub: Submission) -> int | None:
    if sub.by.user is None:
        return None
    return next((i for i, s in enumerate(work.seats) if s.user_id == sub.by.user_id), None)


def apply_command(session: Session, sub: Submission, work: Working, command: Any) -> None:
    game, impl = sub.game, sub.impl
    user = sub.by.user
    if _is_platform(command) and sub.sealed:
        raise Refusal("この命令は封印できません。スレッドに書き込んでください。")
    if isinstance(command, platform.Join):
        if work.status != "recruiting":
            raise Refusal("参加者の募集は終わっています（JOIN は開始前だけです）。")
        if user is None:
            raise Refusal("JOIN できるのは利用者だけです。")
        if _own_seat(work, sub) is not None:
            raise Refusal("あなたはもう参加しています。", ["LEAVE"])
        if len(work.seats) >= impl.max_players:
            raise Refusal(f"満員です（{impl.max_players}人まで）。")
        work.seats.append(Seat(user.id, user.name))
        work.public.append(f"{user.name} さんが参加しました（{len(work.seats)}人目）。")
    elif isinstance(command, platform.Leave):
        _require_status(work, "LEAVE", "recruiting")
        index = _own_seat(work, sub)
        if index is None:
            raise Refusal("あなたはこのゲームに参加していません。", ["JOIN"])
        del work.seats[index]
        work.public.append(f"{sub.by.name} さんが抜けました（残り{len(work.seats)}人）。")
    elif isinstance(command, platform.Start):
        _require_gm(sub, "START")
        _require_status(work, "START", "recruiting")
        if len(work.seats) < impl.min_players:
            raise Refusal(
                f"{impl.title_ja} は{impl.min_players}人から遊べます（いま{len(work.seats)}人）。"
            )
        names = [s.name for s in work.seats]
        work.state = impl.setup(names, dict(game.options), Rng(game.seed, 0))
        work.status = "active"
        work.started = True
        order = "、".join(f"{i + 1}. {name}" for i, name in enumerate(names))
        work.public.append(f"ゲーム開始！ 席順: {order}")
        work.public.append(
            f"乱数の種の SHA-256: {seed_hash(game.seed)}（種はゲームの終わりに公開します）"
        )
        work.log.append(("START", order))
    elif isinstance(command, platform.Pause | platform.Resume):
        pausing = isinstance(command, platform.Pause)
        verb = "PAUSE" if pausing else "RESUME"
        _require_gm(sub, verb)
        _require_status(work, verb, "active")
        if work.paused == pausing:
            raise Refusal("もう中断しています。" if pausing else "中断していません。")
        work.paused = pausing
        work.deadline_reset = not pausing
        work.public.append(
            "GM がゲームを中断しました。" if pausing else "GM がゲームを再開しました。"
        )
        work.log.append((verb, ""))
    elif isinstance(command, platform.Abort):
        _require_gm(sub, "ABORT")
        _require_status(work, "ABORT", "recruiting", "active")
        work.status = "aborted"
        work.public.append("GM がゲームを中止しました。")
        work.log.append(("ABORT", ""))
    elif isinstance(command, platform.Undo):
        _require_gm(sub, "UNDO")
        _require_status(work, "UNDO", "active", "finished")
        undo_last_post(session, sub, work)
    elif isinstance(command, platform.As):
        _require_gm(sub, "AS")
        seat = _seat_by_name(work, command.name)
        if _is_platform(command.command):
            raise Refusal("AS で代わりに行えるのはゲームの命令だけです。")
        apply_game_command(sub, work, seat, command.command, proxy="（GM代理）")
        work.log.append(("AS", command.canonical()))
    elif isinstance(command, platform.Kick):
        _require_gm(sub, "KICK")
        _require_status(work, "KICK", "recruiting", "active")
        seat = _seat_by_name(work, command.name)
        name = work.seats[seat].name
        if work.status == "recruiting":
            del work.seats[seat]
            work.public.append(f"GM が {name} さんを参加者から外しました。")
        else:
            if work.seats[seat].kicked:
                raise Refusal(f"{name} さんはもう追放されています。")
            work.seats[seat].kicked = True
            work.public.append(
                f"GM が {name} さんを追放しました。交代する人が来るか GM が席に戻すまで、"
                "この席はボットが既定の手で進めます。"
            )
        work.log.append(("KICK", name))
    elif isinstance(command, platform.Replace):
        _require_gm(sub, "REPLACE")
        _require_status(work, "REPLACE", "recruiting", "active")
        seat = _seat_by_name(work, command.name)
        newcomer = _user_by_name(session, command.new)
        current = work.seats[seat]
        # The player the GM kicked can be given their own seat back; nobody takes a second
        # seat, a kicked one included (a user's seat is the first found: gm.seat_of).
        back = current.user_id == newcomer.id and current.kicked
        if not back and any(s.user_id == newcomer.id for s in work.seats):
            raise Refusal(f"{newcomer.name} さんはもうこのゲームの席についています。")
        old = current.name
        work.seats[seat] = Seat(newcomer.id, newcomer.name, False, current.absences_used)
        if back:
            work.public.append(f"GM が {old} さんを席に戻しました。")
            work.log.append(("REPLACE", f"{old}（席に復帰）"))
        else:
            work.public.append(f"GM が {old} さんの席を {newcomer.name} さんに交代しました。")
            work.log.append(("REPLACE", f"{old} → {newcomer.name}"))
    elif isinstance(command, platform.Deadline):
        _require_gm(sub, "DEADLINE")
        _require_status(work, "DEADLINE", "recruiting", "active")
        low, high = DEADLINE_HOURS
        if not low <= command.hours <= high:
            raise Refusal(
                f"期限は{low}〜{high}時間で指定してください（{command.hours}時間は不可）。"
            )
        work.deadline_hours = command.hours
        work.deadline_reset = True
        work.public.append(
            f"手番の期限を{command.hours}時間にしました。期限を過ぎると、まだ動いていない"
            "プレイヤーはボットが既定の手で進めます。"
        )
        work.log.append(("DEADLINE", f"{command.hours}時間"))
    elif isinstance(command, platform.Absent):
        _require_status(work, "ABSENT", "active")
        absentee = _own_seat(work, sub)
        if absentee is None:
            raise Refusal("ABSENT はこのゲームのプレイヤーだけが使えます。")
        if work.deadline_hours is None or work.deadline_at is None:
            raise Refusal("このゲームには手番の期限が設定されていません。")
        low, high = ABSENT_HOURS
        if not low <= command.hours <= high:
            raise Refusal(f"不在は{low}〜{high}時間で指定してください。")
        used = work.seats[absentee].absences_used
        if used >= MAX_ABSENCES:
            raise Refusal(f"ABSENT は1ゲームに{MAX_ABSENCES}回までです（使用済み{used}回）。")
        work.seats[absentee].absences_used = used + 1
        work.deadline_at = work.deadline_at + timedelta(hours=command.hours)
        work.public.append(
            f"{sub.by.name} さんが不在を申請しました。期限を{command.hours}時間延ばします"
            f"（{used + 1}/{MAX_ABSENCES}回目）。"
        )
    elif isinstance(command, platform.Adjust):
        _require_gm(sub, "ADJUST")
        _require_status(work, "ADJUST", "active", "finished")
        seat = _seat_by_name(work, command.name)
        if not -1000 <= command.delta <= 1000:
            raise Refusal("調整できる点数は −1000〜+1000 です。")
        work.adjustments.append((seat, command.delta, command.reason))
        name = work.seats[seat].name
        work.public.append(f"GM 調整: {name} {command.delta:+d}点（{command.reason}）")
        work.log.append(("ADJUST", f"{name} {command.delta:+d} {command.reason}"))
    else:
        mine = _own_seat(work, sub)
        if mine is None and is_gm(game, user):
            apply_game_command(sub, work, "gm", command)
            return
        if mine is None:
            hint = "参加するには JOIN と書いてください。" if work.status == "recruiting" else ""
            raise Refusal(
                "あなたはこのゲームのプレイヤーではありません。" + hint,
                ["JOIN"] if work.status == "recruiting" else [],
            )
        if work.seats[mine].kicked:
            raise Refusal("あなたの席は GM により追放されています。")
        apply_game_command(sub, work, mine, command)


def _user_by_name(session: Session, name: str) -> User:
    wanted = unicodedata.normalize("NFKC", name).strip()
    user = session.scalar(select(User).where(User.name == wanted))
    if user is None:
        raise Refusal(f"「{name}」という利用者はいません（交代する人は先に登録が必要です）。")
    return user


def _is_platform(command: Any) -> bool:
    return type(command).__module__ == platform.__name__


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
    rng = Rng(sub.game.seed, work.next_seq)
    sealed = sub.sealed if sealed is None else sealed
    state, events = impl.apply(work.state, actor, command, rng, sealed=sealed)
    seat = None if actor == "gm" else int(actor)
    name = "GM" if seat is None else work.seats[seat].name
    line = command.canonical()
    work.moves.append(
        NewMove(work.next_seq, seat, name, line, _parsed_json(command), by_bot, sealed)
    )
    work.next_seq += 1
    work.state = state
    # One event a line: the first beside the command, each further one on a line of its own.
    public = "\n".join(str(e["text"]) for e in events if e.get("text") and not e.get("private"))
    private = "\n".join(str(e["text"]) for e in events if e.get("text") and e.get("private"))
    shown = "（封印）" if sealed else line
    work.public.append(f"✔ {shown}{proxy} → {public}" if public else f"✔ {name}{proxy}: {shown}")
    if private:
        work.private.append(f"✔ {line} → {private}")
    if impl.is_over(state):
        work.status = "finished"
        work.public.append("ゲーム終了！")


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


def _parsed_json(command: Any) -> dict[str, Any]:
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


def undo_last_post(session: Session, sub: Submission, work: Working) -> None:
    """Take back the moves of the last submission that has applied moves; rebuild the state."""
    if work.moves:
        raise Refusal("UNDO は同じ書き込みのゲームの命令と一緒には使えません。")
    moves = [m for m in replay.applied_moves(session, sub.game) if m.id not in work.undone_moves]
    # The bot's own moves after an earlier UNDO (a deck shuffled) are never taken back: that
    # would restore the order the undone post's reply told. They stay in the kept log.
    takeable = [m for m in moves if not made_after_undo(m)]
    if not takeable:
        raise Refusal("取り消せる手がありません。")
    last = takeable[-1]
    key = (last.post_id, last.sealed_id)
    undone = [m for m in takeable if (m.post_id, m.sealed_id) == key]
    undone_ids = {m.id for m in undone}
    kept = [m for m in moves if m.id not in undone_ids]
    players = sub.game.players_at_start or [s.name for s in work.seats]
    assert work.state is not None
    before = work.state
    work.state = replay.fold(sub.impl, sub.game, players, replay.log_of(kept))
    work.undone_moves.extend(m.id for m in undone)
    if work.status == "finished":
        work.status = "active"
    work.board_changed = True
    anchor = f">>{last.post_number} の" if last.post_number else ""
    work.public.append(f"GM が{anchor}{len(undone)}手を取り消しました。")
    work.log.append(("UNDO", f"{anchor}{len(undone)}手"))
    # What the game does after it (Game.undo_lines: えいつく shuffles a deck that got back a
    # card the thread saw drawn), as the bot's GM moves, recorded so the log still replays.
    for line in sub.impl.undo_lines(before, work.state):
        apply_game_command(
            sub, work, "gm", sub.impl.parse(line), proxy=UNDO_BOT, by_bot=True, even_paused=True
        )


UNDO_BOT = "（ボット: UNDO の後始末）"


def made_after_undo(move: Move) -> bool:
    """A move the bot made as the GM: only the game's ``undo_lines`` after an UNDO are (the
    bot plays seats at deadlines and for kicked players, never the GM otherwise)."""
    return move.by_bot and move.actor_seat is None


# --- writing -------------------------------------------------------------------------------


def save(
    session: Session,
    sub: Submission,
    work: Working,
    *,
    post: Post | None,
    sealed_id: int | None,
    reply: Callable[[], dict[str, Any]] | None = None,
) -> Post | None:
    """Write what ``work`` did: moves, adjustments, log, seats and the game row, and the
    notifications. The moves, the game row and the notifications are written at once by Core
    statements built once (the post path's unit-of-work flush cost more than everything else
    a post did, docs/benchmarks.md); what else changed (seats, adjustments, the log, undone
    moves) goes through the session as usual.

    ``reply``: the bot's answer, written here too and returned. It is called once the game
    object holds its new state (``success_text`` reads it) and returns the post's row
    (``forum.post_row``, its number taken), whose ``board_at`` is set here if the answer shows
    the board. On PostgreSQL the answer is written by the game row's statement, one round trip
    less a command post (docs/benchmarks.md, round 17)."""
    game, impl, now = sub.game, sub.impl, sub.now
    post_number = post.number if post is not None else None
    waiting_before = notify.waiting_seats(impl, game, game.state)
    label_before = impl.turn_label(game.state) if game.state is not None else ""
    turn_before = game.turn_key
    deadline_before = game.deadline_at
    was_over = game.status in ("finished", "aborted")
    for move_id in work.undone_moves:
        undone = session.get(Move, move_id)
        if undone is not None:
            undone.undone = True
    if work.undone_moves:  # written now: what reads the applied moves after save counts them
        session.flush()
    current = [
        (p.user_id, p.name, p.kicked, p.absences_used)
        for p in sorted(game.players, key=lambda p: p.seat)
    ]
    wanted = [(s.user_id, s.name, s.kicked, s.absences_used) for s in work.seats]
    # Seats whose player changed (REPLACE, or a kicked seat given back): told "your turn"
    # if the game waits for them, whoever it waited for before.
    handed_over: set[int] = set()
    if current != wanted:
        handed_over = {
            seat
            for seat, after in enumerate(wanted)
            if seat >= len(current) or current[seat][0::2] != after[0::2]
        }
        game.players.clear()
        session.flush()
        for index, seat in enumerate(work.seats):
            game.players.append(
                GamePlayer(
                    game_id=game.id,
                    seat=index,
                    user_id=seat.user_id,
                    name=seat.name,
                    kicked=seat.kicked,
                    absences_used=seat.absences_used,
                )
            )
    rows: list[dict[str, Any]] = []
    if work.moves:
        post_id = post.id if post is not None else None
        rows = [
            {
                "game_id": game.id,
                "seq": move.seq,
                "post_id": post_id,
                "post_number": post_number,
                "sealed_id": sealed_id,
                "actor_seat": move.seat,
                "actor_name": move.actor_name,
                "command": move.line,
                "parsed": move.parsed,
                "undone": False,
                "by_bot": move.by_bot,
                "sealed": move.sealed,
                "created_at": now,
            }
            for move in work.moves
        ]
    # PostgreSQL writes the moves with the game row (below), one round trip less.
    together = bool(rows) and is_postgres(session)
    if rows and not together:
        _INSERT_MOVE.run_many(session, rows)
    for adjusted, delta, reason in work.adjustments:
        session.add(
            Adjustment(
                game_id=game.id,
                seat=adjusted,
                delta=delta,
                reason=reason,
                post_number=post_number,
                created_at=now,
            )
        )
    for action, detail in work.log:
        session.add(
            ModerationEntry(
                game_id=game.id,
                thread_id=game.thread_id,
                actor_name=sub.by.name,
                action=action,
                detail=detail,
                post_number=post_number,
                created_at=now,
            )
        )
    # The new row, set on ``game`` as its loaded value (so the session has nothing to flush
    # for it) and written by one Core UPDATE.
    if work.status != "active" or work.deadline_hours is None:
        deadline_at = None
    elif work.deadline_reset or work.deadline_at is None:
        deadline_at = now + timedelta(hours=work.deadline_hours)
    else:
        deadline_at = work.deadline_at
    over = work.status in ("finished", "aborted")
    row: dict[str, Any] = {
        "status": work.status,
        "paused": work.paused,
        "state": work.state,
        "version": game.version + 1,
        "last_seq": work.next_seq - 1,
        "deadline_hours": work.deadline_hours,
        "deadline_at": deadline_at,
        "deadline_warned": game.deadline_warned and deadline_at == deadline_before,
        "turn_key": impl.turn_key(work.state) if work.state is not None else None,
        "players_at_start": (
            [s.name for s in work.seats] if work.started else game.players_at_start
        ),
        "started_at": now if work.started else game.started_at,
        "finished_at": (game.finished_at or now) if over else None,
        "result": None,
    }
    # The indexed columns are written only when they change: SQLite rewrites the pages of
    # every index on a column in the SET clause, changed or not (two of the dozen pages a
    # post writes, docs/benchmarks.md, round 11). The others always are: one SET clause (one
    # compiled form) for most posts.
    for name in _INDEXED_GAME_COLUMNS & row.keys():
        if row[name] == getattr(game, name):
            del row[name]
    for name, value in row.items():
        set_committed_value(game, name, value)
    # The result exists only once the game is over (then the GM's ADJUSTs are read).
    if game.status == "finished":
        if together:  # the moves first: the result is read from them
            _INSERT_MOVE.run_many(session, rows)
            together = False
        row["result"] = final_result(session, game, impl)
        set_committed_value(game, "result", row["result"])
    answer = reply() if reply is not None else None
    written = _write_game_row(
        session, game.id, row, rows if together else [], answer, work.board_shown
    )
    notify.after_save(
        session,
        game,
        impl,
        waiting_before=waiting_before,
        handed_over=handed_over,
        turn_moved=work.started or game.turn_key != turn_before,
        finished_now=game.status == "finished" and not was_over,
        now=now,
        label_before=None if work.started else label_before,
    )
    return written


_MOVES: Table = Move.__table__  # type: ignore[assignment]
_INSERT_MOVE = Prepared(insert(_MOVES))
# The game row's UPDATE, built once per set of columns ``save`` passes (its SET clause).
_UPDATE_GAME = Prepared(update(_GAMES).where(_GAMES.c.id == bindparam("game_id")))
_INDEXED_GAME_COLUMNS = frozenset(c.name for index in _GAMES.indexes for c in index.columns)


def _write_game_row(
    session: Session,
    game_id: int,
    row: dict[str, Any],
    moves: list[dict[str, Any]],
    answer: dict[str, Any] | None = None,
    board: bool = False,
) -> Post | None:
    """The game row's UPDATE of the columns in ``row``; with ``moves`` (PostgreSQL) their
    INSERT goes in the same statement. ``answer``: the bot's reply, written after them (in the
    same statement on PostgreSQL) and returned; ``board``: its ``board_at`` is the number of
    the game's applied moves once these are written."""
    # The time as the column binds it (a naive one refused, where JSON would carry it
    # without an offset), written out as text whatever the serialiser.
    moves = [{**move, "created_at": in_utc(move["created_at"]).isoformat()} for move in moves]
    params = {"game_id": game_id, **row}
    if moves:
        params["moves"] = moves
    if answer is not None and is_postgres(session):
        reply_names = tuple(name for name in answer if name != "board_at")
        statement = _game_row_statement(
            tuple(row), tuple(moves[0]) if moves else None, reply_names, board
        )
        params |= {_REPLY_PARAM + name: answer[name] for name in reply_names}
        if board:
            params[_ADDED] = len(moves)
        ((reply_id, board_at),) = statement.run(session, params)
        return forum.attach_post(session, {**answer, "board_at": board_at}, reply_id)
    if moves:
        _game_row_statement(tuple(row), tuple(moves[0]), None, False).run(session, params)
    else:
        _UPDATE_GAME.run(session, params)
    if answer is None:
        return None
    if board:
        answer = {**answer, "board_at": _applied_moves(session, game_id)}
    return forum.write_post(session, answer)


@functools.cache
def _game_row_statement(
    columns: tuple[str, ...],
    names: tuple[str, ...] | None,
    reply: tuple[str, ...] | None,
    board: bool,
) -> Prepared:
    """PostgreSQL: the game row's UPDATE (``columns`` set, by ``game_id``), in one statement
    with
    - the INSERT of the post's moves (``names``: their columns), in a data-modifying WITH,
      the moves one JSON parameter (``moves``, ``app.db.insert_json_rows``);
    - the INSERT of the bot's reply (``reply``: its columns, parameters named ``reply__`` and
      the column), whose id and ``board_at`` the statement returns. With ``board`` its
      ``board_at`` is the game's applied moves: those already written (a statement reads the
      rows of the transaction's earlier statements, not its own) and the ``added`` ones
      (round 17).
    One form per set of columns."""
    game = (
        update(_GAMES)
        .where(_GAMES.c.id == bindparam("game_id"))
        .values({name: bindparam(name, type_=_GAMES.c[name].type) for name in columns})
    )
    written = insert_json_rows(_MOVES, names, "moves") if names is not None else None
    if reply is None:
        assert written is not None
        return Prepared(game.add_cte(written.cte("moves_written")), by_params=False)
    chosen: list[Any] = [
        forum.typed_parameter(bindparam(_REPLY_PARAM + name, type_=_POSTS.c[name].type))
        for name in reply
    ]
    targets = list(reply)
    if board:
        applied = (
            select(func.count())
            .select_from(_MOVES)
            .where(_MOVES.c.game_id == bindparam("game_id"), _MOVES.c.undone.is_(False))
            .scalar_subquery()
        )
        chosen.append(cast(applied + bindparam(_ADDED, type_=Integer()), Integer()))
        targets.append("board_at")
    statement = (
        insert(_POSTS)
        .from_select(targets, select(*chosen))
        .returning(_POSTS.c.id, _POSTS.c.board_at)
        .add_cte(game.cte("game_written"))
    )
    if written is not None:
        statement = statement.add_cte(written.cte("moves_written"))
    return Prepared(statement, by_params=False)


_POSTS: Table = Post.__table__  # type: ignore[assignment]
_REPLY_PARAM = "reply__"
_ADDED = "added"


# --- text ----------------------------------------------------------------------------------


def _display_width(text: str) -> str:
    """Spaces as wide as ``text``: ideographic spaces under wide characters."""
    return "".join("　" if unicodedata.east_asian_width(ch) in "WF" else " " for ch in text)


def failure_text(anchor: str, error: LineError, legal: list[str]) -> str:
    lines = [anchor] if anchor else []
    lines.append(f"{error.line}行目の命令は受け付けられませんでした（ゲームは変わっていません）。")
    lines.append(f"　{error.source}")
    if error.column is not None:
        lines.append("　" + _display_width(error.source[: error.column - 1]) + "^")
    lines.append(error.message)
    if legal:
        lines.append("今できる命令: " + " / ".join(legal[:20]) + (" …" if len(legal) > 20 else ""))
    return "\n".join(lines)


def success_text(session: Session, sub: Submission, work: Working) -> str:
    game, impl = sub.game, sub.impl
    lines = [sub.anchor] if sub.anchor else []
    lines.extend(work.public)
    if work.private and not sub.sealed:
        lines.append("（あなただけに見える結果は、ゲームページの「あなたの手元」にあります）")
    show_board = work.board_changed
    if work.state is not None and work.status == "active" and not work.paused:
        waiting = [work.seats[i].name for i in impl.waiting_for(work.state)]
        if waiting and not show_board:
            lines.append("手番待ち: " + "、".join(waiting))
        if game.deadline_at is not None:
            lines.append(f"期限: {format_bbs_time(game.deadline_at)}")
    board: list[str] = []
    if show_board and work.state is not None:
        board = ["", render_board_summary(impl, impl.view(work.state, None))]
        work.board_shown = True
    closing: list[str] = []
    if work.status in ("finished", "aborted") and sub.game.finished_at == sub.now:
        closing = closing_lines(session, game, impl)
    return fit_reply(lines, board, closing)


def board_at(session: Session, sub: Submission, work: Working) -> int | None:
    """After how many applied moves a reply that shows the board was written (its picture's
    ?at=N), None for a reply without the board. Called once the moves are saved."""
    if not work.board_shown:
        return None
    return _applied_moves(session, sub.game.id)


def _applied_moves(session: Session, game_id: int) -> int:
    ((count,),) = _COUNT_MOVES.fetch(session, {"game_id": game_id})
    return int(count or 0)


# The applied moves of a game (board_at): built once (a fresh select cost more than the count).
_COUNT_MOVES = Prepared(
    select(func.count())
    .select_from(_MOVES)
    .where(_MOVES.c.game_id == bindparam("game_id"), _MOVES.c.undone.is_(False))
)


def fit_reply(head: list[str], board: list[str], closing: list[str]) -> str:
    """The reply in the room of one post. What the bot must say stays: the moves' outcomes
    (``bbsgm verify`` looks for them), the final result and the seed. What the game page
    shows anyway goes first when there is no room: the board, then the epilogue (sealed
    commands and hidden things, listed whole on the game page once the game is over)."""
    text = "\n".join([*head, *board, *closing]).rstrip()
    if len(text) <= MAX_BODY_CHARS:
        return text
    board = ["", "（盤面は長すぎるため省略します。ゲームのページにあります）"] if board else []
    text = "\n".join([*head, *board, *closing]).rstrip()
    if len(text) <= MAX_BODY_CHARS or EPILOGUE not in closing:
        return text
    kept = closing[: closing.index(EPILOGUE)]
    note = "（エピローグは長すぎるため省略します。封印と秘密はゲームのページにあります）"
    return "\n".join([*head, *board, *kept, "", note]).rstrip()


def seed_hash(seed: str) -> str:
    """Posted at START; anyone can check the seed revealed at the end against it."""
    return hashlib.sha256(seed.encode()).hexdigest()


# How much of each sealed command the closing post quotes; the game page lists them whole.
EPILOGUE_SEALED_CHARS = 300
EPILOGUE = "【エピローグ】すべての封印と秘密を公開します。"
# The end of a bot post cut to a post's length (app.gm.service._bot_post): what follows the
# cut is not in the thread, which ``bbsgm verify`` takes into account.
CUT_NOTE = "…（長すぎるためここまでにします。"


def closing_lines(session: Session, game: Game, impl: GameImpl) -> list[str]:
    """The final ranking, the seed, and the epilogue: every sealed command and hidden thing."""
    lines: list[str] = []
    if game.result:
        lines += ["", "【最終結果】"]
        for entry in game.result["ranking"]:
            score = "未完成" if entry["score"] is None else f"{entry['score']}点"
            said = breakdown_text(entry["breakdown"], impl) if entry["score"] is not None else ""
            lines.append(
                f"{entry['rank']}位 {entry['name']} {score}" + (f"（{said}）" if said else "")
            )
    sealed = list(
        session.scalars(
            select(SealedCommand).where(SealedCommand.game_id == game.id).order_by(SealedCommand.id)
        )
    )
    if game.started_at is not None:
        lines += ["", f"乱数の種: {game.seed}", f"（SHA-256: {seed_hash(game.seed)}）"]
    hidden = impl.epilogue(game.state) if game.state is not None else []
    if sealed or hidden:
        lines += ["", EPILOGUE]
        for row in sealed:
            body = row.body.replace("\n", " / ")
            if len(body) > EPILOGUE_SEALED_CHARS:  # a post has room for a few at 10,000
                body = f"{body[:EPILOGUE_SEALED_CHARS]}…（全文はゲームのページ /games/{game.id}）"
            # A sealed command the game refused is marked so: it never took effect.
            refused = "" if row.ok else "（受け付けられなかった封印）"
            lines.append(
                f"封印 {row.author_name} {format_bbs_time(row.created_at)}{refused}: {body}"
            )
        lines.extend(hidden)
    return lines


# --- legal lines ---------------------------------------------------------------------------


def _actor_of(game: Game, user: User | None) -> tuple[Actor | None, int | None, bool]:
    """(who the user acts as: their seat or "gm" or None, their seat, whether they are GM);
    a kicked seat acts as nobody."""
    if user is None:
        return None, None, False
    seat = next((p.seat for p in game.players if p.user_id == user.id), None)
    gm_user = is_gm(game, user)
    if seat is not None:
        return (None if game.players[seat].kicked else seat), seat, gm_user
    return ("gm" if gm_user else None), None, gm_user


def legal_for(game: Game, impl: GameImpl, user: User | None, *, public: bool = False) -> list[str]:
    """Command lines this user may post in the thread now. ``public``: for a refusal the
    whole thread reads, so without the lines that name the user's hidden things (a hand)."""
    if public:
        return _legal_for(game, impl, user, impl.refusal_lines)
    return legal_split_for(game, impl, user)[0]


def legal_split_for(game: Game, impl: GameImpl, user: User | None) -> tuple[list[str], list[str]]:
    """What ``/legal`` answers: the lines this user may post in the thread now and those
    they may (or must) send sealed, from one listing of the game's legal commands."""
    actor = _playing_actor(game, user)
    thread: list[str] = []
    sealed: list[str] = []
    if actor is not None and game.state is not None:
        thread, sealed = impl.legal_split(game.state, actor)
    return _legal_for(game, impl, user, lambda _state, _actor: thread), sealed


def _legal_for(
    game: Game, impl: GameImpl, user: User | None, shown: Callable[[State, Actor], list[str]]
) -> list[str]:
    if user is None:
        return []
    actor, seat, gm_user = _actor_of(game, user)
    lines: list[str] = []
    if game.status == "recruiting":
        if seat is None and len(game.players) < impl.max_players:
            lines.append("JOIN")
        if seat is not None:
            lines.append("LEAVE")
        if gm_user and len(game.players) >= impl.min_players:
            lines.append("START")
    elif game.status == "active" and game.state is not None:
        if not game.paused and actor is not None:
            lines.extend(shown(game.state, actor))
        if gm_user:
            lines.extend(["RESUME"] if game.paused else ["PAUSE"])
            lines.extend(["UNDO", "ABORT"])
    return lines


def _playing_actor(game: Game, user: User | None) -> Actor | None:
    if game.status != "active" or game.state is None or game.paused:
        return None
    return _actor_of(game, user)[0]


def examples_for(game: Game, impl: GameImpl, user: User | None) -> list[tuple[str, bool]]:
    """Free-text lines to show as patterns (a secret rule's form), with whether sealed."""
    actor = _playing_actor(game, user)
    return [] if actor is None or game.state is None else impl.examples(game.state, actor)
