"""Pages for games: the list, a new game form, and each game's page (board, your view, legal
command lines that fill the post form, the ranking once over)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, MutableSequence, Sequence
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Form, Query, Request, Response
from sqlalchemy.orm import Session

from app.accounts import ratelimit
from app.db.models import Game, User
from app.errors import Invalid, ServiceError
from app.forum import moderation
from app.forum import service as forum
from app.forum.render import render_body
from app.games import all_games, find_game
from app.games.base import CommandSyntaxError, Rng, RuleError
from app.games.eleusis import grammar as eleusis_grammar
from app.games.howtos import HOWTOS
from app.gm import lobby, secrecy
from app.gm import options as game_options
from app.gm import service as gm
from app.i18n import N_, gettext
from app.web import deps
from app.web.common import CSRF_MESSAGE, game_panel, redirect, render
from app.web.deps import PageUser, ReadSession, SettingsDep, WriteSession
from app.web.howto_pages import howto_kinds

router = APIRouter(include_in_schema=False)

RECENT_POSTS = 15
T = TypeVar("T")

# --------------------------------------------------------------------------- turn builders
# A multi-part move built by tapping its parts (docs/phone.md, "The turn dock"): every part is
# taken from the lines legal now (or the player's own view), never from rules written again.

# Legal lines of one verb naming numbers (`CUBES 情熱 2 食料 3 信仰 2`): offered as steppers
# once there are this many of them (fewer stay buttons).
STEPPER_MIN_LINES = 4
NUMBERED = re.compile(r"^(\S+)((?:\s+[^\s\d-]\S*\s+-?\d+)+)$")
LABELLED = re.compile(r"([^\s\d-]\S*)\s+(-?\d+)")
# A kind whose PLAY takes several of the cards its single-card lines name: the most cards a
# line may hold (the game's own grammar) and where the player's hand is in their own view.
CARD_PLAYS: dict[str, int] = {"eleusis": eleusis_grammar.MAX_PLAY}
# Kinds whose turn is a sequence of steps a post may hold all of, offered one step after
# another (the lines legal after the ones chosen, computed on a copy): ポピュラス's area,
# wrath, placement, hand play, moves and the end. Only for a game where what the next step
# allows depends on nothing the player may not see but dice (docs/phone.md).
TURN_CHAINS = frozenset({"populous"})
# The most lines a built turn may hold (a populous turn takes a dozen at most).
CHAIN_MAX_LINES = 40


def steppers(lines: Sequence[str], sealed: bool) -> list[dict[str, Any]]:
    """Legal lines of one verb and one list of labels, each with a number: one stepper per
    label, the combinations that are legal (each the legal line itself) and where to start."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[tuple[int, ...], str]]] = {}
    for line in lines:
        found = NUMBERED.match(line)
        if not found:
            continue
        pairs = LABELLED.findall(found.group(2))
        labels = tuple(label for label, _ in pairs)
        values = tuple(int(value) for _, value in pairs)
        groups.setdefault((found.group(1), labels), []).append((values, line))
    built = []
    for (verb, labels), combos in groups.items():
        if len(combos) < STEPPER_MIN_LINES:
            continue
        # Start at the most even legal split (the first such line).
        even = min(combos, key=lambda combo: max(combo[0]) - min(combo[0]))[0]
        built.append(
            {
                "type": "stepper",
                "verb": verb,
                "sealed": sealed,
                "labels": [
                    {
                        "label": label,
                        "low": min(values[i] for values, _ in combos),
                        "high": max(values[i] for values, _ in combos),
                        "start": even[i],
                    }
                    for i, label in enumerate(labels)
                ],
                "combos": {",".join(map(str, values)): line for values, line in combos},
                "lines": {line for _, line in combos},
            }
        )
    return built


def multisets(lines: Sequence[str], sealed: bool) -> list[dict[str, Any]]:
    """Legal lines that share their first two words and end in the same number of tokens of a
    few kinds, in any mix (IM@S `CONVERT MEMORY Vo Vo Da`): one stepper per kind counting it
    in the line; each count of kinds is one legal line (one order per mix, or no builder)."""
    groups: dict[tuple[str, int], list[tuple[list[str], str]]] = {}
    for line in lines:
        parts = line.split()
        if len(parts) < 4 or NUMBERED.match(line):
            continue
        groups.setdefault((" ".join(parts[:2]), len(parts) - 2), []).append((parts[2:], line))
    built = []
    for (head, _size), found in groups.items():
        kinds = list(dict.fromkeys(token for tail, _ in found for token in tail))
        if len(found) < STEPPER_MIN_LINES or len(kinds) > 4 or any(k.isdigit() for k in kinds):
            continue
        combos: dict[tuple[int, ...], str] = {}
        for tail, line in found:
            combos.setdefault(tuple(tail.count(kind) for kind in kinds), line)
        if len(combos) != len(found):
            continue  # the order of the tokens matters: not a mix
        even = min(combos, key=lambda counts: max(counts) - min(counts))
        built.append(
            {
                "type": "stepper",
                "verb": head,
                "sealed": sealed,
                "labels": [
                    {
                        "label": kind,
                        "low": min(counts[i] for counts in combos),
                        "high": max(counts[i] for counts in combos),
                        "start": even[i],
                    }
                    for i, kind in enumerate(kinds)
                ],
                "combos": {",".join(map(str, counts)): line for counts, line in combos.items()},
                "lines": set(combos.values()),
            }
        )
    return built


def card_plays(
    kind: str, lines: Sequence[str], own_view: Mapping[str, Any] | None, sealed: bool
) -> list[dict[str, Any]]:
    """`PLAY <mark> <card>` lines of a kind in CARD_PLAYS: the marks and, from the player's
    hand (each card as often as it is held), the cards named by a legal line."""
    most = CARD_PLAYS.get(kind)
    if most is None or own_view is None or not isinstance(own_view.get("hand"), list):
        return []
    marks: dict[str, list[str]] = {}
    verb = ""
    taken: set[str] = set()
    for line in lines:
        parts = line.split()
        if len(parts) != 3 or (verb and parts[0] != verb):
            continue
        verb = parts[0]
        marks.setdefault(parts[1], [])
        taken.add(line)
        marks[parts[1]].append(parts[2])
    if not marks:
        return []
    named = {card for cards in marks.values() for card in cards}
    hand = [str(card) for card in own_view["hand"] if str(card) in named]
    if len(hand) < 2:
        return []
    return [
        {
            "type": "cards",
            "verb": verb,
            "sealed": sealed,
            "marks": list(marks),
            "hand": hand,
            "most": min(most, len(hand)),
            "lines": taken,
        }
    ]


def turn_builders(game: Game, panel: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The builders offered on the game page for the lines legal now."""
    built: list[dict[str, Any]] = []
    for sealed, lines in ((False, panel["legal"]), (True, panel["sealed_legal"])):
        built += steppers(lines, sealed)
        built += multisets(lines, sealed)
        built += card_plays(game.kind, lines, panel["own_view"], sealed)
    if game.kind in TURN_CHAINS and panel["seat"] is not None and panel["legal"]:
        built.append({"type": "chain", "sealed": False, "lines": set(panel["legal"])})
    return built


class _Drawn(Exception):
    """A die or a shuffle was asked for: what follows is decided when the post is made."""


class NoDraw(Rng):
    """The randomness of a move tried ahead: none. A step that would roll or shuffle stops the
    look-ahead, so no answer depends on a random result."""

    def __init__(self) -> None:
        super().__init__("", 0)

    def randint(self, a: int, b: int) -> int:
        raise _Drawn

    def shuffle(self, items: MutableSequence[Any]) -> None:
        raise _Drawn

    def choice(self, items: Sequence[T]) -> T:
        raise _Drawn


def lines_after(game: Game, seat: int, lines: Sequence[str]) -> tuple[list[str], str]:
    """The thread lines legal for ``seat`` after ``lines`` (each legal in turn, applied to a
    copy): (the lines, why there are none: "" / "drawn" / "refused")."""
    impl = gm.game_impl(game.kind)
    state = game.state
    if state is None:
        return [], "refused"
    for line in lines:
        if line not in impl.legal(state, seat):
            return [], "refused"
        try:
            state, _events = impl.apply(state, seat, impl.parse(line), NoDraw())
        except _Drawn:
            return [], "drawn"
        except (CommandSyntaxError, RuleError):
            return [], "refused"
    return impl.legal(state, seat), ""


@router.get("/games")
def games_list(
    request: Request,
    session: ReadSession,
    settings: SettingsDep,
    user: PageUser,
    status: Annotated[str | None, Query(max_length=32)] = None,
    kind: Annotated[str | None, Query(max_length=64)] = None,
    page: Annotated[int, Query(ge=1, le=1_000_000)] = 1,
) -> Response:
    games, current = gm.list_games(
        session,
        status=status or None,
        kind=kind or None,
        player=None,
        q=None,
        page=page,
        per_page=settings.threads_per_page,
    )
    # The lobby first (docs/forum.md): on the list's first page, unfiltered or asking for
    # recruiting games.
    shown = page == 1 and (status or "recruiting") == "recruiting" and not kind
    tables = lobby.recruiting(session, user) if shown else None
    return render(
        request,
        "games/list.html",
        user,
        games=games,
        tables=tables,
        howto_kinds=howto_kinds(),
        page=current,
        kinds=all_games(),
        status=status or "",
        kind=kind or "",
    )


async def posted_form(request: Request) -> dict[str, str]:
    """The form's text fields by name (the first of a repeated one): the new game's options
    are named by kind, so they are read here rather than one parameter each."""
    form = await request.form()  # parsed once; the Form() parameters read the same
    found: dict[str, str] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):
            found.setdefault(name, value)
    return found


def new_game_page(
    request: Request,
    user: User | None,
    form: dict[str, str],
    status: int = 200,
    error: str | None = None,
    problems: dict[str, str] | None = None,
) -> Response:
    """The /games/new form: each kind's own options in a fieldset of its own (only the chosen
    kind's are read), then the options every game has (docs/gm.md, "New games")."""
    kinds = all_games()
    return render(
        request,
        "games/new.html",
        user,
        status,
        kinds=kinds,
        kind_options={impl.kind: game_options.form_fields(impl) for impl in kinds},
        summaries={kind: howto.summary for kind, howto in HOWTOS.items()},
        platform_options=game_options.PLATFORM_FIELDS,
        form=form,
        posted=request.method == "POST",
        error=error,
        problems=problems or {},
    )


@router.get("/games/new")
def new_game_form(
    request: Request, user: PageUser, kind: Annotated[str, Query(max_length=64)] = ""
) -> Response:
    """``?kind=`` preselects a kind (a 遊び方 page's このゲームの卓を作る)."""
    return new_game_page(request, user, {"kind": kind, "title": ""})


@router.post("/games")
def create_game(
    request: Request,
    session: WriteSession,
    user: PageUser,
    posted: Annotated[dict[str, str], Depends(posted_form)],
    kind: Annotated[str, Form()] = "",
    title: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    form = {**posted, "kind": kind, "title": title}
    form.pop("csrf_token", None)
    problems: dict[str, str] = {}
    if user is None:
        status, error = 401, N_("ゲームを作るにはログインしてください。")
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        impl = find_game(kind)
        options = game_options.from_form(impl, posted) if impl is not None else {}
        bots = _bots_of(posted.get("bots", ""))
        rated = posted.get("rated_with_bots", "") not in ("", "off", "false", "0", "no")
        try:
            ratelimit.check_post(session, request, user)
            if bots is None:
                raise Invalid(BOTS_NOT_A_NUMBER, field="bots")
            game = gm.create_game(
                session,
                user,
                kind,
                title,
                options,
                deps.secret_key(request),
                bots=bots,
                rated_with_bots=rated,
            )
            return redirect(f"/games/{game.id}")
        except game_options.OptionsInvalid as exc:
            session.end_writes()
            status = exc.status
            said = {p.name: option_message(p) for p in exc.problems}
            problems = {game_options.input_name(kind, p): said[p.name] for p in exc.problems}
            error = gettext(game_options.SUMMARY) % {"reason": " ".join(said.values())}
        except ServiceError as exc:
            session.end_writes()
            status, error = exc.status, exc.message
    return new_game_page(request, user, form, status, error, problems)


BOTS_NOT_A_NUMBER = N_("ボットの数は0以上の整数で書いてください。")


def _bots_of(raw: str) -> int | None:
    """The form's ボットの数 (empty: none); None when it is not a whole number."""
    text = unicodedata.normalize("NFKC", raw).strip()
    if not text:
        return 0
    if not text.isdecimal():
        return None
    return int(text) if len(text) <= 3 else 1000  # more than any kind seats: refused as such


def option_message(problem: game_options.Problem) -> str:
    """A bad option's message in the reader's language (its label and values looked up)."""
    values = {
        key: gettext(value) if key == "label" else value for key, value in problem.values.items()
    }
    said: str = gettext(problem.msgid) % values if values else gettext(problem.msgid)
    return said


def _game_page(
    request: Request,
    session: Session,
    game: Game,
    user: User | None,
    status: int = 200,
    **extra: Any,
) -> Response:
    thread = game.thread
    posts = forum.list_posts(
        session, thread, max(0, thread.post_count - RECENT_POSTS), RECENT_POSTS
    )

    def anchor_href(number: int) -> str:
        return f"/threads/{thread.id}?page={(number - 1) // 100 + 1}#{number}"

    recent = [(post, render_body(moderation.shown_body(post, user), anchor_href)) for post in posts]
    context = game_panel(session, game, user)
    builders = turn_builders(game, context)
    sealed = gm.sealed_for(session, game, user)
    can_seal = game.status == "active" and (context["seat"] is not None or context["is_gm"])
    values: dict[str, Any] = {
        "form": {"body": ""},
        "error": None,
        "preview": None,
        "sealed_error": None,
        "sealed_body": "",
        **extra,
    }
    return render(
        request,
        "games/game.html",
        user,
        status,
        thread=thread,
        recent=recent,
        sealed=sealed,
        can_seal=can_seal,
        panel=context,
        builders=builders,
        board_game_id=game.id,
        **context,
        **values,
    )


@router.get("/games/{game_id}")
def game_page(request: Request, game_id: int, session: ReadSession, user: PageUser) -> Response:
    return _game_page(request, session, gm.get_game(session, game_id), user)


@router.get("/games/{game_id}/builders")
def builders_fragment(
    request: Request, game_id: int, session: ReadSession, user: PageUser
) -> Response:
    """The turn dock's builders alone, for app.js to rebuild them when live.js refreshes the
    panel (the lines legal now changed: a builder must never offer the old ones)."""
    game = gm.get_game(session, game_id)
    context = game_panel(session, game, user)
    builders = turn_builders(game, context)
    return render(
        request, "games/builders_fragment.html", user, game=game, panel=context, builders=builders
    )


@router.get("/games/{game_id}/turn")
def turn_steps(
    request: Request,
    game_id: int,
    session: ReadSession,
    user: PageUser,
    line: Annotated[list[str] | None, Query(max_length=CHAIN_MAX_LINES)] = None,
) -> Response:
    """The turn builder's next step (an HTML fragment): the lines this player may post after
    ``line``… in one post. Only for a seated player of a TURN_CHAINS kind in their turn."""
    game = gm.get_game(session, game_id)
    seat = gm.seat_of(game, user)
    chosen = [text.strip() for text in line or []]
    playing = game.status == "active" and not game.paused and game.kind in TURN_CHAINS
    if (
        playing
        and game.state is not None
        and seat not in gm.game_impl(game.kind).waiting_for(game.state)
    ):
        seat = None  # not this player's turn: nothing to build
    lines: list[str] = []
    if seat is None or not playing:
        why, status = "not_yours", 403
    elif any(not text or len(text) > 200 for text in chosen):
        why, status = "refused", 422
    else:
        lines, why = lines_after(game, seat, chosen)
        status = 422 if why == "refused" else 200
    return render(
        request,
        "games/turn_steps.html",
        user,
        status,
        game=game,
        lines=lines,
        why=why,
        chosen=chosen,
    )


@router.post("/games/{game_id}/sealed")
def sealed_command(
    request: Request,
    game_id: int,
    session: WriteSession,
    user: PageUser,
    body: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    game = gm.get_game(session, game_id)
    if user is None:
        status, error = 401, N_("封印コマンドを送るにはログインしてください。")
    elif not deps.csrf_ok(request, csrf_token):
        status, error = 403, CSRF_MESSAGE
    else:
        try:
            ratelimit.check_post(session, request, user)
            row, _public = gm.submit_sealed(session, game.id, user, body, deps.secret_key(request))
            if row.ok:
                return redirect(f"/games/{game.id}#sealed")
            status, error = 422, row.reply
        except ServiceError as exc:
            session.end_writes()
            status, error = exc.status, exc.message
    game = gm.get_game(session, game_id)
    return _game_page(request, session, game, user, status, sealed_error=error, sealed_body=body)


@router.get("/games/{game_id}/log")
def game_log(request: Request, game_id: int, session: ReadSession, user: PageUser) -> Response:
    game = gm.get_game(session, game_id)
    entries = moderation.log_for(session, game)
    moves = gm.moves_of(session, game)
    reader = secrecy.reader(game, user)
    return render(
        request, "games/log.html", user, game=game, entries=entries, moves=moves, reader=reader
    )
