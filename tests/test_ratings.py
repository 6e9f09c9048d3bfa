"""Ratings per kind (docs/ratings.md): OpenSkill's Plackett–Luce model over finished games, ties
shared, aborted games and games with bots left out, a rebuild that gives the same numbers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from openskill.models import PlackettLuce
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import cli
from app.config import Settings
from app.db.engine import Database
from app.db.models import Game, GamePlayer, RatedGame, Rating, User
from app.gm import ratings
from app.gm import service as gm
from tests.test_archive_helpers import SECRET, make_user, play, post

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def finished_game(
    session: Session,
    people: list[User],
    ranks: list[int],
    at: datetime,
    kind: str = "eitsuku",
) -> Game:
    """A game of ``people`` (seated in order, as JOIN seats them) that finished at ``at`` with
    these ranks, written as the game master writes a finished game (status, players at the
    start, result, finished_at, a new version): the ratings' input, chosen."""
    master = make_user(session, "gm")
    game = gm.create_game(session, master, kind, "レート卓", {}, SECRET)
    for seat, person in enumerate(people):
        game.players.append(
            GamePlayer(game_id=game.id, seat=seat, user_id=person.id, name=person.name)
        )
    session.flush()
    game.status = "finished"
    game.players_at_start = [p.name for p in game.players]
    ranking: list[dict[str, Any]] = [
        {"name": person.name, "rank": rank, "score": 10 - rank, "breakdown": {}}
        for person, rank in zip(people, ranks, strict=True)
    ]
    game.result = {"ranking": sorted(ranking, key=lambda e: e["rank"])}
    game.started_at = at - timedelta(hours=1)
    game.finished_at = at
    game.version += 1
    session.flush()
    return game


def stored(session: Session, users: list[User], kind: str = "eitsuku") -> list[tuple[float, float]]:
    rows = {
        row.user_id: row
        for row in session.scalars(select(Rating).where(Rating.kind == kind))
        if row.user_id in {u.id for u in users}
    }
    return [(rows[u.id].mu, rows[u.id].sigma) for u in users]


def test_three_player_game_with_a_tie_rates_all_three_as_openskill_says(session: Session) -> None:
    people = [make_user(session, "r") for _ in range(3)]
    game = finished_game(session, people, [1, 1, 3], T0)
    assert ratings.record_finished(session, game) is True
    model = PlackettLuce()
    expected = model.rate([[model.rating()] for _ in people], ranks=[1, 1, 3])
    got = stored(session, people)
    for (mu, sigma), (rated,) in zip(got, expected, strict=True):
        assert mu == pytest.approx(rated.mu) and sigma == pytest.approx(rated.sigma)
    assert got[0] == got[1] and got[0][0] > got[2][0]  # the tie is shared, the last loses
    wins = {row.user_id: row.wins for row in session.scalars(select(Rating))}
    assert [wins[u.id] for u in people] == [1, 1, 0]


def test_a_game_is_rated_once(session: Session) -> None:
    people = [make_user(session, "r") for _ in range(2)]
    game = finished_game(session, people, [1, 2], T0)
    assert ratings.record_finished(session, game) is True
    once = stored(session, people)
    assert ratings.record_finished(session, game) is False
    ratings.catch_up(session)
    assert stored(session, people) == once
    games = session.scalars(select(Rating.games).where(Rating.user_id == people[0].id))
    assert list(games) == [1]


def test_rebuild_from_scratch_gives_the_same_numbers(session: Session) -> None:
    people = [make_user(session, "r") for _ in range(4)]
    a, b, c, d = people
    finished_game(session, [a, b, c], [1, 2, 2], T0)
    finished_game(session, [b, c, d], [1, 2, 3], T0 + timedelta(days=1))
    finished_game(session, [d, a], [1, 2], T0 + timedelta(days=2))
    ratings.catch_up(session)
    incremental = stored(session, people)
    ratings.rebuild(session)
    assert stored(session, people) == pytest.approx(incremental)
    model = PlackettLuce()
    r = {u.id: model.rating() for u in people}
    for seated, ranks in (([a, b, c], [1, 2, 2]), ([b, c, d], [1, 2, 3]), ([d, a], [1, 2])):
        new = model.rate([[r[u.id]] for u in seated], ranks=ranks)
        for u, (rated,) in zip(seated, new, strict=True):
            r[u.id] = rated
    assert incremental == pytest.approx([(r[u.id].mu, r[u.id].sigma) for u in people])


def test_a_game_finished_earlier_but_rated_later_is_folded_in_order_of_finish(
    session: Session,
) -> None:
    a, b = make_user(session, "r"), make_user(session, "r")
    late = finished_game(session, [a, b], [1, 2], T0 + timedelta(days=1))
    ratings.record_finished(session, late)
    early = finished_game(session, [a, b], [2, 1], T0)
    ratings.record_finished(session, early)
    folded = stored(session, [a, b])
    ratings.rebuild(session, ["eitsuku"])
    assert stored(session, [a, b]) == pytest.approx(folded)


def test_a_result_changed_after_the_end_is_folded_again(session: Session) -> None:
    a, b = make_user(session, "r"), make_user(session, "r")
    game = finished_game(session, [a, b], [1, 2], T0)
    ratings.record_finished(session, game)
    game.result = {"ranking": list(reversed(game.result["ranking"] if game.result else []))}
    game.result["ranking"][0]["rank"], game.result["ranking"][1]["rank"] = 1, 2
    game.version += 1
    session.flush()
    ratings.catch_up(session)
    (mu_a, _), (mu_b, _) = stored(session, [a, b])
    assert mu_b > mu_a  # b is now first


def test_aborted_games_are_not_rated(session: Session) -> None:
    played = play(session, players=2, stop_after=2)
    post(session, played.game, played.master, "ABORT")
    assert played.game.status == "aborted"
    assert ratings.record_finished(session, played.game) is False
    ratings.catch_up(session)
    assert session.get(RatedGame, played.game.id) is None
    seated = [u.id for u in played.players]
    assert not list(session.scalars(select(Rating).where(Rating.user_id.in_(seated))))


def test_games_with_a_bot_seat_are_excluded(session: Session) -> None:
    a, b = make_user(session, "r"), make_user(session, "r")
    game = finished_game(session, [a, b], [1, 2], T0)
    bot = next(p for p in game.players if p.user_id == b.id)
    bot.user_id, bot.bot = None, True  # a bot's seat (docs/bots.md)
    session.flush()
    ratings.record_finished(session, game)
    noted = session.get(RatedGame, game.id)
    assert noted is not None and noted.excluded == "bots"
    assert not list(session.scalars(select(Rating).where(Rating.user_id == a.id)))


def test_a_kicked_persons_seat_is_not_a_bot() -> None:
    kicked = GamePlayer(seat=0, user_id=None, name="x", kicked=True, bot=False)
    assert ratings.is_bot_seat(kicked) is False
    assert ratings.is_bot_seat(GamePlayer(seat=0, user_id=None, name="x", kicked=False, bot=True))
    assert not ratings.is_bot_seat(GamePlayer(seat=0, user_id=7, name="x", kicked=False, bot=False))


def test_provisional_until_five_games_and_a_settled_sigma() -> None:
    assert ratings.Standing("eitsuku", 1, 25.0, 3.0, 4, 0).provisional
    assert ratings.Standing("eitsuku", 1, 25.0, 7.0, 9, 0).provisional
    assert not ratings.Standing("eitsuku", 1, 25.0, 3.0, 5, 0).provisional


def test_bbsgm_ratings_rebuild_matches_the_incremental_ratings(
    database: Database,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with database.session() as session:
        people = [make_user(session, "c") for _ in range(3)]
        finished_game(session, people, [1, 2, 2], T0 + timedelta(days=3))
        ratings.catch_up(session)
        session.commit()
        before = stored(session, people)
    monkeypatch.setattr(cli, "get_settings", lambda: settings)
    assert cli.main(["ratings", "--rebuild"]) == 0
    assert "rebuilt" in capsys.readouterr().out
    with database.session() as session:
        assert stored(session, people) == pytest.approx(before)
