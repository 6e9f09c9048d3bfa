"""docs/forum.md "Where talk ends and a command begins": a Japanese verb may be followed by no
space, by 。 or by a polite ending, as players write it; a verb glued to other words is a command
only when the grammar takes the word after it (issue: Japanese as players type it)."""

from __future__ import annotations

import re

import pytest

from app.games import GAMES
from app.games.base import CommandSyntaxError, literal_words, normalise
from app.gm.lines import classify_line, misspelt_verb

EITSUKU = GAMES["eitsuku"]
ELEUSIS = GAMES["eleusis"]


@pytest.mark.parametrize(
    ("kind", "line", "canonical"),
    [
        ("eitsuku", "スカウト役者", "SCOUT 役者"),
        ("eitsuku", "配置主演役者3", "SET 主演 役者3"),
        ("eitsuku", "終了。", "END"),
        ("eitsuku", "公開します", "RELEASE"),
        ("eitsuku", "購入予算小", "BUY 小"),
        ("eleusis", "預言者宣言", "PROPHET"),
        ("eleusis", "出す○♠7", "PLAY ○ ♠7"),
        ("eleusis", "預言者を宣言します。", "PROPHET"),
    ],
)
def test_a_verb_followed_by_no_space_a_full_stop_or_a_polite_ending_is_a_command(
    kind: str, line: str, canonical: str
) -> None:
    impl = GAMES[kind]
    assert classify_line(impl, line) == "command"
    assert impl.parse(line).canonical() == canonical


@pytest.mark.parametrize(
    ("kind", "line"),
    [
        ("eitsuku", "終了しました、おつかれ"),
        ("eitsuku", "公開日はいつ?"),
        ("eitsuku", "スカウトって何?"),
        ("eitsuku", "参加したい人いますか"),
        # A word any text would match (a name, free words) is not read as the command's.
        ("eitsuku", "代理の一手です"),
        ("eitsuku", "追放されました"),
        ("eleusis", "ヒントください"),
    ],
)
def test_a_verb_glued_to_talk_stays_talk(kind: str, line: str) -> None:
    assert classify_line(GAMES[kind], line) == "talk"


def test_a_glued_command_with_a_mistake_is_answered_not_ignored() -> None:
    """配置主演役者9: the grammar takes 主演 after 配置, so it is a command, refused with why."""
    assert classify_line(EITSUKU, "配置主演役者9") == "command"
    with pytest.raises(Exception, match="1〜6"):
        EITSUKU.parse("配置主演役者9")


@pytest.mark.parametrize(
    ("kind", "line", "canonical"),
    [
        # An English verb directly followed by a non-ASCII character, as the grammar reads it.
        ("eitsuku", "SCOUT役者", "SCOUT 役者"),
        ("eitsuku", "ＳＣＯＵＴ役者", "SCOUT 役者"),
        ("eitsuku", "scout役者", "SCOUT 役者"),
        ("eitsuku", "SET主演 役者3", "SET 主演 役者3"),
        ("eitsuku", "END。", "END"),
        ("eitsuku", "ENDします", "END"),
        ("eleusis", "PLAY○♠7", "PLAY ○ ♠7"),
        ("cardbattle", "PASSします。", "PASS"),
    ],
)
def test_an_english_verb_glued_to_japanese_is_a_command(
    kind: str, line: str, canonical: str
) -> None:
    impl = GAMES[kind]
    assert classify_line(impl, line) == "command"
    assert impl.parse(line).canonical() == canonical


@pytest.mark.parametrize(
    ("kind", "line"),
    [
        # Followed by an ASCII letter, a verb is part of another word.
        ("eitsuku", "DRAWING"),
        ("eitsuku", "ENDLESS"),
        ("eitsuku", "Ending"),
        # Glued to talk: the grammar does not take what follows.
        ("eitsuku", "END後に話そう"),
        ("eitsuku", "SCOUTって何?"),
        ("eitsuku", "scoutって何?"),
        ("eleusis", "HINTください"),
    ],
)
def test_an_english_verb_glued_to_other_words_stays_talk(kind: str, line: str) -> None:
    assert classify_line(GAMES[kind], line) == "talk"


def test_an_english_verb_glued_with_a_mistake_is_answered() -> None:
    assert classify_line(EITSUKU, "SCOUT役者9") == "command"
    with pytest.raises(CommandSyntaxError):
        EITSUKU.parse("SCOUT役者9")


@pytest.mark.parametrize(
    ("kind", "line", "canonical"),
    [
        ("eitsuku", "スカウト役者。", "SCOUT 役者"),
        ("eitsuku", "スカウト 役者。", "SCOUT 役者"),
        ("eitsuku", "SCOUT 役者。", "SCOUT 役者"),
        ("eitsuku", "SCOUT 役者．", "SCOUT 役者"),
        ("eitsuku", "SCOUT 役者.", "SCOUT 役者"),
        ("eitsuku", "SCOUT 役者｡", "SCOUT 役者"),
        ("eitsuku", "配置主演役者3。", "SET 主演 役者3"),
        ("eitsuku", "SET 主演 役者3 。", "SET 主演 役者3"),
        ("eitsuku", "AS 春香 終了。", "AS 春香 END"),
        ("eleusis", "出す○♠7。", "PLAY ○ ♠7"),
        ("eleusis", "判定○。", "JUDGE ○"),
        # The rule language's "." (card.rank) is no word's end: a closing "." is punctuation.
        ("eleusis", "RULE card.rank > 5.", "RULE card.rank > 5"),
        # A word the grammar reads with the stop in it keeps it: a name, free words.
        ("eitsuku", "KICK モーニング娘。", "KICK モーニング娘。"),
        ("eleusis", "ヒント 赤の後は黒。", "HINT 赤の後は黒。"),
        ("eleusis", "ルール文章 赤の後は黒。", "RULE TEXT 赤の後は黒。"),
        ("eitsuku", "ADJUST 春香 +3 遅刻のため。", "ADJUST 春香 +3 遅刻のため。"),
    ],
)
def test_a_full_stop_closing_a_command_line_is_punctuation(
    kind: str, line: str, canonical: str
) -> None:
    impl = GAMES[kind]
    assert classify_line(impl, line) == "command"
    assert impl.parse(line).canonical() == canonical


@pytest.mark.parametrize(
    ("kind", "line", "column"),
    [
        ("eitsuku", "配置主演役者9。", 5),
        ("eitsuku", "SCOUT役者9", 8),  # the 9
        ("eitsuku", "ＳＣＯＵＴ 。", 6),
        ("eitsuku", "スカウトします", 5),
        ("eleusis", "JUDGE .", 6),
        ("eleusis", "出す○♠7 ♠99。", 7),  # the ♠99, the verb glued to its declaration
    ],
)
def test_a_refused_line_is_quoted_as_written(kind: str, line: str, column: int) -> None:
    """The stop is dropped, and a space put after a glued verb, for the parser only: the
    answer quotes the line as written (after NFKC), and its column points into it."""
    with pytest.raises(CommandSyntaxError) as error:
        GAMES[kind].parse(line)
    assert error.value.line == normalise(line)
    assert error.value.column == column


def test_a_misspelt_verb_with_a_stop_is_still_recognised() -> None:
    assert misspelt_verb(EITSUKU, "scuot 役者。") == "SCOUT"
    assert classify_line(EITSUKU, "scout役者。") == "command"


_REGEX_SYNTAX = re.compile(r"[\s.^$*+?{}\[\]\\|()]")


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_verb_word_is_a_plain_word(kind: str) -> None:
    impl = GAMES[kind]
    words = impl.verbs()
    assert words
    assert [word for word in words if not word or _REGEX_SYNTAX.search(word)] == []
    assert len(words) == len(set(words))
    for word in words:
        assert impl.parser.verbs_match(word), word


def test_the_cardbattle_magic_verb_has_every_spelling() -> None:
    cardbattle = GAMES["cardbattle"]
    assert {"MAGIC", "魔法", "マジック"} <= set(cardbattle.verbs())
    for line in ("マジックします", "マジック。", "魔法します", "魔法。", "MAGIC。"):
        assert classify_line(cardbattle, line) == "command", line
    # A verb glued to a word any card name would match is talk (魔法陣, マジックミラー).
    for line in ("魔法陣を使いたい", "マジックミラー 欲しい"):
        assert classify_line(cardbattle, line) == "talk", line


@pytest.mark.parametrize(
    ("pattern", "words"),
    [
        ("(?:(?i:SCOUT)|スカウト)", ["SCOUT", "スカウト"]),
        ("(?i:(?:MAGIC|魔法|マジック)(?![^ ,、]))", ["MAGIC", "魔法", "マジック"]),
        ("(?:手番終了|(?i:END)|終了)", ["手番終了", "END", "終了"]),
        ("捨てる?", ["捨てる", "捨て"]),
        (r"lv\.", ["lv."]),
        ("(?<!x)(?=[)])AB(?:C|D)", ["ABC", "ABD"]),
        ("[0-9]+", []),
        (r"\S+", []),
        ("a.c", []),
    ],
)
def test_literal_words_of_a_terminal(pattern: str, words: list[str]) -> None:
    assert literal_words(pattern) == words
