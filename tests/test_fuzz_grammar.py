"""Fuzzing every registered game's command grammar (app.games.all_games()): random lines and
mutations of valid ones. `parse` either returns a command (whose canonical line parses back
to it) or raises CommandSyntaxError with a message and a column inside the line (or None) —
never any other exception. `is_command_line` never raises."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.games import all_games
from app.games.base import CommandSyntaxError, Game, Rng, normalise

GAMES = {game.kind: game for game in all_games()}
PLATFORM_LINES = [
    "JOIN",
    "参加",
    "LEAVE",
    "START",
    "UNDO",
    "PAUSE",
    "RESUME",
    "ABORT",
    "KICK 太郎",
    "REPLACE 太郎 次郎",
    "DEADLINE 24",
    "ABSENT 48",
    "ADJUST 太郎 -3 読み違い",
]
# What typing and pasting mistakes are made of: Japanese and ASCII punctuation, full-width and
# odd spaces, brackets the grammars use, digits, signs, and characters NFKC changes.
ALPHABET = st.one_of(
    st.characters(codec="utf-8", exclude_categories=("Cs",)),
    st.sampled_from(list(" 　\t,、，・/／【】[]()（）「」<>＜＞+-−×*＊#0123456789０１２３")),
    st.sampled_from(list("役者脚本家音楽演出主助小中大予算裏返し支払ⅠⅣ㍻ﾃﾞ①")),
)


def seed_lines(game: Game) -> list[str]:
    """Valid lines: the platform's, and what each seat may play in a fresh game."""
    lines = list(PLATFORM_LINES)
    players = ["太郎", "次郎", "花子", "四郎"][: max(game.min_players, 3)][: game.max_players]
    state = game.setup(players, {}, Rng("fuzz", 0))
    for seat in range(len(players)):
        lines.extend(game.legal(state, seat))
    lines.extend(game.legal(state, "gm"))
    played = [line for line in lines if line not in PLATFORM_LINES]
    lines.extend(f"{verb} 太郎 {line}" for verb in ("AS", "代理") for line in played[:3])
    return sorted(set(lines))


SEEDS = {kind: seed_lines(game) for kind, game in GAMES.items()}


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> str:
    line = draw(st.sampled_from(SEEDS[kind]))
    vocabulary = GAMES[kind].verbs()
    for _ in range(draw(st.integers(1, 4))):
        words = line.split(" ")
        op = draw(st.integers(0, 8))
        at = draw(st.integers(0, len(line)))
        if op == 0 and line:  # drop a character
            line = line[: max(0, at - 1)] + line[at:]
        elif op == 1:  # insert one
            line = line[:at] + draw(ALPHABET) + line[at:]
        elif op == 2 and line:  # replace one
            line = line[: max(0, at - 1)] + draw(ALPHABET) + line[at:]
        elif op == 3 and len(words) > 1:  # drop a word
            del words[draw(st.integers(0, len(words) - 1))]
            line = " ".join(words)
        elif op == 4:  # repeat a word
            i = draw(st.integers(0, len(words) - 1))
            line = " ".join([*words[: i + 1], words[i], *words[i + 1 :]])
        elif op == 5 and len(words) > 1:  # swap two words
            i, j = draw(st.integers(0, len(words) - 1)), draw(st.integers(0, len(words) - 1))
            words[i], words[j] = words[j], words[i]
            line = " ".join(words)
        elif op == 6:  # a verb where a word was
            i = draw(st.integers(0, len(words) - 1))
            words[i] = draw(st.sampled_from(vocabulary))
            line = " ".join(words)
        elif op == 7:  # full width, as typed with a Japanese IME
            line = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in line)
        else:  # cut short, or glue on another valid line
            line = (
                line[:at]
                if draw(st.booleans())
                else line + " " + draw(st.sampled_from(SEEDS[kind]))
            )
    return line


def check(game: Game, line: str) -> None:
    game.is_command_line(line)  # must not raise either
    try:
        command: Any = game.parse(line)
    except CommandSyntaxError as error:
        assert isinstance(error.message, str) and error.message.strip(), line
        shown = normalise(line)
        assert error.column is None or (
            isinstance(error.column, int) and 1 <= error.column <= len(shown) + 1
        ), (line, error.column, error.message)
        return
    assert command is not None
    assert game.parse(command.canonical()) == command, (line, command)


FUZZ = settings(
    max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


@pytest.mark.parametrize("kind", sorted(GAMES))
@FUZZ
@given(data=st.data())
def test_random_lines(kind: str, data: st.DataObject) -> None:
    line = data.draw(st.text(ALPHABET, max_size=80), label="line")
    check(GAMES[kind], line)


@pytest.mark.parametrize("kind", sorted(GAMES))
@FUZZ
@given(data=st.data())
def test_mutated_valid_lines(kind: str, data: st.DataObject) -> None:
    line = data.draw(mutated(kind), label="line")
    check(GAMES[kind], line)


@pytest.mark.parametrize("kind", sorted(GAMES))
@FUZZ
@given(data=st.data())
def test_verb_then_random_words(kind: str, data: st.DataObject) -> None:
    verb = data.draw(st.sampled_from(GAMES[kind].verbs()), label="verb")
    rest = data.draw(st.lists(st.text(ALPHABET, min_size=1, max_size=12), max_size=5), label="rest")
    check(GAMES[kind], " ".join([verb, *rest]))


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_every_seed_line_parses(kind: str) -> None:
    """The mutations start from lines that are valid, so a failure above is about the change."""
    game = GAMES[kind]
    for line in SEEDS[kind]:
        assert game.parse(line).canonical(), line
        assert game.parse(unicodedata.normalize("NFKC", line)) == game.parse(line)
