"""Benchmark: what a seated bot's turn adds to the post that hands it the turn (docs/bots.md).

    python bench/bot_turns.py [kind] [BBSGM_BENCH_DATABASE_URL]

Games of the kind (えいつく by default) are played to their end through the game master's
service, in process (no HTTP), one transaction a post, three of each, interleaved (the shared
machine's load falls on both alike): the baseline, two people taking turns; and one person
against one bot, whose turns are played inside the person's post (a post of the
bot's seat and the GM's answer each). The people's lines are drawn (seeded) from their legal
lines. Prints the median time of a person's post in each, in milliseconds, and
``bot_post_ratio <x>``: the bot game's median post divided by the baseline's — what one post
costs when it also plays the bot's turn, against a post that plays only its own.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SECRET, machine, scratch_database
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import Game, User
from app.gm import service as gm

NOT_MOVES = {"PAUSE", "RESUME", "UNDO", "ABORT", "START", "LEAVE", "JOIN"}
MAX_POSTS = 2000
GAMES = 3  # of each


def person(session: Session, name: str) -> User:
    user = User(name=name, password_hash=accounts._hasher.hash("password123"))
    session.add(user)
    return user


def play(db: Database, kind: str, people: int, bots: int, seed: int) -> list[float]:
    """Seconds of each person's post, one game to its end."""
    draw = random.Random(seed)
    times: list[float] = []
    with db.session() as session:
        seated = [person(session, f"b{seed}p{n}") for n in range(people)]
        master = seated[0]
        session.flush()
        game = gm.create_game(session, master, kind, "bench", {}, SECRET, bots=bots)
        gid, tid = game.id, game.thread_id
        for user in seated:
            gm.submit_post(session, tid, user, "JOIN", SECRET)
        gm.submit_post(session, tid, master, "START", SECRET)
        session.commit()
        for _ in range(MAX_POSTS):
            game = session.get(Game, gid)
            assert game is not None
            session.refresh(game)
            if game.status != "active":
                return times
            for user in seated:
                thread, _sealed = gm.legal_split(game, user)
                lines = [line for line in thread if line not in NOT_MOVES]
                if lines:
                    break
            else:
                raise RuntimeError("nobody can move")
            started = time.perf_counter()
            gm.submit_post(session, tid, user, draw.choice(lines), SECRET)
            session.commit()
            times.append(time.perf_counter() - started)
    raise RuntimeError("the game did not end")


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "eitsuku"
    server = sys.argv[2] if len(sys.argv) > 2 else None
    print(machine())
    with scratch_database(server) as url:
        db = Database(url)
        try:
            baseline: list[float] = []
            with_bot: list[float] = []
            for seed in range(1, 1 + 2 * GAMES, 2):  # interleaved: the machine's load shared
                baseline += play(db, kind, 2, 0, seed)
                with_bot += play(db, kind, 1, 1, seed + 1)
        finally:
            db.dispose()
    base, bot = statistics.median(baseline), statistics.median(with_bot)
    print(f"two people: {len(baseline)} posts, median {base * 1000:.2f} ms")
    print(f"one person + a bot: {len(with_bot)} posts, median {bot * 1000:.2f} ms")
    print(f"bot_post_ratio {bot / base:.2f}")


if __name__ == "__main__":
    main()
