"""遊び方 pages (docs/games.md, "遊び方 pages"): ``GET /games/{kind}/howto``, one page per
game kind that a player reads before their first game.

The prose (what the game is, setup, a turn, the end) is the kind's template
``templates/howto/<kind>.html``; everything that could drift from the code is drawn from the
game itself when the page is made: the command list from its grammar's verbs (with the help
and example lines of ``app/games/<kind>/howto.py``), the house content from its content files,
and the worked first turn by playing its lines through the game's own API with a fixed seed.
The page shows house content and fixed lines; its only user text is the titles of the kind's
recruiting tables, under このゲームの卓を作る (/games/new?kind=<kind> preselects the kind).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request, Response

from app.games import GAMES
from app.games.base import CommandSyntaxError, Game, RuleError
from app.games.howtos import HOWTOS
from app.games.kit.howto import (
    PLATFORM_COMMANDS,
    CommandHelp,
    Howto,
    ShownPost,
    rules_path,
    verb_groups,
)
from app.games.kit.howto import play_first_turn as play
from app.gm import lobby
from app.web.common import render
from app.web.deps import PageUser, ReadSession

router = APIRouter(include_in_schema=False)
log = logging.getLogger(__name__)
TABLES_SHOWN = 5  # the kind's newest recruiting tables; the rest are on /games


def howto_kinds() -> list[Game]:
    """The kinds a newcomer can read the 遊び方 of, in the site's order: the lobby links each
    (templates/includes/lobby.html)."""
    return [game for game in GAMES.values() if game.kind in HOWTOS]


@dataclass(frozen=True)
class CommandRow:
    """A verb as the page lists it: its spellings (from the grammar), what it does, who
    gives it, and example lines."""

    words: tuple[str, ...]
    what: str
    who: str
    examples: tuple[str, ...]


def command_rows(game: Game, howto: Howto) -> tuple[list[CommandRow], list[CommandRow]]:
    """The game's own verbs, then the platform's, each with the spellings its grammar reads.
    A verb the grammar knows and the howto does not describe is still listed (with no help)."""
    groups = verb_groups(game)
    first_example = next(example for help in howto.commands for example in help.examples)
    helps: dict[str, CommandHelp] = {help.verb: help for help in howto.commands}
    own: list[CommandRow] = []
    platform: list[CommandRow] = []
    platform_helps = {help.verb: help for help in PLATFORM_COMMANDS}
    for terminal, words in groups.items():
        help = helps.get(terminal)
        shared = platform_helps.get(terminal)
        if shared is not None:
            examples = shared.examples or (f"AS {howto.players[-1]} {first_example}",)
            platform.append(CommandRow(tuple(words), shared.what, shared.who, examples))
        elif help is not None:
            own.append(CommandRow(tuple(words), help.what, help.who, help.examples))
        else:
            own.append(CommandRow(tuple(words), "", "player", ()))
    return own, platform


@functools.cache
def first_turn(kind: str) -> tuple[ShownPost, ...]:
    """The worked first turn of a kind, played once per process (it is fixed)."""
    try:
        return tuple(play(GAMES[kind], HOWTOS[kind]))
    except (RuleError, CommandSyntaxError) as error:  # the tests keep this from happening
        log.error("the worked first turn of %s no longer plays: %s", kind, error)
        return ()


@router.get(rules_path("{kind}"))
def howto_page(
    request: Request,
    kind: Annotated[str, Path(max_length=40)],
    session: ReadSession,
    user: PageUser,
) -> Response:
    game = GAMES.get(kind)
    howto = HOWTOS.get(kind)
    if game is None or howto is None:
        raise HTTPException(status_code=404)
    own, platform = command_rows(game, howto)
    return render(
        request,
        f"howto/{kind}.html",
        user,
        impl=game,
        howto=howto,
        commands=own,
        platform_commands=platform,
        first_turn=first_turn(kind),
        sections=howto.content(),
        other_kinds=[other for other in GAMES.values() if other.kind != kind],
        # Where to play it: a new table of this kind, or one of its recruiting tables.
        new_table=f"/games/new?kind={kind}",
        tables=lobby.recruiting(session, user, limit=TABLES_SHOWN, kind=kind),
    )
