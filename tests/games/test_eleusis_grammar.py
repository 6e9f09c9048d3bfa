"""grammar/eleusis.lark: the game's command lines (docs/rules/eleusis.md, "Command syntax")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

from app.games import GAMES, find_game
from app.games.base import CommandSyntaxError, normalise
from app.games.commands import As, Join
from app.games.eleusis import game
from app.games.eleusis.cards import ALL_KINDS, parse_card
from app.games.eleusis.commands import (
    ChooseParent,
    EndRound,
    Hint,
    Judge,
    Play,
    Prophet,
    SealRule,
)
from app.games.eleusis.grammar import PARSER, SYNTAX_EXAMPLES
from app.games.resources import resource_dir


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("PLAY ○ S7 H8", Play("○", ("♠7", "♥8"))),
        ("出す 成功 ♠7", Play("○", ("♠7",))),
        ("プレイ 失敗 ♦J", Play("●", ("♦J",))),
        ("play o s10, hq、♦T", Play("○", ("♠10", "♥Q", "♦10"))),
        ("PLAY ● C10 DA", Play("●", ("♣10", "♦A"))),
        ("PLAY ◯ ♤2", Play("○", ("♠2",))),
        ("PLAY 〇 ♡K ♢Q ♧J", Play("○", ("♥K", "♦Q", "♣J"))),
        ("PLAY x S1 S13", Play("●", ("♠A", "♠K"))),
        ("ＰＬＡＹ　○　Ｓ７", Play("○", ("♠7",))),
        ("JUDGE ○", Judge("○")),
        ("JUDGE ●", Judge("●")),
        ("JUDGE ○●", Judge("○●")),
        ("判定 混在", Judge("○●")),
        ("judge ●○", Judge("○●")),
        ("JUDGE ox", Judge("○●")),
        ("判定 成功", Judge("○")),
        ("PROPHET", Prophet()),
        ("預言者", Prophet()),
        ("予言者", Prophet()),
        ("HINT 色に注目", Hint("色に注目")),
        ("ヒント 数の 大きさ", Hint("数の 大きさ")),
        ("RULE card.color!=prev.color", SealRule("formal", "card.color != prev.color")),
        ("ルール CARD.Rank > Prev.rank", SealRule("formal", "card.rank > prev.rank")),
        ("RULE TEXT 前のカードと色が違う", SealRule("hand", "前のカードと色が違う")),
        ("ルール 文章 赤と黒", SealRule("hand", "赤と黒")),
        ("RULE text anything goes", SealRule("hand", "anything goes")),
        ("ENDROUND", EndRound()),
        ("ラウンド終了", EndRound()),
        ("PARENT 太郎", ChooseParent("太郎")),
        ("親指名 花子", ChooseParent("花子")),
        ("AS 太郎 PLAY ● C2", As("太郎", Play("●", ("♣2",)))),
        ("JOIN", Join()),
    ],
)
def test_game_command_lines_parse(line: str, command: object) -> None:
    """Rules page: PLAY/出す ○|● <cards>, JUDGE/判定, PROPHET/預言者, HINT/ヒント, RULE/ルール
    [TEXT/文章], ENDROUND/ラウンド終了, PARENT/親指名; cards S7, ♠7, 10/T, full width."""
    assert game.parse(line) == command
    assert game.parse(command.canonical()) == command  # type: ignore[attr-defined]
    assert game.is_command_line(line)


@pytest.mark.parametrize(
    ("spelling", "card"),
    [
        ("S7", "♠7"),
        ("s7", "♠7"),
        ("♠7", "♠7"),
        ("HQ", "♥Q"),
        ("♥Q", "♥Q"),
        ("hq", "♥Q"),
        ("D10", "♦10"),
        ("DT", "♦10"),
        ("dt", "♦10"),
        ("DA", "♦A"),
        ("D1", "♦A"),
        ("C10", "♣10"),
        ("C11", "♣J"),
        ("C12", "♣Q"),
        ("C13", "♣K"),
        ("♧K", "♣K"),
        ("Ｓ７", "♠7"),
        ("Ｃ１０", "♣10"),
    ],
)
def test_card_spellings_are_one_card(spelling: str, card: str) -> None:
    """Cards: S7, HQ, ♠7, ♥Q, 10/T, DA, C10, full width; views spell them ♠7."""
    assert game.parse(f"PLAY ○ {spelling}") == Play("○", (card,))


@pytest.mark.parametrize("bad", ["S14", "S0", "HX", "D01", "S7H8", "♠10J"])
def test_unknown_card_is_a_syntax_error_at_the_card(bad: str) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(f"PLAY ○ ♠2 {bad}")
    assert f"{bad} というカードはありません" in caught.value.message
    assert caught.value.column == len("PLAY ○ ♠2 ") + 1


def test_every_card_kind_round_trips() -> None:
    """One spelling for the 52 kinds, read back by the card parser."""
    assert len(ALL_KINDS) == 52
    for kind in ALL_KINDS:
        assert parse_card(kind) == kind


def test_play_at_most_4_cards() -> None:
    """R「手札より1枚以上4枚以下のカード」: a fifth card is a syntax error at the fifth card."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("PLAY ○ S2 S3 S4 S5 S6")
    assert "1〜4 枚" in caught.value.message
    assert caught.value.column == len("PLAY ○ S2 S3 S4 S5 ") + 1


def test_texts_at_most_300_characters() -> None:
    assert game.parse("HINT " + "あ" * 300) == Hint("あ" * 300)
    with pytest.raises(CommandSyntaxError):
        game.parse("HINT " + "あ" * 301)
    with pytest.raises(CommandSyntaxError):
        game.parse("RULE TEXT " + "あ" * 301)


EXAMPLES = [(label, line) for label, lines in SYNTAX_EXAMPLES.items() for line in lines]


@pytest.mark.parametrize(("label", "line"), EXAMPLES)
def test_syntax_examples_yield_their_message(label: str, line: str) -> None:
    """The match-examples table: every malformed example fails to parse and gets its label."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(line)
    assert caught.value.message == label
    assert PARSER.example_label(line) == label
    assert caught.value.column is not None and caught.value.column >= 1


def test_syntax_example_tables_do_not_overlap() -> None:
    """No parser state is claimed by two labels (the first would silently win)."""
    owner: dict[tuple[int, ...], str] = {}
    for label, lines in PARSER.examples.items():
        for line in lines:
            key = PARSER._error_key(normalise(line))
            assert key is not None, line
            assert owner.setdefault(key, label) == label, line


@pytest.mark.parametrize(
    ("line", "column", "words"),
    [
        ("RULE card.rank ==", 18, ["途中で終わっています", "比較や演算子の後に値がありません"]),
        ("RULE card.x == 3", 11, ["11文字目", "rank・suit・color・parity・face"]),
        ("AS 太郎 RULE card.x", 17, ["17文字目", "rank・suit・color・parity・face"]),
        ("RULE 1 < card.rank < 5", 20, ["20文字目", "比較は1つの式に1回"]),
        ("RULE (card.face", 16, ["閉じ括弧"]),
        ("RULE card.suit + 1", 11, ["11文字目", "+ の左には数"]),
        ("RULE card.rank", 11, ["真偽"]),
        ("ルール card.color < prev.color", 16, ["16文字目", "数どうし"]),
    ],
)
def test_sealed_rule_that_does_not_parse_says_where_and_what(
    line: str, column: int, words: list[str]
) -> None:
    """I: a parse error in a sealed rule is rejected at once with the position and what was
    expected, so a round never starts on a broken rule."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(line)
    error = caught.value
    assert error.column == column
    assert error.line == normalise(line)
    for word in words:
        assert word in error.message
    if "読めません" in error.message or "途中で" in error.message:
        assert error.expected and "ここに書けるのは次のどれかです" in error.message


def test_rule_longer_than_300_characters_is_refused_before_parsing() -> None:
    deep = "-" * 400 + "1 == 1"
    for _ in range(2):  # refused every time: only accepted lines are kept for the next parse
        with pytest.raises(CommandSyntaxError) as caught:
            game.parse(f"RULE {deep}")
        assert "300 文字まで" in caught.value.message
    nested = "-" * 290 + "1 == 1"
    assert isinstance(game.parse(f"RULE {nested}"), SealRule)


cards = st.sampled_from(ALL_KINDS)
texts = st.text(alphabet="赤黒abc 123、。", min_size=1, max_size=20).map(str.strip).filter(bool)
names = st.text(alphabet="abcXYZ太郎花子_-1", min_size=1, max_size=8)

commands = st.one_of(
    st.builds(
        Play, st.sampled_from(["○", "●"]), st.lists(cards, min_size=1, max_size=4).map(tuple)
    ),
    st.builds(Judge, st.sampled_from(["○", "●", "○●"])),
    st.just(Prophet()),
    st.builds(Hint, texts.map(normalise)),
    st.builds(SealRule, st.just("hand"), texts.map(normalise)),
    st.just(EndRound()),
    st.builds(ChooseParent, names),
)


@given(commands)
@settings(max_examples=200, deadline=None)
def test_canonical_round_trip_every_game_command(command: object) -> None:
    """Every command object has canonical() with game.parse(cmd.canonical()) == cmd."""
    line = command.canonical()  # type: ignore[attr-defined]
    assert game.parse(line) == command
    assert game.is_command_line(line)


@pytest.mark.parametrize(
    ("line", "is_command"),
    [
        ("PLAY ○ S7", True),
        ("出す 成功 ♠7", True),
        ("預言者", True),
        ("ヒント 色", True),
        ("親指名 太郎", True),
        ("親は誰?", False),
        ("預言者になりたい", False),
        ("よろしく", False),
        ("PLAYER", False),
    ],
)
def test_is_command_line_first_word_is_a_verb(line: str, is_command: bool) -> None:
    assert game.is_command_line(line) is is_command


def test_verbs_lists_every_spelling() -> None:
    verbs = game.verbs()
    for verb in ("PLAY", "出す", "プレイ", "JUDGE", "判定", "PROPHET", "預言者", "予言者", "HINT"):
        assert verb in verbs
    for verb in (
        "ヒント",
        "RULE",
        "ルール",
        "ENDROUND",
        "ラウンド終了",
        "PARENT",
        "親指名",
        "JOIN",
    ):
        assert verb in verbs


@pytest.mark.parametrize("grammar", ["eleusis.lark", "eleusis_rule.lark"])
def test_grammar_builds_in_lalr_strict_mode(grammar: str) -> None:
    """STYLE.md: Lark.open(..., parser="lalr", strict=True)."""
    parser = Lark.open(str(resource_dir("grammar") / grammar), parser="lalr", strict=True)
    assert parser.options.strict


@pytest.mark.parametrize(
    "name",
    ["eleusis", "ELEUSIS", "新新エリューシス", "エリウシス", "ｅｌｅｕｓｉｓ", "New Eleusis"],
)
def test_registry_finds_eleusis(name: str) -> None:
    assert find_game(name) is GAMES["eleusis"] is game
    assert game.kind == "eleusis" and game.grammar == "eleusis.lark"


# --- as Japanese players write it (issue: "Input as Japanese players write it") -------------


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("PLAY × S7", Play("●", ("♠7",))),
        ("出す × ♥8 ♦9", Play("●", ("♥8", "♦9"))),
        ("出す×♠7", Play("●", ("♠7",))),
        ("JUDGE ×", Judge("●")),
        ("判定 ○×", Judge("○●")),
        ("JUDGE ×○", Judge("○●")),
        ("JUDGE ◯×", Judge("○●")),
        ("JUDGE 〇×", Judge("○●")),
    ],
)
def test_batsu_is_the_failure_mark(line: str, command: object) -> None:
    """× for ● (and ○× for ○●), as players pair the marks; canonical lines keep ● and ○●."""
    assert game.parse(line) == command
    assert game.is_command_line(line)
    canonical = command.canonical()  # type: ignore[attr-defined]
    assert "×" not in canonical and game.parse(canonical) == command


def test_batsu_mixed_is_no_declaration() -> None:
    """A PLAY declares ○ or ●: ○× there is refused as ○● is."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("PLAY ○× S7")
    assert caught.value.message == PARSER.example_label("PLAY ○●")


@pytest.mark.parametrize(
    ("spelling", "card"),
    [
        ("スペード7", "♠7"),
        ("ハート10", "♥10"),
        ("ダイヤK", "♦K"),
        ("クラブA", "♣A"),
        ("クローバー2", "♣2"),
        ("ダイヤモンドQ", "♦Q"),
        ("ダイア3", "♦3"),
        ("ハートq", "♥Q"),
        ("スペードT", "♠10"),
        ("ｽﾍﾟｰﾄﾞ７", "♠7"),
    ],
)
def test_katakana_suits(spelling: str, card: str) -> None:
    """Suits as players name them in katakana; the card is the same, canonical ♠7."""
    command = game.parse(f"PLAY ● {spelling}")
    assert command == Play("●", (card,))
    assert command.canonical() == f"PLAY ● {card}"
    assert game.parse(command.canonical()) == command


def test_katakana_suits_in_a_list() -> None:
    assert game.parse("出す 成功 ハート10, ダイヤK、クラブA スペード2") == Play(
        "○", ("♥10", "♦K", "♣A", "♠2")
    )


@pytest.mark.parametrize("bad", ["スペード14", "ハートX", "クラブ0"])
def test_unknown_katakana_card_is_a_syntax_error_at_the_card(bad: str) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(f"PLAY ○ ♠2 {bad}")
    assert f"{bad} というカードはありません" in caught.value.message
    assert "スペード" in caught.value.message
    assert caught.value.column == len("PLAY ○ ♠2 ") + 1
