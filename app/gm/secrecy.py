"""The one definition of a secret move, and who may read one (docs/security.md, "Secret moves").

A move is secret when the rules sealed it: the stored ``Move.sealed`` flag, set when the move was
applied sealed — through the sealed form, or by the bot for any seat (a KICKed seat, a seat past
its deadline, a bot's seat) because ``needs_seal`` wanted it sealed. How it reached the game
does not matter: a bot's sealed ``PICK`` is as secret as a player's.

A secret move's text may be read by the GM who does not play (a GM who holds a seat reads as
that seat: ``legal.reads_as_gm``) and by the player of the move's seat (the seat, not
whoever sent it: a KICKed seat is nobody's, as ``service.seat_of`` says), and by everyone once the
game is over (finished or aborted: the closing post's epilogue publishes every sealed line).
Everyone else reads ``（封印）``. Every surface that shows a move's text asks here: the moves API,
the log page, replay frames, the export, webhook and mail payloads.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.db.models import Game, Move, User
from app.gm.legal import reads_as_gm

SEALED = "（封印）"
OVER = ("finished", "aborted")


def is_secret(move: Move) -> bool:
    """Did the rules seal this move (whoever sent it)?"""
    return bool(move.sealed)


@dataclass(frozen=True)
class Reader:
    """Who reads a game's moves: everything (over, or the GM), one seat's, or only public ones."""

    everything: bool
    seat: int | None

    def may_read(self, move: Move) -> bool:
        if not is_secret(move) or self.everything:
            return True
        return self.seat is not None and move.actor_seat == self.seat

    def shown(self, move: Move) -> str:
        """The move's canonical line, or （封印） while this reader may not read it."""
        return move.command if self.may_read(move) else SEALED


def reader(game: Game, user: User | None) -> Reader:
    """``user`` reading ``game`` now (None: anyone — a page without login, an off-site payload)."""
    if game.status in OVER or reads_as_gm(game, user):
        return Reader(everything=True, seat=None)
    return Reader(everything=False, seat=_seat_of(game, user))


def _seat_of(game: Game, user: User | None) -> int | None:
    """``service.seat_of``'s rule (a KICKed seat is nobody's), here because app.notify, which
    app.gm.service imports, asks this module too."""
    if user is None:
        return None
    player = next((p for p in game.players if p.user_id == user.id), None)
    return None if player is None or player.kicked else player.seat


def public_reader(game: Game) -> Reader:
    """What may leave the site (webhooks, mail): what anyone may read."""
    return reader(game, None)
