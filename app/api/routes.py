"""JSON API under /api (../shared/API.md). Bearer tokens only: cookies are never read here,
so no cross-site form can act through it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from sqlalchemy.orm import Session

from app.accounts import ratelimit
from app.accounts import users as accounts
from app.api import schemas
from app.api.games import post_result
from app.api.me import router as me_router
from app.db.models import User
from app.forum import moderation
from app.forum import service as forum
from app.gm import service as gm
from app.web import deps
from app.web.deps import ApiUser, ReadSession, SettingsDep, WriteSession

router = APIRouter(prefix="/api", responses=schemas.ERROR_RESPONSES)
PostNumber = Annotated[int, Path(ge=1, le=2**31 - 1)]


@router.post("/register", status_code=201, response_model=schemas.UserOut)
def register(body: schemas.Credentials, request: Request, session: WriteSession) -> schemas.UserOut:
    ratelimit.check_register(session, request)
    user = accounts.register(session, body.name, body.password)
    return schemas.UserOut(id=user.id, name=user.name)


@router.post("/login", response_model=schemas.TokenOut)
def login(body: schemas.Credentials, request: Request, session: WriteSession) -> schemas.TokenOut:
    ratelimit.check_login(session, request, body.name)
    user = accounts.authenticate(session, body.name, body.password)
    token = accounts.issue_token(session, user, "api")
    return schemas.TokenOut(token=token)


@router.post("/logout", status_code=204)
def logout(request: Request, session: WriteSession, _user: ApiUser) -> Response:
    accounts.revoke_token(session, deps.bearer_token(request) or "")
    return Response(status_code=204)


@router.get("/me", response_model=schemas.UserOut)
def me(user: ApiUser) -> schemas.UserOut:
    return schemas.UserOut(id=user.id, name=user.name)


@router.get("/boards", response_model=list[schemas.BoardOut])
def boards(session: ReadSession) -> list[schemas.BoardOut]:
    return [schemas.BoardOut.of(board) for board in forum.list_boards(session)]


@router.get("/boards/{slug}/threads", response_model=schemas.ThreadList)
def board_threads(
    slug: str,
    session: ReadSession,
    settings: SettingsDep,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> schemas.ThreadList:
    board = forum.get_board(session, slug)
    threads, current = forum.list_threads(session, board, page, settings.threads_per_page)
    games = gm.game_ids_for_threads(session, [t.id for t in threads])
    return schemas.ThreadList(
        threads=[schemas.ThreadOut.of(t, games.get(t.id)) for t in threads],
        page=current.number,
        pages=current.count,
    )


@router.post("/boards/{slug}/threads", status_code=201, response_model=schemas.CreatedThread)
def create_thread(
    slug: str, body: schemas.NewThread, request: Request, session: WriteSession, user: ApiUser
) -> schemas.CreatedThread:
    ratelimit.check_post(session, request, user)
    board = forum.get_board(session, slug)
    thread, post = forum.create_thread(
        session, board, user, body.title, body.body, deps.secret_key(request), name=body.name
    )
    return schemas.CreatedThread(
        **schemas.ThreadOut.of(thread).model_dump(), post=schemas.PostOut.of(post)
    )


@router.get("/threads/{thread_id}", response_model=schemas.ThreadWithPosts)
def thread(
    thread_id: int,
    session: ReadSession,
    after: Annotated[int, Query(ge=0, le=2**31)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> schemas.ThreadWithPosts:
    found = forum.get_thread(session, thread_id)
    posts = forum.list_posts(session, found, after, limit)
    games = gm.game_ids_for_threads(session, [found.id])
    return schemas.ThreadWithPosts(
        thread=schemas.ThreadOut.of(found, games.get(found.id)),
        posts=[schemas.PostOut.of(p) for p in posts],
    )


@router.post(
    "/threads/{thread_id}/posts",
    status_code=201,
    response_model=schemas.PostResult,
    dependencies=[Depends(deps.require_bearer_header)],
)
async def create_post(
    thread_id: int, body: schemas.NewPost, request: Request
) -> schemas.PostResult:
    """A post, and the game master's answer when it holds commands (``gm.submit_post``)."""
    secret = deps.secret_key(request)

    def work(session: Session, user: User) -> schemas.PostResult:
        post, replies = ratelimit.counted_post(
            session,
            request,
            user,
            lambda: gm.submit_post(session, thread_id, user, body.body, secret, name=body.name),
        )
        return post_result(post, replies)

    return await deps.signed_in_work(request, work)


@router.post("/threads/{thread_id}/posts/{number}/hide", response_model=schemas.PostOut)
def hide_post(
    thread_id: int, number: PostNumber, session: WriteSession, user: ApiUser
) -> schemas.PostOut:
    """あぼーん: the post stays in place with its number; admins still read the original."""
    post = moderation.set_hidden(session, thread_id, number, user, True)
    return schemas.PostOut.of(post)


@router.post("/threads/{thread_id}/posts/{number}/unhide", response_model=schemas.PostOut)
def unhide_post(
    thread_id: int, number: PostNumber, session: WriteSession, user: ApiUser
) -> schemas.PostOut:
    post = moderation.set_hidden(session, thread_id, number, user, False)
    return schemas.PostOut.of(post)


router.include_router(me_router)  # GET /api/me/turns (app/api/me.py)
