"""Which cardbattle games used a card (docs/cards.md "What the registry checks"): the one
place that says what "used" means (R 「一度でもゲーム中に使用したことがある」: a card used at
least once may be promoted), read from a game's state without the engine. Re-exported by
app/gm/cards.py."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Game
from app.games.cardbattle.registry import name_key

__all__ = ["CARD_GAME_KIND", "PLAYED", "CardGame", "deck_cards", "played_in", "used_in_games"]

CARD_GAME_KIND = "cardbattle"
# A card counts as used by a game that has started: running or finished (not aborted).
PLAYED = ("active", "finished")


def _strings(value: Any) -> Iterable[str]:
    """Every string in a piece of JSON — values only, never keys (a deck may be keyed by its
    player's name)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def deck_cards(state: Any) -> set[str]:
    """The names of the cards the game used (R 「一度でもゲーム中に使用したことがある」): the
    normal cards on the field (public once the decks are revealed) and the magic cards
    declared. A sealed deck, and magic never declared (even once the epilogue shows it), were
    not used: they do not make a game count as having used a card. A state with ``decks``
    (name lists, in any shape) counts those too."""
    if not isinstance(state, dict):
        return set()
    names = set(_strings(state.get("decks")))
    players = state.get("players")
    for player in players if isinstance(players, list) else []:
        if not isinstance(player, dict):
            continue
        field = player.get("field")
        for card in field if isinstance(field, list) else []:
            if isinstance(card, dict) and isinstance(card.get("name"), str):
                names.add(card["name"])
        names.update(_strings(player.get("magic_used")))
    return names


def used_in_games(session: Session, name: str) -> list[Game]:
    """The cardbattle games, running or finished, that used the card: it is in one of their
    players' decks (`deck_cards`). The one place that says what "used" means (R: a card used
    at least once may be promoted)."""
    key = name_key(name)
    games = session.scalars(
        select(Game).where(Game.kind == CARD_GAME_KIND, Game.status.in_(PLAYED)).order_by(Game.id)
    )
    return [
        game for game in games if any(name_key(named) == key for named in deck_cards(game.state))
    ]


@dataclass(frozen=True)
class CardGame:
    """A game a card was played in, and the card's version in that game's pool."""

    game: Game
    version: int | None


def played_in(session: Session, name: str) -> list[CardGame]:
    found = []
    for game in used_in_games(session, name):
        in_pool = (game.options or {}).get("pool")
        version = None
        if isinstance(in_pool, dict):
            for pooled_name, card in in_pool.items():
                if name_key(pooled_name) == name_key(name) and isinstance(card, dict):
                    version = card.get("version") if isinstance(card.get("version"), int) else None
        found.append(CardGame(game, version))
    return found
