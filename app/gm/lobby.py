"""The lobby: recruiting games for the home page and /games, and the ロビー board's guide, a
thread the site writes and pins (docs/forum.md, "The lobby" and "Pinned threads")."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Board, Game, GamePlayer, PinnedThread, Thread, User, utcnow
from app.forum import service as forum
from app.games import all_games, find_game
from app.games.kit.howto import rules_path
from app.gm.reply import BOT_NAME
from app.i18n import N_

LOBBY_SLUG = "lobby"
GUIDE = "lobby-guide"
# Written in Japanese, as the site writes; the board page shows a pin's title translated.
GUIDE_TITLE = N_("はじめての方へ：このサイトの遊び方")
RECRUITING_SHOWN = 20


def is_bot_seat(player: GamePlayer) -> bool:
    """A seat a bot was given (BOT / ボット, ``"bots": N``; docs/bots.md), the ``bot`` column:
    played by the bot, or kicked from it and played as any kicked seat until REPLACE gives it
    to a person."""
    return bool(player.bot)


@dataclass(frozen=True)
class Table:
    """A recruiting game as the lobby lists it."""

    game: Game
    seats_taken: int
    seats_total: int
    bots: int
    seated: bool  # the reader has a seat already


def recruiting(
    session: Session, user: User | None, limit: int = RECRUITING_SHOWN, kind: str | None = None
) -> list[Table]:
    """Recruiting games, newest first (of one kind, for its 遊び方 page): seats taken of the
    most the kind seats, the bots among them (docs/forum.md)."""
    query = select(Game).where(Game.status == "recruiting")
    if kind is not None:
        query = query.where(Game.kind == kind)
    games = session.scalars(
        query.order_by(Game.created_at.desc(), Game.id.desc()).limit(limit)
    ).all()
    tables = []
    for game in games:
        impl = find_game(game.kind)
        total = impl.max_players if impl is not None else len(game.players)
        tables.append(
            Table(
                game=game,
                seats_taken=len(game.players),
                seats_total=total,
                bots=sum(1 for p in game.players if is_bot_seat(p)),
                seated=user is not None and any(p.user_id == user.id for p in game.players),
            )
        )
    return tables


def guide_text(base_url: str | None = None) -> str:
    """The guide's first post: how to start, and where each game's rules are. With the site's
    address known the paths are whole URLs (a post's body links those)."""
    root = (base_url or "").rstrip("/")
    lines = [
        "ようこそ。ここはボットが GM をつとめる掲示板進行ゲームのサイトです。",
        "",
        "■ はじめ方",
        "1. ページ上部の「新規登録」で名前とパスワードを決めます。",
        f"2. 募集中のゲームはトップページと {root}/games にあります。「参加」を押すか、"
        "そのスレッドに JOIN と書けば席に着けます。",
        f"3. 自分で卓を立てるなら {root}/games/new から。人がそろったら GM が START と書きます。",
        "4. 自分の番が来たら、命令を1行に1つずつ書き込みます。ボットが答えて盤面を進めます。",
        "",
        "■ 遊び方（ルール）",
    ]
    for impl in all_games():
        lines.append(f"・{impl.title_ja}（{impl.players_text()}）: {root}{rules_path(impl.kind)}")
    lines += [
        "",
        "■ 成績",
        f"終わったゲームは {root}/archive で再生でき、各プレイヤーの成績は /users/名前 に、"
        f"種類ごとのレーティングは {root}/ratings/種類 に出ます。",
    ]
    return "\n".join(lines)


def guide_thread(session: Session) -> Thread | None:
    return session.scalar(
        select(Thread)
        .join(PinnedThread, PinnedThread.thread_id == Thread.id)
        .where(PinnedThread.purpose == GUIDE)
    )


def ensure_guide(
    session: Session, secret: str, base_url: str | None = None, now: datetime | None = None
) -> Thread | None:
    """The ロビー's guide thread, written by the site and pinned, unless it is there already
    (idempotent; ``bbsgm migrate`` and ``serve`` run it after the boards are seeded). None
    when there is no ロビー board."""
    found = guide_thread(session)
    if found is not None:
        return found
    board = session.scalar(select(Board).where(Board.slug == LOBBY_SLUG))
    if board is None:
        return None
    now = now or utcnow()
    thread = forum.create_site_thread(
        session, board, GUIDE_TITLE, guide_text(base_url), secret, author_name=BOT_NAME, now=now
    )
    session.add(PinnedThread(thread_id=thread.id, purpose=GUIDE, created_at=now))
    session.flush()
    return thread


def pinned(session: Session, board: Board) -> list[Thread]:
    """The board's pinned threads, oldest pin first: the board page shows them above the
    others."""
    return list(
        session.scalars(
            select(Thread)
            .join(PinnedThread, PinnedThread.thread_id == Thread.id)
            .where(Thread.board_id == board.id)
            .order_by(PinnedThread.created_at, Thread.id)
        )
    )
