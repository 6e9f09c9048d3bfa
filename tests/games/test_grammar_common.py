"""grammar/common.lark and app/games/base.py: platform commands, normalising, errors, Rng,
the registry. Pure tests (no DB); the platform commands are parsed through えいつく's grammar,
which imports common.lark like every game grammar does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lark import Lark

from app.games import GAMES, all_games, find_game
from app.games.base import (
    STRICT_AVAILABLE,
    CommandSyntaxError,
    RankEntry,
    Result,
    Rng,
    RuleError,
    _lark_cache_file,
    competition_ranks,
    normalise,
)
from app.games.command_messages import COMMON_SYNTAX_EXAMPLES
from app.games.commands import (
    Abort,
    Absent,
    Adjust,
    As,
    Deadline,
    Join,
    Kick,
    Leave,
    Pause,
    Replace,
    Resume,
    Start,
    Undo,
)
from app.games.eitsuku import game
from app.games.eitsuku.commands import End, SetRole
from app.games.eitsuku.grammar import PARSER
from app.games.resources import resource_dir

PLATFORM_LINES = [
    ("JOIN", "参加", Join()),
    ("LEAVE", "離脱", Leave()),
    ("START", "開始", Start()),
    ("UNDO", "取消", Undo()),
    ("PAUSE", "中断", Pause()),
    ("RESUME", "再開", Resume()),
    ("ABORT", "中止", Abort()),
    ("KICK 太郎", "追放 太郎", Kick("太郎")),
    ("REPLACE 太郎 次郎", "交代 太郎 次郎", Replace("太郎", "次郎")),
    ("DEADLINE 24", "期限 24", Deadline(24)),
    ("ABSENT 48", "不在 48", Absent(48)),
    ("ADJUST 太郎 -3 読み違い", "調整 太郎 -3 読み違い", Adjust("太郎", -3, "読み違い")),
    ("AS 太郎 END", "代理 太郎 終了", As("太郎", End())),
]


@pytest.mark.parametrize(("english", "japanese", "command"), PLATFORM_LINES)
def test_platform_verbs_english_and_japanese_alias(
    english: str, japanese: str, command: object
) -> None:
    """API.md: "English verbs are canonical; each has a Japanese alias"."""
    assert game.parse(english) == command
    assert game.parse(japanese) == command
    assert game.parse(english.lower()) == command


@pytest.mark.parametrize(("english", "japanese", "command"), PLATFORM_LINES)
def test_platform_canonical_round_trip(english: str, japanese: str, command: object) -> None:
    """Every command has canonical(); game.parse(cmd.canonical()) == cmd."""
    canonical = command.canonical()  # type: ignore[attr-defined]
    assert canonical == english
    assert game.parse(canonical) == command


def test_fullwidth_line_is_the_same_line() -> None:
    """API.md: "Verbs are matched after NFKC normalisation, so full-width input
    (ＳＥＴ　主演　役者３) is the same line"."""
    assert game.parse("ＳＥＴ　主演　役者３") == SetRole("主演", "役者3")
    assert game.parse("ＪＯＩＮ") == Join()
    assert game.parse("ＤＥＡＤＬＩＮＥ　７２") == Deadline(72)


def test_normalise_nfkc_strip_collapse() -> None:
    assert normalise("  ＳＥＴ\u3000\u3000主演  \t役者３ ") == "SET 主演 役者3"
    assert normalise("\u3000") == ""
    assert normalise("予算･小") == "予算・小"  # half-width middle dot becomes U+30FB


def test_adjust_sign_forms_and_reason_rest_of_line() -> None:
    """ADJUST <name> <±n> <reason>: the reason is the rest of the line."""
    assert game.parse("ADJUST 太郎 +5 タイアップの 読み違い") == Adjust(
        "太郎", 5, "タイアップの 読み違い"
    )
    assert game.parse("ADJUST 太郎 5 x") == Adjust("太郎", 5, "x")
    assert game.parse("ADJUST 太郎 −2 x") == Adjust("太郎", -2, "x")  # U+2212 minus
    assert game.parse("ADJUST 太郎 －2 x") == Adjust("太郎", -2, "x")  # full-width hyphen
    assert Adjust("太郎", 0, "x").canonical() == "ADJUST 太郎 +0 x"


def test_as_wraps_any_command_including_nested_errors() -> None:
    """AS <name> <command>: the GM applies a command for that player."""
    assert game.parse("AS 花子 SET 主演 役者3") == As("花子", SetRole("主演", "役者3"))
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("AS 花子 SET 主演")
    assert caught.value.message.startswith("SET <役割場> の後には配置する役割カード")
    assert caught.value.column == len("AS 花子 SET 主演") + 1


def test_deadline_hours_out_of_range_is_syntax_error() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("DEADLINE 0")
    assert "時間数は 1 から" in caught.value.message
    assert caught.value.column == len("DEADLINE ") + 1


EXAMPLES = [(label, line) for label, lines in COMMON_SYNTAX_EXAMPLES.items() for line in lines]


@pytest.mark.parametrize(("label", "line"), EXAMPLES)
def test_common_syntax_examples_yield_their_message(label: str, line: str) -> None:
    """The match-examples table for platform commands: each example gets its own message."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(line)
    assert caught.value.message == label
    assert caught.value.line == normalise(line)
    assert caught.value.column is not None and caught.value.column >= 1
    assert caught.value.expected


def test_unknown_error_lists_expected_terminals() -> None:
    """Without a matching example the message says what could stand there."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("KICK")
    assert caught.value.expected == ["名前"]
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("EVENT 方針転換 主演 役者5 PAY 小")
    assert "行末" in caught.value.expected


@pytest.mark.parametrize(
    ("line", "is_command"),
    [
        ("JOIN", True),
        ("join", True),
        ("参加", True),
        ("ＳＥＴ　主演　役者３", True),
        ("END よろしく", True),
        ("AS 太郎 END", True),
        # docs/forum.md: a polite ending after a verb adds nothing (参加します is JOIN), a
        # verb glued to other talk stays talk.
        ("参加します", True),
        ("参加したいです", False),
        ("よろしくお願いします", False),
        ("", False),
        ("   ", False),
        ("ENDLESS", False),
        ("【役者/3】がほしい", False),
    ],
)
def test_is_command_line_first_word_is_a_verb(line: str, is_command: bool) -> None:
    """DESIGN.md: "a line whose first word is a known verb (English canonical or Japanese
    alias) is a command, every other line is talk"."""
    assert game.is_command_line(line) is is_command


def test_rng_is_deterministic_per_seed_and_sequence() -> None:
    def roll(seed: str, seq: int) -> list[int]:
        rng = Rng(seed, seq)
        return [rng.randint(1, 6) for _ in range(20)]

    assert roll("s", 1) == roll("s", 1)
    assert roll("s", 1) != roll("s", 2)
    assert roll("s", 1) != roll("t", 1)
    items = list(range(30))
    Rng("s", 3).shuffle(items)
    again = list(range(30))
    Rng("s", 3).shuffle(again)
    assert items == again != list(range(30))
    assert Rng("s", 4).choice("abcdef") == Rng("s", 4).choice("abcdef")


def test_rule_error_message_and_legal() -> None:
    error = RuleError("だめです", ["END"])
    assert str(error) == "だめです" == error.message
    assert error.legal == ["END"]
    assert RuleError("x").legal == []


def test_result_to_json_and_back() -> None:
    result = Result([RankEntry("A", 1, 30, {"total": 30}), RankEntry("B", 2, None, {})])
    data = result.to_json()
    assert data == {
        "ranking": [
            {"name": "A", "rank": 1, "score": 30, "breakdown": {"total": 30}},
            {"name": "B", "rank": 2, "score": None, "breakdown": {}},
        ]
    }
    assert Result.from_json(data) == result


def test_competition_ranks_ties_share() -> None:
    assert competition_ranks([50, 40, 40, 10]) == [1, 2, 2, 4]
    assert competition_ranks([]) == []


@pytest.mark.parametrize(
    "name", ["eitsuku", "EITSUKU", "ｅｉｔｓｕｋｕ", "えいつく", "エイツク", "Eitsuku"]
)
def test_find_game_by_kind_title_or_alias(name: str) -> None:
    assert find_game(name) is GAMES["eitsuku"]


def test_find_game_unknown_and_all_games() -> None:
    assert find_game("chess") is None
    assert all_games()[0] is GAMES["eitsuku"]
    assert {"eitsuku", "eleusis"} <= set(GAMES)
    assert all(GAMES[game.kind] is game for game in all_games())
    assert GAMES["eitsuku"].kind == "eitsuku"


def test_resource_dir_finds_grammar_and_templates() -> None:
    assert (resource_dir("grammar") / "common.lark").is_file()
    assert (resource_dir("grammar") / "eitsuku.lark").is_file()
    assert (resource_dir("templates") / "games" / "eitsuku" / "summary.txt.j2").is_file()


def test_parser_is_built_once_per_process() -> None:
    assert PARSER.lark is PARSER.lark


@pytest.mark.parametrize("grammar", ["eitsuku.lark"])
def test_grammar_builds_in_lalr_strict_mode(grammar: str) -> None:
    """STYLE.md: Lark.open(..., parser="lalr", strict=True) — no shift/reduce conflicts, no
    colliding terminals (needs the `interegular` package, as lark[interegular])."""
    parser = Lark.open(str(resource_dir("grammar") / grammar), parser="lalr", strict=True)
    assert parser.options.strict
    assert STRICT_AVAILABLE


def test_a_changed_common_grammar_never_loads_another_checkouts_cached_parser(
    tmp_path: Path,
) -> None:
    """Lark's cache skips an imported file whose path is gone: the cache file is named by
    every grammar file's text, so two checkouts that differ in common.lark alone never share
    one (a new command would otherwise be unknown until /tmp was cleared)."""
    here = resource_dir("grammar")
    one, two = tmp_path / "one", tmp_path / "two"
    shutil.copytree(here, one)
    shutil.copytree(here, two)
    assert _lark_cache_file(one / "eitsuku.lark") == _lark_cache_file(two / "eitsuku.lark")
    common = two / "common.lark"
    common.write_text(common.read_text(encoding="utf-8") + "\n// changed\n", encoding="utf-8")
    assert _lark_cache_file(one / "eitsuku.lark") != _lark_cache_file(two / "eitsuku.lark")
