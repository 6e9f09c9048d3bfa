"""What the bot says: a refused line quoted with the word at fault marked and the lines legal
now; an accepted submission's outcomes, with the board when the week, round or phase moved on;
the closing post's result, seed and epilogue — all in the room of one post."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from app.db.models import Game, Move, SealedCommand
from app.forum.service import MAX_BODY_CHARS, format_bbs_time
from app.games.base import CommandSyntaxError, State, normalise
from app.games.base import Game as GameImpl
from app.games.kit.howto import rules_path
from app.gm.lines import Language
from app.gm.results import breakdown_text
from app.gm.submission import LineError
from app.gm.text import render_board_summary
from app.gm.working import Submission, Working

BOT_NAME = "★GM"


def _board_key(kind: str, state: State) -> tuple[Any, ...]:
    """What changes when a good GM would post the board again (issue #43): the week, the
    round, the phase between rounds (a draft, the decks) — not every turn or judgment.
    カードゲーム's round is a pair of turns (each player attacked once)."""
    over = bool(state.get("over"))
    if kind == "eitsuku":
        return (over, state.get("week"))
    if kind == "eleusis":
        return (over, state.get("round"))
    if kind == "cardbattle":
        return (over, state.get("phase") == "deck", (int(state.get("turn") or 0) + 1) // 2)
    if "round" in state and "phase" in state:  # idolwp, populous
        return (over, state.get("phase"), state.get("round"))
    return (over, state.get("phase"), state.get("round"), state.get("week"), state.get("turn"))


def board_moved(impl: GameImpl, before: State | None, after: State | None) -> bool:
    """Whether the reply shows the board: the game started, or its week, round or phase
    moved on (``_board_key``); the players ask for it in between with BOARD / 盤面."""
    if before is None or after is None:
        return before is not after
    return _board_key(impl.kind, before) != _board_key(impl.kind, after)


# How many of the lines legal now a refusal lists; the rest are on the game page (issue #43).
LEGAL_SHOWN = 8


def marked(source: str, column: int | None) -> str:
    """The line with the word at ``column`` (1-based) between ▶ and ◀: a caret under it
    landed under another character in a proportional font (issue #43)."""
    if column is None or not 1 <= column <= len(source):
        return source
    start = column - 1
    end = source.find(" ", start)
    end = len(source) if end == -1 or end == start else end
    return f"{source[:start]}▶{source[start:end]}◀{source[end:]}"


def legal_list(legal: list[str], game_id: int | None) -> list[str]:
    """The lines legal now as a short list: at most LEGAL_SHOWN, then how many more and where."""
    if not legal:
        # None the whole thread may read (a hand's plays name its cards): the poster's own
        # list is on the game page.
        return [] if game_id is None else [f"今できる命令はゲームページで: /games/{game_id}"]
    lines = ["今できる命令:", *(f"・{line}" for line in legal[:LEGAL_SHOWN])]
    more = len(legal) - LEGAL_SHOWN
    if more > 0:
        where = f"ゲームページで: /games/{game_id}" if game_id is not None else "ほかにもあります"
        lines.append(f"…ほか {more} 件は{where}" if game_id is not None else f"…ほか {more} 件")
    return lines


def failure_text(
    anchor: str,
    error: LineError,
    legal: list[str],
    unchanged: str = "ゲーム",
    *,
    game_id: int | None = None,
    kind: str | None = None,
    hint: str = "",
) -> str:
    """A refused submission's answer: which line, the line with the word at fault marked,
    why (one sentence), the one-line form when two lines should have been one (``hint``),
    the lines legal now (a short list; the rest on the game page), and the kind's 遊び方 page.
    ``unchanged``: what the refusal left as it was (the game; the card registry)."""
    lines = [anchor] if anchor else []
    lines.append(
        f"{error.line}行目の命令は受け付けられませんでした（{unchanged}は変わっていません）。"
    )
    lines.append("　" + marked(error.source, error.column))
    lines.append(error.message)
    if hint:
        lines.append(hint)
    lines.extend(legal_list(legal, game_id))
    if kind is not None:
        lines.append(f"遊び方: {rules_path(kind)}")
    return "\n".join(lines)


def one_line_form(language: Language, lines: list[tuple[int, str]], error: LineError) -> str:
    """When the refused line repeats the verb of an earlier line of the post (PLAY ○ ♠4 /
    PLAY ○ ♥10) and the two read as one command: say that one line."""
    refused = next((normalise(text) for number, text in lines if number == error.line), "")
    words = refused.split(" ")
    for number, text in lines:
        if number >= error.line:
            break
        earlier = normalise(text).split(" ")
        if earlier[0] != words[0]:
            continue
        shared = 0
        while shared < min(len(earlier), len(words)) and earlier[shared] == words[shared]:
            shared += 1
        if shared == len(words):
            continue
        joined = " ".join([*earlier, *words[shared:]])
        try:
            command = language.parse(joined)
        except CommandSyntaxError:
            continue
        return f"2行に分けず、1行にまとめて書いてください: {command.canonical()}"
    return ""


def success_text(session: Session, sub: Submission, work: Working) -> str:
    game, impl = sub.game, sub.impl
    lines = [sub.anchor] if sub.anchor else []
    lines.extend(work.public)
    if work.private and not sub.sealed:
        # Named by the seat that moved (the game page's own name for it), never the account
        # behind a post's 名前欄.
        seat = work.moves[-1].actor_name if work.moves else "あなた"
        lines.append(f"（{seat}さんにだけ見える結果は、ゲームページの「あなたの手元」に）")
    show_board = work.board_changed
    if work.state is not None and work.status == "active" and not work.paused:
        seats = impl.waiting_for(work.state)
        waiting = [work.seats[i].name for i in seats]
        # Not when the move's own event has just said whose turn it is (work.turn_told).
        if waiting and not show_board and sorted(seats) != work.turn_told:
            lines.append("手番待ち: " + "、".join(waiting))
        if game.deadline_at is not None:
            lines.append(f"期限: {format_bbs_time(game.deadline_at)}")
    board: list[str] = []
    if show_board and work.state is not None:
        # The turn of a week, round or phase gets the compact board; BOARD / 盤面 the full one.
        summary = render_board_summary(
            impl,
            impl.view(work.state, None),
            compact=not work.board_asked,
            game_page=f"/games/{game.id}",
        )
        board = ["", summary]
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
    return int(session.scalar(_APPLIED_MOVES, {"game_id": game_id}) or 0)


_APPLIED_MOVES = select(func.count()).where(
    Move.game_id == bindparam("game_id"), Move.undone.is_(False)
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
        # The START post gave the seed's SHA-256 (app.gm.platform): a reader checks the seed
        # against that, so the closing post does not print the digest again (issue #43).
        lines += ["", f"乱数の種: {game.seed}"]
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
