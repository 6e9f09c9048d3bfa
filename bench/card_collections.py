"""Benchmark: what a collection line costs in the card registry thread (docs/cards.md
"Collections") — a post that GIVEs a player a card, and one in which the player RELEASEs it —
against a registry post whose line is refused and changes nothing (an APPROVE of a card with no
version waiting: the post and the bot's reply are stored all the same).

    python bench/card_collections.py [PG URL]

Each post goes through the game master's service (`submit_post`) in its own transaction, on a
fresh migrated database (SQLite, or one made on the PostgreSQL server given), interleaved so the
machine's drift touches both alike. Prints the medians in milliseconds and last
``card_collection_ratio <x>`` = (GIVE post + RELEASE post) / 2 ÷ the refused post.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SECRET, machine, scratch_database

from app.db.engine import Database
from app.db.models import User
from app.gm import cards
from app.gm import service as gm

ROUNDS = 150
WARM_UP = 10


def timed(db: Database, user_id: int, thread_id: int, body: str) -> float:
    with db.session() as session:
        user = session.get(User, user_id)
        assert user is not None
        start = time.perf_counter()
        _post, replies = gm.submit_post(session, thread_id, user, body, SECRET)
        session.commit()
        took = time.perf_counter() - start
        assert replies, body
    return took


def main(server_url: str | None) -> None:
    with scratch_database(server_url) as url:
        db = Database(url)
        try:
            with db.session() as session:
                admin = User(name="bench_admin", password_hash="-", is_admin=True)
                player = User(name="bench_player", password_hash="-")
                session.add_all([admin, player])
                session.flush()
                ids = (admin.id, player.id)
                thread_id = cards.registry_thread_id(session)
                assert thread_id is not None
                session.commit()
            give, release, refused = [], [], []
            for round_ in range(WARM_UP + ROUNDS):
                g = timed(db, ids[0], thread_id, "GIVE bench_player 赤竜")
                r = timed(db, ids[1], thread_id, "RELEASE 赤竜")
                n = timed(db, ids[0], thread_id, "APPROVE 赤竜")  # nothing waits: refused
                if round_ >= WARM_UP:
                    give.append(g)
                    release.append(r)
                    refused.append(n)
        finally:
            db.dispose()
    ms = {name: statistics.median(v) * 1000 for name, v in (("give", give), ("release", release))}
    base = statistics.median(refused) * 1000
    print(machine())
    print(f"database {'postgresql' if server_url else 'sqlite'}, {ROUNDS} rounds")
    print(f"GIVE post     {ms['give']:.2f} ms (median)")
    print(f"RELEASE post  {ms['release']:.2f} ms")
    print(f"refused post  {base:.2f} ms (baseline)")
    print(f"card_collection_ratio {(ms['give'] + ms['release']) / 2 / base:.2f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
