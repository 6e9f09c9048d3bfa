"""``bbsgm check``: invariants of the stored data, each problem reported as one line."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Post, Thread
from app.gm.replay import check_games


def check_post_numbers(session: Session) -> list[str]:
    """Every thread's posts are numbered 1..post_count with no gap and no duplicate."""
    rows = session.execute(
        select(
            Thread.id,
            Thread.post_count,
            func.count(Post.id),
            func.coalesce(func.min(Post.number), 0),
            func.coalesce(func.max(Post.number), 0),
        )
        .outerjoin(Post, Post.thread_id == Thread.id)
        .group_by(Thread.id, Thread.post_count)
    )
    problems = []
    for thread_id, post_count, count, lowest, highest in rows:
        if not (count == post_count == highest and lowest == min(1, count)):
            problems.append(
                f"thread {thread_id}: post_count={post_count} but {count} posts "
                f"numbered {lowest}..{highest}"
            )
    return problems


def run_checks(session: Session) -> list[str]:
    return check_post_numbers(session) + check_games(session)
