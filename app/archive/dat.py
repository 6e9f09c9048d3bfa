"""2ch-style files, so a thread reads in the dedicated BBS browsers (専用ブラウザ) people already
use: ``/{board}/subject.txt``, ``/{board}/dat/{key}.dat``, ``/{board}/SETTING.TXT``,
``/{board}/head.txt`` and the site's ``/bbsmenu.html``. (Writing: app/web/bbs_cgi.py.)

Everything is Shift_JIS (Windows code page 932). A character cp932 cannot encode (emoji, some
symbols) is written as a decimal numeric character reference (``&#128512;``), which the
browsers display as the character; ``&``, ``<``, ``>`` and ``"`` are escaped first, so a
reference never comes from a poster's text. The key of a thread is its ``dat_key``: the UNIX
second it was made (unique per board), as the browsers read a key. See docs/senbura.md.
"""

from __future__ import annotations

import re
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Board, ModerationEntry, Post, Thread
from app.errors import NotFound
from app.forum.moderation import HIDDEN_BODY
from app.forum.names import TRIP_MARK, split_shown
from app.forum.service import format_bbs_time

ENCODING = "cp932"
CONTENT_TYPE = "text/plain; charset=Shift_JIS"
SUBJECT_LIMIT = 1000
NONAME = "名無しさん"
HTML_TYPE = "text/html; charset=Shift_JIS"
# A key as the browsers send it: a thread's dat_key (10 digits), or — for links and browsers
# from before keys were times — its id (fewer digits).
KEY = re.compile(r"[1-9][0-9]{0,10}")
ID_DIGITS = 9


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
    text = " <br> ".join(escape(line) for line in post.body.split("\n"))
    if post.hidden_at is not None:
        text = same_length_abon(text)
    date = f"{format_bbs_time(post.created_at)} ID:{post.daily_id}"
    name = dat_name(post.author_name)
    subject = escape(one_line(title)) if title is not None else ""
    mail = escape(one_line(post.mail)) if post.mail else ""
    return f"{name}<>{mail}<>{date}<> {text} <>{subject}\n"


def same_length_abon(text: str) -> str:
    """あぼーん in as many cp932 bytes as the text it hides, padded with spaces: every later
    line keeps its byte offset, so a browser's 差分 (Range) reload from a copy made before the
    あぼーん (or its undoing) gets exactly the lines it lacks. (JDim 0.9 marks a thread
    壊れています on a 416 and does not fetch it again by itself: docs/senbura.md.)"""
    size = len(encode(text))
    shown = HIDDEN_BODY
    while len(encode(shown)) > size:
        shown = shown[:-1]
    return shown + " " * (size - len(encode(shown)))


def dat(session: Session, thread: Thread) -> bytes:
    posts = session.scalars(select(Post).where(Post.thread_id == thread.id).order_by(Post.number))
    return encode(
        "".join(dat_line(post, thread.title if post.number == 1 else None) for post in posts)
    )


def thread_by_key(session: Session, board: Board, key: str) -> Thread:
    """The board's thread of that key (a thread id, for a key of fewer than 10 digits)."""
    missing = NotFound(f"スレッド {key} はこの板にありません。")
    if not KEY.fullmatch(key):
        raise missing
    if len(key) <= ID_DIGITS:
        thread = session.get(Thread, int(key)) if int(key) < 2**31 else None
    else:
        thread = session.scalar(
            select(Thread).where(Thread.board_id == board.id, Thread.dat_key == int(key))
        )
    if thread is None or thread.board_id != board.id:
        raise missing
    return thread


def last_rewrite(session: Session, thread: Thread) -> datetime | None:
    """When a post already written last changed (an あぼーん or its undoing), from the
    moderation log, which ``moderation.set_hidden`` (the only writer of ``posts.hidden_at``)
    writes with every hide and unhide; posts are never edited."""
    return session.scalar(
        select(func.max(ModerationEntry.created_at)).where(
            ModerationEntry.thread_id == thread.id,
            ModerationEntry.action.in_(("HIDE", "UNHIDE")),
        )
    )


def last_post_time(session: Session, thread: Thread) -> datetime:
    """When the thread's last post was written (not ``last_post_at``: a sage post leaves
    that where it was)."""
    when = session.scalar(
        select(Post.created_at).where(Post.thread_id == thread.id, Post.number == thread.post_count)
    )
    return when if when is not None else thread.created_at


def board_changed_at(session: Session, board: Board) -> datetime | None:
    """When the board's subject.txt last changed: its newest post (a new thread's first post
    among them). Read by the posts' (thread, number) index, one row per thread."""
    return session.scalar(
        select(func.max(Post.created_at))
        .select_from(Thread)
        .join(Post, (Post.thread_id == Thread.id) & (Post.number == Thread.post_count))
        .where(Thread.board_id == board.id)
    )


def subject(session: Session, board: Board) -> bytes:
    """``{key}.dat<>{title} ({count})`` per thread, the most recently raised first (a sage
    post does not raise its thread: app/web/bbs_cgi.py)."""
    threads = session.scalars(
        select(Thread)
        .where(Thread.board_id == board.id)
        .order_by(Thread.last_post_at.desc(), Thread.id.desc())
        .limit(SUBJECT_LIMIT)
    )
    return encode(
        "".join(f"{t.dat_key}.dat<>{escape(one_line(t.title))} ({t.post_count})\n" for t in threads)
    )


def setting(board: Board) -> bytes:
    return encode(f"BBS_TITLE={one_line(board.title)}\nBBS_NONAME_NAME={NONAME}\n")


def head(board: Board) -> bytes:
    """``head.txt``, the board's ローカルルール: its description, as HTML (escaped)."""
    lines = [escape(line) for line in (board.description or board.title).splitlines()]
    return encode("<br>\n".join(lines) + "\n")


def bbsmenu(boards: list[Board], base: str) -> bytes:
    """``bbsmenu.html``: every board, as a 専ブラ's board list reads it (a ``<B>`` category,
    then one ``<A HREF=…/board/>`` per board)."""
    links = "\n".join(
        f'<A HREF="{escape(base)}/{escape(b.slug)}/">{escape(one_line(b.title))}</A><br>'
        for b in boards
    )
    return encode(
        '<HTML><HEAD><META http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        "<TITLE>BBS MENU</TITLE></HEAD><BODY>\n"
        f"<BR><BR><B>bbsgm</B><BR>\n{links}\n</BODY></HTML>\n"
    )


def bbsmenu_json(boards: list[Board], base: str) -> dict[str, object]:
    """``bbsmenu.json``, the form 5ch's own menu has (read by ChMate and newer browsers)."""
    return {
        "description": "bbsgm",
        "menu_list": [
            {
                "category_name": "bbsgm",
                "category_number": 1,
                "category_total": len(boards),
                "category_content": [
                    {
                        "board_name": b.title,
                        "directory_name": b.slug,
                        "url": f"{base}/{b.slug}/",
                        "category": 1,
                        "category_name": "bbsgm",
                        "category_order": order,
                    }
                    for order, b in enumerate(boards, 1)
                ],
            }
        ],
    }
