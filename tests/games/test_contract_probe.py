"""Issue #40, the probe contract (docs/games.md, docs/security.md "Input that is not what it
should be"): whatever line reaches a game, at whatever point of it, from whoever, the game
answers with a command applied, or with ``RuleError`` / ``CommandSyntaxError`` — never with any
other exception, and never by changing the state it was given.

Random games of every registered kind are played by random legal lines (any seat and the GM,
thread and sealed). At random points the game's own vocabulary — every line any seat or the GM
may give now, in the thread, sealed or as a written example — is mutated (tokens dropped,
repeated, swapped; numbers changed; another kind's verb; full-width; an ``AS`` prefix; cut;
glued) and fed through ``parse`` and ``apply`` for a random actor, sealed or not. A seeded loop
(the seed is the kind's name and the game's number), a few thousand probes a kind, so a failure
is the same on every run and names the line, the actor and the point."""

from __future__ import annotations

import copy
import random
import re
from typing import Any

import pytest

from app.games import GAMES
from app.games.base import Actor, CommandSyntaxError, Rng, RuleError, State
from app.games.base import Game as GameImpl

GAMES_PER_KIND = 3
MOVES_PER_GAME = 120
PROBE_EVERY = 0.25  # the share of points probed
PROBES_PER_POINT = 12
NAMES = ["太郎", "花子", "次郎", "三郎", "四郎", "五郎"]
_NUMBER = re.compile(r"-?\d+")
_ODD_NUMBERS = ["0", "-1", "1", "2", "7", "13", "99", "100", "65535", "1000000000", "０"]


def _names(impl: GameImpl, chooser: random.Random) -> list[str]:
    count = chooser.randint(impl.min_players, min(impl.max_players, len(NAMES)))
    return NAMES[:count]


def _vocabulary(impl: GameImpl, state: State, actors: list[Actor]) -> list[tuple[str, bool]]:
    """Every line any of ``actors`` may give now, with whether it goes sealed."""
    found: list[tuple[str, bool]] = []
    for actor in actors:
        found.extend((line, False) for line in impl.legal(state, actor))
        found.extend((line, True) for line in impl.sealed_legal(state, actor))
        found.extend(impl.examples(state, actor))
    return found


def _verbs() -> dict[str, list[str]]:
    """Each kind's verbs (the first word of each line legal at the deal), to lend to others."""
    verbs: dict[str, list[str]] = {}
    for kind, impl in GAMES.items():
        names = NAMES[: max(impl.min_players, 2)]
        state = impl.setup(names, {}, Rng(f"verbs-{kind}", 0))
        actors: list[Actor] = [*range(len(names)), "gm"]
        words = {line.split()[0] for line, _ in _vocabulary(impl, state, actors) if line.split()}
        verbs[kind] = sorted(words | {"JOIN", "START", "UNDO", "KICK", "AS"})
    return verbs


VERBS = _verbs()


def _full_width(text: str) -> str:
    return "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "　" if c == " " else c for c in text
    )


def mutate(line: str, chooser: random.Random, kind: str, names: list[str], lines: list[str]) -> str:
    """One of the mutations of the module's docstring, picked at random."""
    words = line.split()
    how = chooser.randrange(11)
    if how == 0 and words:  # a token dropped
        del words[chooser.randrange(len(words))]
    elif how == 1 and words:  # a token repeated
        at = chooser.randrange(len(words))
        words.insert(at, words[at])
    elif how == 2 and len(words) > 1:  # two tokens swapped
        i, j = chooser.sample(range(len(words)), 2)
        words[i], words[j] = words[j], words[i]
    elif how == 3:  # the numbers changed
        return _NUMBER.sub(lambda _m: chooser.choice(_ODD_NUMBERS), line) or line
    elif how == 4 and words:  # another kind's verb
        other = chooser.choice(sorted(set(VERBS) - {kind}) or [kind])
        words[0] = chooser.choice(VERBS[other])
    elif how == 5:
        return _full_width(line)
    elif how == 6:  # an AS prefix (the GM's): of a seat, of nobody, twice
        who = chooser.choice([*names, "誰か", "GM", ""])
        return f"AS {who} {line}" if chooser.random() < 0.8 else f"AS {who} AS {who} {line}"
    elif how == 7 and line:  # cut short
        return line[: chooser.randrange(len(line))]
    elif how == 8 and lines:  # glued to another line of the moment
        return f"{line} {chooser.choice(lines)}"
    elif how == 9 and words:  # a word of another line put in
        other = chooser.choice(lines).split() if lines else []
        if other:
            words[chooser.randrange(len(words))] = chooser.choice(other)
    else:  # a player's name or an odd word in place of a token
        if words:
            words[chooser.randrange(len(words))] = chooser.choice([*names, "-", "＊", "\u200b"])
    return " ".join(words)


def probe(
    impl: GameImpl, state: State, actor: Actor, line: str, sealed: bool, seq: int, kind: str
) -> str | None:
    """None when the line is applied or refused as the contract says; else what went wrong."""
    snapshot = copy.deepcopy(state)
    try:
        command = impl.parse(line)
        impl.apply(state, actor, command, Rng(f"probe-{kind}", seq), sealed=sealed)
    except (RuleError, CommandSyntaxError):
        pass
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    if state != snapshot:
        return "the state it was given changed"
    return None


def _play(kind: str, number: int, problems: list[str]) -> int:
    """One random game of ``kind``, probed at random points; returns the probes made."""
    impl = GAMES[kind]
    chooser = random.Random(f"probe-{kind}-{number}")
    names = _names(impl, chooser)
    state = impl.setup(names, {}, Rng(f"probe-{kind}-{number}", 0))
    actors: list[Actor] = [*range(len(names)), "gm"]
    probes = 0
    for seq in range(1, MOVES_PER_GAME):
        if impl.is_over(state):
            break
        vocabulary = _vocabulary(impl, state, actors)
        if chooser.random() < PROBE_EVERY or seq == 1:
            lines = [line for line, _ in vocabulary]
            for _ in range(PROBES_PER_POINT):
                base = chooser.choice(lines) if lines else chooser.choice(VERBS[kind])
                line = mutate(base, chooser, kind, names, lines)
                actor = chooser.choice(actors)
                sealed = chooser.random() < 0.5
                probes += 1
                wrong = probe(impl, state, actor, line, sealed, seq, kind)
                if wrong is not None:
                    problems.append(
                        f"{kind} game {number} move {seq}: {line!r} by {actor!r}"
                        f"{' sealed' if sealed else ''}: {wrong}"
                    )
        # On: a random legal line of a random actor (what the game waits for, mostly).
        waiting: list[Actor] = list(impl.waiting_for(state))
        movers = waiting if waiting and chooser.random() < 0.8 else actors
        mover = chooser.choice(movers)
        options = [
            (line, sealed)
            for line, sealed in _vocabulary(impl, state, [mover])
            if impl.is_command_line(line)
        ]
        if not options:
            options = [(line, sealed) for line, sealed in vocabulary]
            mover = chooser.choice(actors)
        moved = False
        for line, sealed in chooser.sample(options, min(len(options), 6)):
            try:
                command = impl.parse(line)
                state, _ = impl.apply(
                    state, mover, command, Rng(f"probe-{kind}", seq), sealed=sealed
                )
            except (RuleError, CommandSyntaxError):
                continue
            moved = True
            break
        if not moved and not waiting:
            break
    return probes


@pytest.mark.parametrize("kind", sorted(GAMES))
def test_probe_lines_are_applied_or_refused_with_the_game_errors_only(kind: str) -> None:
    """Any mutated line of the game's own vocabulary, by any actor, sealed or not: applied, or
    ``RuleError`` / ``CommandSyntaxError``; the state it was given unchanged."""
    problems: list[str] = []
    probes = sum(_play(kind, number, problems) for number in range(GAMES_PER_KIND))
    assert probes >= 100, f"only {probes} probes: the contract was hardly exercised"
    shown: dict[str, Any] = {}
    for problem in problems:  # one example of each kind of failure
        shown.setdefault(problem.split(": ", 1)[-1][:80], problem)
    assert not problems, f"{len(problems)} probes broke the contract:\n" + "\n".join(shown.values())
