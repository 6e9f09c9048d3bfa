"""The contract every registered game keeps with the game master (app/games/base.py), the
checklist a new kind is done against (docs/games.md). First: ``apply`` never mutates the state
it is given. The pipeline relies on it: its working copy shares the
game's stored state instead of copying it (app/gm/pipeline.working_copy), so a game that wrote
into its input would change the stored state even when the post is refused."""

from __future__ import annotations

import copy
import functools
import json
import random
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from app.db.models import Game
from app.games import GAMES
from app.games.base import Actor, CommandSyntaxError, Rng, RuleError, State, Viewer
from app.games.base import Game as GameImpl
from app.games.resources import resource_dir
from app.gm import replay
from tests.support.fuzz_states import DRIVERS, PLAYERS, RECRUITING, Script, Stop, script

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
# (tests/support/fuzz_states.py, which every registered kind must have) and points reached by random
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
    assert kind in DRIVERS, f"{kind}: add a scripted game to tests/support/fuzz_states.py"


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
def test_a_bot_s_choice_is_the_same_whatever_the_hidden_information_it_cannot_see(
    kind: str,
) -> None:
    """Issue #39: a seat's bot decides from that seat's view and legal lines only (the
    per-kind hidden changes are in tests/games/test_bots.py)."""
    from tests.games.test_bots import assert_blind_bot

    assert_blind_bot(kind)


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_kind_ships_its_checklist_files(kind: str) -> None:
    """docs/games.md: the rules page, the grammar, the reply and board templates."""
    impl = GAMES[kind]
    root = Path(__file__).resolve().parents[2]
    assert (root / "docs" / "rules" / f"{kind}.md").is_file()
    assert (resource_dir("grammar") / impl.grammar).is_file()
    for template in ("summary.txt.j2", "board.html.j2"):
        assert (resource_dir("templates") / "games" / kind / template).is_file()


# --------------------------------------------------------------------------- the picture
# Every kind's board picture (Game.board_svg) can stand in any page, whatever the players are
# called: the kind's scripted game is played again by players whose names are markup, and
# at every stop the public picture and each seat's own are drawn; the points of the checklist
# (random play included) are drawn too. What a picture shows is its kind's own test
# (tests/games/test_<kind>_svg.py, tests/games/test_svg.py).

SVG = "{http://www.w3.org/2000/svg}"
MARKUP = "<script>alert(1)</script>"
QUOTES = "\"&'"
MARKUP_NAMES = [MARKUP, QUOTES, "花子", "次郎", "三郎", "四郎"]
# Shapes, groups and text: nothing that runs, loads or embeds.
SHAPES = {"rect", "circle", "ellipse", "line", "polyline", "polygon", "path"}
SHAPES_AND_TEXT = {"svg", "g", "title", "desc", "text", "tspan", *SHAPES}


@functools.cache
def markup_game(kind: str) -> Script:
    return script(kind, MARKUP_NAMES[: PLAYERS[kind]])


def started_stops(kind: str) -> list[Stop]:
    return [stop for stop in markup_game(kind).stops if stop.at != RECRUITING]


def pictures(kind: str) -> list[tuple[str, str]]:
    """(where, svg) at every stop of the markup-named game: public, and each seat's own."""
    impl = GAMES[kind]
    drawn = []
    for stop in markup_game(kind).stops:
        public = impl.view(stop.state, None)
        drawn.append((stop.label, impl.board_svg(public)))
        for seat in range(len(stop.state["players"])):
            own = impl.view(stop.state, seat)
            drawn.append((f"{stop.label} seat {seat}", impl.board_svg(public, own)))
    return drawn


def texts(picture: str) -> list[str]:
    """The text of every <text> and <title>, in document order."""
    return [
        "".join(node.itertext())
        for node in ElementTree.fromstring(picture).iter()
        if node.tag in (f"{SVG}text", f"{SVG}title")
    ]


def assert_nothing_runs_or_loads(picture: str, where: str) -> None:
    assert "<script" not in picture and "javascript:" not in picture, where
    for node in ElementTree.fromstring(picture).iter():
        assert node.tag.removeprefix(SVG) in SHAPES_AND_TEXT, (where, node.tag)
        for name in node.attrib:
            bare = name.rsplit("}", 1)[-1].lower()
            assert not bare.startswith("on"), (where, name)
            assert bare not in ("href", "style", "src"), (where, name)


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_picture_is_an_svg_360_wide_titled_for_screen_readers(kind: str) -> None:
    for where, picture in pictures(kind):
        root = ElementTree.fromstring(picture)
        assert root.tag == f"{SVG}svg", where
        box = [float(part) for part in root.get("viewBox", "").split()]
        assert len(box) == 4 and box[:3] == [0, 0, 360] and box[3] > 0, (where, box)
        assert root.get("viewBox", "").split()[2:] == [root.get("width"), root.get("height")]
        assert root.get("role") == "img", where
        assert root[0].tag == f"{SVG}title" and root[0].text, where


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_pictures_hold_only_shapes_and_text_nothing_that_runs_or_loads(kind: str) -> None:
    """No script, foreign object, image or link, no event attribute, no href, src or style:
    at the markup-named game's stops and at every point of the checklist."""
    impl = GAMES[kind]
    for where, picture in pictures(kind):
        assert_nothing_runs_or_loads(picture, where)
    for number, state in enumerate(points_of(kind)[::3]):
        public = impl.view(state, None)
        for own in (None, impl.view(state, 0)):
            assert_nothing_runs_or_loads(impl.board_svg(public, own), f"point {number}")


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_text_is_at_least_11_units_high_in_a_japanese_font_stack(kind: str) -> None:
    for where, picture in pictures(kind):
        for node in ElementTree.fromstring(picture).iter():
            size = node.get("font-size")
            if size is not None:
                assert float(size) >= 11, (where, size)
            if node.tag == f"{SVG}text":
                family = node.get("font-family", "")
                assert "Noto Sans CJK JP" in family and family.endswith("sans-serif"), where


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_the_same_view_gives_the_same_bytes(kind: str) -> None:
    """A picture is a pure function of the views: drawn again from copies of them (or from
    views made again) it is the same bytes."""
    impl = GAMES[kind]
    for stop in markup_game(kind).stops:
        public = impl.view(stop.state, None)
        own = impl.view(stop.state, 1)
        first = impl.board_svg(public, own)
        assert impl.board_svg(json.loads(json.dumps(public)), copy.deepcopy(own)) == first
        assert impl.board_svg(public) == impl.board_svg(impl.view(stop.state, None)), stop.label


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_player_names_are_escaped_and_read_back_exactly(kind: str) -> None:
    for stop in started_stops(kind):
        picture = GAMES[kind].board_svg(GAMES[kind].view(stop.state, None))
        assert "<script" not in picture, stop.label
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in picture, stop.label
        shown = texts(picture)
        assert MARKUP in shown and QUOTES in shown, stop.label


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_control_characters_and_long_names_still_give_a_valid_picture(kind: str) -> None:
    """A character XML cannot hold shows as U+FFFD; a name too wide for the picture is cut
    on screen and kept whole in a <title>."""
    impl = GAMES[kind]
    changed = impl.view(started_stops(kind)[-1].state, None)
    long_name = "長い名前" * 30
    changed["players"][0]["name"] = "bell\x07\x00tab\tnewline\n"
    changed["players"][1]["name"] = long_name
    shown = texts(impl.board_svg(changed))
    assert "bell\ufffd\ufffdtab\tnewline\n" in shown
    assert long_name in shown
    assert any(line.endswith("…") and long_name.startswith(line[:-1]) for line in shown)


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_an_empty_view_still_draws(kind: str) -> None:
    impl = GAMES[kind]
    assert ElementTree.fromstring(impl.board_svg({})).tag == f"{SVG}svg"
    empty = impl.board_svg({"players": []}, {"players": []})
    assert ElementTree.fromstring(empty).tag == f"{SVG}svg"


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


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_a_wrong_player_count_is_refused_in_the_count_players_read(kind: str) -> None:
    """A table of the wrong size is refused saying how many play the game as the lobby says it
    (``2人`` for a game of exactly two, never ``2〜2人``), with no rules-page label in it."""
    impl = GAMES[kind]
    with pytest.raises(RuleError) as refused:
        impl.check_players(["solo"])
    message = str(refused.value)
    assert f"{impl.players_text()}で遊びます" in message, message
    assert f"{impl.min_players}〜{impl.min_players}人" not in message
    assert not re.search(r"(^|[（(。、\s])[RID][\s「]", message), message
    assert ("〜" in impl.players_text()) == (impl.min_players != impl.max_players)
