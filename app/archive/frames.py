"""The replay page's frame: the board after move N, beside the post that made the move.

While a game runs a frame shows the public view; once it is over (finished or aborted, when the
seed is public too) it shows everything, or what one player could see at that moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from markupsafe import Markup
from sqlalchemy.orm import Session

from app.archive.fold import MoveLine, fold
from app.db.models import Game, Move, Post, SealedCommand, User
from app.errors import Forbidden, Invalid
from app.forum.moderation import shown_body
from app.forum.render import render_body
from app.games.base import CommandSyntaxError, RuleError, Viewer
from app.games.base import Game as GameImpl
from app.gm import secrecy
from app.gm import service as gm
from app.gm.secrecy import OVER, SEALED


@dataclass(frozen=True)
class MoveRow:
    index: int  # N: this move is the N-th applied move (the page's ?at=N)
    seq: int
    actor: str
    text: str  # the canonical line, or （封印） while it is hidden from this reader
    sealed: bool
    by_bot: bool
    post_number: int | None
    created_at: datetime


@dataclass
class Frame:
    game: Game
    impl: GameImpl
    at: int
    total: int
    rows: list[MoveRow]
    viewer: str
    viewpoints: list[tuple[str, str]]
    view: dict[str, Any] | None = None
    post: Post | None = None
    post_html: Markup | None = None
    sealed: SealedCommand | None = None
    sealed_readable: bool = False

    @property
    def over(self) -> bool:
        return self.game.status in OVER

    @property
    def started(self) -> bool:
        return self.game.started_at is not None

    @property
    def move(self) -> MoveRow | None:
        return self.rows[self.at - 1] if 0 < self.at <= len(self.rows) else None


def viewpoints(game: Game) -> list[tuple[str, str]]:
    """(key, label) of the views a reader may pick: after the end, everything or any player's."""
    if game.status not in OVER:
        return [("public", "公開情報")]
    names = game.players_at_start or [p.name for p in game.players]
    return [
        ("all", "すべて（GM の視点）"),
        ("public", "公開情報"),
        *((str(i + 1), f"{i + 1}. {name} の視点") for i, name in enumerate(names)),
    ]


def _viewer(game: Game, key: str) -> Viewer:
    if key == "all":
        return "gm"
    if key == "public":
        return None
    return int(key) - 1


def _line_matches(impl: GameImpl, line: str, command: str) -> bool:
    """Does this line of a post make the move ``command`` (directly, or through ``AS``)?"""
    if not impl.is_command_line(line):
        return False
    try:
        parsed = impl.parse(line)
    except CommandSyntaxError:
        return False
    if parsed.canonical() == command:
        return True
    inner = getattr(parsed, "command", None)
    return inner is not None and hasattr(inner, "canonical") and inner.canonical() == command


def post_html(
    impl: GameImpl, post: Post, user: User | None, command: str | None, posts_per_page: int
) -> Markup:
    """The post's body as the thread shows it, the lines that made ``command`` in ``<mark>``."""
    body = shown_body(post, user)

    def anchor_href(number: int) -> str:
        return f"/threads/{post.thread_id}?page={(number - 1) // posts_per_page + 1}#{number}"

    if post.hidden_at is not None and body != post.body:
        return render_body(body, anchor_href)
    lines = []
    for line in body.split("\n"):
        html = render_body(line, anchor_href)
        if command is not None and _line_matches(impl, line, command):
            html = Markup('<mark class="replay-line">') + html + Markup("</mark>")
        lines.append(html)
    return Markup("<br>").join(lines)


def frame(
    session: Session,
    game: Game,
    user: User | None,
    at: int | None,
    viewer: str | None,
    posts_per_page: int = 100,
) -> Frame:
    """The frame after ``at`` applied moves (the last one when None), seen as ``viewer``."""
    impl = gm.game_impl(game.kind)
    over = game.status in OVER
    choices = viewpoints(game)
    key = viewer or ("all" if over else "public")
    if key not in dict(choices):
        if not over and key != "public":
            raise Forbidden("ゲームの進行中は公開情報だけを再生できます。")
        raise Invalid(
            f"viewer は {', '.join(k for k, _ in choices)} のどれかです。", field="viewer"
        )
    moves = [m for m in gm.moves_of(session, game) if not m.undone]
    reader = secrecy.reader(game, user)
    readable = {row.id for row in gm.sealed_for(session, game, user)}
    rows = [_row(i, m, reader.may_read(m)) for i, m in enumerate(moves, start=1)]
    total = len(rows)
    at = total if at is None else at
    if not 0 <= at <= total:
        raise Invalid(f"at は 0〜{total} です（適用された手は{total}手）。", field="at")
    result = Frame(game, impl, at, total, rows, key, choices)
    if game.started_at is None:
        return result
    players = game.players_at_start or [p.name for p in game.players]
    lines = [MoveLine(m.seq, m.actor_seat, m.command, m.sealed) for m in moves[:at]]
    try:
        state = fold(impl, game.seed, game.options, players, lines)
    except (RuleError, CommandSyntaxError) as exc:
        raise Invalid(f"この記録は{at}手目まで再生できません: {exc}") from None
    result.view = impl.view(state, _viewer(game, key))
    if at > 0:
        made = moves[at - 1]
        row = rows[at - 1]
        if made.post_id is not None:
            post = session.get(Post, made.post_id)
            if post is not None:
                result.post = post
                shown = row.text if row.text != SEALED else None
                result.post_html = post_html(impl, post, user, shown, posts_per_page)
        if made.sealed_id is not None:
            result.sealed = session.get(SealedCommand, made.sealed_id)
            result.sealed_readable = over or made.sealed_id in readable
    return result


def _row(index: int, move: Move, readable: bool) -> MoveRow:
    return MoveRow(
        index=index,
        seq=move.seq,
        actor=move.actor_name if move.actor_seat is not None else "GM",
        text=move.command if readable else SEALED,
        sealed=move.sealed,
        by_bot=move.by_bot,
        post_number=move.post_number,
        created_at=move.created_at,
    )
