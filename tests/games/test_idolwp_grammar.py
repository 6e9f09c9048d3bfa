"""grammar/idolwp.lark: the game's command lines (docs/rules/idolwp.md, "Command syntax")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

from app.games.base import STRICT_AVAILABLE, CommandSyntaxError, normalise
from app.games.commands import As, Join
from app.games.idolwp.commands import (
    ABILITIES,
    CardPlay,
    Convert,
    Discard,
    EventEntry,
    Move,
    Pick,
    Skip,
    Train,
)
from app.games.idolwp.grammar import PARSER, SYNTAX_EXAMPLES
from app.games.resources import resource_dir

parse = PARSER.parse


@pytest.mark.parametrize(
    ("line", "command"),
    [
        # PICK / 指名 / 選択
        ("PICK 春香", Pick("春香")),
        ("pick 千早", Pick("千早")),
        ("指名 美希", Pick("美希")),
        ("選択 春香", Pick("春香")),
        # MOVE / 移動
        ("MOVE 春香 L3", Move("春香", "L3")),
        ("move 春香 l3", Move("春香", "L3")),
        ("移動 美希 E1", Move("美希", "E1")),
        ("MOVE 美希 G", Move("美希", "G")),
        ("MOVE 美希 ゴール", Move("美希", "G")),
        ("MOVE 千早 L2 VO", Move("千早", "L2", vo=True)),
        ("MOVE 千早 L2 Voで", Move("千早", "L2", vo=True)),
        ("MOVE 千早 L2 vo", Move("千早", "L2", vo=True)),
        ("MOVE 千早 L2 ボーカルで", Move("千早", "L2", vo=True)),
        ("MOVE 春香 L3 MONEY", Move("春香", "L3", money=True)),
        ("移動 春香 L3 マニー", Move("春香", "L3", money=True)),
        ("MOVE 千早 L2 VO MONEY", Move("千早", "L2", vo=True, money=True)),
        (
            "MOVE 春香 E1 EVENT LV2 BOOST Vo1",
            Move("春香", "E1", event=EventEntry(2, (("Vo", 1),))),
        ),
        ("MOVE 美希 T1 TRAIN Vo1 Da1", Move("美希", "T1", train=Train((("Vo", 1), ("Da", 1))))),
        ("MOVE 美希 T1 TRAIN", Move("美希", "T1", train=Train())),
        (
            "移動 美希 L4 マニー イベント レベル1 特訓 ダンス2",
            Move("美希", "L4", money=True, event=EventEntry(1), train=Train((("Da", 2),))),
        ),
        # EVENT / イベント: the level
        ("EVENT LV2", EventEntry(2)),
        ("EVENT LV 2", EventEntry(2)),
        ("EVENT Lv2", EventEntry(2)),
        ("event lv3", EventEntry(3)),
        ("EVENT Lv.1", EventEntry(1)),
        ("EVENT LEVEL 3", EventEntry(3)),
        ("EVENT 2", EventEntry(2)),
        ("イベント レベル2", EventEntry(2)),
        ("イベント レベル 1", EventEntry(1)),
        # BOOST / ブースト, DOUBLE / 2倍 / 倍
        ("EVENT LV2 BOOST Vo 2 Da 1", EventEntry(2, (("Vo", 2), ("Da", 1)))),
        ("EVENT LV2 BOOST Vo2 Da1", EventEntry(2, (("Vo", 2), ("Da", 1)))),
        ("EVENT LV2 BOOST Da1 Vo2", EventEntry(2, (("Vo", 2), ("Da", 1)))),
        ("EVENT LV2 BOOST Vo Vo Vi", EventEntry(2, (("Vo", 2), ("Vi", 1)))),
        ("EVENT LV2 BOOST Vo1, Vo1、Da0", EventEntry(2, (("Vo", 2),))),
        ("EVENT LV2 BOOST vo1 DA1 vI1", EventEntry(2, (("Vo", 1), ("Da", 1), ("Vi", 1)))),
        ("EVENT LV2 BOOST Vocal Dance2 Visual 3", EventEntry(2, (("Vo", 1), ("Da", 2), ("Vi", 3)))),
        ("EVENT LV1 DOUBLE", EventEntry(1, (), True)),
        ("EVENT LV1 2倍", EventEntry(1, (), True)),
        ("EVENT LV1 倍", EventEntry(1, (), True)),
        ("EVENT LV2 BOOST Vo2 2倍", EventEntry(2, (("Vo", 2),), True)),
        ("EVENT LV2 BOOST Vo2 倍", EventEntry(2, (("Vo", 2),), True)),
        ("EVENT LV2 BOOST Vo 倍", EventEntry(2, (("Vo", 1),), True)),
        (
            "イベント レベル3 ブースト ボーカル2 ダンス ビジュアル1 2倍",
            EventEntry(3, (("Vo", 2), ("Da", 1), ("Vi", 1)), True),
        ),
        ("EVENT LV2 BOOST Vo0", EventEntry(2)),
        # TRAIN / 特訓
        ("TRAIN", Train()),
        ("TRAIN Vo1", Train((("Vo", 1),))),
        ("TRAIN Vo 2 Vi", Train((("Vo", 2), ("Vi", 1)))),
        ("特訓 ビジュアル2 ボーカル", Train((("Vo", 1), ("Vi", 2)))),
        ("TRAIN Vo1 Vo1", Train((("Vo", 2),))),
        ("TRAIN Vo0", Train()),
        # CONVERT / 変換, MEMORY / 思い出, MONEY / マニー
        ("CONVERT MEMORY Vo Vo Da", Convert("MEMORY", ("Vo", "Vo", "Da"))),
        ("CONVERT MEMORY Da Vo Vo", Convert("MEMORY", ("Da", "Vo", "Vo"))),
        ("CONVERT MEMORY Vo2 Da", Convert("MEMORY", ("Vo", "Vo", "Da"))),
        ("CONVERT MEMORY Vi 3", Convert("MEMORY", ("Vi", "Vi", "Vi"))),
        ("変換 思い出 ボーカル、ダンス、ビジュアル", Convert("MEMORY", ("Vo", "Da", "Vi"))),
        ("CONVERT MONEY Vo Da", Convert("MONEY", ("Vo", "Da"))),
        ("convert money vi vi", Convert("MONEY", ("Vi", "Vi"))),
        ("変換 マニー Vi, Da", Convert("MONEY", ("Vi", "Da"))),
        # CARD / カード
        ("CARD 差し入れ", CardPlay("差し入れ")),
        ("CARD 差し入れ Vo Da", CardPlay("差し入れ", ("Vo", "Da"))),
        ("カード 差し入れ Da Vo Da", CardPlay("差し入れ", ("Da", "Vo", "Da"))),
        ("CARD 特訓 Vo", CardPlay("特訓", ("Vo",))),  # a card name may look like a verb
        # DISCARD / 捨てる / 捨て
        ("DISCARD 差し入れ", Discard("差し入れ")),
        ("捨てる 差し入れ", Discard("差し入れ")),
        ("捨て 差し入れ", Discard("差し入れ")),
        # SKIP / 見送り / スキップ, and EVENT SKIP
        ("SKIP", Skip()),
        ("skip", Skip()),
        ("見送り", Skip()),
        ("見送る", Skip()),
        ("スキップ", Skip()),
        ("EVENT SKIP", Skip()),
        ("イベント 見送り", Skip()),
    ],
)
def test_game_command_lines_parse(line: str, command: object) -> None:
    """Every verb and alias parses to its dataclass, and its canonical line parses back."""
    assert parse(line) == command
    assert parse(command.canonical()) == command  # type: ignore[attr-defined]
    assert PARSER.is_command_line(line)


def test_one_line_turn() -> None:
    """Rules page: "a turn may be written on one line"."""
    assert parse("MOVE 春香 L3 MONEY EVENT LV2 BOOST Vo1 Da2 DOUBLE") == Move(
        idol="春香",
        space="L3",
        money=True,
        event=EventEntry(2, (("Vo", 1), ("Da", 2)), True),
    )


def test_fullwidth_line_is_the_same_line() -> None:
    """API.md: full-width input is the same line after NFKC."""
    assert parse("ＭＯＶＥ　春香　Ｌ３") == Move("春香", "L3")
    assert parse("ＥＶＥＮＴ　ＬＶ２　ＢＯＯＳＴ　Ｖｏ１　Ｄａ２") == EventEntry(
        2, (("Vo", 1), ("Da", 2))
    )
    assert parse("移動　春香　ｌ３") == Move("春香", "L3")
    assert parse("イベント　レベル２　２倍") == EventEntry(2, (), True)
    assert parse("変換　思い出　Ｖｏ　Ｖｏ　Ｄａ") == Convert("MEMORY", ("Vo", "Vo", "Da"))
    assert parse("特訓　ﾎﾞｰｶﾙ２") == Train((("Vo", 2),))  # half-width katakana


def test_platform_commands_and_as() -> None:
    assert parse("JOIN") == Join()
    assert parse("参加") == Join()
    assert parse("AS 太郎 MOVE 春香 L1") == As("太郎", Move("春香", "L1"))
    assert parse("代理 太郎 変換 マニー Vo Da") == As("太郎", Convert("MONEY", ("Vo", "Da")))
    line = As("花子", Move("春香", "E1", money=True, event=EventEntry(3, (), True))).canonical()
    assert parse(line) == As("花子", Move("春香", "E1", money=True, event=EventEntry(3, (), True)))


@pytest.mark.parametrize("level", ["LV0", "LV4", "Lv 9", "レベル12", "0", "5"])
def test_event_level_1_to_3_only(level: str) -> None:
    """R: an event has three levels; any other is a syntax error naming the range."""
    for prefix in ("EVENT ", "MOVE 春香 E1 MONEY EVENT "):
        with pytest.raises(CommandSyntaxError) as caught:
            parse(prefix + level)
        assert "イベントのレベルは 1〜3 です" in caught.value.message
        assert caught.value.column == len(prefix) + 1
        assert caught.value.expected == ["LV1", "LV2", "LV3"]


@pytest.mark.parametrize(
    ("line", "column", "written"),
    [
        ("CONVERT MEMORY Vo Da", len("CONVERT MEMORY Vo Da") + 1, 2),
        ("CONVERT MEMORY", len("CONVERT MEMORY") + 1, 0),
        ("CONVERT MEMORY Vo Da Vi Vo", len("CONVERT MEMORY Vo Da Vi ") + 1, 4),
        ("CONVERT MEMORY Vo4", len("CONVERT MEMORY ") + 1, 4),
        ("CONVERT MEMORY Vo0 Da", len("CONVERT MEMORY Vo0 Da") + 1, 1),
    ],
)
def test_convert_memory_takes_exactly_three(line: str, column: int, written: int) -> None:
    """R 4.6: a 思い出 chip gives 3 ability chips of your choice."""
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert "ちょうど3個" in caught.value.message
    assert f"書かれているのは{written}個" in caught.value.message
    assert caught.value.column == column


@pytest.mark.parametrize(
    ("line", "column", "written"),
    [
        ("CONVERT MONEY Vo", len("CONVERT MONEY Vo") + 1, 1),
        ("変換 マニー", len("変換 マニー") + 1, 0),
        ("CONVERT MONEY Vo Da Vi", len("CONVERT MONEY Vo Da ") + 1, 3),
        ("CONVERT MONEY Vo Da2", len("CONVERT MONEY Vo ") + 1, 3),
    ],
)
def test_convert_money_takes_exactly_two(line: str, column: int, written: int) -> None:
    """R 4.6: a マニー chip gives 2 ability chips of your choice."""
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert "ちょうど2個" in caught.value.message
    assert f"書かれているのは{written}個" in caught.value.message
    assert caught.value.column == column


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ("EVENT LV2 BOOST Vo 2倍", len("EVENT LV2 BOOST ") + 1),
        ("EVENT LV2 BOOST Vo2倍", len("EVENT LV2 BOOST ") + 1),
        ("EVENT LV2 BOOST Da1 Vo 2倍", len("EVENT LV2 BOOST Da1 ") + 1),
        ("EVENT 2倍", len("EVENT ") + 1),
        ("EVENT LV2倍", len("EVENT ") + 1),
    ],
)
def test_bai_right_after_a_number_is_ambiguous(line: str, column: int) -> None:
    """「Vo 2倍」 could be Vo2 + 倍 or Vo + 2倍: refused, DOUBLE must stand apart."""
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert "区切りが分かりません" in caught.value.message
    assert caught.value.column == column


def test_counts_are_capped() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse("TRAIN Da 100")
    assert "0〜99" in caught.value.message
    assert caught.value.column == len("TRAIN ") + 1
    with pytest.raises(CommandSyntaxError):
        parse("CARD 差し入れ Vo1000000000")
    assert parse("TRAIN Vo99") == Train((("Vo", 99),))


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
    """AS <name> <command>: an error inside the command gets the command's own message, its
    column counted in the whole line."""
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
        parse("DISCARD")
    assert caught.value.column == len("DISCARD") + 1
    assert caught.value.expected == ["名前"]
    with pytest.raises(CommandSyntaxError) as caught:
        parse("ＭＯＶＥ　春香")
    assert caught.value.line == "MOVE 春香"
    assert caught.value.column == len("MOVE 春香") + 1
    assert caught.value.expected == ["マス(例: L3)"]
    with pytest.raises(CommandSyntaxError) as caught:
        parse("MOVE 春香 L3 ほげ")
    assert caught.value.column == len("MOVE 春香 L3 ") + 1
    assert set(caught.value.expected) == {
        "VO(Voで)",
        "MONEY(マニー)",
        "EVENT(イベント)",
        "TRAIN(特訓)",
        "行末",
    }
    with pytest.raises(CommandSyntaxError) as caught:
        parse("EVENT LV2 BOOST Vo1 DOUBLE Vo1")
    assert caught.value.column == len("EVENT LV2 BOOST Vo1 DOUBLE ") + 1


@pytest.mark.parametrize(
    ("line", "is_command"),
    [
        ("MOVE 春香 L3", True),
        ("移動 春香 L3", True),
        ("特訓 Vo1", True),
        ("見送り", True),
        ("JOIN", True),
        ("春香 かわいい", False),
        ("MOVES", False),
        ("よろしくお願いします", False),
    ],
)
def test_is_command_line_first_word_is_a_verb(line: str, is_command: bool) -> None:
    assert PARSER.is_command_line(line) is is_command


def test_verbs_include_every_alias() -> None:
    words = set(PARSER.verb_words)
    assert {"PICK", "指名", "選択", "MOVE", "移動", "EVENT", "イベント", "TRAIN", "特訓"} <= words
    assert {"CONVERT", "変換", "CARD", "カード", "DISCARD", "捨てる", "捨て"} <= words
    assert {"SKIP", "見送り", "スキップ"} <= words


def test_grammar_builds_in_lalr_strict_mode() -> None:
    """STYLE.md: Lark.open(..., parser="lalr", strict=True) — no shift/reduce conflicts, no
    colliding terminals (needs the `interegular` package, as lark[interegular])."""
    parser = Lark.open(
        str(resource_dir("grammar") / "idolwp.lark"),
        parser="lalr",
        strict=True,
        maybe_placeholders=True,
    )
    assert parser.options.strict
    assert STRICT_AVAILABLE


# -- canonical round trip over generated commands

words = st.text(alphabet="春香千早美希差し入れ特訓abcXYZ_-1", min_size=1, max_size=8)
spaces = st.from_regex(r"[A-Z][0-9]{0,2}", fullmatch=True)
amounts = st.dictionaries(st.sampled_from(ABILITIES), st.integers(1, 99)).map(
    lambda counts: tuple((a, counts[a]) for a in ABILITIES if a in counts)
)
event_entries = st.builds(EventEntry, st.integers(1, 3), amounts, st.booleans())
trains = st.builds(Train, amounts)
commands = st.one_of(
    st.builds(Pick, words),
    st.builds(
        Move,
        words,
        spaces,
        st.booleans(),
        st.booleans(),
        st.none() | event_entries,
        st.none() | trains,
    ),
    event_entries,
    trains,
    st.lists(st.sampled_from(ABILITIES), min_size=3, max_size=3).map(
        lambda abilities: Convert("MEMORY", tuple(abilities))
    ),
    st.lists(st.sampled_from(ABILITIES), min_size=2, max_size=2).map(
        lambda abilities: Convert("MONEY", tuple(abilities))
    ),
    st.builds(CardPlay, words, st.lists(st.sampled_from(ABILITIES), max_size=5).map(tuple)),
    st.builds(Discard, words),
    st.just(Skip()),
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
