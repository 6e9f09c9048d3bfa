"""JSON shapes of ../shared/API.md (more fields are allowed; these are relied on)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.models import Board, Post, Thread
from app.moderation import HIDDEN_BODY


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


class NewThread(BaseModel):
    title: str = Field(max_length=100_000)
    body: str = Field(max_length=1_000_000)


class NewPost(BaseModel):
    body: str = Field(max_length=1_000_000)


class CreatedThread(ThreadOut):
    post: PostOut


class PostResult(BaseModel):
    post: PostOut
    replies: list[ReplyOut]
