"""One submission to a game — a post in its thread, a sealed command: its lines read and
applied by the one loop (app/gm/submission.py), each command by the platform's handler or as
the game's (app/gm/platform.py), then the moves of the kicked seats the game waits for. The
caller has locked the game (app/gm/store.py) and writes what this returns."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from app.games import commands as platform_commands
from app.games.base import Game as GameImpl
from app.games.base import RuleError, normalise
from app.gm.legal import is_gm, legal_for
from app.gm.platform import apply_command, is_platform
from app.gm.reply import board_moved, failure_text, one_line_form
from app.gm.submission import LineError, Refusal, Refused, apply_all, read
from app.gm.working import Outcome, Submission, Working, autoplay_kicked, working_copy

UNDO_ALONE = (
    "UNDO は1つの書き込みに単独で書いてください（ほかの命令と一緒には使えません。"
    "取り消したあとの手は、次の書き込みで）。"
)

AFTER_EARLIER_LINES = (
    "前の行を適用したあとでは、この命令は受け付けられません。投稿全体を取り消しました"
    "（取り消した行の結果は明かしません）。"
)

AFTER_KEPT_LINES = (
    "前の行を適用したあとでは、この命令は受け付けられません。この行と、確定した行のあとの行を"
    "取り消しました（取り消した行の結果は明かしません）。"
)

# How a preview says it stopped at a line that draws, rolls or is judged (``Game.reveals``).
PREVIEW_STOPS = (
    "{number}行目で{what}ため、{rest}はプレビューできません"
    "（その結果しだいで受け付けられるかが変わりうるため）。"
)
# A line that drew on the move's randomness (the rules rolled a die or shuffled).
ROLLED = "サイコロを振る（または山札を切る）"
# A line the platform sees change what is hidden from the thread (``Game.hidden``).
HIDDEN_MOVES = "伏せられた情報（山札・手札など）が動く"
# Said with a refusal that follows a kept line (docs/security.md).
KEPT_BEFORE = "{number}行目までは適用済みです（引いた・振った・判定した結果は取り消せません）。"


@dataclass
class Kept:
    """The lines of a post kept whatever follows: up to the last that drew, rolled or was
    judged (``Game.reveals``), the working copy as it stood after it."""

    number: int  # the post's line number of that line
    count: int  # how many commands were applied up to it
    work: Working


@dataclass
class Stopped:
    """Where a preview stopped: the line that draws, rolls or is judged, and why."""

    number: int
    what: str
    following: int | None  # the number of the next command line, left unread


def run(
    session: Session, sub: Submission, *, preview: bool = False
) -> tuple[Outcome, Working | None]:
    """Parse and apply ``sub.lines`` all or nothing: the outcome, and the working copy to
    write when every line went through (None when one was refused: nothing to write) — except
    that a line that draws, rolls or is judged is final once applied (docs/security.md): when
    a later line is refused, the lines up to it are written and the outcome (``ok`` False)
    carries ``applied``, the number of lines kept. ``preview``: stop after the first such line
    (``Outcome.stopped``), so what a preview says never hangs on its result."""
    game, impl = sub.game, sub.impl
    commands = read(impl, sub.lines, lambda: legal_for(game, impl, sub.by.user, public=True))
    if isinstance(commands, Refused):
        return _failure(sub, commands), None
    undo = next((c for c in commands if isinstance(c.command, platform_commands.Undo)), None)
    if undo is not None and len(commands) > 1:
        # docs/gm.md: an UNDO takes back the last post as a whole; beside other commands it
        # would be unclear which post it takes back, so it stands alone.
        error = LineError(undo.number, None, UNDO_ALONE, normalise(undo.line))
        return _failure(sub, Refused(error, [])), None
    work = working_copy(game)
    turn_before = impl.turn_key(work.state) if work.state is not None else None
    kept: Kept | None = None
    stopped: Stopped | None = None

    def apply(index: int, command: Any) -> bool:
        nonlocal kept, stopped
        before = work.state
        what = _reveals(impl, before, command)
        viewer = _viewer(sub, work, command)
        rolled = work.rolled
        try:
            apply_command(session, sub, work, command)
        except (RuleError, Refusal):
            if index == (kept.count if kept is not None else 0):
                raise
            base = kept.work if kept is not None else working_copy(sub.game)
            raise Refusal(*_refusal_before_the_post(session, sub, base, command)) from None
        if what is None and work.rolled != rolled:
            what = ROLLED
        if what is None and _hidden_moved(impl, viewer, before, work.state):
            what = HIDDEN_MOVES
        if what is None:
            return False
        number = commands[index].number
        if preview:
            following = commands[index + 1].number if index + 1 < len(commands) else None
            stopped = Stopped(number, what, following)
            return True
        kept = Kept(number, index + 1, _snapshot(work))
        return False

    refused = apply_all(commands, apply)
    if refused is not None:
        failed = _failure(sub, refused)
        if kept is None:
            return failed, None
        work = kept.work
        failed.applied = kept.count
        note = KEPT_BEFORE.format(number=kept.number)
        failed.public_text = f"{failed.public_text}\n{note}" if failed.public_text else ""
        failed.private_text = f"{failed.private_text}\n{note}" if failed.private_text else ""
    autoplay_kicked(sub, work)
    turn_after = impl.turn_key(work.state) if work.state is not None else None
    if turn_before != turn_after or work.started:
        work.deadline_reset = True
    # The board in the reply when the week, round or phase moved on (app/gm/reply.py).
    moved = board_moved(impl, game.state, work.state)
    work.board_changed = work.started or work.board_changed or moved
    if refused is not None:
        return failed, work
    outcome = Outcome(True, None, "", "")
    if stopped is not None and stopped.following is not None:
        # (Stopped at the last line, the preview's own note says that its result is not told.)
        rest = f"{stopped.following}行目から先の命令"
        said = PREVIEW_STOPS.format(number=stopped.number, what=stopped.what, rest=rest)
        outcome.stopped = (stopped.number, said)
    return outcome, work


def _reveals(impl: GameImpl, state: Any, command: Any) -> str | None:
    """``Game.reveals`` for a game command, the GM's AS included; a START deals."""
    if isinstance(command, platform_commands.As):
        command = command.command
    if isinstance(command, platform_commands.Start):
        return "カードや手番を配る"
    if is_platform(command) or state is None:
        return None
    return impl.reveals(state, command)


def _viewer(sub: Submission, work: Working, command: Any) -> int | None:
    """Whose hidden things a line is told against (``_hidden_moved``): the seat it plays for
    (the poster's, or the one an AS names); None for the GM's own lines (the thread's)."""
    if isinstance(command, platform_commands.As):
        return next((i for i, s in enumerate(work.seats) if s.name == command.name), None)
    if sub.by.user_id is None:
        return None
    mine = (i for i, s in enumerate(work.seats) if s.user_id == sub.by.user_id and not s.kicked)
    return next(mine, None)


def _hidden_moved(impl: GameImpl, viewer: int | None, before: Any, after: Any) -> bool:
    """Whether a line changed what its player may not see (``Game.hidden``; the thread's for
    the GM): a card from a closed deck, a secret step shown. Their own hand played from is
    not hidden from them: a turn of several steps stays all or nothing."""
    if before is None or after is None or before is after:
        return False
    return bool(impl.hidden(before, viewer) != impl.hidden(after, viewer))


def _snapshot(work: Working) -> Working:
    """A copy of ``work`` that the next lines do not change: a game's ``apply`` returns a new
    state, never changing the one it was given, so the state is shared; the lists and seats
    that later lines append to or edit are copied."""
    return replace(
        work,
        seats=[replace(seat) for seat in work.seats],
        moves=list(work.moves),
        public=list(work.public),
        private=list(work.private),
        undone_moves=list(work.undone_moves),
        adjustments=list(work.adjustments),
        log=list(work.log),
    )


def _refusal_before_the_post(
    session: Session, sub: Submission, base: Working, command: Any
) -> tuple[str, list[str]]:
    """Why a line that follows applied lines of the same post is refused, told from the game
    as it stands — the game before the post, or after the lines it keeps (``base``: up to a
    line that drew, rolled or was judged, which everyone then reads). The refusal as it
    happened speaks of the game after the earlier, dropped lines, which nobody may learn from
    a post that is not kept. The line is checked alone against ``base``: if it is refused
    there too, that reason and the lines legal there; if not, only that it cannot follow the
    lines before it."""
    message = AFTER_EARLIER_LINES if base.state is sub.game.state else AFTER_KEPT_LINES
    try:
        apply_command(session, sub, _snapshot(base), command)
    except (RuleError, Refusal) as exc:
        message = exc.message
    return message, _legal_at(sub, base)


def _legal_at(sub: Submission, base: Working) -> list[str]:
    """The lines the thread may read as legal for the poster in the game as ``base`` holds
    it: the game before the post, or after the lines it keeps."""
    if base.state is sub.game.state:
        return legal_for(sub.game, sub.impl, sub.by.user, public=True)
    if base.state is None or base.status != "active" or base.paused:
        return []
    mine = [i for i, s in enumerate(base.seats) if s.user_id == sub.by.user_id and not s.kicked]
    if mine and sub.by.user_id is not None:
        return sub.impl.refusal_lines(base.state, mine[0])
    return sub.impl.refusal_lines(base.state, "gm") if is_gm(sub.game, sub.by.user) else []


def _failure(sub: Submission, refused: Refused) -> Outcome:
    hint = one_line_form(sub.impl, sub.lines, refused.error)
    text = failure_text(
        sub.anchor, refused.error, refused.legal, game_id=sub.game.id, kind=sub.impl.kind, hint=hint
    )
    return Outcome(False, refused.error, "" if sub.sealed else text, text if sub.sealed else "")
