"""templates/games/eleusis/: the thread-reply summary and the board HTML, rendered from views."""

from __future__ import annotations

import re
from random import Random
from typing import Any

import jinja2
import pytest

from app.games.base import Rng, State, Viewer
from app.games.eleusis import game
from app.games.resources import resource_dir
from tests.games.test_eleusis_property import Table
from tests.games.test_eleusis_rule_language import RULES_PAGE_EXAMPLES, reference
from tests.games.test_eleusis_rules import act, begin, rig_hand, rig_line


@pytest.fixture(scope="module")
def env() -> jinja2.Environment:
    # Plain Jinja2 as the app configures it: no custom filters or globals, only the standard
    # i18n extension (the board's labels are gettext calls; untranslated here, so Japanese).
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_dir("templates")),
        autoescape=jinja2.select_autoescape(["html", "html.j2"]),
        undefined=jinja2.StrictUndefined,
        extensions=["jinja2.ext.i18n"],
    )
    env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    return env


def summary(env: jinja2.Environment, state: State, viewer: Viewer = None) -> str:
    return env.get_template("games/eleusis/summary.txt.j2").render(view=game.view(state, viewer))


def board(env: jinja2.Environment, state: State, viewer: Viewer = None) -> str:
    return env.get_template("games/eleusis/board.html.j2").render(view=game.view(state, viewer))


def _with_failed_strings() -> State:
    state = begin(players=5)
    rig_line(state, ["♠Q"])
    rig_hand(state, 1, ["♥2", "♠9", "♣3"])
    state, _ = act(state, 1, "PLAY ● ♣3")  # fails: a string under ♠Q
    rig_hand(state, 2, ["♥5", "♠4", "♠6"])
    state, _ = act(state, 2, "PLAY ○ ♥5 ♠4")
    state, _ = act(state, 2, "PROPHET")
    rig_hand(state, 3, ["♠8", "♠7", "♦9"])
    state, _ = act(state, 3, "PLAY ○ ♠8 ♠7")  # both fail after ♠4: a string under it
    state, _ = act(state, 2, "JUDGE ●")  # the prophet judges right
    return state


def test_summary_shows_the_line_with_failed_strings_in_brackets(env: jinja2.Environment) -> None:
    """The line as text ♠Q[♣3] ♥5 ♠4 — each failed string in brackets after its card."""
    state = _with_failed_strings()
    text = summary(env, state)
    assert "♠Q[♣3] ♥5 ♠4[♠8 ♠7]" in text
    assert f"山札: {len(state['deck'])}枚" in text
    assert "■C 手札 1枚、預言者(正しい判定 1回)、得点 0" in text
    assert "■D 手札 5枚、得点 0" in text
    assert "■A 親、得点 0" in text
    # Issue #43: the hash is posted once when the round starts, not in every summary.
    assert state["rule_hash"] not in text
    assert "手番: Eさん" in text
    assert "手番待ち: E" in text
    assert "card.color" not in text  # the rule stays hidden
    assert not re.search(r"  ", text)  # nothing aligned by runs of spaces


def test_summary_names_the_pending_judges_and_disqualified(env: jinja2.Environment) -> None:
    state = _with_failed_strings()
    state["players"][1]["disqualified"] = True
    rig_hand(state, 4, ["♥J", "♠2"])
    state, _ = act(state, 4, "PLAY ○ ♥J")
    text = summary(env, state)
    assert "判定待ち: Eさんの ○ ♥J(判定する人: C、非公開で JUDGE)" in text
    assert "■B 手札 2枚、失格" in text
    state, _ = act(state, 2, "JUDGE ●")
    text = summary(env, state)
    assert "直前のプレイ: Eさんの ○ ♥J → 判定 ○(全部成功)、預言者: C ●、失格: C" in text


def test_summary_in_the_rule_phase_and_with_a_private_view(env: jinja2.Environment) -> None:
    state = game.setup(["太郎", "花子", "次郎", "三郎"], {}, Rng("s", 0))
    text = summary(env, state)
    assert "太郎さんが非公開でルールを封するのを待っています" in text
    assert "手札" not in text
    state, _ = act(state, 0, f"RULE {RULES_PAGE_EXAMPLES[0]}")
    assert f"ルール(親だけに表示): {RULES_PAGE_EXAMPLES[0]}" in summary(env, state, 0)
    own = summary(env, state, 2)
    assert "あなたの手札: " + " ".join(state["players"][2]["hand"]) in own
    assert RULES_PAGE_EXAMPLES[0] not in own


def _finished(seed: int) -> State:
    rule = RULES_PAGE_EXAMPLES[0]
    meaning = lambda env: (env[0][0] in "♥♦") != (env[1][-1][0] in "♥♦")  # noqa: E731
    assert reference(meaning, ["♠Q"], "♥2")
    table = Table(4, "tpl", [(rule, meaning), (rule, meaning)], {2}, Random(seed))
    table.play()
    return table.state


def test_summary_final_ranking_and_revealed_rules(env: jinja2.Environment) -> None:
    state = _finished(1)
    text = summary(env, state)
    assert "終了(全2ラウンド)" in text
    # The final ranking is said once, in the closing post (【最終結果】), not here.
    assert "成績発表" not in text
    for entry in game.view(state, None)["result"]["ranking"]:
        assert f"{entry['rank']}位 {entry['name']}" not in text
    for record in state["history"]:  # told when each round ended; the game page lists them
        assert f"(ソルト {record['salt']})" not in text


def test_board_html_is_an_escaped_fragment_without_scripts_or_styles(
    env: jinja2.Environment,
) -> None:
    state = game.setup(["<b>太郎</b>", "花子&", "次郎", "三郎"], {}, Rng("b", 0))
    state, _ = act(state, 0, "RULE TEXT <script>alert(1)</script>")
    for viewer in (None, 0, 1, "gm"):
        html = board(env, state, viewer)
        assert "<b>太郎</b>" not in html and "&lt;b&gt;太郎&lt;/b&gt;" in html
        assert "花子&amp;" in html
        for forbidden in ("<html", "<head>", "<body", "<script", "style=", "<style", "onclick"):
            assert forbidden not in html
        classes = {c for attr in re.findall(r'class="([^"]*)"', html) for c in attr.split()}
        assert classes and all(c.startswith("eleusis-") for c in classes)
    assert "&lt;script&gt;" in board(env, state, 0)  # the parent sees the (escaped) rule
    assert "alert" not in board(env, state, 1)


def test_board_html_shows_the_line_as_cards_and_failed_strings(env: jinja2.Environment) -> None:
    state = _with_failed_strings()
    html = board(env, state)
    assert html.count('class="eleusis-position"') == len(state["line"])
    assert html.count('class="eleusis-failed-string"') == 2
    assert '<span class="eleusis-card eleusis-red">♥5</span>' in html
    assert '<span class="eleusis-card eleusis-black">♠Q</span>' in html
    assert "eleusis-hand" not in html and "eleusis-rule" not in html


def test_board_html_shows_hand_and_rule_when_the_view_has_them(env: jinja2.Environment) -> None:
    state = _with_failed_strings()
    own = board(env, state, 3)
    assert "あなたの手札(5枚)" in own
    for card in state["players"][3]["hand"]:
        assert f">{card}</span>" in own
    parent = board(env, state, 0)
    assert '<code class="eleusis-rule">card.color != prev.color</code>' in parent
    gm = board(env, state, "gm")
    assert gm.count('class="eleusis-hand"') == 4


def test_board_html_finished_game_has_result_and_history(env: jinja2.Environment) -> None:
    state = _finished(2)
    view: dict[str, Any] = game.view(state, None)
    html = env.get_template("games/eleusis/board.html.j2").render(view=view)
    assert 'class="eleusis-result"' in html and 'class="eleusis-history"' in html
    assert html.count('class="eleusis-rank"') == 4
