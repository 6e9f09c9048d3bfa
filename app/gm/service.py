"""One post, one transaction: store the post, parse its command lines, lock the game, apply the
commands all-or-nothing, log the moves, save the state, and store the bot's reply."""

from __future__ import annotations

import copy
import difflib
import secrets
import unicodedata
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import Invalid, NotFound
from app.forum import service as forum
from app.games import all_games, find_game
from app.games import commands as platform
from app.games.base import CommandSyntaxError, Rng, RuleError, State, normalise
from app.games.base import Game as GameImpl
from app.gm import replay
from app.gm.text import render_board_summary
from app.models import Game, GamePlayer, Move, Post, User, utcnow

BOT_NAME = "★GM"
STATUSES = ("recruiting", "active", "finished", "aborted")
MAX_COMMAND_LINES = 50
NOT_YET = (platform.Kick, platform.Replace, platform.Deadline, platform.Adjust, platform.Absent)


class Refusal(Exception):
    """A platform command that may not be given now (the game's RuleError for the platform)."""

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


@dataclass
class NewMove:
    seq: int
    seat: int | None
    actor_name: str
    line: str
    parsed: dict[str, Any]


@dataclass
class Working:
    """The game as the commands of one post change it; written back only if all succeed."""

    status: str
    paused: bool
    seats: list[Seat]
    state: State | None
    next_seq: int
    started: bool = False
    moves: list[NewMove] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    undo_post_ids: list[int] = field(default_factory=list)
    board_changed: bool = False


# --- set-up --------------------------------------------------------------------------------


def ensure_game_boards(session: Session) -> None:
    """The seeded boards plus one board per registered game kind."""
    forum.ensure_boards(
        session,
        [(g.kind, g.title_ja, f"{g.title_ja}（{g.title_en}）の卓。", g.kind) for g in all_games()],
    )


def game_impl(kind: str) -> GameImpl:
    impl = find_game(kind)
    if impl is None:
        raise NotFound(f"ゲームの種類「{kind}」はありません。")
    return impl


def create_game(
    session: Session, gm: User, kind: str, title: str, options: dict[str, Any], secret: str
) -> Game:
    impl = game_impl(kind)
    title = forum.clean_title(title)
    try:
        checked = impl.Options.model_validate(options).model_dump(mode="json")
    except ValueError as exc:
        raise Invalid(f"オプションが正しくありません: {exc}", field="options") from exc
    board = forum.get_board(session, impl.kind)
    body = (
        f"{impl.title_ja}「{title}」の参加者を募集します（{impl.min_players}〜"
        f"{impl.max_players}人、GM: {gm.name}）。\n"
        "参加する人は JOIN（参加）と書き込んでください。GM が START（開始）で始めます。"
    )
    thread, _post = forum.create_thread(session, board, gm, title, body, secret)
    game = Game(
        kind=impl.kind,
        title=title,
        status="recruiting",
        thread_id=thread.id,
        gm_id=gm.id,
        seed=secrets.token_hex(32),
        options=checked,
        version=0,
    )
    session.add(game)
    session.flush()
    return game


def get_game(session: Session, game_id: int) -> Game:
    game = session.get(Game, game_id) if 0 < game_id < 2**31 else None
    if game is None:
        raise NotFound(f"ゲーム {game_id} はありません。")
    return game


def game_for_thread(session: Session, thread_id: int) -> Game | None:
    return session.scalar(select(Game).where(Game.thread_id == thread_id))


def seat_of(game: Game, user: User | None) -> int | None:
    if user is None:
        return None
    for player in game.players:
        if player.user_id == user.id:
            return player.seat
    return None


def is_gm(game: Game, user: User | None) -> bool:
    return user is not None and game.gm_id == user.id


# --- posting -------------------------------------------------------------------------------


def submit_post(
    session: Session, thread_id: int, user: User, body: str, secret: str
) -> tuple[Post, list[Post]]:
    """Store the post; if its thread hosts a game and it has command lines, answer as the GM."""
    thread = forum.get_thread(session, thread_id)
    game = game_for_thread(session, thread.id)
    impl = find_game(game.kind) if game is not None else None
    command_lines: list[tuple[int, str]] = []
    if game is not None and impl is not None:
        cleaned = forum.clean_body(body)
        command_lines = [
            (number, line)
            for number, line in enumerate(cleaned.split("\n"), start=1)
            if classify_line(impl, line) != "talk"
        ]
    post = forum.add_post(
        session,
        thread.id,
        author=user,
        author_name=user.name,
        body=body,
        kind="command" if command_lines else "talk",
        secret=secret,
    )
    if game is None or impl is None or not command_lines:
        return post, []
    reply_text, error = run_commands(session, game, impl, user, post, command_lines)
    reply = forum.add_post(
        session,
        thread.id,
        author=None,
        author_name=BOT_NAME,
        body=reply_text,
        kind="gm",
        secret=secret,
    )
    reply.reply_to = post.number
    reply.reply_ok = error is None
    reply.reply_error = error.to_json() if error is not None else None
    session.flush()
    return post, [reply]


def misspelt_verb(impl: GameImpl, line: str) -> str | None:
    """For an upper-case first word that is no verb but close to one (SCUOT): that verb."""
    text = normalise(line)
    first = text.split(" ", 1)[0] if text else ""
    if len(first) < 3 or not (first.isascii() and first.isalpha() and first.isupper()):
        return None
    if impl.is_command_line(text):
        return None
    english = [verb for verb in impl.verbs() if verb.isascii()]
    close = difflib.get_close_matches(first, english, n=1, cutoff=0.75)
    return close[0] if close else None


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


def _lock_game(session: Session, game_id: int) -> Game:
    game = session.scalar(
        select(Game)
        .where(Game.id == game_id)
        .with_for_update(of=Game)
        .execution_options(populate_existing=True)
    )
    assert game is not None
    return game


def run_commands(
    session: Session,
    game: Game,
    impl: GameImpl,
    user: User,
    post: Post,
    command_lines: list[tuple[int, str]],
) -> tuple[str, LineError | None]:
    """Apply the post's commands in order, all or nothing. Returns the reply text and error."""
    game = _lock_game(session, game.id)
    if len(command_lines) > MAX_COMMAND_LINES:
        number, line = command_lines[MAX_COMMAND_LINES]
        error = LineError(
            number, None, f"1つの書き込みの命令は{MAX_COMMAND_LINES}行までです。", line
        )
        return failure_text(post, error, []), error
    parsed: list[tuple[int, str, Any]] = []
    for number, line in command_lines:
        guess = misspelt_verb(impl, line)
        if guess is not None:
            word = normalise(line).split(" ", 1)[0]
            error = LineError(
                number,
                1,
                f"「{word}」という命令はありません。もしかして {guess} ですか？",
                normalise(line),
            )
            return failure_text(post, error, legal_lines(game, user)), error
        try:
            parsed.append((number, line, impl.parse(line)))
        except CommandSyntaxError as exc:
            error = LineError(number, exc.column, exc.message, exc.line)
            return failure_text(post, error, []), error
    work = Working(
        status=game.status,
        paused=game.paused,
        seats=[Seat(p.user_id, p.name) for p in sorted(game.players, key=lambda p: p.seat)],
        state=copy.deepcopy(game.state) if game.state is not None else None,
        next_seq=_next_seq(session, game),
    )
    turn_before = impl.turn_key(work.state) if work.state is not None else None
    for number, line, command in parsed:
        try:
            apply_command(session, game, impl, work, user, command, post)
        except (RuleError, Refusal) as exc:
            error = LineError(number, None, exc.message, normalise(line))
            return failure_text(post, error, exc.legal), error
    save(session, game, impl, work, post)
    turn_after = impl.turn_key(work.state) if work.state is not None else None
    show_board = work.started or work.board_changed or turn_before != turn_after
    return success_text(game, impl, work, post, show_board), None


def _next_seq(session: Session, game: Game) -> int:
    last = session.scalar(
        select(Move.seq).where(Move.game_id == game.id).order_by(Move.seq.desc()).limit(1)
    )
    return (last or 0) + 1


def _seat_by_name(work: Working, name: str) -> int:
    wanted = unicodedata.normalize("NFKC", name).casefold()
    for index, seat in enumerate(work.seats):
        if unicodedata.normalize("NFKC", seat.name).casefold() == wanted:
            return index
    names = "、".join(s.name for s in work.seats) or "（なし）"
    raise Refusal(f"「{name}」という名前のプレイヤーはいません。プレイヤー: {names}")


def _require_gm(game: Game, user: User, verb: str) -> None:
    if not is_gm(game, user):
        raise Refusal(f"{verb} は GM だけが使える命令です。")


def apply_command(
    session: Session,
    game: Game,
    impl: GameImpl,
    work: Working,
    user: User,
    command: Any,
    post: Post,
) -> None:
    if isinstance(command, platform.Join):
        if work.status != "recruiting":
            raise Refusal("参加者の募集は終わっています（JOIN は開始前だけです）。")
        if any(seat.user_id == user.id for seat in work.seats):
            raise Refusal("あなたはもう参加しています。", ["LEAVE"])
        if len(work.seats) >= impl.max_players:
            raise Refusal(f"満員です（{impl.max_players}人まで）。")
        work.seats.append(Seat(user.id, user.name))
        work.lines.append(f"{user.name} さんが参加しました（{len(work.seats)}人目）。")
    elif isinstance(command, platform.Leave):
        if work.status != "recruiting":
            raise Refusal("開始後は LEAVE できません。GM に相談してください。")
        index = next((i for i, s in enumerate(work.seats) if s.user_id == user.id), None)
        if index is None:
            raise Refusal("あなたはこのゲームに参加していません。", ["JOIN"])
        del work.seats[index]
        work.lines.append(f"{user.name} さんが抜けました（残り{len(work.seats)}人）。")
    elif isinstance(command, platform.Start):
        _require_gm(game, user, "START")
        if work.status != "recruiting":
            raise Refusal("このゲームはもう始まっています。")
        if len(work.seats) < impl.min_players:
            raise Refusal(
                f"{impl.title_ja} は{impl.min_players}人から遊べます（いま{len(work.seats)}人）。"
            )
        work.state = impl.setup([s.name for s in work.seats], dict(game.options), Rng(game.seed, 0))
        work.status = "active"
        work.started = True
        order = "、".join(f"{i + 1}. {s.name}" for i, s in enumerate(work.seats))
        work.lines.append(f"ゲーム開始！ 席順: {order}")
    elif isinstance(command, platform.Pause | platform.Resume):
        verb = "PAUSE" if isinstance(command, platform.Pause) else "RESUME"
        _require_gm(game, user, verb)
        if work.status != "active":
            raise Refusal(f"{verb} は進行中のゲームにだけ使えます。")
        pausing = isinstance(command, platform.Pause)
        if work.paused == pausing:
            raise Refusal("もう中断しています。" if pausing else "中断していません。")
        work.paused = pausing
        work.lines.append(
            "GM がゲームを中断しました。" if pausing else "GM がゲームを再開しました。"
        )
    elif isinstance(command, platform.Abort):
        _require_gm(game, user, "ABORT")
        if work.status in ("finished", "aborted"):
            raise Refusal("このゲームはもう終わっています。")
        work.status = "aborted"
        work.lines.append("GM がゲームを中止しました。")
    elif isinstance(command, platform.Undo):
        _require_gm(game, user, "UNDO")
        undo_last_post(session, game, impl, work)
    elif isinstance(command, platform.As):
        _require_gm(game, user, "AS")
        seat = _seat_by_name(work, command.name)
        if _is_platform(command.command):
            raise Refusal("AS で代わりに行えるのはゲームの命令だけです。")
        apply_game_command(game, impl, work, seat, command.command, by_gm=True)
    elif isinstance(command, NOT_YET):
        raise Refusal(f"{command.canonical().split()[0]} はこの掲示板ではまだ使えません。")
    else:
        own = next((i for i, s in enumerate(work.seats) if s.user_id == user.id), None)
        if own is None:
            raise Refusal(
                "あなたはこのゲームのプレイヤーではありません。"
                + ("参加するには JOIN と書いてください。" if work.status == "recruiting" else ""),
                ["JOIN"] if work.status == "recruiting" else [],
            )
        apply_game_command(game, impl, work, own, command, by_gm=False)


def _is_platform(command: Any) -> bool:
    return type(command).__module__ == platform.__name__


def apply_game_command(
    game: Game, impl: GameImpl, work: Working, seat: int, command: Any, *, by_gm: bool
) -> None:
    if work.status == "recruiting":
        raise Refusal("まだ始まっていません。GM が START するまでお待ちください。")
    if work.status in ("finished", "aborted"):
        raise Refusal("このゲームは終わっています。")
    if work.paused:
        raise Refusal("GM がゲームを中断しています。RESUME までお待ちください。")
    assert work.state is not None
    state, events = impl.apply(work.state, seat, command, Rng(game.seed, work.next_seq))
    name = work.seats[seat].name
    line = command.canonical()
    work.moves.append(NewMove(work.next_seq, seat, name, line, _parsed_json(command)))
    work.next_seq += 1
    work.state = state
    texts = " ".join(str(e["text"]) for e in events if e.get("text"))
    proxy = "（GM代理）" if by_gm else ""
    work.lines.append(f"✔ {line}{proxy} → {texts}" if texts else f"✔ {name}{proxy}: {line}")
    if impl.is_over(state):
        work.status = "finished"
        work.lines.append("ゲーム終了！")


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


def undo_last_post(session: Session, game: Game, impl: GameImpl, work: Working) -> None:
    """Take back the moves of the last post that has applied moves; rebuild from the log."""
    if work.moves:
        raise Refusal("UNDO は同じ書き込みのゲームの命令と一緒には使えません。")
    moves = replay.applied_moves(session, game)
    moves = [m for m in moves if m.post_id not in work.undo_post_ids]
    if not moves:
        raise Refusal("取り消せる手がありません。")
    last_post = moves[-1].post_id
    undone = [m for m in moves if m.post_id == last_post]
    kept = [m for m in moves if m.post_id != last_post]
    players = [s.name for s in work.seats]
    work.state = replay.fold(impl, game, players, ((m.seq, m.actor_seat, m.command) for m in kept))
    work.undo_post_ids.append(last_post if last_post is not None else -1)
    if work.status == "finished":
        work.status = "active"
    work.board_changed = True
    anchor = f">>{undone[0].post_number} の" if undone[0].post_number else ""
    work.lines.append(f"GM が{anchor}{len(undone)}手を取り消しました。")


def save(session: Session, game: Game, impl: GameImpl, work: Working, post: Post) -> None:
    if work.undo_post_ids:
        for applied in replay.applied_moves(session, game):
            if applied.post_id in work.undo_post_ids:
                applied.undone = True
    # Seats: rewrite only when they changed (JOIN/LEAVE), keeping join order.
    current = [(p.user_id, p.name) for p in sorted(game.players, key=lambda p: p.seat)]
    wanted = [(s.user_id, s.name) for s in work.seats]
    if current != wanted:
        game.players.clear()
        session.flush()
        for index, seat in enumerate(work.seats):
            game.players.append(
                GamePlayer(game_id=game.id, seat=index, user_id=seat.user_id, name=seat.name)
            )
    for move in work.moves:
        session.add(
            Move(
                game_id=game.id,
                seq=move.seq,
                post_id=post.id,
                post_number=post.number,
                actor_seat=move.seat,
                actor_name=move.actor_name,
                command=move.line,
                parsed=move.parsed,
            )
        )
    if work.started:
        game.started_at = utcnow()
    if work.status in ("finished", "aborted") and game.finished_at is None:
        game.finished_at = utcnow()
    if work.status == "active":
        game.finished_at = None
    game.status = work.status
    game.paused = work.paused
    game.state = work.state
    result = (
        impl.result(work.state) if work.state is not None and work.status == "finished" else None
    )
    game.result = result.to_json() if result is not None else None
    game.version += 1
    session.flush()


# --- reply text ----------------------------------------------------------------------------


def _display_width(text: str) -> str:
    """Spaces as wide as ``text``: ideographic spaces under wide characters."""
    return "".join("　" if unicodedata.east_asian_width(ch) in "WF" else " " for ch in text)


def failure_text(post: Post, error: LineError, legal: list[str]) -> str:
    lines = [
        f">>{post.number}",
        f"{error.line}行目の命令は受け付けられませんでした（ゲームは変わっていません）。",
    ]
    lines.append(f"　{error.source}")
    if error.column is not None:
        lines.append("　" + _display_width(error.source[: error.column - 1]) + "^")
    lines.append(error.message)
    if legal:
        lines.append("今できる命令: " + " / ".join(legal[:20]) + (" …" if len(legal) > 20 else ""))
    return "\n".join(lines)


def success_text(game: Game, impl: GameImpl, work: Working, post: Post, show_board: bool) -> str:
    lines = [f">>{post.number}", *work.lines]
    if work.state is not None and work.status == "active" and not work.paused and not show_board:
        waiting = [work.seats[i].name for i in impl.waiting_for(work.state)]
        if waiting:
            lines.append("手番待ち: " + "、".join(waiting))
    if show_board and work.state is not None:
        lines.append("")
        lines.append(render_board_summary(impl, impl.view(work.state, None)))
    if work.status == "finished" and game.result:
        lines.append("")
        lines.append("【最終結果】")
        for entry in game.result["ranking"]:
            score = "未完成" if entry["score"] is None else f"{entry['score']}点"
            lines.append(f"{entry['rank']}位 {entry['name']} {score}")
    return "\n".join(lines).rstrip()


# --- reading -------------------------------------------------------------------------------


def public_view(game: Game) -> dict[str, Any]:
    impl = game_impl(game.kind)
    if game.state is None:
        return {"players": [{"seat": p.seat + 1, "name": p.name} for p in game.players]}
    if game.status == "finished":
        return impl.view(game.state, "gm")
    return impl.view(game.state, None)


def private_view(game: Game, user: User | None) -> dict[str, Any]:
    impl = game_impl(game.kind)
    if game.state is None:
        return public_view(game)
    if is_gm(game, user):
        return impl.view(game.state, "gm")
    seat = seat_of(game, user)
    return impl.view(game.state, seat)


def legal_lines(game: Game, user: User | None) -> list[str]:
    """Command lines this user may post now."""
    if user is None:
        return []
    impl = game_impl(game.kind)
    seat = seat_of(game, user)
    lines: list[str] = []
    if game.status == "recruiting":
        if seat is None and len(game.players) < impl.max_players:
            lines.append("JOIN")
        if seat is not None:
            lines.append("LEAVE")
        if is_gm(game, user) and len(game.players) >= impl.min_players:
            lines.append("START")
    elif game.status == "active" and game.state is not None:
        if seat is not None and not game.paused:
            lines.extend(impl.legal(game.state, seat))
        if is_gm(game, user):
            lines.extend(["RESUME"] if game.paused else ["PAUSE"])
            lines.extend(["UNDO", "ABORT"])
    return lines


def game_ids_for_threads(session: Session, thread_ids: list[int]) -> dict[int, int]:
    if not thread_ids:
        return {}
    rows = session.execute(select(Game.thread_id, Game.id).where(Game.thread_id.in_(thread_ids)))
    return {thread_id: game_id for thread_id, game_id in rows}


def list_games(
    session: Session,
    *,
    status: str | None,
    kind: str | None,
    player: str | None,
    q: str | None,
    page: int,
    per_page: int,
) -> tuple[list[Game], forum.Page]:
    from sqlalchemy import func

    query = select(Game)
    if status:
        if status not in STATUSES:
            raise Invalid(f"status は {', '.join(STATUSES)} のどれかです。", field="status")
        query = query.where(Game.status == status)
    if kind:
        impl = game_impl(kind)
        query = query.where(Game.kind == impl.kind)
    if player:
        name = unicodedata.normalize("NFKC", player).strip()
        query = query.where(Game.id.in_(select(GamePlayer.game_id).where(GamePlayer.name == name)))
    if q:
        pattern = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(Game.title.like(pattern, escape="\\"))
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    current = forum.page_of(total, per_page, page)
    games = session.scalars(
        query.order_by(Game.created_at.desc(), Game.id.desc())
        .offset((current.number - 1) * per_page)
        .limit(per_page)
    )
    return list(games), current


def moves_of(session: Session, game: Game) -> list[Move]:
    return list(session.scalars(select(Move).where(Move.game_id == game.id).order_by(Move.seq)))
