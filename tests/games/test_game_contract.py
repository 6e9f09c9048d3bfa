"""The contract every registered game keeps with the game master (app/games/base.py), the
checklist a new kind is done against (docs/games.md). First: ``apply`` never mutates the state
it is given. The pipeline relies on it: its working copy shares the
game's stored state instead of copying it (app/gm/pipeline.working_copy), so a game that wrote
into its input would change the stored state even when the post is refused."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from app.games import GAMES
from app.games.base import Actor, CommandSyntaxError, Rng, RuleError, State, Viewer
from app.games.base import Game as GameImpl
from app.games.resources import resource_dir
from app.gm import replay
from app.models import Game
from tests.fuzz_states import DRIVERS, PLAYERS, script

NAMES = ["太郎", "花子", "次郎", "三郎", "四郎", "五郎"]


def _names(impl: GameImpl) -> list[str]:
    return [f"P{n}" for n in range(max(impl.min_players, 3))][: impl.max_players]


def _lines(impl: GameImpl, state: State, seat: int) -> list[str]:
    """Every line the seat may write now: to the thread, sealed, and the written examples."""
    return [
        *impl.legal(state, seat),
        *impl.sealed_legal(state, seat),
        *(line for line, _sealed in impl.examples(state, seat)),
    ]


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_apply_never_mutates_its_input_over_whole_games(kind: str) -> None:
    impl = GAMES[kind]
    names = _names(impl)
    chooser = random.Random(f"contract-{kind}")
    applied = 0
    for game_number in range(3):
        state = impl.setup(names, {}, Rng(f"contract-{kind}-{game_number}", 0))
        for seq in range(1, 200):
            if impl.is_over(state):
                break
            seats = impl.waiting_for(state) or list(range(len(names)))
            seat = chooser.choice(seats)
            lines = _lines(impl, state, seat)
            if not lines:
                break
            snapshot = copy.deepcopy(state)
            moved = None
            for line in chooser.sample(lines, min(len(lines), 4)):
                try:
                    command = impl.parse(line)
                    sealed = impl.needs_seal(state, command) is True
                    new_state, _events = impl.apply(
                        state, seat, command, Rng(f"contract-{kind}", seq), sealed=sealed
                    )
                except (CommandSyntaxError, RuleError):
                    assert state == snapshot, f"a refused {line!r} changed its input"
                    continue
                assert state == snapshot, f"{line!r} changed the state it was given"
                moved = new_state
                applied += 1
            if moved is None:
                break
            state = moved
    assert applied >= 20, f"only {applied} moves applied: the contract was hardly exercised"


# --------------------------------------------------------------------------- the checklist
# docs/games.md: what a new kind must pass. Points of a game: the scripted game's stops
# (tests/fuzz_states.py, which every registered kind must have) and points reached by random
# legal play from the deal.

SCRIPTS = {kind: script(kind, NAMES[: PLAYERS[kind]]) for kind in DRIVERS}


def actors_of(state: State) -> list[Actor]:
    return [*range(len(state["players"])), "gm"]


def random_points(kind: str, games: int = 3, moves: int = 60) -> list[State]:
    """States reached by random legal play (thread and sealed lines alike)."""
    impl = GAMES[kind]
    names = SCRIPTS[kind].names
    chooser = random.Random(f"points-{kind}")
    points: list[State] = []
    for number in range(games):
        state = impl.setup(names, SCRIPTS[kind].options, Rng(f"points-{kind}-{number}", 0))
        for seq in range(1, moves):
            points.append(state)
            if impl.is_over(state):
                break
            options = [
                (actor, line, sealed)
                for actor in actors_of(state)
                for line, sealed in [
                    *((line, False) for line in impl.legal(state, actor)),
                    *((line, True) for line in impl.sealed_legal(state, actor)),
                    *impl.examples(state, actor),
                ]
            ]
            if not options:
                break
            actor, line, sealed = chooser.choice(options)
            try:
                state, _ = impl.apply(
                    state, actor, impl.parse(line), Rng(f"points-{kind}", seq), sealed=sealed
                )
            except RuleError:
                continue  # an example line (free text) need not be accepted
    return points


def points_of(kind: str) -> list[State]:
    played = SCRIPTS[kind]
    return [stop.state for stop in played.stops] + random_points(kind)


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_kind_has_a_scripted_game_for_the_contract(kind: str) -> None:
    assert kind in DRIVERS, f"{kind}: add a scripted game to tests/fuzz_states.py"


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_legal_line_is_accepted_the_way_it_is_offered(kind: str) -> None:
    """`legal` lines go in the thread and are never refused for having to be sealed;
    `sealed_legal` lines go through /sealed; each is accepted as offered."""
    impl = GAMES[kind]
    tried = 0
    for number, state in enumerate(points_of(kind)):
        for actor in actors_of(state):
            for line, sealed in [
                *((line, False) for line in impl.legal(state, actor)),
                *((line, True) for line in impl.sealed_legal(state, actor)),
            ]:
                command = impl.parse(line)
                assert impl.needs_seal(state, command) is not (not sealed), (line, sealed)
                try:
                    impl.apply(state, actor, command, Rng(f"legal-{kind}", number), sealed=sealed)
                except RuleError as error:
                    pytest.fail(f"{kind}: {line!r} offered to {actor!r} but refused: {error}")
                tried += 1
    assert tried >= 100, f"only {tried} lines tried"


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_a_refusal_offers_only_lines_that_are_legal(kind: str) -> None:
    impl = GAMES[kind]
    for state in points_of(kind):
        for actor in actors_of(state):
            assert set(impl.refusal_lines(state, actor)) <= set(impl.legal(state, actor))


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_offered_line_is_canonical_and_round_trips(kind: str) -> None:
    """``game.parse(cmd.canonical()) == cmd`` and the offered line is that canonical form."""
    impl = GAMES[kind]
    for state in points_of(kind):
        for actor in actors_of(state):
            for line in [*impl.legal(state, actor), *impl.sealed_legal(state, actor)]:
                command = impl.parse(line)
                assert command.canonical() == line
                assert impl.parse(command.canonical()) == command


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_replaying_the_log_gives_the_same_state(kind: str) -> None:
    """A game replays exactly from its log (setup from the seed, then each move with the Rng
    of its sequence number), and its state is plain JSON."""
    played = SCRIPTS[kind]
    impl = GAMES[kind]
    state = impl.setup(played.names, played.options, Rng(played.seed, 0))
    for seq, step in enumerate(played.steps, start=1):
        state, _ = impl.apply(
            state, step.actor, impl.parse(step.line), Rng(played.seed, seq), sealed=step.sealed
        )
    final = played.stops[-1].state
    assert state == final
    assert json.loads(json.dumps(final)) == final


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_views_hide_what_they_must(kind: str) -> None:
    """No view carries what `hidden` says its viewer must not see, and the public view
    carries nothing hidden from any seat."""
    impl = GAMES[kind]
    checked = 0
    for state in points_of(kind):
        if impl.is_over(state):
            continue
        viewers: list[Viewer] = [None, *range(len(state["players"]))]
        for viewer in viewers:
            shown = json.dumps(impl.view(state, viewer), ensure_ascii=False)
            for secret in impl.hidden(state, viewer):
                assert json.dumps(secret, ensure_ascii=False) not in shown, (viewer, secret)
                checked += 1
    assert checked > 0 or not any(impl.hidden(state, None) for state in points_of(kind)), (
        "hidden() names nothing to check"
    )


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_kind_draws_its_board_as_a_safe_svg(kind: str) -> None:
    """A picture from the public view (and a seat's own), at every point: XML with a
    viewBox, no script, no foreign content, no event attribute, no link; deterministic."""
    impl = GAMES[kind]
    for state in points_of(kind)[::3]:
        public = impl.view(state, None)
        for own in (None, impl.view(state, 0)):
            picture = impl.board_svg(public, own)
            assert picture == impl.board_svg(public, own)
            root = ElementTree.fromstring(picture)
            assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.get("viewBox")
            for node in root.iter():
                tag = node.tag.rsplit("}", 1)[-1]
                assert tag not in ("script", "foreignObject", "image", "a", "iframe"), tag
                for name in node.attrib:
                    bare = name.rsplit("}", 1)[-1].lower()
                    assert not bare.startswith("on") and bare not in ("href", "src"), name


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_kind_ships_its_checklist_files(kind: str) -> None:
    """docs/games.md: the rules page, the grammar, the reply and board templates."""
    impl = GAMES[kind]
    root = Path(__file__).resolve().parents[2]
    assert (root / "docs" / "rules" / f"{kind}.md").is_file()
    assert (resource_dir("grammar") / impl.grammar).is_file()
    for template in ("summary.txt.j2", "board.html.j2"):
        assert (resource_dir("templates") / "games" / kind / template).is_file()


# --------------------------------------------------------------------------- replay's fold
# app/gm/replay.fold edits one state in place (Game.apply_owned) after one copy of the dealt
# state: it relies on copy_state copying every part a move may edit.


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_a_fold_in_place_reaches_every_state_apply_reaches(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At every stop of the scripted game, the state edited in place equals the one ``apply``
    made, and ``replay.fold`` ends where ``apply`` did; the dealt state it copied is left as
    it was dealt."""
    played = SCRIPTS[kind]
    impl = played.impl
    dealt: list[tuple[State, State]] = []
    setup = impl.setup

    def recorded_setup(*args: Any, **kwargs: Any) -> State:
        state = setup(*args, **kwargs)
        dealt.append((state, copy.deepcopy(state)))
        return state

    monkeypatch.setattr(impl, "setup", recorded_setup)
    log = [
        (seq, None if step.actor == "gm" else int(step.actor), step.line, step.sealed)
        for seq, step in enumerate(played.steps, start=1)
    ]
    game = Game(seed=played.seed, options=played.options)
    final = replay.fold(impl, game, played.names, log)
    assert final == played.stops[-1].state and played.stops[-1].at == len(log)
    ((state, as_dealt),) = dealt
    assert state == as_dealt
    owned = impl.copy_state(impl.setup(played.names, played.options, Rng(played.seed, 0)))
    stops = {stop.at: stop.state for stop in played.stops if stop.at >= 1}
    for seq, step in enumerate(played.steps, start=1):
        command = impl.parse(step.line)
        impl.apply_owned(owned, step.actor, command, Rng(played.seed, seq), sealed=step.sealed)
        if seq in stops:
            assert owned == stops[seq], f"after move {seq}"


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_apply_owned_changes_its_state_as_apply_makes_the_next(kind: str) -> None:
    """Random legal play: each move applied both ways gives equal states, move after move."""
    impl = GAMES[kind]
    names = _names(impl)
    chooser = random.Random(f"owned-{kind}")
    moves = 0
    for game_number in range(3):
        state = impl.setup(names, {}, Rng(f"owned-{kind}-{game_number}", 0))
        owned = impl.copy_state(state)
        for seq in range(1, 200):
            if impl.is_over(state):
                break
            seat = chooser.choice(impl.waiting_for(state) or list(range(len(names))))
            lines = _lines(impl, state, seat)
            chooser.shuffle(lines)
            for line in lines:
                try:
                    command = impl.parse(line)
                    sealed = impl.needs_seal(state, command) is True
                    rng = Rng(f"owned-{kind}", seq)
                    state, _events = impl.apply(state, seat, command, rng, sealed=sealed)
                except (CommandSyntaxError, RuleError):
                    continue
                impl.apply_owned(owned, seat, command, Rng(f"owned-{kind}", seq), sealed=sealed)
                assert owned == state, f"{line!r}, move {seq}"
                moves += 1
                break
            else:
                break
    assert moves >= 20
