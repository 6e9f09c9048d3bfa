"""docs/forum.md "Where talk ends and a command begins": a Japanese verb may be followed by no
space, by 。 or by a polite ending, as players write it; a verb glued to other words is a command
only when the grammar takes the word after it (issue: Japanese as players type it)."""

from __future__ import annotations

import pytest

from app.games import GAMES
from app.gm.pipeline import classify_line

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
