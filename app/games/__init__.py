"""The game registry (compare python-chess's `find_variant`).

from app.games import find_game
game = find_game("えいつく")      # kind, Japanese title or any alias; NFKC, case-insensitive
state = game.setup(["A", "B"], {}, Rng(seed, 0))
"""

from __future__ import annotations

import contextlib
import unicodedata

from app.games.base import CommandSyntaxError, Game
from app.games.cardbattle import game as cardbattle
from app.games.eitsuku import game as eitsuku
from app.games.eleusis import game as eleusis
from app.games.idolwp import game as idolwp
from app.games.populous import game as populous

__all__ = ["GAMES", "Game", "all_games", "find_game", "warm_up"]

GAMES: dict[str, Game] = {
    game.kind: game for game in (eitsuku, eleusis, populous, idolwp, cardbattle)
}


def _key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).strip().casefold()


def find_game(name: str) -> Game | None:
    """The game whose kind, title or alias is `name` (NFKC-normalised, case-insensitive)."""
    # The post path asks by kind several times a post: a kind as stored is answered from what
    # the search found for it the first time, instead of normalising every name of every game
    # again (the last kind registered paid for all of them). Only kinds are kept: other names
    # come from users and are searched each time.
    if name in GAMES:
        found = _BY_KIND.get(name)
        if found is None:
            found = _BY_KIND[name] = _first_with(name)
        return found
    return _first_with(name)


_BY_KIND: dict[str, Game | None] = {}


def _first_with(name: str) -> Game | None:
    wanted = _key(name)
    for game in GAMES.values():
        names = (game.kind, game.title_ja, game.title_en, *game.aliases)
        if any(_key(candidate) == wanted for candidate in names):
            return game
    return None


def all_games() -> list[Game]:
    return list(GAMES.values())


def warm_up() -> None:
    """Build every game's parser now (Lark's tables and lexers, the verb patterns, the
    transformer) and validate its house content: the app calls this at start-up, so that no
    post pays for it and a bad content file stops the start, naming its file and line."""
    for game in GAMES.values():
        game.check_content()
        game.verbs()
        game.is_command_line("JOIN")
        with contextlib.suppress(CommandSyntaxError):
            game.parse("JOIN")
