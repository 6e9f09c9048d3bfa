"""JSON shapes of ../shared/API.md (more fields are allowed; these are relied on)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.db.models import Board, Post, Thread
from app.forum.moderation import HIDDEN_BODY


class Credentials(BaseModel):
    name: str = Field(max_length=200)
    password: str = Field(max_length=1000)


class UserOut(BaseModel):
    id: int
    name: str


class TokenOut(BaseModel):
    token: str


class BoardOut(BaseModel):
    slug: str
    title: str
    thread_count: int
    description: str = ""
    game_kind: str | None = None

    @classmethod
    def of(cls, board: Board) -> BoardOut:
        return cls(
            slug=board.slug,
            title=board.title,
            thread_count=board.thread_count,
            description=board.description,
            game_kind=board.game_kind,
        )


class ThreadOut(BaseModel):
    id: int
    title: str
    board: str
    post_count: int
    created_at: datetime
    last_post_at: datetime
    game_id: int | None = None

    @classmethod
    def of(cls, thread: Thread, game_id: int | None = None) -> ThreadOut:
        return cls(
            id=thread.id,
            title=thread.title,
            board=thread.board.slug,
            post_count=thread.post_count,
            created_at=thread.created_at,
            last_post_at=thread.last_post_at,
            game_id=game_id,
        )


class ThreadList(BaseModel):
    threads: list[ThreadOut]
    page: int
    pages: int


class PostOut(BaseModel):
    number: int
    author: str
    body: str
    created_at: datetime
    kind: str
    daily_id: str
    hidden: bool = False
    reply_to: int | None = None

    @classmethod
    def of(cls, post: Post) -> PostOut:
        hidden = post.hidden_at is not None
        return cls(
            number=post.number,
            author=post.author_name,
            body=HIDDEN_BODY if hidden else post.body,
            created_at=post.created_at,
            kind=post.kind,
            daily_id=post.daily_id,
            hidden=hidden,
            reply_to=post.reply_to,
        )


class ErrorOut(BaseModel):
    line: int
    column: int | None
    message: str


class ReplyOut(PostOut):
    ok: bool
    error: ErrorOut | None = None


class ThreadWithPosts(BaseModel):
    thread: ThreadOut
    posts: list[PostOut]


# The 名前欄 (docs/forum.md): optional; absent, null or "" posts under the account's name.
NAME_FIELD = Field(
    default=None,
    max_length=10_000,
    description="名前欄: a name to show, `名前#key` for a tripcode (`名前 ◆XXXXXXXXXX`); "
    "absent or empty for the account's name. The key is never stored or shown.",
)


class NewThread(BaseModel):
    title: str = Field(max_length=100_000)
    body: str = Field(max_length=1_000_000)
    name: str | None = NAME_FIELD


class NewPost(BaseModel):
    body: str = Field(max_length=1_000_000)
    name: str | None = NAME_FIELD


class CreatedThread(ThreadOut):
    post: PostOut


class PostResult(BaseModel):
    post: PostOut
    replies: list[ReplyOut]


class ValidationIssue(BaseModel):
    """One problem FastAPI found in a malformed request."""

    loc: list[str | int]
    msg: str
    type: str


class ErrorDetail(BaseModel):
    """Every 4xx answer: bbsgm's own message (Japanese), or FastAPI's list for a malformed
    request (422)."""

    detail: str | list[ValidationIssue]


# What the routers document for their errors (OpenAPI), so answers match the schema.
ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorDetail, "description": text}
    for status, text in [
        (400, "Bad request"),
        (401, "Not logged in (Authorization: Bearer <token>)"),
        (403, "Not allowed"),
        (404, "Not found"),
        (409, "Conflict"),
        (413, "Request body too large"),
        (422, "Invalid input: bbsgm's message, or FastAPI's list of problems"),
        (429, "Too many attempts; see Retry-After"),
    ]
}
