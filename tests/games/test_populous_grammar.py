"""grammar/populous.lark: the game's command lines (app/games/populous/commands.py, "Command
syntax"), English and Japanese, with the transformer's own checks of squares, cards and counts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

from app.games.base import STRICT_AVAILABLE, CommandSyntaxError, normalise
from app.games.commands import As, Join
from app.games.populous import game
from app.games.populous.commands import (
    Area,
    Catastrophe,
    Cubes,
    Discard,
    End,
    Mediate,
    Move,
    Pick,
    Place,
    Play,
    Race,
    Reveal,
    Town,
    War,
    WrathBuy,
    card_order,
)
from app.games.populous.grammar import MAX_PATH, PARSER, SYNTAX_EXAMPLES
from app.games.resources import resource_dir
from app.gm.lines import classify_line

parse = PARSER.parse


@pytest.mark.parametrize(
    ("line", "command"),
    [
        # RACE / 種族
        ("RACE ドワーフ", Race("ドワーフ")),
        ("race 人間", Race("人間")),
        ("種族 ドワーフ", Race("ドワーフ")),
        ("種族 砂漠の民", Race("砂漠の民")),
        # PICK / 選択 / ドラフト
        ("PICK 大図書館", Pick("大図書館")),
        ("選択 大図書館", Pick("大図書館")),
        ("ドラフト 大図書館", Pick("大図書館")),
        # CUBES / 配分 / キューブ
        ("CUBES 情熱 2 食料 3 信仰 2", Cubes(2, 3, 2)),
        ("配分 情熱2 食料3 信仰2", Cubes(2, 3, 2)),
        ("キューブ 信仰2、情熱5", Cubes(5, 0, 2)),
        ("CUBES passion 2 food 3 faith 2", Cubes(2, 3, 2)),
        ("cubes FOOD 6, Faith 1", Cubes(0, 6, 1)),
        # AREA / エリア / 創世: numbers and Free, low first
        ("AREA 2 4", Area(("2", "4"))),
        ("AREA 4 2", Area(("2", "4"))),
        ("エリア 2 4", Area(("2", "4"))),
        ("創世 1 5", Area(("1", "5"))),
        ("AREA F2 4", Area(("4", "F2"))),
        ("AREA 4 F2", Area(("4", "F2"))),
        ("AREA F 2 4", Area(("4", "F2"))),
        ("AREA F=2 4", Area(("4", "F2"))),
        ("AREA free 3 1", Area(("1", "F3"))),
        ("エリア フリー2 フリー4", Area(("F2", "F4"))),
        ("AREA 3 F3", Area(("3", "F3"))),
        # WRATH / 神の怒り / 怒り
        ("WRATH BUY", WrathBuy()),
        ("怒り 購入", WrathBuy()),
        ("神の怒り 獲得", WrathBuy()),
        ("WRATH 3 RING 海", Catastrophe(3, (), "海")),
        ("WRATH 3 RING sea", Catastrophe(3, (), "海")),
        ("WRATH 4 SQUARE 24b RING 山岳", Catastrophe(4, ("24b",), "山岳")),
        ("WRATH 4 24b RING mountains", Catastrophe(4, ("24b",), "山岳")),
        ("怒り 5 マス 24b 24c リング 青", Catastrophe(5, ("24b", "24c"), "海")),
        ("神の怒り 6 マス 2-4b、2−4c リング 緑", Catastrophe(6, ("24b", "24c"), "平地")),
        ("WRATH 3 RING desert", Catastrophe(3, (), "砂漠")),
        ("WRATH 3 RING 白", Catastrophe(3, (), "凍土")),
        # PLACE / 配置
        ("PLACE 24a", Place(("24a",))),
        ("配置 24a 24b", Place(("24a", "24b"))),
        ("PLACE 24A, 2-4b、2−4c", Place(("24a", "24b", "24c"))),
        ("place 33a 33b 33c 34a", Place(("33a", "33b", "33c", "34a"))),
        # PLAY / プレイ / 通常配置, EXTRA / 追加
        ("PLAY 祝福", Play("祝福")),
        ("プレイ 祝福 追加 1", Play("祝福", 1)),
        ("通常配置 労働 EXTRA 3", Play("労働", 3)),
        ("PLAY labour", Play("労働")),
        ("PLAY Labor EXTRA 2", Play("労働", 2)),
        ("play miracle", Play("奇跡")),
        ("PLAY revelation", Play("啓示")),
        ("PLAY prosperity", Play("繁栄")),
        ("PLAY blessing", Play("祝福")),
        # FACEDOWN / 裏 / 裏面配置, CARD / カード
        ("FACEDOWN 啓示", Play("啓示", down=True)),
        ("裏 啓示", Play("啓示", down=True)),
        ("裏面配置 啓示 カード 労働", Play("啓示", down=True, card="労働")),
        ("FACEDOWN 啓示 CARD 労働 EXTRA 1", Play("啓示", 1, down=True, card="労働")),
        ("FACEDOWN 啓示 EXTRA 2", Play("啓示", 2, down=True)),
        # NEWGEN / 世代交代
        ("NEWGEN 祝福", Play("祝福", newgen=True)),
        ("NEWGEN PLAY 祝福", Play("祝福", newgen=True)),
        ("世代交代 プレイ 祝福 追加 2", Play("祝福", 2, newgen=True)),
        ("世代交代 裏 啓示", Play("啓示", newgen=True, down=True)),
        ("世代交代 裏 啓示 カード 労働", Play("啓示", newgen=True, down=True, card="労働")),
        # MOVE / 移動
        ("MOVE 24a 24b", Move(("24a", "24b"))),
        ("移動 24a 24b", Move(("24a", "24b"))),
        ("MOVE 24a 24b 45c", Move(("24a", "24b", "45c"))),
        ("MOVE 24a,24b", Move(("24a", "24b"))),
        # DISCARD / 捨てる / 捨て
        ("DISCARD 祝福", Discard(("祝福",))),
        ("捨てる 祝福", Discard(("祝福",))),
        ("捨て 祝福 労働", Discard(("祝福", "労働"))),
        ("DISCARD blessing, 奇跡、labour", Discard(("祝福", "奇跡", "労働"))),
        # WAR / 戦争, MEDIATE / 調停
        ("WAR", War()),
        ("戦争", War()),
        ("MEDIATE", Mediate()),
        ("調停", Mediate()),
        # TOWN / 建設 / タウン
        ("TOWN 24a", Town("24a")),
        ("建設 24a", Town("24a")),
        ("タウン 3-5C", Town("35c")),
        # REVEAL / 公開
        ("REVEAL 大図書館", Reveal("大図書館")),
        ("公開 大図書館", Reveal("大図書館")),
        # END / 終了 / 手番終了
        ("END", End()),
        ("終了", End()),
        ("手番終了", End()),
        ("end", End()),
    ],
)
def test_game_command_lines_parse(line: str, command: object) -> None:
    """Every verb and alias parses to its dataclass, and its canonical line parses back."""
    assert parse(line) == command
    assert parse(command.canonical()) == command  # type: ignore[attr-defined]
    assert PARSER.is_command_line(line)


def test_fullwidth_line_is_the_same_line() -> None:
    """API.md: full-width input is the same line after NFKC."""
    assert parse("ＡＲＥＡ　２　４") == Area(("2", "4"))
    assert parse("エリア　Ｆ２　４") == Area(("4", "F2"))
    assert parse("配置　２４ａ　２４Ｂ") == Place(("24a", "24b"))
    assert parse("ＰＬＡＹ　祝福　ＥＸＴＲＡ　１") == Play("祝福", 1)
    assert parse("配分　情熱２　食料３　信仰２") == Cubes(2, 3, 2)
    assert parse("ＷＲＡＴＨ　４　ＳＱＵＡＲＥ　２４ｂ　ＲＩＮＧ　海") == Catastrophe(
        4, ("24b",), "海"
    )
    assert parse("ＥＮＤ") == End()
    assert parse("ｴﾘｱ 2 4") == Area(("2", "4"))  # half-width katakana


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("配置24a", Place(("24a",))),
        ("配置24a 24b", Place(("24a", "24b"))),
        ("建設24a", Town("24a")),
        ("移動24a 24b", Move(("24a", "24b"))),
        ("エリア2 4", Area(("2", "4"))),
        ("捨てる祝福", Discard(("祝福",))),
        ("プレイ祝福", Play("祝福")),
        ("戦争します", War()),
        ("調停します。", Mediate()),
        ("終了。", End()),
    ],
)
def test_glued_japanese_verbs(line: str, command: object) -> None:
    """docs/forum.md: a Japanese verb may be followed by no space, by 。 or a polite ending."""
    assert parse(line) == command
    assert classify_line(game, line) == "command"


@pytest.mark.parametrize("line", ["戦争はよくない", "終了しました", "配置について", "移動中です"])
def test_a_verb_glued_to_talk_stays_talk(line: str) -> None:
    assert classify_line(game, line) == "talk"


def test_platform_commands_and_as() -> None:
    assert parse("JOIN") == Join()
    assert parse("参加") == Join()
    assert parse("AS 太郎 AREA 2 4") == As("太郎", Area(("2", "4")))
    assert parse("代理 太郎 配置 24a 24b") == As("太郎", Place(("24a", "24b")))
    line = As("花子", Play("啓示", 1, newgen=True, down=True)).canonical()
    assert parse(line) == As("花子", Play("啓示", 1, newgen=True, down=True))


def test_canonical_lines_are_the_english_ones() -> None:
    assert Area(("4", "F2")).canonical() == "AREA 4 F2"
    assert Cubes(2, 3, 2).canonical() == "CUBES 情熱 2 食料 3 信仰 2"
    assert Catastrophe(5, ("24b", "24c"), "海").canonical() == "WRATH 5 SQUARE 24b 24c RING 海"
    assert Catastrophe(3, (), "海").canonical() == "WRATH 3 RING 海"
    assert Play("啓示", 1, newgen=True, down=True, card="労働").canonical() == (
        "NEWGEN FACEDOWN 啓示 CARD 労働 EXTRA 1"
    )
    assert Play("祝福", newgen=True).canonical() == "NEWGEN 祝福"
    assert Play("祝福", 2).canonical() == "PLAY 祝福 EXTRA 2"


# --------------------------------------------------------------------------- the transformer


@pytest.mark.parametrize(
    ("line", "column", "expected"),
    [
        ("PLACE 42a", len("PLACE ") + 1, ["24a"]),
        ("PLACE 24a 42a", len("PLACE 24a ") + 1, ["24a"]),
        ("TOWN 53c", len("TOWN ") + 1, ["35c"]),
        ("WRATH 4 SQUARE 42b RING 海", len("WRATH 4 SQUARE ") + 1, ["24b"]),
        ("MOVE 24a 4-2b", len("MOVE 24a ") + 1, ["24b"]),
    ],
)
def test_a_square_is_written_low_number_first(line: str, column: int, expected: list[str]) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert "小さい数字を先に書きます" in caught.value.message
    assert f"例: {expected[0]}" in caught.value.message
    assert caught.value.column == column
    assert caught.value.expected == expected


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ("PLACE 64a", len("PLACE ") + 1),
        ("PLACE 24d", len("PLACE ") + 1),
        ("PLACE 06a", len("PLACE ") + 1),
        ("TOWN 24z", len("TOWN ") + 1),
        ("MOVE 24a 57c", len("MOVE 24a ") + 1),
    ],
)
def test_no_such_square(line: str, column: int) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert "はありません" in caught.value.message
    assert caught.value.column == column
    assert caught.value.expected == ["24a", "35c"]


@pytest.mark.parametrize(
    ("line", "cards"),
    [
        ("AREA F 3", ("3", "F")),  # the rules page's own example: Free and 【3】
        ("AREA 3 F", ("3", "F")),
        ("エリア フリー 3", ("3", "F")),
        ("AREA F=3", ("3", "F")),
        ("AREA 4 フリー", ("4", "F")),
        ("AREA F F3", ("F", "F3")),
    ],
)
def test_free_without_its_number_is_left_to_the_rules(line: str, cards: tuple[str, str]) -> None:
    """A Free whose number is not written parses; the rules take the one area it can stand
    for or ask which (test_populous_rules.test_area_f_3_free_and_3)."""
    assert parse(line) == Area(cards)


def test_free_with_a_space_takes_the_number_after_it() -> None:
    """F 2 is Free standing for 2 (as F2) when a second card follows: AREA F 2 4."""
    assert parse("AREA F 2 4") == Area(("4", "F2"))
    for line in ("AREA F3", "AREA 2"):
        with pytest.raises(CommandSyntaxError) as caught:
            parse(line)
        assert caught.value.message.startswith("AREA の後には創世カードを2枚書いてください")
        assert caught.value.column == len(line) + 1


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ("AREA 6 4", len("AREA ") + 1, "創世カードの数字は 1〜5 です(6 は書けません)。"),
        ("AREA 2 F6", len("AREA 2 ") + 1, "創世カードの数字は 1〜5 です(6 は書けません)。"),
        ("AREA 0 4", len("AREA ") + 1, "創世カードの数字は 1〜5 です(0 は書けません)。"),
        (
            "PLAY 祝福 EXTRA 4",
            len("PLAY 祝福 EXTRA ") + 1,
            "EXTRA(追加アクション)の数は 1〜3 です(4 は書けません)。",
        ),
        (
            "プレイ 祝福 追加 4",
            len("プレイ 祝福 追加 ") + 1,
            "EXTRA(追加アクション)の数は 1〜3 です(4 は書けません)。",
        ),
        (
            "FACEDOWN 啓示 EXTRA 0",
            len("FACEDOWN 啓示 EXTRA ") + 1,
            "EXTRA(追加アクション)の数は 1〜3 です(0 は書けません)。",
        ),
        ("WRATH 7 RING 海", len("WRATH ") + 1, "払う神の怒りの数は 1〜6 です(7 は書けません)。"),
        ("WRATH 0 RING 海", len("WRATH ") + 1, "払う神の怒りの数は 1〜6 です(0 は書けません)。"),
    ],
)
def test_numbers_out_of_range(line: str, column: int, message: str) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert caught.value.message == message
    assert caught.value.column == column


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ("MOVE 24a", len("MOVE") + 1),
        ("移動 24a", len("移動") + 1),
        ("MOVE 2-4a", len("MOVE") + 1),
    ],
)
def test_move_needs_a_square_to_go_to(line: str, column: int) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert caught.value.message.startswith("MOVE には動かすワーカーのいるマスと移動先のマス")
    assert caught.value.column == column


@pytest.mark.parametrize(
    ("line", "column", "resource"),
    [
        ("CUBES 情熱2 情熱3", len("CUBES 情熱2 ") + 1, "情熱"),
        ("CUBES passion 2 情熱 3", len("CUBES passion 2 ") + 1, "情熱"),
        ("配分 食料3 信仰2 food 2", len("配分 食料3 信仰2 ") + 1, "食料"),
        ("CUBES 信仰 1, 信仰 6", len("CUBES 信仰 1, ") + 1, "信仰"),
    ],
)
def test_cubes_names_each_resource_once(line: str, column: int, resource: str) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert caught.value.message == f"{resource} が2回書かれています。"
    assert caught.value.column == column


def test_paths_and_discards_are_capped() -> None:
    squares = " ".join(["24a", "24b"] * 7)[: 4 * (MAX_PATH + 1) - 1]
    with pytest.raises(CommandSyntaxError) as caught:
        parse(f"MOVE {squares}")
    assert caught.value.message == f"マスは {MAX_PATH} 個までです。"
    assert caught.value.column == len("MOVE ") + 4 * MAX_PATH + 1
    assert parse("MOVE " + squares[: 4 * MAX_PATH - 1]) == Move(
        tuple(squares[: 4 * MAX_PATH - 1].split())
    )
    with pytest.raises(CommandSyntaxError) as caught:
        parse("DISCARD " + " ".join(["祝福"] * (MAX_PATH + 1)))
    assert caught.value.message == f"カードは {MAX_PATH} 枚までです。"
    assert caught.value.column == len("DISCARD ") + 3 * MAX_PATH + 1


def test_errors_inside_as_and_fullwidth_keep_their_column() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse("AS 太郎 PLACE 42a")
    assert caught.value.column == len("AS 太郎 PLACE ") + 1
    with pytest.raises(CommandSyntaxError) as caught:
        parse("ＰＬＡＣＥ　４２ａ")
    assert caught.value.line == "PLACE 42a"
    assert caught.value.column == len("PLACE ") + 1


# --------------------------------------------------------------------------- the error tables


EXAMPLES = [(label, line) for label, lines in SYNTAX_EXAMPLES.items() for line in lines]


@pytest.mark.parametrize(("label", "line"), EXAMPLES)
def test_syntax_examples_yield_their_message(label: str, line: str) -> None:
    """The match-examples table: every malformed example fails to parse and gets its label."""
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert caught.value.message == label
    assert PARSER.example_label(line) == label
    assert caught.value.column is not None and caught.value.column >= 1
    assert caught.value.line == normalise(line)


@pytest.mark.parametrize(("label", "line"), EXAMPLES)
def test_syntax_examples_inside_as_yield_their_message(label: str, line: str) -> None:
    with pytest.raises(CommandSyntaxError) as alone:
        parse(line)
    with pytest.raises(CommandSyntaxError) as caught:
        parse(f"AS 太郎 {line}")
    assert caught.value.message == label
    assert alone.value.column is not None
    assert caught.value.column == alone.value.column + len("AS 太郎 ")


def test_syntax_example_tables_do_not_overlap() -> None:
    """No parser state is claimed by two labels (the first would silently win)."""
    owner: dict[tuple[int, ...], str] = {}
    for label, lines in PARSER.examples.items():
        for line in lines:
            key = PARSER._error_key(normalise(line))
            assert key is not None, line
            assert owner.setdefault(key, label) == label, line


def test_syntax_error_column_and_expected() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse("PLACE")
    assert caught.value.column == len("PLACE") + 1
    assert caught.value.expected == ["マス(例: 24a)"]
    with pytest.raises(CommandSyntaxError) as caught:
        parse("ＷＲＡＴＨ　３")
    assert caught.value.line == "WRATH 3"
    assert caught.value.column == len("WRATH 3") + 1


@pytest.mark.parametrize(
    ("line", "is_command"),
    [
        ("AREA 2 4", True),
        ("エリア 2 4", True),
        ("怒り 購入", True),
        ("世代交代 祝福", True),
        ("戦争", True),
        ("JOIN", True),
        ("よろしくお願いします", False),
        ("AREAS", False),
        ("ワーカーを置きたい", False),
    ],
)
def test_is_command_line_first_word_is_a_verb(line: str, is_command: bool) -> None:
    assert PARSER.is_command_line(line) is is_command


def test_verbs_include_every_alias() -> None:
    words = set(PARSER.verb_words)
    assert {"RACE", "種族", "PICK", "選択", "ドラフト", "CUBES", "配分", "キューブ"} <= words
    assert {"AREA", "エリア", "創世", "WRATH", "神の怒り", "怒り", "PLACE", "配置"} <= words
    assert {"PLAY", "プレイ", "通常配置", "通常", "FACEDOWN", "裏面配置", "裏"} <= words
    assert {"NEWGEN", "世代交代", "MOVE", "移動", "DISCARD", "捨てる", "捨て"} <= words
    assert {"WAR", "戦争", "MEDIATE", "調停", "TOWN", "建設", "タウン"} <= words
    assert {"REVEAL", "公開", "END", "終了", "手番終了"} <= words


def test_grammar_builds_in_lalr_strict_mode() -> None:
    """STYLE.md: Lark.open(..., parser="lalr", strict=True) — no shift/reduce conflicts, no
    colliding terminals (needs the `interegular` package, as lark[interegular])."""
    parser = Lark.open(
        str(resource_dir("grammar") / "populous.lark"),
        parser="lalr",
        strict=True,
        maybe_placeholders=True,
    )
    assert parser.options.strict
    assert STRICT_AVAILABLE


# --------------------------------------------------------------------------- canonical round trip

KINDS = ("祝福", "労働", "奇跡", "啓示", "繁栄")
TERRAINS = ("平地", "山岳", "砂漠", "凍土", "海")
words = st.text(alphabet="大図書館ドワーフ人間砂漠の民abcXYZ_-1", min_size=1, max_size=8)
squares = st.builds(
    lambda pair, letter: f"{min(pair)}{max(pair)}{letter}",
    st.tuples(st.integers(1, 5), st.integers(1, 5)),
    st.sampled_from("abc"),
)
cards = st.sampled_from(("1", "2", "3", "4", "5", "F1", "F2", "F3", "F4", "F5"))
kinds = st.sampled_from(KINDS)


def _play(kind: str, extra: int, newgen: bool, down: bool, card: str | None) -> Play:
    return Play(kind, extra, newgen=newgen, down=down, card=card if down else None)


commands = st.one_of(
    st.builds(Race, words),
    st.builds(Pick, words),
    st.builds(Reveal, words),
    st.builds(Cubes, st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(cards, cards).map(lambda pair: Area(tuple(sorted(pair, key=card_order)))),  # type: ignore[arg-type]
    st.just(WrathBuy()),
    st.builds(
        Catastrophe,
        st.integers(1, 6),
        st.lists(squares, max_size=2).map(tuple),
        st.sampled_from(TERRAINS),
    ),
    st.builds(Place, st.lists(squares, min_size=1, max_size=MAX_PATH).map(tuple)),
    st.builds(_play, kinds, st.integers(0, 3), st.booleans(), st.booleans(), st.none() | kinds),
    st.builds(Move, st.lists(squares, min_size=2, max_size=MAX_PATH).map(tuple)),
    st.builds(Discard, st.lists(kinds, min_size=1, max_size=MAX_PATH).map(tuple)),
    st.just(War()),
    st.just(Mediate()),
    st.builds(Town, squares),
    st.just(End()),
)


@given(commands)
@settings(max_examples=400, deadline=None)
def test_canonical_round_trip_every_game_command(command: object) -> None:
    """Every command object has canonical() with parse(cmd.canonical()) == cmd, also after
    AS <name>."""
    line = command.canonical()  # type: ignore[attr-defined]
    assert parse(line) == command
    assert PARSER.is_command_line(line)
    assert parse(f"AS 太郎 {line}") == As("太郎", command)  # type: ignore[arg-type]
