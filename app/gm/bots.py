"""Bots in seats (docs/bots.md): whenever a submission leaves the game waiting for a seated
bot, the bot plays its turn within the same request — each turn through the path a player's
takes, so the thread reads the same: a post by the bot's seat (ボット1) holding its lines, then
the GM's answer; sealed lines (the rules want them sealed) through the sealed path, stored in
``sealed_commands`` as the bot's and told as （封印）. A bot decides from its own seat's view
and legal lines only: ``Game.bot_lines(state, seat)``, the game's hook.

Also here: the GM's posts (``gm_post``), which the bots' turns and app/gm/service.py write."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.db.models import Game, GamePlayer, Post, SealedCommand
from app.forum import service as forum
from app.games.base import Game as GameImpl
from app.gm import play, store
from app.gm import reply as answers
from app.gm.lines import command_lines
from app.gm.reply import BOT_NAME, CUT_NOTE
from app.gm.submission import LineError
from app.gm.working import MAX_AUTOPLAY, Submission, Submitter

log = logging.getLogger("bbsgm.bots")

STUCK = (
    "{name} が指せる手を見つけられませんでした。GM は AS {name} <命令> で代わりに指すか、"
    "KICK {name} で既定の手に任せてください。"
)


def gm_post(
    session: Session,
    game: Game,
    text: str,
    secret: str,
    now: datetime,
    reply_to: int | None = None,
    error: LineError | None = None,
    number: int | None = None,
    board_at: int | None = None,
) -> Post:
    """The GM's (the site's bot's) post. Its text is not a user's and is never refused for its
    length: beyond a post's limit it is cut, saying where the rest is (the closing post of a
    game with many sealed commands, say), so a game can always go on and end."""
    if len(text) > forum.MAX_BODY_CHARS:
        note = f"\n{CUT_NOTE}続きはゲームのページ /games/{game.id} に）"
        text = text[: forum.MAX_BODY_CHARS - len(note)] + note
    return forum.add_post(
        session,
        game.thread_id,
        author=None,
        author_name=BOT_NAME,
        body=text,
        kind="gm",
        secret=secret,
        now=now,
        number=number,
        reply_to=reply_to,
        reply_ok=error is None,
        reply_error=error.to_json() if error is not None else None,
        board_at=board_at,
    )


def playing_bot(game: Game, seat: int) -> GamePlayer | None:
    """The seat's row when a bot plays it (a bot's seat the GM did not kick)."""
    player = next((p for p in game.players if p.seat == seat), None)
    return player if player is not None and player.bot and not player.kicked else None


def waiting_bot(game: Game, impl: GameImpl) -> GamePlayer | None:
    """The first seated bot the game waits for now, if any."""
    if game.status != "active" or game.paused or game.state is None:
        return None
    for seat in impl.waiting_for(game.state):
        player = playing_bot(game, seat)
        if player is not None:
            return player
    return None


def play_bots(
    session: Session, game: Game, impl: GameImpl, secret: str, now: datetime
) -> list[Post]:
    """Every turn of the seated bots the game waits for, one after another, until it waits for
    a person or is over (bounded by MAX_AUTOPLAY turns); the posts written, in order. The
    caller holds the game's lock and has saved the submission that handed the turn over."""
    posts: list[Post] = []
    for _ in range(MAX_AUTOPLAY):
        player = waiting_bot(game, impl)
        if player is None:
            break
        written, moved = _turn(session, game, impl, player, secret, now)
        posts.extend(written)
        if not moved:
            break  # stuck: the GM was told (never loop on a bot that cannot move)
    return posts


def _turn(
    session: Session, game: Game, impl: GameImpl, player: GamePlayer, secret: str, now: datetime
) -> tuple[list[Post], bool]:
    """One turn of the bot at ``player``'s seat: its own lines, else the dropped-seat play,
    else the default moves — the first that the game takes. Nothing is written for lines the
    game refuses (a bot's mistake, logged); when none goes through, the GM is told."""
    seat, name = player.seat, player.name
    assert game.state is not None
    tried: list[list[str]] = []
    for choose in (impl.bot_lines, impl.autoplay, impl.default_commands):
        try:
            lines = list(choose(game.state, seat))
        except Exception:
            log.exception("game %s: the bot at seat %d could not choose", game.id, seat)
            continue
        if not lines or lines in tried:
            continue
        tried.append(lines)
        written = _play_lines(session, game, impl, seat, name, lines, secret, now)
        if written:
            return written, True
        log.warning("game %s: the bot at seat %d was refused: %r", game.id, seat, lines)
    return [gm_post(session, game, STUCK.format(name=name), secret, now)], False


def _play_lines(
    session: Session,
    game: Game,
    impl: GameImpl,
    seat: int,
    name: str,
    lines: list[str],
    secret: str,
    now: datetime,
) -> list[Post]:
    """The lines in runs of the same way — in the thread, or sealed as the rules want (judged
    against the game as each run begins) — each run one submission; the posts written (none
    when the first run was refused; a later run refused stops there, the earlier ones kept)."""
    posts: list[Post] = []
    rest = list(lines)
    while rest:
        assert game.state is not None
        if game.status != "active" or playing_bot(game, seat) is None:
            break
        sealed = _sealed(impl, game.state, rest[0])
        run = [rest.pop(0)]
        while rest and _sealed(impl, game.state, rest[0]) == sealed:
            run.append(rest.pop(0))
        post = (_sealed_run if sealed else _thread_run)(
            session, game, impl, seat, name, run, secret, now
        )
        if post is None:
            break
        posts.extend(post)
    return posts


def _sealed(impl: GameImpl, state: dict[str, Any], line: str) -> bool:
    try:
        return impl.needs_seal(state, impl.parse(line)) is True
    except Exception:  # a line that does not read is refused by the loop, in the thread way
        return False


def _submission(
    game: Game, impl: GameImpl, seat: int, name: str, body: str, now: datetime, sealed: bool
) -> Submission:
    by = Submitter(None, name, bot_seat=seat)
    return Submission(game, impl, by, command_lines(impl, body), now, sealed=sealed)


def _thread_run(
    session: Session,
    game: Game,
    impl: GameImpl,
    seat: int,
    name: str,
    lines: list[str],
    secret: str,
    now: datetime,
) -> list[Post] | None:
    """The lines as the bot seat's post and the GM's answer to it (both numbers taken together,
    as a player's command post); None, and nothing written, if the game refuses them."""
    body = "\n".join(lines)
    sub = _submission(game, impl, seat, name, body, now, sealed=False)
    if not sub.lines:
        return None
    # Applied before anything is written: a refused bot turn leaves no post (the next choice
    # is tried). Applying writes nothing; the moves are saved with the post below.
    _outcome, work = play.run(session, sub)
    if work is None:
        return None
    post = forum.add_post(
        session,
        game.thread_id,
        author=None,
        author_name=name,
        body=body,
        kind="command",
        secret=secret,
        now=now,
        take=2,
    )
    sub.anchor = f">>{post.number}"
    store.save(session, sub, work, post=post, sealed_id=None)
    text = answers.success_text(session, sub, work)
    at = answers.board_at(session, sub, work)
    reply = gm_post(
        session, game, text, secret, now, post.number, number=post.number + 1, board_at=at
    )
    return [post, reply]


def _sealed_run(
    session: Session,
    game: Game,
    impl: GameImpl,
    seat: int,
    name: str,
    lines: list[str],
    secret: str,
    now: datetime,
) -> list[Post] | None:
    """The lines as the bot's sealed command (stored as its seat's, read by the GM and, once
    the game is over, by everyone, as a player's) and the GM's post telling it came; None, and
    nothing written, if the game refuses them."""
    body = "\n".join(lines)
    sub = _submission(game, impl, seat, name, body, now, sealed=True)
    if not sub.lines:
        return None
    _outcome, work = play.run(session, sub)
    if work is None:
        return None
    accepted = "封印コマンドを受け付けました。"
    row = SealedCommand(
        game_id=game.id,
        user_id=None,
        author_name=name,
        body=forum.clean_body(body),
        created_at=now,
        ok=True,
        reply="\n".join([accepted, *work.private]) if work.private else accepted,
        error=None,
    )
    session.add(row)
    session.flush()
    store.save(session, sub, work, post=None, sealed_id=row.id)
    header = f"{name} から封印コマンドが届きました。"
    public = answers.success_text(session, sub, work)
    at = answers.board_at(session, sub, work)
    return [gm_post(session, game, f"{header}\n{public}".rstrip(), secret, now, board_at=at)]
