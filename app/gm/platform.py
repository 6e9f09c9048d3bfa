"""The platform's commands, the same in every game (JOIN, LEAVE, START, PAUSE, RESUME, ABORT,
UNDO, AS, KICK, REPLACE, DEADLINE, ABSENT, ADJUST, BOT; docs/gm.md): one handler each, found by the
command's type in ``HANDLERS``. Any other command is the game's, given for the poster's seat
(or as the GM). A handler changes the working copy or raises ``Refusal``."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Move, User
from app.games import commands as platform
from app.games.base import Rng
from app.gm import collections, replay
from app.gm.legal import is_gm
from app.gm.reply import seed_hash
from app.gm.submission import Refusal
from app.gm.working import Seat, Submission, Working, apply_game_command

DEADLINE_HOURS = (1, 672)  # the grammar (common.lark, _hours) allows the same
ABSENT_HOURS = (1, 168)
MAX_ABSENCES = 3

Handler = Callable[[Session, Submission, Working, Any], None]


def apply_command(session: Session, sub: Submission, work: Working, command: Any) -> None:
    """One command of the submission applied to ``work`` (raises ``Refusal`` or the game's
    ``RuleError``)."""
    if is_platform(command) and sub.sealed:
        raise Refusal("この命令は封印できません。スレッドに書き込んでください。")
    handler = HANDLERS.get(type(command), _game_command)
    handler(session, sub, work, command)


def is_platform(command: Any) -> bool:
    return type(command).__module__ == platform.__name__


def _same_name(one: str, other: str) -> bool:
    return (
        unicodedata.normalize("NFKC", one).casefold()
        == unicodedata.normalize("NFKC", other).casefold()
    )


def _seat_by_name(work: Working, name: str) -> int:
    for index, seat in enumerate(work.seats):
        if _same_name(seat.name, name):
            return index
    names = "、".join(s.name for s in work.seats) or "（なし）"
    raise Refusal(f"「{name}」という名前のプレイヤーはいません。プレイヤー: {names}")


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
    if sub.by.bot_seat is not None:  # a seated bot playing its turn (app/gm/bots.py)
        return sub.by.bot_seat
    if sub.by.user is None:
        return None
    return next((i for i, s in enumerate(work.seats) if s.user_id == sub.by.user_id), None)


# --- the handlers ----------------------------------------------------------------------------


def _join(session: Session, sub: Submission, work: Working, command: platform.Join) -> None:
    user = sub.by.user
    if work.status != "recruiting":
        raise Refusal("参加者の募集は終わっています（JOIN は開始前だけです）。")
    if user is None:
        raise Refusal("JOIN できるのは利用者だけです。")
    if _own_seat(work, sub) is not None:
        raise Refusal("あなたはもう参加しています。", ["LEAVE"])
    if len(work.seats) >= sub.impl.max_players:
        raise Refusal(f"満員です（{sub.impl.max_players}人まで）。")
    if any(_same_name(s.name, user.name) for s in work.seats):
        # A bot's name (ボット1) a user also took: two seats of one name could not be told
        # apart by KICK, REPLACE or AS.
        raise Refusal(f"「{user.name}」という名前の席がもうあります（GM に相談してください）。")
    work.seats.append(Seat(user.id, user.name))
    work.public.append(f"{user.name} さんが参加しました（{len(work.seats)}人目）。")


def _leave(session: Session, sub: Submission, work: Working, command: platform.Leave) -> None:
    _require_status(work, "LEAVE", "recruiting")
    index = _own_seat(work, sub)
    if index is None:
        raise Refusal("あなたはこのゲームに参加していません。", ["JOIN"])
    del work.seats[index]
    work.public.append(f"{sub.by.name} さんが抜けました（残り{len(work.seats)}人）。")


def _start(session: Session, sub: Submission, work: Working, command: platform.Start) -> None:
    game, impl = sub.game, sub.impl
    _require_gm(sub, "START")
    _require_status(work, "START", "recruiting")
    if len(work.seats) < impl.min_players:
        raise Refusal(
            f"{impl.title_ja} は{impl.min_players}人から遊べます（いま{len(work.seats)}人）。"
        )
    names = [s.name for s in work.seats]
    options = dict(game.options)
    if impl.uses_card_registry:  # decks come from the collections held now (docs/cards.md)
        seats = [(s.user_id, s.name) for s in work.seats]
        pool = options.get("pool") or {}
        options["collections"] = collections.game_collections(session, seats, pool)
        game.options = options
    work.state = impl.setup(names, options, Rng(game.seed, 0))
    work.status = "active"
    work.started = True
    order = "、".join(f"{i + 1}. {name}" for i, name in enumerate(names))
    work.public.append(f"ゲーム開始！ 席順: {order}")
    work.public.append(
        f"乱数の種の SHA-256: {seed_hash(game.seed)}（種はゲームの終わりに公開します）"
    )
    work.log.append(("START", order))


def _pause_or_resume(
    session: Session, sub: Submission, work: Working, command: platform.Pause | platform.Resume
) -> None:
    pausing = isinstance(command, platform.Pause)
    verb = "PAUSE" if pausing else "RESUME"
    _require_gm(sub, verb)
    _require_status(work, verb, "active")
    if work.paused == pausing:
        raise Refusal("もう中断しています。" if pausing else "中断していません。")
    work.paused = pausing
    work.deadline_reset = not pausing
    work.public.append("GM がゲームを中断しました。" if pausing else "GM がゲームを再開しました。")
    work.log.append((verb, ""))


def _abort(session: Session, sub: Submission, work: Working, command: platform.Abort) -> None:
    _require_gm(sub, "ABORT")
    _require_status(work, "ABORT", "recruiting", "active")
    work.status = "aborted"
    work.public.append("GM がゲームを中止しました。")
    work.log.append(("ABORT", ""))


def _undo(session: Session, sub: Submission, work: Working, command: platform.Undo) -> None:
    _require_gm(sub, "UNDO")
    if work.status == "finished":
        # The closing post published the seed, the epilogue and the sealed lines: reopened,
        # the game's every hand and next draw could be rebuilt from them and the move log.
        raise Refusal(
            "終了したゲームは取り消せません（乱数の種と伏せていた情報はもう公開されています）。"
        )
    _require_status(work, "UNDO", "active")
    undo_last_post(session, sub, work)


def _as(session: Session, sub: Submission, work: Working, command: platform.As) -> None:
    _require_gm(sub, "AS")
    seat = _seat_by_name(work, command.name)
    if is_platform(command.command):
        raise Refusal("AS で代わりに行えるのはゲームの命令だけです。")
    apply_game_command(sub, work, seat, command.command, proxy="（GM代理）")
    work.log.append(("AS", command.canonical()))


def _kick(session: Session, sub: Submission, work: Working, command: platform.Kick) -> None:
    _require_gm(sub, "KICK")
    _require_status(work, "KICK", "recruiting", "active")
    seat = _seat_by_name(work, command.name)
    name = work.seats[seat].name
    bot = work.seats[seat].bot
    if work.status == "recruiting":
        del work.seats[seat]
        work.public.append(
            f"GM が {name} を席から外しました。"
            if bot
            else f"GM が {name} さんを参加者から外しました。"
        )
    else:
        if work.seats[seat].kicked:
            raise Refusal(f"{name} さんはもう追放されています。")
        work.seats[seat].kicked = True
        if bot:
            # The seat stays the bot's (so the game still has had one: docs/bots.md), played
            # from now on as any kicked seat until REPLACE gives it to a person.
            work.public.append(
                f"GM が {name} を外しました。交代する人が来るまで、この席はボットが既定の手で"
                "進めます。"
            )
            work.log.append(("KICK", name))
            return
        work.public.append(
            f"GM が {name} さんを追放しました。交代する人が来るか GM が席に戻すまで、"
            "この席はボットが既定の手で進めます。"
        )
    work.log.append(("KICK", name))


def _replace(session: Session, sub: Submission, work: Working, command: platform.Replace) -> None:
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


def _deadline(session: Session, sub: Submission, work: Working, command: platform.Deadline) -> None:
    _require_gm(sub, "DEADLINE")
    _require_status(work, "DEADLINE", "recruiting", "active")
    low, high = DEADLINE_HOURS
    if not low <= command.hours <= high:
        raise Refusal(f"期限は{low}〜{high}時間で指定してください（{command.hours}時間は不可）。")
    work.deadline_hours = command.hours
    work.deadline_reset = True
    work.public.append(
        f"手番の期限を{command.hours}時間にしました。期限を過ぎると、まだ動いていない"
        "プレイヤーはボットが既定の手で進めます。"
    )
    work.log.append(("DEADLINE", f"{command.hours}時間"))


def _absent(session: Session, sub: Submission, work: Working, command: platform.Absent) -> None:
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


def _adjust(session: Session, sub: Submission, work: Working, command: platform.Adjust) -> None:
    _require_gm(sub, "ADJUST")
    _require_status(work, "ADJUST", "active", "finished")
    seat = _seat_by_name(work, command.name)
    if not -1000 <= command.delta <= 1000:
        raise Refusal("調整できる点数は −1000〜+1000 です。")
    work.adjustments.append((seat, command.delta, command.reason))
    name = work.seats[seat].name
    work.public.append(f"GM 調整: {name} {command.delta:+d}点（{command.reason}）")
    work.log.append(("ADJUST", f"{name} {command.delta:+d} {command.reason}"))


def _bot(session: Session, sub: Submission, work: Working, command: platform.Bot) -> None:
    """BOT [N]: N bots take the next seats, named ボット1, ボット2 … (the lowest numbers no
    seat of the game is named)."""
    _require_gm(sub, "BOT")
    if work.status != "recruiting":
        raise Refusal("ボットを席に着けられるのは募集中だけです（BOT は開始前だけです）。")
    free = sub.impl.max_players - len(work.seats)
    if free <= 0:
        raise Refusal(f"満員です（{sub.impl.max_players}人まで）。ボットの席はありません。")
    if not 1 <= command.count <= free:
        raise Refusal(
            f"ボットは1〜{free}体で指定してください（空いている席は{free}つ、"
            f"{sub.impl.title_ja} は{sub.impl.max_players}人までです）。",
            ["BOT"] + ([f"BOT {free}"] if free > 1 else []),
        )
    names = bot_names(work, command.count)
    for name in names:
        work.seats.append(Seat(None, name, bot=True))
    work.public.append(
        f"GM がボットを席に着けました: {'、'.join(names)}（{len(work.seats)}人目まで）。"
    )
    work.log.append(("BOT", "、".join(names)))


BOT_NAME_PREFIX = "ボット"


def bot_names(work: Working, count: int) -> list[str]:
    """``count`` new bot names, ボット1 upwards, none a name a seat has already."""
    names: list[str] = []
    number = 0
    while len(names) < count:
        number += 1
        name = f"{BOT_NAME_PREFIX}{number}"
        if not any(_same_name(s.name, name) for s in work.seats) and name not in names:
            names.append(name)
    return names


def _game_command(session: Session, sub: Submission, work: Working, command: Any) -> None:
    """The game's own command, for the poster's seat, or as the GM when they have none."""
    mine = _own_seat(work, sub)
    if mine is None and is_gm(sub.game, sub.by.user):
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


def _board(session: Session, sub: Submission, work: Working, command: platform.Board) -> None:
    """BOARD / 盤面: the reply shows the board and its picture; nothing changes."""
    if work.state is None:
        raise Refusal("まだ始まっていません。盤面は GM が START してから見られます。")
    work.board_changed = True
    work.board_asked = True


HANDLERS: dict[type, Handler] = {
    platform.Join: _join,
    platform.Leave: _leave,
    platform.Start: _start,
    platform.Pause: _pause_or_resume,
    platform.Resume: _pause_or_resume,
    platform.Abort: _abort,
    platform.Undo: _undo,
    platform.As: _as,
    platform.Kick: _kick,
    platform.Replace: _replace,
    platform.Deadline: _deadline,
    platform.Absent: _absent,
    platform.Adjust: _adjust,
    platform.Bot: _bot,
    platform.Board: _board,
}


# --- helpers -----------------------------------------------------------------------------------


def _user_by_name(session: Session, name: str) -> User:
    wanted = unicodedata.normalize("NFKC", name).strip()
    user = session.scalar(select(User).where(User.name == wanted))
    if user is None:
        raise Refusal(f"「{name}」という利用者はいません（交代する人は先に登録が必要です）。")
    return user


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
    undone = _last_submission(work, takeable)
    last = undone[0]
    undone_ids = {m.id for m in undone}
    kept = [m for m in moves if m.id not in undone_ids]
    players = sub.game.players_at_start or [s.name for s in work.seats]
    assert work.state is not None
    before = work.state
    work.state = replay.fold(sub.impl, sub.game, players, replay.log_of(kept))
    work.undone_moves.extend(m.id for m in undone)
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


def _last_submission(work: Working, takeable: list[Move]) -> list[Move]:
    """The moves of the last submission that has applied moves — with the seated bots' turns
    that followed it (docs/bots.md): they answered it, and taken back alone they would only be
    played again at once, so an UNDO after a bot's turn takes back the post that handed it the
    turn too."""
    groups: list[list[Move]] = []
    for move in takeable:
        key = (move.post_id, move.sealed_id)
        if groups and (groups[-1][0].post_id, groups[-1][0].sealed_id) == key:
            groups[-1].append(move)
        else:
            groups.append([move])
    taken = [groups.pop()]
    while groups and all(_by_a_seated_bot(work, m) for m in taken[-1]):
        taken.append(groups.pop())
    return [m for group in reversed(taken) for m in group]


def _by_a_seated_bot(work: Working, move: Move) -> bool:
    seat = move.actor_seat
    return seat is not None and 0 <= seat < len(work.seats) and work.seats[seat].bot


UNDO_BOT = "（ボット: UNDO の後始末）"


def made_after_undo(move: Move) -> bool:
    """A move the bot made as the GM: only the game's ``undo_lines`` after an UNDO are (the
    bot plays seats at deadlines and for kicked players, never the GM otherwise)."""
    return move.by_bot and move.actor_seat is None
