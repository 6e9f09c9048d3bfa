"""One post, one transaction: store the post, parse its command lines, lock the game, apply the
commands all-or-nothing, log the moves, save the state, and store the bot's reply."""

from __future__ import annotations

import secrets
import unicodedata
from datetime import datetime
from typing import Any

from sqlalchemy import Table, func, insert, select
from sqlalchemy.orm import Session

from app.errors import Forbidden, Invalid, NotFound
from app.forum import service as forum
from app.games import all_games, find_game
from app.games.base import Game as GameImpl
from app.gm import bots, cards, legal, play, store
from app.gm import options as game_options
from app.gm import reply as answers
from app.gm.legal import is_gm, reads_as_gm
from app.gm.lines import command_lines
from app.gm.platform import BOT_NAME_PREFIX as BOT_SEAT_PREFIX
from app.gm.reply import BOT_NAME
from app.gm.working import Submission, Submitter

__all__ = ["BOT_NAME", "is_gm", "reads_as_gm"]
from app.db.engine import attach_written
from app.db.models import Game, GamePlayer, Move, Post, SealedCommand, User, utcnow

STATUSES = ("recruiting", "active", "finished", "aborted")


# --- set-up --------------------------------------------------------------------------------


def ensure_game_boards(session: Session, secret: str = "") -> None:
    """The seeded boards plus one board per registered game kind, and the card registry's
    board, thread and starter pool (app/gm/cards.py). ``secret`` derives the per-day ID of the
    registry thread's first post (the bot's); callers that have no key may leave it out."""
    forum.ensure_boards(
        session,
        [
            *[
                (g.kind, g.title_ja, f"{g.title_ja}（{g.title_en}）の卓。", g.kind)
                for g in all_games()
            ],
            cards.REGISTRY_BOARD,
        ],
    )
    cards.ensure_registry(session, secret)


def game_impl(kind: str) -> GameImpl:
    impl = find_game(kind)
    if impl is None:
        raise NotFound(f"ゲームの種類「{kind}」はありません。")
    return impl


def create_game(
    session: Session,
    gm: User,
    kind: str,
    title: str,
    options: dict[str, Any],
    secret: str,
    *,
    seed: str | None = None,
    bots: int = 0,
    rated_with_bots: bool = False,
) -> Game:
    """A recruiting game and its thread on the kind's board; ``gm`` is its game master.

    ``options`` holds the game's own options and the platform's: ``mute_spectators`` (bool)
    and ``deadline_hours`` (int, the turn deadline); bad ones raise ``OptionsInvalid`` with a
    Japanese message for each (app/gm/options.py). ``bots``: seats given to bots at once
    (ボット1 …, as BOT; docs/bots.md); ``rated_with_bots``: the game is rated even with bots.
    """
    impl = game_impl(kind)
    if isinstance(bots, bool) or not 0 <= bots <= impl.max_players:
        raise Invalid(f"ボットの数は0〜{impl.max_players}で指定してください。", field="bots")
    title = forum.clean_title(title)
    # The registry's pool as it stands now, whatever the creator sent: the game plays with
    # these versions, and its record names them.
    injected = {"pool": cards.pool_options(session)} if impl.uses_card_registry else None
    chosen = game_options.check(impl, options, injected=injected)
    board = forum.get_board(session, impl.kind)
    seats = impl.players_text()
    body = (
        f"{impl.title_ja}「{title}」の参加者を募集します（{seats}、GM: {gm.name}）。\n"
        "参加する人は JOIN（参加）と書き込んでください。GM が START（開始）で始めます。"
    )
    body += "\n空いた席には GM が BOT（ボット）でボットを座らせることもできます。"
    names = [f"{BOT_SEAT_PREFIX}{number}" for number in range(1, bots + 1)]
    if names:
        body += f"\nボットが席に着いています: {'、'.join(names)}（{bots}人）。"
    thread, _post = forum.create_thread(session, board, gm, title, body, secret)
    game = Game(
        kind=impl.kind,
        title=title,
        status="recruiting",
        thread_id=thread.id,
        gm_id=gm.id,
        seed=seed or secrets.token_hex(32),
        options=chosen.game,
        version=0,
        mute_spectators=chosen.mute_spectators,
        deadline_hours=chosen.deadline_hours,
        rated_with_bots=bool(rated_with_bots),
    )
    game.players = [
        GamePlayer(seat=seat, user_id=None, name=name, bot=True, kicked=False, absences_used=0)
        for seat, name in enumerate(names)
    ]
    session.add(game)
    session.flush()
    return game


def get_game(session: Session, game_id: int, *, locked: bool = False) -> Game:
    """``locked``: the row locked until commit and read afresh, seats included
    (``store.lock_game``)."""
    game = None
    if 0 < game_id < 2**31:
        game = store.lock_game(session, game_id) if locked else session.get(Game, game_id)
    if game is None:
        raise NotFound(f"ゲーム {game_id} はありません。")
    return game


def game_for_thread(session: Session, thread_id: int) -> Game | None:
    return session.scalar(select(Game).where(Game.thread_id == thread_id))


def seat_of(game: Game, user: User | None) -> int | None:
    """The seat this user plays, or None. A seat the GM KICKed is nobody's until REPLACE
    gives it to someone, its own player included (as ``legal._actor_of``): its old player
    reads the game as an outsider — its view, its own picture, its sealed commands are no
    longer theirs."""
    if user is None:
        return None
    for player in game.players:
        if player.user_id == user.id:
            return None if player.kicked else player.seat
    return None


# --- posting -------------------------------------------------------------------------------


_bot_post = bots.gm_post  # the GM's posts (app/gm/bots.py), the seated bots' answers too


def submit_post(
    session: Session,
    thread_id: int,
    user: User,
    body: str,
    secret: str,
    now: datetime | None = None,
    *,
    preview: bool = False,
    name: str | None = None,
) -> tuple[Post, list[Post]]:
    """Store the post; if its thread hosts a game and it has command lines, answer as the GM.
    ``preview``: see ``preview`` (the caller rolls back). ``name`` is the 名前欄: it changes
    only the name the post shows (``forum.shown_author``); commands act for ``user``'s seat.

    Locks in the order every writer of a game uses (sealed commands, the deadline bot): the
    game row first, then the thread's numbers.
    """
    now = now or utcnow()
    if not 0 < thread_id < 2**31:
        raise NotFound(f"スレッド {thread_id} はありません。")
    shown = forum.shown_author(session, user, name)
    game = store.lock_game(session, thread_id=thread_id)
    impl = find_game(game.kind) if game is not None else None
    lines: list[tuple[int, str]] = []
    if game is not None and impl is not None:
        lines = command_lines(impl, forum.clean_body(body))
        if game.mute_spectators and game.status == "active" and not _is_participant(game, user):
            raise Forbidden("このゲームの進行中、観戦者はスレッドに書き込めません（GM の設定）。")
    elif game is None:
        # The card registry's thread is answered like a game's (app/gm/cards.py).
        lines = cards.registry_lines(session, thread_id, body)
    # A post with commands is always answered: its number and the reply's are taken together.
    post = forum.add_post(
        session,
        thread_id,
        author=user,
        author_name=shown,
        body=body,
        kind="command" if lines else "talk",
        secret=secret,
        now=now,
        take=2 if lines else 1,
    )
    first = post.number
    if game is None and lines:
        reply = cards.handle_registry_post(
            session, thread_id, post, user, lines, secret, now, number=first + 1
        )
        session.flush()
        return post, [reply]
    if game is None or impl is None or not lines:
        return post, []
    sub = Submission(game, impl, Submitter(user, user.name), lines, now, anchor=f">>{post.number}")
    outcome, work = play.run(session, sub, preview=preview)
    replies: list[Post] = []
    if work is None:
        reply = _bot_post(
            session, game, outcome.public_text, secret, now, post.number, outcome.error, first + 1
        )
        replies.append(reply)
    elif preview:
        text = preview_text(lines, outcome.stopped)
        reply = _bot_post(session, game, text, secret, now, post.number, number=first + 1)
        replies.append(reply)
    else:
        # The answer once the game holds its new state, which it tells.
        store.save(session, sub, work, post=post, sealed_id=None)
        text = answers.success_text(session, sub, work)
        at = answers.board_at(session, sub, work)
        reply = _bot_post(
            session, game, text, secret, now, post.number, number=first + 1, board_at=at
        )
        replies.append(reply)
        if outcome.error is not None:
            # The lines up to one that drew, rolled or was judged are kept (play.run); the
            # refused line after them gets its own answer, ``ok`` false: it changed nothing.
            refused = _bot_post(
                session, game, outcome.public_text, secret, now, post.number, outcome.error
            )
            replies.append(refused)
        # The seated bots the game now waits for play their turns (docs/bots.md).
        bots.play_bots(session, game, impl, secret, now)
    session.flush()  # what went through the session (seats, adjustments, the log)
    return post, replies


def _is_participant(game: Game, user: User | None) -> bool:
    """The GM, or a player whose seat was not KICKed (``seat_of``)."""
    return is_gm(game, user) or seat_of(game, user) is not None


def submit_sealed(
    session: Session,
    game_id: int,
    user: User,
    body: str,
    secret: str,
    now: datetime | None = None,
) -> tuple[SealedCommand, Post | None]:
    """A private submission: stored, seen by its author and the GM; the game reveals it."""
    now = now or utcnow()
    # Locked and read once, seats included (``lock_game``): reading it first through the ORM
    # and then again locked cost more than the rest of a sealed command (docs/benchmarks.md,
    # round 10). Nothing is written before the checks below.
    game = get_game(session, game_id, locked=True)
    if not _is_participant(game, user):
        raise Forbidden("封印コマンドを送れるのは、このゲームのプレイヤーと GM だけです。")
    impl = game_impl(game.kind)
    cleaned = forum.clean_body(body)
    lines = command_lines(impl, cleaned)
    if not lines:
        raise Invalid(
            "命令の行がありません（封印コマンドには1行以上の命令が必要です）。", field="body"
        )
    sub = Submission(game, impl, Submitter(user, user.name), lines, now, sealed=True)
    outcome, work = play.run(session, sub)
    # Stored once its outcome is known: one INSERT, not an INSERT and then an UPDATE.
    values: dict[str, Any] = {
        "game_id": game.id,
        "user_id": user.id,
        "author_name": user.name,
        "body": cleaned,
        "created_at": now,
    }
    if work is None:
        error = outcome.error.to_json() if outcome.error is not None else None
        refused = _store_sealed(session, values, ok=False, reply=outcome.private_text, error=error)
        return refused, None
    accepted = "封印コマンドを受け付けました。"
    reply = "\n".join([accepted, *work.private]) if work.private else accepted
    error = None
    if outcome.error is not None:  # lines kept before a refused one (play.run)
        accepted = f"封印コマンドのうち{outcome.applied}行を受け付けました。"
        reply = "\n".join([accepted, *work.private, outcome.private_text])
        error = outcome.error.to_json()
    row = _store_sealed(session, values, ok=True, reply=reply, error=error)
    store.save(session, sub, work, post=None, sealed_id=row.id)
    header = f"{user.name} さんから封印コマンドが届きました。"
    public = answers.success_text(session, sub, work)
    at = answers.board_at(session, sub, work)
    post = _bot_post(session, game, f"{header}\n{public}".rstrip(), secret, now, board_at=at)
    bots.play_bots(session, game, impl, secret, now)
    return row, post


def _store_sealed(
    session: Session, values: dict[str, Any], *, ok: bool, reply: str, error: Any
) -> SealedCommand:
    """The row, written at once by one Core ``INSERT`` (its id is the moves' ``sealed_id``)
    and attached as if loaded, as a post is (``forum.write_post``)."""
    written = {**values, "ok": ok, "reply": reply, "error": error}
    row = SealedCommand(id=session.execute(_INSERT_SEALED, written).scalar_one(), **written)
    attach_written(session, row)
    return row


_SEALED: Table = SealedCommand.__table__  # type: ignore[assignment]
_INSERT_SEALED = insert(_SEALED).returning(_SEALED.c.id)


def preview(
    session: Session, thread_id: int, user: User, body: str, secret: str, name: str | None = None
) -> tuple[Post, list[Post]]:
    """The bot's answer to this body as far as it can be told before it is posted; the caller
    rolls the transaction back. The whole pipeline runs: a refused post gets the same error it
    would get posted (line, position, why, what is legal now), which reveals nothing. An
    accepted one is answered with its command lines, not with their outcome: that can hang on
    what the poster may not see (the next card of a closed deck, the secret rule's judgment of
    a card, the seed posted at the end), and a preview can be asked again and again for free.
    """
    return submit_post(session, thread_id, user, body, secret, preview=True, name=name)


def preview_text(lines: list[tuple[int, str]], stopped: tuple[int, str] | None = None) -> str:
    """An accepted preview's answer: which lines would be applied, in order — up to the first
    that draws, rolls or is judged (``stopped``: its number and what the preview says of it;
    what follows it would be read against its result, docs/security.md)."""
    shown = lines if stopped is None else [(n, line) for n, line in lines if n <= stopped[0]]
    listed = "\n".join(f"{number}行目: {line}" for number, line in shown)
    text = f"プレビュー: 次の命令はこのまま受け付けられます。\n{listed}\n"
    if stopped is not None:
        text += f"{stopped[1]}\n"
    return text + (
        "結果（引くカード、判定、ダイスの目、終局の公開など）は投稿したときに決まるため、"
        "プレビューには出ません。"
    )


def sealed_for(session: Session, game: Game, user: User | None) -> list[SealedCommand]:
    """Sealed commands this user may read: their own; all for a GM who does not play
    (``reads_as_gm``) and after the end."""
    query = select(SealedCommand).where(SealedCommand.game_id == game.id)
    over = game.status in ("finished", "aborted")
    if not (over or reads_as_gm(game, user)):
        if user is None:
            return []
        query = query.where(SealedCommand.user_id == user.id)
    return list(session.scalars(query.order_by(SealedCommand.id)))


# --- reading -------------------------------------------------------------------------------


def public_view(game: Game) -> dict[str, Any]:
    impl = game_impl(game.kind)
    if game.state is None:
        return {
            "players": [
                {"seat": p.seat + 1, "name": p.name, **({"bot": True} if p.bot else {})}
                for p in game.players
            ]
        }
    if game.status == "finished":
        return impl.view(game.state, "gm")
    return impl.view(game.state, None)


def private_view(game: Game, user: User | None) -> dict[str, Any]:
    impl = game_impl(game.kind)
    if game.state is None:
        return public_view(game)
    if reads_as_gm(game, user):
        return impl.view(game.state, "gm")
    seat = seat_of(game, user)
    return impl.view(game.state, seat)


def legal_lines(game: Game, user: User | None) -> list[str]:
    """Command lines this user may post in the thread now."""
    return legal.legal_for(game, game_impl(game.kind), user)


def legal_split(game: Game, user: User | None) -> tuple[list[str], list[str]]:
    """The lines this user may post in the thread now, and those to send sealed (one
    listing of the game's legal commands for both)."""
    return legal.legal_split_for(game, game_impl(game.kind), user)


def example_lines(game: Game, user: User | None) -> list[tuple[str, bool]]:
    """Free-text lines the user may write now, as patterns (with whether they go sealed)."""
    return legal.examples_for(game, game_impl(game.kind), user)


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
    since: datetime | None = None,
    until: datetime | None = None,
    sort: str = "newest",
) -> tuple[list[Game], forum.Page]:
    """Games filtered and sorted for the lists and the archive (docs/archive.md).

    ``status``: one status or several joined by commas (``finished,aborted``). ``since`` /
    ``until`` bound a game's date — when it ended, or when it was created if it has not ended —
    as ``since <= date < until``. ``sort``: newest / oldest (created), ended (most recently
    ended first), longest / shortest (applied moves), title.
    """
    if "\x00" in f"{player or ''}{q or ''}":
        raise Invalid("検索語に使えない文字（NUL）が含まれています。", field="q")
    query = select(Game)
    if status:
        wanted = [s.strip() for s in status.split(",") if s.strip()]
        if not wanted or any(s not in STATUSES for s in wanted):
            raise Invalid(f"status は {', '.join(STATUSES)} のどれかです。", field="status")
        query = query.where(Game.status.in_(wanted))
    if kind:
        impl = game_impl(kind)
        query = query.where(Game.kind == impl.kind)
    if player:
        name = unicodedata.normalize("NFKC", player).strip()
        query = query.where(Game.id.in_(select(GamePlayer.game_id).where(GamePlayer.name == name)))
    if q:
        pattern = "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        query = query.where(Game.title.like(pattern, escape="\\"))
    day = func.coalesce(Game.finished_at, Game.created_at)
    if since is not None:
        query = query.where(day >= since)
    if until is not None:
        query = query.where(day < until)
    length = (
        select(func.count(Move.id))
        .where(Move.game_id == Game.id, Move.undone.is_(False))
        .correlate(Game)
        .scalar_subquery()
    )
    orders = {
        "newest": (Game.created_at.desc(), Game.id.desc()),
        "oldest": (Game.created_at.asc(), Game.id.asc()),
        "ended": (Game.finished_at.is_(None), Game.finished_at.desc(), Game.id.desc()),
        "longest": (length.desc(), Game.id.desc()),
        "shortest": (length.asc(), Game.id.desc()),
        "title": (Game.title.asc(), Game.id.asc()),
    }
    if sort not in orders:
        raise Invalid(f"sort は {', '.join(orders)} のどれかです。", field="sort")
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    current = forum.page_of(total, per_page, page)
    games = session.scalars(
        query.order_by(*orders[sort]).offset((current.number - 1) * per_page).limit(per_page)
    )
    return list(games), current


def moves_of(session: Session, game: Game) -> list[Move]:
    return list(session.scalars(select(Move).where(Move.game_id == game.id).order_by(Move.seq)))
