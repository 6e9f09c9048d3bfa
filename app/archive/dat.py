"""Read-only 2ch-style files, so a thread reads in the dedicated BBS browsers (専用ブラウザ)
people already use: ``/{board}/subject.txt``, ``/{board}/dat/{key}.dat``, ``/{board}/SETTING.TXT``.

Everything is Shift_JIS (Windows code page 932). A character cp932 cannot encode (emoji, some
symbols) is written as a decimal numeric character reference (``&#128512;``), which the
browsers display as the character; ``&``, ``<``, ``>`` and ``"`` are escaped first, so a
reference never comes from a poster's text. The key of a thread is its id. See docs/archive.md.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.forum.names import TRIP_MARK, split_shown
from app.forum.service import format_bbs_time
from app.models import Board, Post, Thread
from app.moderation import HIDDEN_BODY

ENCODING = "cp932"
CONTENT_TYPE = "text/plain; charset=Shift_JIS"
SUBJECT_LIMIT = 1000
NONAME = "名無しさん"


def escape(text: str) -> str:
    """HTML-escape a field as the dat format needs (``<>`` must never appear unescaped)."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def encode(text: str) -> bytes:
    return text.encode(ENCODING, errors="xmlcharrefreplace")


def one_line(text: str) -> str:
    return " ".join(text.split())


def dat_name(author_name: str) -> str:
    """The name field of a line. A trip is written as on 2ch, ``名前 </b>◆trip <b>``: the BBS
    browsers show the name bold and the trip not, and read the trip from there. (The markup is
    the site's: a typed ``<`` is escaped, and a typed ◆ became ◇.)"""
    name, trip = split_shown(author_name)
    if trip is None:
        return escape(one_line(author_name))
    return f"{escape(one_line(name))} </b>{TRIP_MARK}{escape(trip)} <b>"


def dat_line(post: Post, title: str | None) -> str:
    """``名前<>メール<>日付 ID<> 本文 <>タイトル`` — the title only on the first line. As on 2ch,
    the body has a space on each side and its line breaks are `` <br> ``. あぼーん keeps the
    name and date and replaces the body."""
    body = HIDDEN_BODY if post.hidden_at is not None else post.body
    text = " <br> ".join(escape(line) for line in body.split("\n"))
    date = f"{format_bbs_time(post.created_at)} ID:{post.daily_id}"
    name = dat_name(post.author_name)
    subject = escape(one_line(title)) if title is not None else ""
    return f"{name}<><>{date}<> {text} <>{subject}\n"


def dat(session: Session, thread: Thread) -> bytes:
    posts = session.scalars(select(Post).where(Post.thread_id == thread.id).order_by(Post.number))
    return encode(
        "".join(dat_line(post, thread.title if post.number == 1 else None) for post in posts)
    )


def subject(session: Session, board: Board) -> bytes:
    """``{key}.dat<>{title} ({count})`` per thread, the most recently posted first."""
    threads = session.scalars(
        select(Thread)
        .where(Thread.board_id == board.id)
        .order_by(Thread.last_post_at.desc(), Thread.id.desc())
        .limit(SUBJECT_LIMIT)
    )
    return encode(
        "".join(f"{t.id}.dat<>{escape(one_line(t.title))} ({t.post_count})\n" for t in threads)
    )


def setting(board: Board) -> bytes:
    return encode(f"BBS_TITLE={one_line(board.title)}\nBBS_NONAME_NAME={NONAME}\n")
