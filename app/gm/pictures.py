"""The board as a picture: `GET /api/games/{id}/board.svg[?at=N][&as=me]`.

Each game draws its board from a view (`Game.board_svg`, a pure function); this module only
picks the state (now, or replayed to the first N applied moves) and the views. The public
picture is drawn from the public view — the GM's view once the game is finished, as the API's
view and replay are — and never from a player's; ``as=me`` adds the caller's own view, which
may show what only they see (their hand).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.db.models import Game, User
from app.errors import Forbidden, Invalid, Unauthorized
from app.games import svg
from app.games.base import State, Viewer
from app.gm import replay
from app.gm.service import game_impl, reads_as_gm, seat_of
from app.i18n import N_

__all__ = ["board_picture", "recruiting_picture"]

LOGIN_FOR_OWN = N_("自分の視点の盤面（as=me）を見るにはログインしてください。")


def board_picture(
    session: Session, game: Game, *, at: int | None, user: User | None, as_me: bool
) -> str:
    impl = game_impl(game.kind)
    own_viewer = _own_viewer(game, user) if as_me else None
    if game.started_at is None or game.state is None:
        if at not in (None, 0):
            raise Invalid(N_("このゲームはまだ始まっていません（at は 0 だけです）。"), field="at")
        return recruiting_picture(game)
    state: State | None = game.state
    if at is not None:
        applied = len(replay.applied_moves(session, game))
        if not 0 <= at <= applied:
            raise Invalid(f"at は 0〜{applied} です（適用された手は{applied}手）。", field="at")
        state = replay.replay(session, game, upto=at)
    assert state is not None
    public: Viewer = "gm" if game.status == "finished" else None
    view = impl.view(state, public)
    own: dict[str, Any] | None = None
    if as_me and own_viewer is not None:
        own = impl.view(state, own_viewer)
    return impl.board_svg(view, own)


def _own_viewer(game: Game, user: User | None) -> Viewer:
    if user is None:
        raise Unauthorized(LOGIN_FOR_OWN)
    if reads_as_gm(game, user):
        return "gm"
    seat = seat_of(game, user)
    if seat is None:
        raise Forbidden(N_("このゲームのプレイヤーでも GM でもないので、自分の視点はありません。"))
    return seat


def recruiting_picture(game: Game) -> str:
    """Before START there is no board: the seats taken so far."""
    width = svg.WIDTH
    names = [player.name for player in game.players]
    lines = [
        svg.text(16, 30, f"{game.title}", size=16, bold=True, max_width=width - 32),
        svg.text(16, 54, "参加者を募集中です（JOIN / 参加）", size=13, fill=svg.MUTED),
    ]
    y = 84
    for seat, name in enumerate(names, start=1):
        lines.append(svg.text(24, y, f"{seat}. {name}", size=14, max_width=width - 48))
        y += 22
    if not names:
        lines.append(svg.text(24, y, "まだ誰もいません", size=14, fill=svg.MUTED))
        y += 22
    return svg.document(width, y + 8, f"{game.title}: 募集中", lines)
