"""One submission to a game — a post in its thread, a sealed command: its lines read and
applied by the one loop (app/gm/submission.py), each command by the platform's handler or as
the game's (app/gm/platform.py), then the moves of the kicked seats the game waits for. The
caller has locked the game (app/gm/store.py) and writes what this returns."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.games import commands as platform_commands
from app.games.base import RuleError, normalise
from app.gm.legal import legal_for
from app.gm.platform import apply_command
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


def run(session: Session, sub: Submission) -> tuple[Outcome, Working | None]:
    """Parse and apply ``sub.lines`` all or nothing: the outcome, and the working copy to
    write when every line went through (None when one was refused: nothing to write)."""
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

    def apply(index: int, command: Any) -> None:
        try:
            apply_command(session, sub, work, command)
        except (RuleError, Refusal):
            if index == 0:
                raise
            raise Refusal(*_refusal_before_the_post(session, sub, command)) from None

    refused = apply_all(commands, apply)
    if refused is not None:
        return _failure(sub, refused), None
    autoplay_kicked(sub, work)
    turn_after = impl.turn_key(work.state) if work.state is not None else None
    if turn_before != turn_after or work.started:
        work.deadline_reset = True
    # The board in the reply when the week, round or phase moved on (app/gm/reply.py).
    moved = board_moved(impl, game.state, work.state)
    work.board_changed = work.started or work.board_changed or moved
    return Outcome(True, None, "", ""), work


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


def _failure(sub: Submission, refused: Refused) -> Outcome:
    hint = one_line_form(sub.impl, sub.lines, refused.error)
    text = failure_text(
        sub.anchor, refused.error, refused.legal, game_id=sub.game.id, kind=sub.impl.kind, hint=hint
    )
    return Outcome(False, refused.error, "" if sub.sealed else text, text if sub.sealed else "")
