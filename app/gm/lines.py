"""Which lines of a post are commands (docs/forum.md, "Where talk ends and a command begins"),
and which first words are misspelt verbs. One reading for every thread the bot answers: a
game's (its `Game`) and the card registry's (`app.games.cardbattle.registry.LANGUAGE`)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from app.games.base import CommandParser, CommandSyntaxError, normalise

__all__ = [
    "Kind",
    "Language",
    "classify_line",
    "command_lines",
    "meant_line",
    "misspelt_verb",
]

Kind = Literal["command", "misspelt", "talk"]


class Language(Protocol):
    """What reading lines needs: the grammar's parser (its verbs, what may follow them) and the
    parse of a whole line (a game may explain some errors its own way)."""

    @property
    def parser(self) -> CommandParser: ...

    def parse(self, line: str) -> Any: ...


# How close a first word must be to a verb to be read as a misspelling of it (difflib's ratio):
# SCUOT/SCOUT 0.8, スカウド/スカウト 0.75, ドロ一/ドロー 0.67; a two-character verb with one
# character changed (パス/バス, 開始/開催: 0.5) is another word.
ENGLISH_VERB_CUTOFF = 0.75
JAPANESE_VERB_CUTOFF = 0.6


@dataclass(frozen=True)
class _Spelling:
    """A verb as misspelt_verb compares it (in capitals for an English verb)."""

    verb: str
    counts: dict[str, int]

    def ratio(self, word: str, counts: dict[str, int], cutoff: float, gap: int) -> float:
        """difflib's ratio of the word to the verb; 0 when their lengths differ by more than
        gap, or a cheap bound puts it below cutoff (a SequenceMatcher per verb costs ~9 µs,
        and this runs on lines of talk)."""
        size, total = len(self.verb), len(word) + len(self.verb)
        if abs(len(word) - size) > gap or 2 * min(len(word), size) < cutoff * total:
            return 0.0
        shared = sum(min(n, self.counts.get(char, 0)) for char, n in counts.items())
        if 2 * shared < cutoff * total:
            return 0.0
        return difflib.SequenceMatcher(None, word, self.verb).ratio()


@dataclass(frozen=True)
class _Spellings:
    """One grammar's verbs by the characters in them, English and Japanese apart (built once
    per grammar): a word is compared only with the verbs it shares a character with."""

    english: dict[str, tuple[_Spelling, ...]]
    japanese: dict[str, tuple[_Spelling, ...]]

    @staticmethod
    def of(verbs: list[str]) -> _Spellings:
        english: dict[str, tuple[_Spelling, ...]] = {}
        japanese: dict[str, tuple[_Spelling, ...]] = {}
        for verb in dict.fromkeys(verb.upper() if verb.isascii() else verb for verb in verbs):
            spelling = _Spelling(verb, _letter_counts(verb))
            index = english if verb.isascii() else japanese
            for char in spelling.counts:
                index[char] = (*index.get(char, ()), spelling)
        return _Spellings(english, japanese)

    def near(self, word: str, cutoff: float, gap: int) -> list[str]:
        """The verbs (English ones for an ASCII word, compared in capitals; else Japanese ones)
        at most gap characters longer or shorter whose ratio to the word is cutoff or more,
        closest first."""
        english = word.isascii()
        key = word.upper() if english else word
        index = self.english if english else self.japanese
        counts = _letter_counts(key)
        candidates = {s.verb: s for char in counts for s in index.get(char, ())}
        scored = [(s.ratio(key, counts, cutoff, gap), s.verb) for s in candidates.values()]
        return [verb for score, verb in sorted(scored, reverse=True) if score >= cutoff]


_SPELLINGS: dict[CommandParser, _Spellings] = {}


def _letter_counts(word: str) -> dict[str, int]:
    return {char: word.count(char) for char in set(word)}


def _spellings(parser: CommandParser) -> _Spellings:
    spellings = _SPELLINGS.get(parser)
    if spellings is None:
        spellings = _SPELLINGS[parser] = _Spellings.of(parser.verb_words)
    return spellings


def misspelt_verb(language: Language, line: str) -> str | None:
    """For a first word that is no verb but close to one: that verb (docs/forum.md).

    A word in capitals (SCUOT) is a misspelt verb on its own. Any other (scuot, Scuot, スカウド)
    only when the rest of the line reads as that verb's arguments — the line parses with the
    verb in its place, with one of the grammar's own terms right after it — so talk that merely
    begins with a similar word (スカッとした, Sets are fun, 交換 したい 人) stays talk.
    """
    parser = language.parser
    text = normalise(line)
    first, _, rest = text.partition(" ")
    if not first or parser.is_command_line(text):
        return None  # a verb (every command line of a post comes here first: the cheap test)
    shouted = first.isascii() and first.isupper()
    if first.isascii() and (len(first) < 3 or not first.isalpha()):
        return None
    if not shouted and not (rest and parser.may_begin_arguments(rest)):
        return None  # the cheap test first: most talk stops here
    if first.isascii():
        close = _spellings(parser).near(first, ENGLISH_VERB_CUTOFF, len(first))[:1]
        if close and shouted:
            return close[0]
    else:
        close = _spellings(parser).near(first, JAPANESE_VERB_CUTOFF, 1)[:3]
    if not close:
        return None
    return next((verb for verb in close if parser.reads_as_arguments(verb, rest)), None)


# Readings in hiragana of the kanji a command is written with (verbs, marks, decks, slots): a
# line typed without converting (だす せいこう スペード8) is read with them. Katakana words
# (スカウト, スペード) need none: a word in hiragana is tried in katakana too.
READINGS: dict[str, str] = {
    "だす": "出す",
    "せいこう": "○",
    "しっぱい": "●",
    "はんてい": "判定",
    "よげんしゃ": "預言者",
    "こうげき": "攻撃",
    "まほう": "魔法",
    "いどう": "移動",
    "しめい": "指名",
    "とっくん": "特訓",
    "はいち": "配置",
    "こうにゅう": "購入",
    "せんたく": "選択",
    "しゅうりょう": "終了",
    "こうかい": "公開",
    "すてる": "捨てる",
    "けんせつ": "建設",
    "せんそう": "戦争",
    "ちょうてい": "調停",
    "へんかん": "変換",
    "みおくり": "見送り",
    "さんか": "参加",
    "かいし": "開始",
    "ばんめん": "盤面",
    "やくしゃ": "役者",
    "きゃくほん": "脚本",
    "おんがく": "音楽",
    "えんしゅつ": "演出",
    "しゅえん": "主演",
    "じょえん": "助演",
    "よさん": "予算",
}
# What the bot's own words add to a verb when they name a step (エリア選択 AREA …, スカウト
# フェイズ): a first word made of a verb and one of these is read as the verb.
STEP_SUFFIXES = ("選択", "フェイズ", "フェーズ", "の選択", "宣言", "する", "します")
_HIRAGANA = re.compile(r"[\u3041-\u3096ー]+")


def _katakana(word: str) -> str:
    return "".join(chr(ord(ch) + 0x60) if "\u3041" <= ch <= "\u3096" else ch for ch in word)


def _rewritings(parser: CommandParser, text: str) -> list[str]:
    """The line as it may have been meant: its hiragana words in kanji or katakana, its first
    word without a step's suffix."""
    words = text.split(" ")
    if any(_HIRAGANA.fullmatch(word) for word in words):
        words = [
            READINGS.get(word, _katakana(word)) if _HIRAGANA.fullmatch(word) else word
            for word in words
        ]
    first = words[0]
    for suffix in STEP_SUFFIXES:
        if first.endswith(suffix) and len(first) > len(suffix):
            stem = first[: -len(suffix)]
            if parser.verbs_match(stem):
                words = [stem, *words[1:]]
                break
    rewritten = " ".join(words)
    return [rewritten] if rewritten != text else []


def meant_line(language: Language, line: str) -> str | None:
    """For a line that is no command but reads as one once written as the bot writes it — a
    step's name for its verb (エリア選択 1 2), hiragana for kanji or katakana (だす せいこう
    スペード8): that command's line (AREA 1 2, PLAY ○ ♠8). Only a rewriting that parses
    whole counts, so talk (だすのは明日, エリア選択むずかしい) stays talk."""
    text = normalise(line)
    if not text or language.parser.is_command_line(text):
        return None
    for rewritten in _rewritings(language.parser, text):
        if not language.parser.is_command_line(rewritten):
            continue
        try:
            command = language.parse(rewritten)
        except CommandSyntaxError:
            continue
        canonical = getattr(command, "canonical", None)
        return str(canonical()) if callable(canonical) else rewritten
    return None


def classify_line(language: Language, line: str) -> Kind:
    """ "command", "misspelt" or "talk".

    A line is a command when its first word is a verb. An English verb not written in capitals
    ("End of story", "start は明日") counts only if the whole line parses, so ordinary talk
    that happens to begin with such a word is not answered with an error.
    """
    text = normalise(line)
    if not text:
        return "talk"
    if language.parser.is_command_line(text):
        first = text.split(" ", 1)[0]
        if first.isascii() and not first.isupper():
            try:
                language.parse(text)
            except CommandSyntaxError:
                return "talk"
        return "command"
    if misspelt_verb(language, text) is not None or meant_line(language, text) is not None:
        return "misspelt"
    return "talk"


def command_lines(language: Language, body: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines of a post the bot answers: commands and misspelt ones."""
    return [
        (number, line)
        for number, line in enumerate(body.split("\n"), start=1)
        if classify_line(language, line) != "talk"
    ]
