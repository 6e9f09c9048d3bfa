"""House content files (app/games/kit/content.py): loading, validation errors that name the file
and the line of the entry, cross-entry checks, and the per-file cache.

The data files are in tests/data/content; each says in a comment what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from app.games.kit.content import (
    ContentError,
    EntryError,
    clear_cache,
    content_dir,
    entry_lines,
    format_loc,
    load_content,
    require_unique,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "content"

Terrain = Literal["平地", "山岳", "砂漠", "凍土", "海"]
TERRAIN_MESSAGE = "Input should be '平地', '山岳', '砂漠', '凍土' or '海'"


class Tile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    pair: tuple[int, int]
    terrain: Terrain
    note: str = ""


class TileFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    version: int = 1
    tiles: tuple[Tile, ...]


class Level(BaseModel):
    model_config = ConfigDict(frozen=True)
    target: tuple[int, int, int]
    evp: int


class Event(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    levels: tuple[Level, ...]


class EventFile(BaseModel):
    model_config = ConfigDict(frozen=True)
    events: tuple[Event, ...]


class Space(BaseModel):
    model_config = ConfigDict(frozen=True)
    id: str
    type: str
    edges: tuple[str, ...]


class Board(BaseModel):
    model_config = ConfigDict(frozen=True)
    spaces: tuple[Space, ...]


def acyclic(board: Board) -> None:
    """A round board must be a DAG: blame the space whose edge closes a cycle."""
    index = {space.id: number for number, space in enumerate(board.spaces)}
    done: set[str] = set()

    def visit(space_id: str, path: list[str]) -> None:
        if space_id in done:
            return
        space = board.spaces[index[space_id]]
        for target in space.edges:
            if target in path:
                cycle = " -> ".join([*path[path.index(target) :], space_id, target])
                raise EntryError(("spaces", index[space_id], "edges"), f"cycle {cycle}")
            visit(target, [*path, space_id])
        done.add(space_id)

    visit(board.spaces[0].id, [])


def unique_tile_ids(tiles: TileFile) -> None:
    require_unique(tiles.tiles, "id", "tiles")


def load_error(
    path: Path, model: type[BaseModel], check: Callable[[Any], None] | None = None
) -> ContentError:
    with pytest.raises(ContentError) as caught:
        load_content(path, model, check)
    return caught.value


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


# --------------------------------------------------------------------------- loading


def test_a_valid_toml_file_loads_into_the_model() -> None:
    tiles = load_content(DATA / "tiles.toml", TileFile)
    assert tiles.version == 1
    assert [(t.id, t.pair, t.terrain) for t in tiles.tiles] == [
        ("1-2", (1, 2), "平地"),
        ("1-3", (1, 3), "海"),
    ]


def test_a_valid_json_file_loads_like_the_same_toml(tmp_path: Path) -> None:
    path = tmp_path / "tiles.json"
    path.write_text(
        '{"version": 1, "tiles": [{"id": "1-2", "pair": [1, 2], "terrain": "平地"},'
        ' {"id": "1-3", "pair": [1, 3], "terrain": "海"}]}',
        encoding="utf-8",
    )
    assert load_content(path, TileFile) == load_content(DATA / "tiles.toml", TileFile)


def test_content_dir_is_the_content_folder_inside_the_game_package() -> None:
    games = Path(__file__).resolve().parents[2] / "app" / "games"
    assert content_dir("populous") == games / "populous" / "content"


# --------------------------------------------------------------------------- validation errors


def test_a_bad_toml_entry_names_the_file_and_the_line_of_its_header() -> None:
    error = load_error(DATA / "bad_tiles.toml", TileFile)
    # tiles[3]'s [[tiles]] header is line 24; the header-like line inside tiles[2]'s note
    # (line 20) is part of a string and must not shift the count.
    assert error.path == DATA / "bad_tiles.toml"
    assert error.line == 24
    assert error.message == f"tiles[3].terrain: {TERRAIN_MESSAGE}"
    assert str(error) == f"bad_tiles.toml:24: tiles[3].terrain: {TERRAIN_MESSAGE}"


def test_a_bad_json_entry_names_the_line_where_its_object_starts() -> None:
    error = load_error(DATA / "bad_tiles.json", TileFile)
    assert str(error) == f"bad_tiles.json:7: tiles[3].terrain: {TERRAIN_MESSAGE}"


def test_a_missing_field_points_at_its_entry(tmp_path: Path) -> None:
    path = tmp_path / "tiles.toml"
    path.write_text(
        '[[tiles]]\nid = "1-2"\npair = [1, 2]\nterrain = "平地"\n\n'
        '[[tiles]]\npair = [1, 3]\nterrain = "海"\n',
        encoding="utf-8",
    )
    assert str(load_error(path, TileFile)) == "tiles.toml:6: tiles[1].id: Field required"


def test_an_error_in_a_nested_array_of_tables_points_at_the_nested_header() -> None:
    error = load_error(DATA / "bad_events.toml", EventFile)
    assert error.line == 10
    assert error.message.startswith("events[0].levels[1].target[2]: Input should be a valid")


def test_an_error_in_nested_json_points_at_the_bad_value_itself() -> None:
    error = load_error(DATA / "bad_events.json", EventFile)
    assert error.line == 5
    assert error.message.startswith("events[0].levels[1].target[2]: Input should be a valid")


def test_an_error_outside_any_entry_points_at_its_key(tmp_path: Path) -> None:
    path = tmp_path / "tiles.toml"
    path.write_text(
        '# comment\n\nversion = "one"\n\n[[tiles]]\nid = "1-2"\npair = [1, 2]\nterrain = "平地"\n',
        encoding="utf-8",
    )
    error = load_error(path, TileFile)
    assert (error.line, error.message) == (
        3,
        "version: Input should be a valid integer, unable to parse string as an integer",
    )


def test_every_validation_error_of_a_file_is_kept_not_only_the_first(tmp_path: Path) -> None:
    path = tmp_path / "tiles.toml"
    path.write_text(
        '[[tiles]]\nid = "1-2"\npair = [1, 2]\nterrain = "溶岩"\n\n'
        '[[tiles]]\nid = "1-3"\npair = [1]\nterrain = "海"\n',
        encoding="utf-8",
    )
    error = load_error(path, TileFile)
    assert (error.line, error.message) == (1, f"tiles[0].terrain: {TERRAIN_MESSAGE}")
    assert [(other.line, other.message) for other in error.others] == [
        (6, "tiles[1].pair[1]: Field required"),
    ]


def test_a_toml_syntax_error_names_the_line_where_parsing_stopped(tmp_path: Path) -> None:
    path = tmp_path / "tiles.toml"
    path.write_text('[[tiles]]\nid = "1-2"\npair = [1, 2\nterrain = "平地"\n', encoding="utf-8")
    error = load_error(path, TileFile)
    assert error.line == 4
    assert str(error).startswith("tiles.toml:4: ")
    assert "(at line" not in error.message


def test_a_json_syntax_error_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "tiles.json"
    path.write_text('{"tiles": [\n  {"id": "1-2",}\n]}\n', encoding="utf-8")
    error = load_error(path, TileFile)
    assert error.line == 2
    assert error.message == "Expecting property name enclosed in double quotes"


def test_a_missing_file_is_a_content_error_naming_it(tmp_path: Path) -> None:
    error = load_error(tmp_path / "nowhere.toml", TileFile)
    assert error.line is None
    assert str(error).startswith("nowhere.toml: ")


def test_a_file_that_is_neither_toml_nor_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tiles.yaml"
    path.write_text("tiles: []\n", encoding="utf-8")
    assert str(load_error(path, TileFile)) == "tiles.yaml: content files are .toml or .json"


# --------------------------------------------------------------------------- cross-entry checks


def test_a_cross_entry_check_blames_the_entry_on_its_line() -> None:
    error = load_error(DATA / "cyclic_board.toml", Board, acyclic)
    # The edge c -> b closes the cycle; c is spaces[3], whose header is line 18.
    assert str(error) == "cyclic_board.toml:18: spaces[3].edges: cycle b -> c -> b"


def test_a_board_without_a_cycle_passes_the_check(tmp_path: Path) -> None:
    text = (DATA / "cyclic_board.toml").read_text(encoding="utf-8")
    path = tmp_path / "board.toml"
    path.write_text(text.replace('edges = ["b"]', 'edges = ["goal"]'), encoding="utf-8")
    board = load_content(path, Board, acyclic)
    assert [space.id for space in board.spaces] == ["start", "a", "b", "c", "goal"]


def test_require_unique_blames_the_second_entry_with_the_repeated_id() -> None:
    error = load_error(DATA / "duplicate_tiles.toml", TileFile, unique_tile_ids)
    assert str(error) == "duplicate_tiles.toml:11: tiles[2].id: '1-2' is already used by tiles[0]"


def test_a_check_that_fails_with_another_exception_is_not_hidden() -> None:
    def broken(tiles: TileFile) -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        load_content(DATA / "tiles.toml", TileFile, broken)


# --------------------------------------------------------------------------- cache


def test_content_is_read_once_per_file_and_shared(tmp_path: Path) -> None:
    path = tmp_path / "tiles.toml"
    path.write_text((DATA / "tiles.toml").read_text(encoding="utf-8"), encoding="utf-8")
    first = load_content(path, TileFile)
    path.write_text("this is not toml", encoding="utf-8")
    # The same file named by a str is the same cache entry: the file is not read again.
    assert load_content(str(path), TileFile) is first


def test_a_failed_load_is_not_cached_so_a_fixed_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "tiles.toml"
    path.write_text('[[tiles]]\nid = "1-2"\npair = [1, 2]\nterrain = "溶岩"\n', encoding="utf-8")
    load_error(path, TileFile)
    path.write_text('[[tiles]]\nid = "1-2"\npair = [1, 2]\nterrain = "平地"\n', encoding="utf-8")
    assert load_content(path, TileFile).tiles[0].terrain == "平地"


# --------------------------------------------------------------------------- line maps


def test_toml_lines_follow_quoted_and_dotted_keys_and_subtables() -> None:
    text = (
        '[[board."round 1".spaces]]\n'  # 1
        'id = "a"\n'  # 2
        "pos.q = 0\n"  # 3
        '[[board."round 1".spaces]]\n'  # 4
        "[board.'round 1'.spaces.pos]\n"  # 5
        "q = 1\n"  # 6
    )
    lines = entry_lines(Path("x.toml"), text)
    assert lines[("board", "round 1", "spaces", 0)] == 1
    assert lines[("board", "round 1", "spaces", 0, "pos", "q")] == 3
    assert lines[("board", "round 1", "spaces", 1)] == 4
    assert lines[("board", "round 1", "spaces", 1, "pos")] == 5
    assert lines[("board", "round 1", "spaces", 1, "pos", "q")] == 6


def test_toml_lines_skip_what_multi_line_values_hold() -> None:
    text = (
        "[[tiles]]\n"  # 1
        'id = "a"\n'  # 2
        "edges = [  # ] in a comment does not close it\n"  # 3
        '  ["b"]\n'  # 4: reads like a table header
        "]\n"  # 5
        "text = '''\n"  # 6
        "x = 1\n"  # 7: reads like a key
        "'''\n"  # 8
        "[[tiles]]\n"  # 9
        'id = "b"\n'  # 10
    )
    lines = entry_lines(Path("x.toml"), text)
    assert lines == {
        ("tiles",): 1,
        ("tiles", 0): 1,
        ("tiles", 0, "id"): 2,
        ("tiles", 0, "edges"): 3,
        ("tiles", 0, "text"): 6,
        ("tiles", 1): 9,
        ("tiles", 1, "id"): 10,
    }


def test_format_loc_writes_indexes_in_brackets() -> None:
    assert format_loc(("events", 0, "levels", 1, "target", 2)) == "events[0].levels[1].target[2]"
    assert format_loc(()) == ""
