"""Server-Sent Events for threads: new posts appear without a reload (app/web/static/live.js);
every page still works without JavaScript."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.concurrency import run_in_threadpool

from app.api.schemas import ERROR_RESPONSES, PostOut
from app.db.engine import Database
from app.forum import moderation
from app.forum import service as forum
from app.forum.render import render_body
from app.gm import service as gm
from app.live import hub as live
from app.web.common import game_panel, render
from app.web.deps import PageUser, ReadSession

router = APIRouter()
BATCH = 200


class PostEvent(PostOut):
    """The data of one ``event: post``: the post's JSON fields and its server-rendered HTML."""

    html: str


# OpenAPI 3.1 has no keyword for event streams: the `schema` of `text/event-stream` describes one
# event as EventSource parses it (as schemathesis reads it too); its `data` is a PostEvent.
POST_EVENT_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {
        "event": {"const": "post"},
        "id": {
            "type": "string",
            "pattern": "^[1-9][0-9]*$",
            "description": "The post's number; sent back as Last-Event-ID, the stream resumes",
        },
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": PostEvent.model_json_schema(),
        },
    },
    "required": ["event", "id", "data"],
}
EVENTS_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {
        "description": "An endless event stream: every post after `after`, then each new one",
        "content": {"text/event-stream": {"schema": POST_EVENT_SCHEMA}},
    },
    **{status: ERROR_RESPONSES[status] for status in (404, 422, 429)},
}


def _posts_after(state: Any, db: Database, thread_id: int, after: int) -> list[dict[str, Any]]:
    """The posts after ``after`` as SSE payloads: JSON fields plus the server-rendered HTML;
    ``state`` is the app's."""
    template = state.templates.get_template("includes/post.html")
    per_page = state.settings.posts_per_page
    with db.read_session() as session:  # on SQLite, not in line with the posts (app/db/engine.py)
        thread = forum.get_thread(session, thread_id)
        posts = forum.list_posts(session, thread, after, BATCH)
        board_game_id = None
        if any(post.board_at is not None for post in posts):
            board_game_id = gm.game_ids_for_threads(session, [thread_id]).get(thread_id)
    # Rendered once the transaction is over, from what was loaded (detached: a lazy load
    # would raise, never start another transaction).
    payloads = []
    for post in posts:
        page = (post.number - 1) // per_page + 1

        def href(number: int, page: int = page) -> str:
            target = (number - 1) // per_page + 1
            return f"#{number}" if target == page else f"?page={target}#{number}"

        html = template.render(
            post=post,
            html=render_body(moderation.shown_body(post, None), href),
            thread=thread,
            undone_posts=(),
            can_moderate=False,
            user=None,
            csrf_token="",
            board_game_id=board_game_id,
        )
        payloads.append({**PostOut.of(post).model_dump(mode="json"), "html": html})
    return payloads


def _events_after(state: Any, db: Database, thread_id: int, after: int) -> live.Batch:
    """The posts after ``after`` as one chunk of ``event: post`` events, encoded once for every
    stream that waits for them (app/live/hub.py)."""
    payloads = _posts_after(state, db, thread_id, after)
    events = b"".join(
        ServerSentEvent(json.dumps(payload), event="post", id=str(payload["number"])).encode()
        for payload in payloads
    )
    return live.Batch(events, payloads[-1]["number"] if payloads else after, len(payloads))


def _loader(state: Any, db: Database, thread_id: int) -> live.Loader:
    async def load(after: int) -> live.Batch:
        return await run_in_threadpool(_events_after, state, db, thread_id, after)

    return load


def _resume_point(last_event_id: str | None, after: int) -> int:
    if last_event_id and last_event_id.isdigit() and len(last_event_id) < 10:
        return int(last_event_id)
    return after


@router.get("/threads/{thread_id}/events", include_in_schema=False)
@router.get(
    "/api/threads/{thread_id}/events",
    response_class=EventSourceResponse,
    responses=EVENTS_RESPONSES,
)
async def thread_events(
    request: Request,
    thread_id: int,
    after: Annotated[int, Query(ge=0, le=2**31)] = 0,
    last_event_id: Annotated[str | None, Header()] = None,
) -> Response:
    """``event: post`` for every post after ``after`` (or ``Last-Event-ID``), then live."""
    db: Database = request.app.state.database
    await run_in_threadpool(_check_thread, db, thread_id)
    start = _resume_point(last_event_id, after)
    poll = request.app.state.settings.live_poll_seconds

    async def stream() -> AsyncIterator[bytes]:
        last = start
        # Streams of the thread share their reads (app/live/hub.py): one per process and post.
        state = request.app.state
        subscription = live.HUB.subscribe(
            thread_id, (state, db), _loader(state, db, thread_id), poll
        )
        try:
            await live.HUB.ready()  # on PostgreSQL: LISTEN before the first read
            while True:
                subscription.event.clear()
                batch = await live.HUB.read(subscription, last)
                if batch.count:
                    last = batch.last
                    yield batch.events
                if batch.count < BATCH:  # else there is more already
                    await subscription.event.wait()
        finally:
            live.HUB.unsubscribe(subscription)

    return EventSourceResponse(stream(), ping=20, send_timeout=30)


def _check_thread(db: Database, thread_id: int) -> None:
    with db.read_session() as session:
        forum.get_thread(session, thread_id)


@router.get("/games/{game_id}/panel", include_in_schema=False)
def game_panel_fragment(
    request: Request, game_id: int, session: ReadSession, user: PageUser
) -> Response:
    """The game panel alone, for live.js to refresh the board after a move."""
    game = gm.get_game(session, game_id)
    panel = game_panel(session, game, user)
    return render(request, "games/panel_fragment.html", user, panel=panel)
