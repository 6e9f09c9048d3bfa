"""What a kind's 遊び方 page (app/web/howto_pages.py, docs/games.md "遊び方 pages") is made of,
as pure data a game module declares in its own ``howto.py``: a short summary, one entry per
verb of its grammar (what it does and example lines), the house content as name and effect
text (read from the content files when the page is drawn), and a worked first turn that is
played through the game's own API with a fixed seed, so the page shows what the bot answers.

Prose (``what``, ``note``, titles) is Japanese marked with `N_`: the pages translate it. Names,
effect texts, example lines and the bot's answers are game text and stay as the game writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from app.games.base import N_, Game, Rng, literal_words

__all__ = [
    "PLATFORM_COMMANDS",
    "Auto",
    "CommandHelp",
    "Entry",
    "Howto",
    "Post",
    "Section",
    "ShownPost",
    "play_first_turn",
    "rules_path",
    "verb_groups",
]


def rules_path(kind: str) -> str:
    """The site path of a kind's 遊び方 page (app/web/howto_pages.py; the API's ``rules_url``)."""
    return f"/games/{kind}/howto"


@dataclass(frozen=True)
class CommandHelp:
    """One verb: ``verb`` is its terminal in the game's grammar (``SCOUT``, ``common__JOIN``),
    so the page takes its spellings from the grammar itself."""

    verb: str
    what: str
    examples: tuple[str, ...]
    who: Literal["player", "gm", "sealed"] = "player"


@dataclass(frozen=True)
class Entry:
    name: str
    text: str


@dataclass(frozen=True)
class Section:
    title: str
    entries: tuple[Entry, ...]
    intro: str = ""


@dataclass(frozen=True)
class Post:
    """A post of the worked first turn: its lines, in order, by one seat (or the GM)."""

    seat: int | Literal["gm"]
    lines: tuple[str, ...]
    note: str
    sealed: bool = False


@dataclass(frozen=True)
class Auto:
    """Moves the worked turn plays without showing them one by one (a long draft): ``count``
    times, the first seat the game waits for posts its first legal line."""

    count: int
    note: str


@dataclass(frozen=True)
class Howto:
    summary: str
    players: tuple[str, ...]
    commands: tuple[CommandHelp, ...]
    first_turn: tuple[Post | Auto, ...]
    content: Callable[[], list[Section]]
    seed: str = "howto"
    options: Mapping[str, Any] = field(default_factory=dict)


# The platform's own commands (app/games/commands.py; the app runs them), for every kind.
PLATFORM_COMMANDS: tuple[CommandHelp, ...] = (
    CommandHelp("common__JOIN", N_("募集中のゲームに参加します。"), ("JOIN", "参加")),
    CommandHelp("common__LEAVE", N_("始まる前のゲームから抜けます。"), ("LEAVE",)),
    CommandHelp("common__START", N_("GM がゲームを始めます。"), ("START", "開始"), "gm"),
    CommandHelp("common__UNDO", N_("GM が直前の手を取り消します。"), ("UNDO",), "gm"),
    CommandHelp(
        "common__AS",
        N_("GM がプレイヤーの代わりに命令を書きます（名前のあとに命令）。"),
        (),
        "gm",
    ),
    CommandHelp("common__KICK", N_("GM がプレイヤーを外します。"), ("KICK ベン",), "gm"),
    CommandHelp(
        "common__REPLACE", N_("GM が席を別の人に交代させます。"), ("REPLACE ベン ダイ",), "gm"
    ),
    CommandHelp("common__PAUSE", N_("GM がゲームを中断します。"), ("PAUSE", "中断"), "gm"),
    CommandHelp("common__RESUME", N_("GM が中断を解きます。"), ("RESUME",), "gm"),
    CommandHelp("common__ABORT", N_("GM がゲームを中止します。"), ("ABORT",), "gm"),
    CommandHelp(
        "common__DEADLINE", N_("GM が手番の期限を時間で決めます。"), ("DEADLINE 24",), "gm"
    ),
    CommandHelp(
        "common__ADJUST",
        N_("GM が終わったゲームの得点を理由つきで直します。"),
        ("ADJUST ベン +5 ハウスルールの読み違い",),
        "gm",
    ),
    CommandHelp(
        "common__BOT",
        N_("募集中に GM が空いた席にボットを座らせます（数を書くとその人数）。"),
        ("BOT", "BOT 2"),
        "gm",
    ),
    CommandHelp(
        "common__ABSENT",
        N_("書き込めない時間を知らせて、手番の期限を延ばしてもらいます（1ゲームに数回まで）。"),
        ("ABSENT 48",),
    ),
    CommandHelp(
        "common__BOARD",
        N_("盤面をその場で見せます（誰でも。ゲームは変わりません）。"),
        ("BOARD", "盤面"),
    ),
)


def verb_groups(game: Game) -> dict[str, list[str]]:
    """Each verb terminal of the game's grammar and its spellings (``SCOUT`` → SCOUT, スカウト),
    in the grammar's order: the words the game reads at the start of a command line."""
    verbs = set(game.verbs())
    groups: dict[str, list[str]] = {}
    for terminal in game.parser.lark.terminals:
        pattern = terminal.pattern
        words = [pattern.value] if pattern.type == "str" else literal_words(pattern.to_regexp())
        spelled = [word for word in words if word in verbs]
        if spelled:
            english = [word for word in spelled if word.isascii()]
            groups[terminal.name] = english + [word for word in spelled if not word.isascii()]
    return groups


@dataclass(frozen=True)
class ShownPost:
    """A post of the worked turn as the page shows it: who, the lines, and the bot's answer
    (the public text everyone reads, and what only the author sees)."""

    name: str
    lines: tuple[str, ...]
    note: str
    sealed: bool
    public: tuple[str, ...]
    private: tuple[str, ...]
    auto: bool = False


def play_first_turn(game: Game, howto: Howto) -> list[ShownPost]:
    """Play the worked first turn through the game's pure API (``setup``, ``parse``,
    ``apply``) with the fixed seed; a line the game refuses raises (the tests play every
    kind's). Returns the posts with what the bot answered."""
    players = list(howto.players)
    state = game.setup(players, dict(howto.options), Rng(howto.seed, 0))
    seq = 1
    shown: list[ShownPost] = []
    for step in howto.first_turn:
        public: list[str] = []
        private: list[str] = []
        if isinstance(step, Auto):
            for _ in range(step.count):
                seat = game.waiting_for(state)[0]
                thread, sealed = game.legal_split(state, seat)
                line = (thread or sealed)[0]
                state, _events = game.apply(
                    state, seat, game.parse(line), Rng(howto.seed, seq), sealed=not thread
                )
                seq += 1
            shown.append(ShownPost("", (), step.note, False, (), (), auto=True))
            continue
        for line in step.lines:
            state, events = game.apply(
                state, step.seat, game.parse(line), Rng(howto.seed, seq), sealed=step.sealed
            )
            seq += 1
            for item in events:
                if item.get("text"):  # an event the reply says nothing for (app/gm/working.py)
                    (private if item.get("private") else public).append(str(item["text"]))
        name = "GM" if step.seat == "gm" else players[step.seat]
        shown.append(
            ShownPost(name, step.lines, step.note, step.sealed, tuple(public), tuple(private))
        )
    return shown
