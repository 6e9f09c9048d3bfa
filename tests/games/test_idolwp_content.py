"""IM@S x Workerplacement's house content (app/games/idolwp/content/*.toml, checked by
app/games/idolwp/content.py): the shipped files load; what the source gives (3 idols, Rookies)
is exactly as it gives it; the rest is complete enough to play (12 boards, 20 cards, every card
effect); and bad content is refused at start-up with the file and the line of the bad entry.

Tests named ``test_source_*`` check one clause of the source (IM@S x Workerplacement alpha,
Appendix A1/A2, and R 4.2 for the boards).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest

from app.games.idolwp.content import (
    Boards,
    Card,
    Cards,
    Content,
    Events,
    Idols,
    Tables,
    _check_boards,
    _check_cards,
    _check_events,
    _check_idols,
    load,
)
from app.games.kit.content import ContentError, clear_cache, load_content


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


@pytest.fixture(scope="module")
def content() -> Content:
    return load()


# --------------------------------------------------------------------------- the shipped files


def test_the_shipped_content_loads(content: Content) -> None:
    assert len(content.idols) >= 10
    assert len(content.boards) == 12
    assert len(content.events) >= 5
    assert sum(card.count for card in content.cards.values()) >= 20


# --------------------------------------------------------------------------- idols (source)

HARUKA_TEXT = (
    "あなたは「ある日の日常」において思い出を取得する場合、思い出チップを1つ追加で獲得する。"
)
CHIHAYA_TEXT = (
    "あなたはレッスンDa/Viのアクションを実行するときに、"
    "Da/Viのチップの代わりにVoのチップを得ても良い。"
)
MIKI_TEXT = (
    "あなたは自分の手番を始める前に「特訓: Ability / 2 Chips」のアクションを行うことができる。"
)


def test_source_idol_haruka_vo2_da1_vi1_memory1(content: Content) -> None:
    haruka = content.idols["春香"]
    assert haruka.full_name == "天海 春香"
    assert haruka.source
    assert (haruka.Vo, haruka.Da, haruka.Vi, haruka.memory) == (2, 1, 1, 1)


def test_source_idol_haruka_one_more_memory_at_daily(content: Content) -> None:
    haruka = content.idols["春香"]
    assert haruka.power is not None
    assert (haruka.power.kind, haruka.power.amount) == ("daily_bonus", 1)
    assert haruka.text == HARUKA_TEXT


def test_source_idol_chihaya_vo3_da1_vi1_memory0(content: Content) -> None:
    chihaya = content.idols["千早"]
    assert chihaya.full_name == "如月 千早"
    assert chihaya.source
    assert (chihaya.Vo, chihaya.Da, chihaya.Vi, chihaya.memory) == (3, 1, 1, 0)


def test_source_idol_chihaya_may_take_vo_chips_at_da_vi_lessons(content: Content) -> None:
    chihaya = content.idols["千早"]
    assert chihaya.power is not None
    assert chihaya.power.kind == "lesson_vo"
    assert chihaya.text == CHIHAYA_TEXT


def test_source_idol_miki_vo1_da1_vi3_memory0(content: Content) -> None:
    miki = content.idols["美希"]
    assert miki.full_name == "星井 美希"
    assert miki.source
    assert (miki.Vo, miki.Da, miki.Vi, miki.memory) == (1, 1, 3, 0)


def test_source_idol_miki_trains_before_her_turn_at_2_chips(content: Content) -> None:
    miki = content.idols["美希"]
    assert miki.power is not None
    assert (miki.power.kind, miki.power.rate) == ("pre_turn_training", 2)
    assert miki.text == MIKI_TEXT


def test_source_gives_exactly_three_idols_the_rest_is_house_content(content: Content) -> None:
    assert [idol.name for idol in content.idols.values() if idol.source] == ["春香", "千早", "美希"]


# --------------------------------------------------------------------------- idols (house)


def test_ten_idols_or_more_so_five_players_draft_two_each(content: Content) -> None:
    assert len(content.idols) >= 10


def test_house_idols_have_balanced_abilities_and_a_described_power(content: Content) -> None:
    for idol in content.idols.values():
        if idol.source:
            continue
        assert 4 <= idol.Vo + idol.Da + idol.Vi <= 5, idol.name
        assert idol.power is not None, idol.name
        assert idol.text.endswith("。"), idol.name
        assert " " in idol.full_name and idol.full_name.endswith(idol.name), idol.name


def test_house_idols_are_strong_in_different_places(content: Content) -> None:
    # No two idols start a player with the same numbers; the powers vary.
    places = [(idol.Vo, idol.Da, idol.Vi, idol.memory) for idol in content.idols.values()]
    assert len(set(places)) == len(places)
    kinds = {idol.power.kind for idol in content.idols.values() if idol.power is not None}
    assert len(kinds) >= 8


# --------------------------------------------------------------------------- events


def test_source_event_rookies_is_the_first_event(content: Content) -> None:
    rookies = content.first_event
    assert rookies.name == "Rookies"
    assert rookies.source
    assert not rookies.modifier  # its targets are printed; the round modifier is house content


def test_source_rookies_lv1_any_2_1_1_gives_1_evp(content: Content) -> None:
    level = content.events["Rookies"].levels[0]
    assert (level.level, level.fixed, level.any) == (1, {}, [2, 1, 1])
    assert (level.evp, level.memory, level.cards) == (1, 0, 0)


def test_source_rookies_lv2_any_3_2_1_gives_2_evp_and_1_memory(content: Content) -> None:
    level = content.events["Rookies"].levels[1]
    assert (level.level, level.fixed, level.any) == (2, {}, [3, 2, 1])
    assert (level.evp, level.memory, level.cards) == (2, 1, 0)


def test_source_rookies_lv3_any_4_3_2_gives_2_evp_1_memory_1_card(content: Content) -> None:
    level = content.events["Rookies"].levels[2]
    assert (level.level, level.fixed, level.any) == (3, {}, [4, 3, 2])
    assert (level.evp, level.memory, level.cards) == (2, 1, 1)


def test_rookies_rewards_are_the_source_example_10_5_2(content: Content) -> None:
    assert content.events["Rookies"].rewards == [10, 5, 2, 0, 0]


def test_house_events_use_the_modifier_and_both_kinds_of_target(content: Content) -> None:
    house = [event for event in content.events.values() if not event.source]
    assert len(house) >= 4
    assert all(event.modifier and not event.first for event in house)
    levels = [level for event in house for level in event.levels]
    assert {"Vo": 2, "Da": 2, "Vi": 2} in [level.fixed for level in levels]
    assert {"Vo": 5} in [level.fixed for level in levels]
    assert any(level.any for level in levels)
    for event in house:
        assert event.rewards == sorted(event.rewards, reverse=True), event.name
        assert [level.evp for level in event.levels] == sorted(level.evp for level in event.levels)


# --------------------------------------------------------------------------- boards


def test_twelve_boards_one_first_one_last(content: Content) -> None:
    roles = Counter(board.role for board in content.boards.values())
    assert roles == {"first": 1, "last": 1, "middle": 10}
    assert content.first_board.id == 1
    assert content.last_board.id == 12


def after(edges: list[tuple[str, str]], space: str) -> set[str]:
    """The spaces one or more arrows away from `space`."""
    found: set[str] = set()
    todo = [space]
    while todo:
        here = todo.pop()
        for source, target in edges:
            if source == here and target not in found:
                found.add(target)
                todo.append(target)
    return found


def test_source_boards_one_start_one_goal_no_loop_every_path_reaches_the_goal(
    content: Content,
) -> None:
    # What _check_board enforces at start-up, checked again on the shipped boards.
    for board in content.boards.values():
        types = Counter(space.type for space in board.spaces)
        assert (types["start"], types["goal"]) == (1, 1)
        ids = {space.id for space in board.spaces}
        assert after(board.edges, "S") == ids - {"S"}, board.id
        for space in ids:
            assert space not in after(board.edges, space), (board.id, space)
            assert space == "G" or "G" in after(board.edges, space), (board.id, space)


def test_space_ids_name_their_type(content: Content) -> None:
    letters = {"S": "start", "G": "goal", "L": "lesson", "T": "training", "D": "daily"}
    letters |= {"P": "sales", "E": "event"}
    for board in content.boards.values():
        for space in board.spaces:
            assert letters[space.id[0]] == space.type, (board.id, space.id)
            assert space.id in ("S", "G") or space.id[1:].isdigit(), (board.id, space.id)


def test_boards_are_drawn_left_to_right_on_a_9_by_5_grid(content: Content) -> None:
    for board in content.boards.values():
        where = {space.id: (space.col, space.row) for space in board.spaces}
        assert len(set(where.values())) == len(where), board.id
        assert all(0 <= col <= 8 and 0 <= row <= 4 for col, row in where.values()), board.id
        assert where["S"][0] == 0
        assert where["G"][0] == max(col for col, _ in where.values())
        for source, target in board.edges:
            assert where[source][0] < where[target][0], (board.id, source, target)


def test_boards_have_room_for_ten_idols_and_differ(content: Content) -> None:
    sizes = [len(board.spaces) - 2 for board in content.boards.values()]
    assert sum(size >= 10 for size in sizes) >= 10
    assert min(sizes) >= 7
    assert max(sizes) >= 15  # a long one
    # Every board has every kind of action space; some lean hard on one kind.
    leaning = set()
    for board in content.boards.values():
        types = Counter(space.type for space in board.spaces)
        assert all(types[kind] >= 1 for kind in ("lesson", "training", "daily", "sales", "event"))
        leaning |= {kind for kind, count in types.items() if kind != "lesson" and count >= 4}
    assert leaning >= {"training", "daily", "sales", "event"}


def test_printed_amounts_are_in_range(content: Content) -> None:
    for board in content.boards.values():
        for space in board.spaces:
            if space.type == "training":
                assert space.rate in (2, 3)
            if space.type == "daily":
                assert space.amount in (1, 2)
            if space.type == "sales":
                assert space.amount == 1
            if space.type == "lesson":
                assert 1 <= sum(space.chips.values()) <= 3


# --------------------------------------------------------------------------- cards and tables


def test_twenty_appeal_cards_or_more(content: Content) -> None:
    assert sum(card.count for card in content.cards.values()) >= 20


def test_every_card_effect_is_used(content: Content) -> None:
    effects = get_args(Card.model_fields["effect"].annotation)
    assert {card.effect for card in content.cards.values()} == set(effects)


def test_card_timings_follow_their_effects(content: Content) -> None:
    for card in content.cards.values():
        expected = {"boost": "event", "lesson_plus": "keep", "evp_plus": "keep"}
        assert card.timing == expected.get(card.effect, "turn"), card.name


def test_tables_give_the_numbers_the_source_announces(content: Content) -> None:
    tables = content.tables
    assert tables.round_modifier[0] == 0
    assert tables.round_modifier == sorted(tables.round_modifier)
    assert tables.final_points == {
        "2": [6, 2],
        "3": [6, 3, 1],
        "4": [8, 4, 2, 0],
        "5": [10, 5, 3, 1, 0],
    }
    assert (tables.training_rate, tables.hold_limit) == (2, 3)
    assert tables.results_rounds == [1, 3, 6, 9]


# --------------------------------------------------------------------------- bad content

FIELDS = {
    "start": "",
    "goal": "",
    "lesson": "chips = {Vo = 1}",
    "training": "rate = 2",
    "daily": "amount = 1",
    "sales": "amount = 1",
    "event": "",
}


def board_text(spaces: str, edges: str) -> str:
    """One [[boards]] entry: spaces ``"S:start L1:lesson G:goal"`` (drawn in a row, one column
    each), edges ``"S>L1 L1>G"``."""
    pairs = [edge.split(">") for edge in edges.split()]
    lines = [
        "# a test board",
        "[[boards]]",
        "id = 1",
        'name = "テスト"',
        'role = "first"',
        "edges = [" + ", ".join(f'["{a}", "{b}"]' for a, b in pairs) + "]",
    ]
    for col, token in enumerate(spaces.split()):
        space, kind = token.split(":")
        lines += ["", "[[boards.spaces]]", f'id = "{space}"', f'type = "{kind}"']
        lines += [FIELDS[kind]] if FIELDS[kind] else []
        lines += [f"col = {col}", "row = 0"]
    return "\n".join(lines) + "\n"


def entry_line(text: str, key_line: str) -> int:
    """The 1-based line of the ``[[...]]`` header of the entry holding `key_line`."""
    lines = text.splitlines()
    index = lines.index(key_line)
    while not lines[index].startswith("[["):
        index -= 1
    return index + 1


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def boards_error(tmp_path: Path, text: str) -> ContentError:
    with pytest.raises(ContentError) as caught:
        load_content(write(tmp_path, "boards.toml", text), Boards, _check_boards)
    assert caught.value.path == tmp_path / "boards.toml"
    return caught.value


def test_a_small_good_board_passes_its_checks(tmp_path: Path) -> None:
    # Only the role count is left to refuse: the start is reached, every space reaches G.
    text = board_text("S:start L1:lesson E1:event G:goal", "S>L1 S>E1 L1>E1 E1>G")
    error = boards_error(tmp_path, text)
    assert str(error) == "boards.toml:2: boards: one first board, one last board, 7 or more others"


def test_a_board_with_a_cycle_is_refused_at_the_board(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson E1:event G:goal", "S>L1 L1>E1 E1>L1 E1>G")
    error = boards_error(tmp_path, text)
    assert error.line == 2
    assert error.message == "boards[0].edges: board 1: a path comes back to a space"


def test_a_space_that_cannot_reach_the_goal_is_refused_at_its_line(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson D1:daily G:goal", "S>L1 S>D1 L1>G")
    error = boards_error(tmp_path, text)
    assert error.line == entry_line(text, 'id = "D1"')
    assert str(error) == (
        f"boards.toml:{error.line}: boards[0].spaces[2]: board 1: D1 cannot reach the goal"
    )


def test_a_space_not_reachable_from_the_start_is_refused_at_its_line(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson P1:sales G:goal", "S>L1 L1>G P1>G")
    error = boards_error(tmp_path, text)
    assert error.line == entry_line(text, 'id = "P1"')
    assert str(error) == (
        f"boards.toml:{error.line}: boards[0].spaces[2]: "
        "board 1: P1 cannot be reached from the start"
    )


def test_two_starts_are_refused_at_the_second(tmp_path: Path) -> None:
    text = board_text("S:start T:start L1:lesson G:goal", "S>L1 T>L1 L1>G")
    error = boards_error(tmp_path, text)
    assert error.line == entry_line(text, 'id = "T"')
    assert error.message == (
        "boards[0].spaces[1]: board 1: one start and one goal (has ['S', 'T'], ['G'])"
    )


def test_a_board_without_a_goal_is_refused_at_the_board(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson E1:event", "S>L1 L1>E1")
    error = boards_error(tmp_path, text)
    assert str(error) == "boards.toml:2: boards[0]: board 1: one start and one goal (has ['S'], [])"


def test_an_edge_to_a_missing_space_is_refused_at_the_board(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson G:goal", "S>L1 L1>X9 L1>G")
    error = boards_error(tmp_path, text)
    # Edges are one array of pairs: the board's header is the nearest line.
    assert str(error) == "boards.toml:2: boards[0].edges[1]: edge L1->X9: no such space"


def test_a_lesson_without_chips_is_refused_at_its_line(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson G:goal", "S>L1 L1>G").replace("chips = {Vo = 1}\n", "")
    error = boards_error(tmp_path, text)
    assert error.line == entry_line(text, 'id = "L1"')
    assert error.message == (
        "boards[0].spaces[1]: Value error, "
        "a lesson space prints the chips it gives (chips = {Vo = 1})"
    )


def test_negative_lesson_chips_are_refused_at_the_space(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson G:goal", "S>L1 L1>G").replace("{Vo = 1}", "{Vo = -1}")
    error = boards_error(tmp_path, text)
    assert error.line == entry_line(text, 'id = "L1"')
    assert error.message.startswith("boards[0].spaces[1].chips.Vo: Input should be greater")


def test_two_spaces_drawn_in_one_place_are_refused_at_the_second(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson E1:event G:goal", "S>L1 S>E1 L1>G E1>G")
    text = text.replace('id = "E1"\ntype = "event"\ncol = 2', 'id = "E1"\ntype = "event"\ncol = 1')
    error = boards_error(tmp_path, text)
    assert error.line == entry_line(text, 'id = "E1"')
    assert error.message == "boards[0].spaces[2]: board 1: E1 is drawn on L1 (col 1, row 0)"


def test_a_repeated_space_id_is_refused_at_the_repeat(tmp_path: Path) -> None:
    text = board_text("S:start L1:lesson L1:lesson G:goal", "S>L1 L1>G")
    error = boards_error(tmp_path, text)
    assert error.message == "boards[0].spaces[2].id: 'L1' is already used by boards[0].spaces[1]"
    lines = text.splitlines()
    assert error.line == [i for i, line in enumerate(lines, 1) if line == 'id = "L1"'][1] - 1


# Events: a level with both kinds of target, or none.

EVENT = """\
# a test event
[[events]]
name = "Rookies"
first = true
rewards = [10, 5, 2, 0, 0]

[[events.levels]]
level = 1
any = [2, 1, 1]
evp = 1

[[events.levels]]
level = 2
TARGET
evp = 2

[[events.levels]]
level = 3
any = [4, 3, 2]
evp = 2
"""


def events_error(tmp_path: Path, text: str) -> ContentError:
    with pytest.raises(ContentError) as caught:
        load_content(write(tmp_path, "events.toml", text), Events, _check_events)
    return caught.value


@pytest.mark.parametrize(
    "target",
    ["any = [3, 2, 1]\nfixed = {Vo = 2}", "memory = 1"],
    ids=["both", "none"],
)
def test_a_level_needs_exactly_one_kind_of_target(tmp_path: Path, target: str) -> None:
    error = events_error(tmp_path, EVENT.replace("TARGET", target))
    assert str(error) == (
        "events.toml:12: events[0].levels[1]: Value error, "
        "a level has either fixed (Vo = 2) or any ([4, 2, 2]) targets"
    )


def test_a_zero_target_is_refused_at_its_level(tmp_path: Path) -> None:
    error = events_error(tmp_path, EVENT.replace("TARGET", "fixed = {Vo = 0}"))
    assert error.line == 12
    assert error.message.startswith("events[0].levels[1].fixed.Vo: Input should be greater")


def test_events_need_the_first_and_three_more(tmp_path: Path) -> None:
    error = events_error(tmp_path, EVENT.replace("TARGET", "any = [3, 2, 1]"))
    assert str(error) == (
        "events.toml:2: events: the first event and at least 3 more (results 3, 6, 9)"
    )


# Idols.

IDOL = """\
[[idols]]
name = "NAME"
full_name = "天海 春香"
Vo = 2
Da = 1
Vi = 1
POWER
text = "…"
"""


def idols_text(*entries: tuple[str, str]) -> str:
    return "# test idols\n" + "\n".join(
        IDOL.replace("NAME", name).replace("POWER", power) for name, power in entries
    )


def idols_error(tmp_path: Path, text: str) -> ContentError:
    with pytest.raises(ContentError) as caught:
        load_content(write(tmp_path, "idols.toml", text), Idols, _check_idols)
    return caught.value


def test_duplicate_idol_names_are_refused_at_the_second(tmp_path: Path) -> None:
    plain = 'power = {kind = "lesson_vo"}'
    text = idols_text(("春香", plain), ("千早", plain), ("春香", plain))
    error = idols_error(tmp_path, text)
    assert str(error) == "idols.toml:20: idols[2].name: '春香' is already used by idols[0]"


def test_a_power_missing_its_ability_is_refused_at_the_idol(tmp_path: Path) -> None:
    text = idols_text(
        ("真", 'power = {kind = "lesson_vo"}'),
        ("亜美", 'power = {kind = "lesson_bonus", amount = 1}'),
    )
    error = idols_error(tmp_path, text)
    assert str(error) == (
        "idols.toml:11: idols[1].power: Value error, "
        'a lesson_bonus power names its ability (ability = "Vo")'
    )


def test_an_idol_name_with_a_space_is_refused(tmp_path: Path) -> None:
    error = idols_error(tmp_path, idols_text(("天海 春香", 'power = {kind = "lesson_vo"}')))
    assert error.line == 2
    assert error.message.startswith("idols[0].name: String should match pattern")


# Cards.


def cards_error(tmp_path: Path, text: str) -> ContentError:
    with pytest.raises(ContentError) as caught:
        load_content(write(tmp_path, "cards.toml", text), Cards, _check_cards)
    return caught.value


def test_a_card_at_the_wrong_timing_is_refused_at_its_line(tmp_path: Path) -> None:
    text = (
        '[[cards]]\nname = "差し入れ"\ntext = "…"\ntiming = "turn"\neffect = "choice"\n'
        "amount = 2\n\n"
        '[[cards]]\nname = "ファンクラブ"\ntext = "…"\ntiming = "turn"\neffect = "evp_plus"\n'
        "amount = 1\n"
    )
    error = cards_error(tmp_path, text)
    assert str(error) == (
        'cards.toml:8: cards[1]: Value error, effect = "evp_plus" is played with timing = "keep"'
    )


def test_fewer_than_twenty_cards_are_refused(tmp_path: Path) -> None:
    text = '[[cards]]\nname = "差し入れ"\ntext = "…"\ncount = 4\ntiming = "turn"\n'
    text += 'effect = "choice"\namount = 2\n'
    error = cards_error(tmp_path, text)
    said = "cards.toml:1: cards: at least 20 cards (the rule book: アピールカード 20枚程度)"
    assert str(error) == said


# Tables.


def test_results_rounds_must_end_with_the_last_round(tmp_path: Path) -> None:
    text = (
        "round_modifier = [0, 0, 1, 1, 1, 2, 2, 2, 3]\ntraining_rate = 2\nhold_limit = 3\n"
        "results_rounds = [1, 3, 6]\n\n"
        '[final_points]\n"2" = [6, 2]\n"3" = [6, 3, 1]\n"4" = [8, 4, 2, 0]\n'
        '"5" = [10, 5, 3, 1, 0]\n'
    )
    with pytest.raises(ContentError) as caught:
        load_content(write(tmp_path, "tables.toml", text), Tables)
    assert caught.value.message == (
        "Value error, results_rounds: rounds 1..9 in order, the last one 9 (R 6)"
    )
