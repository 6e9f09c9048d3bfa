"""templates/games/eitsuku/: the thread-reply summary and the board HTML, rendered from views."""

from __future__ import annotations

import re
from random import Random
from typing import Any

import jinja2
import pytest

from app.games.base import Rng
from app.games.eitsuku import game
from app.games.eitsuku.cards import EVENT_DECK
from app.games.eitsuku.events import EVENTS
from app.games.resources import resource_dir
from tests.support.replies import shown_lines


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


def _played_game(players: list[str], seed: str, until_over: bool) -> dict[str, Any]:
    choices = Random(seed)
    state = game.setup(players, {}, Rng(seed, 0))
    seq = 0
    while not game.is_over(state):
        seq += 1
        seat = choices.choice(game.waiting_for(state))
        lines = game.legal(state, seat)
        eager = [line for line in lines if line.startswith(("SET", "RELEASE", "EVENT", "BUY"))]
        line = choices.choice(eager or lines)
        state, _ = game.apply(state, seat, game.parse(line), Rng(seed, seq))
        if not until_over and state["week"] == 3 and seq > 20:
            break
    return game.view(state, None)


def test_summary_text_shows_every_player_and_who_must_move(env: jinja2.Environment) -> None:
    view = _played_game(["太郎", "花子", "次郎"], "summary", until_over=False)
    text = env.get_template("games/eitsuku/summary.txt.j2").render(view=view)
    assert f"第{view['week']}週" in text
    for player in view["players"]:
        assert f"■{player['name']}" in text
        for slot in player["slots"]:
            assert f"{slot} " in text
    assert "ストック:" in text and "イベント場:" in text and "予算の山:" in text
    if view["waiting_for"]:
        assert "手番待ち: " + "、".join(view["waiting_for"]) in text  # issue #43: one word
    assert "<" not in text.replace("<山>", "")
    assert not re.search(r"  ", text)  # nothing aligned by runs of spaces


def test_summary_text_at_the_end_leaves_the_ranking_to_the_closing_post(
    env: jinja2.Environment,
) -> None:
    """The final ranking is said once, in the closing post (【最終結果】), not here."""
    view = _played_game(["太郎", "花子"], "final", until_over=True)
    text = env.get_template("games/eitsuku/summary.txt.j2").render(view=view)
    assert "終了" in text and "成績発表" not in text
    for entry in view["result"]["ranking"]:
        assert f"{entry['rank']}位 {entry['name']}" not in text


def test_summary_mentions_released_week_and_flipped_cards(env: jinja2.Environment) -> None:
    state = game.setup(["太郎", "花子"], {}, Rng("flip", 0))
    for seat in range(2):
        for line in game.default_commands(state, seat)[:-1]:
            state, _ = game.apply(state, seat, game.parse(line), Rng("flip", 1))
    state, _ = game.apply(state, 0, game.parse("BUY 中"), Rng("flip", 2))
    text = env.get_template("games/eitsuku/summary.txt.j2").render(view=game.view(state, None))
    assert "裏返し: 予算・小×3" in text
    assert "今週の行動: BUY 中 WITH 予算・小 予算・小 予算・小" in text


def test_board_html_is_escaped_fragment_without_scripts_or_styles(env: jinja2.Environment) -> None:
    view = _played_game(["<b>太郎</b>", "花子&"], "board", until_over=True)
    html = env.get_template("games/eitsuku/board.html.j2").render(view=view)
    assert "<b>太郎</b>" not in html and "&lt;b&gt;太郎&lt;/b&gt;" in html
    assert "花子&amp;" in html
    for forbidden in ("<html", "<head>", "<body", "<script", "style=", "<style"):
        assert forbidden not in html
    classes = {c for attr in re.findall(r'class="([^"]*)"', html) for c in attr.split()}
    assert classes and all(c.startswith("eitsuku-") for c in classes)
    assert 'class="eitsuku-result"' in html


def test_board_html_in_progress_lists_slots(env: jinja2.Environment) -> None:
    view = _played_game(["太郎", "花子"], "progress", until_over=False)
    html = env.get_template("games/eitsuku/board.html.j2").render(view=view)
    for slot in ("主演", "助演", "脚本家", "音楽家", "演出家"):
        assert f'<th scope="row">{slot}</th>' in html
    assert "eitsuku-waiting" in html or view["over"]


def test_summary_and_board_show_event_arguments(env: jinja2.Environment) -> None:
    state = game.setup(["太郎", "花子"], {}, Rng("args", 0))
    player = state["players"][0]
    player["pending_choices"] = 0
    for card in [c for c in player["stock"] if c in EVENTS]:
        state["decks"][EVENT_DECK].extend([card] * player["stock"].pop(card))
    for card in ("プロモーターの介入", "ストライキ"):
        state["decks"][EVENT_DECK].remove(card)
        player["stock"][card] = 1
    for seq, line in enumerate(["EVENT プロモーターの介入 3", "EVENT ストライキ 花子"], start=1):
        state, _ = game.apply(state, 0, game.parse(line), Rng("args", seq))
    view = game.view(state, None)
    text = env.get_template("games/eitsuku/summary.txt.j2").render(view=view)
    assert "イベント場: プロモーターの介入 3、ストライキ → 花子" in text
    assert "次の週はストライキ" in text
    html = env.get_template("games/eitsuku/board.html.j2").render(view=view)
    assert "プロモーターの介入 3" in html and "→ 花子" in html


def test_summary_lists_this_weeks_active_event_effects_with_their_week(
    env: jinja2.Environment,
) -> None:
    """The thread summary lists the event effects active this week, each with the week it was
    placed (and who placed it on the player): a ストライキ from last week and this week's
    広告代理店の努力; next week they are gone."""
    state = game.setup(["太郎", "花子"], {}, Rng("active", 0))
    for seat, card in ((0, "広告代理店の努力"), (1, "ストライキ")):
        player = state["players"][seat]
        player["pending_choices"] = 0
        for held in [c for c in player["stock"] if c in EVENTS]:
            state["decks"][EVENT_DECK].extend([held] * player["stock"].pop(held))
        state["decks"][EVENT_DECK].remove(card)
        player["stock"][card] = 1
    moves = [(1, "EVENT ストライキ 太郎"), (1, "END"), (0, "END"), (0, "EVENT 広告代理店の努力")]
    for seq, (seat, line) in enumerate(moves, start=1):
        state, _ = game.apply(state, seat, game.parse(line), Rng("active", seq))
    template = env.get_template("games/eitsuku/summary.txt.j2")
    text = template.render(view=game.view(state, None))
    assert (
        "今週の効果: ストライキ(第1週、花子さんから): 役割カードを配置できない(ドローはできる)"
        " / 広告代理店の努力(第2週): 予算カードを得るコストが3少ない"
    ) in text.splitlines()
    assert text.count("今週の効果") == 1  # 花子 has none
    for seq, seat in enumerate((0, 1), start=10):
        state, _ = game.apply(state, seat, game.parse("END"), Rng("active", seq))
    assert "今週の効果" not in template.render(view=game.view(state, None))


def test_compact_board_of_a_week_takes_two_lines_a_player(env: jinja2.Environment) -> None:
    """The board a week's turn carries (issue #43): a player's stock and event field in number
    on the name's line, the five slots on the next (主演役者2: the 主演 holding 役者2; a slot
    holding its own kind of card says the card alone), the cards themselves on the game page;
    at a week's start everyone is at the action phase with 5 budget cards, so neither is said
    then, but a week part played says both."""
    state = game.setup(["太郎", "花子", "次郎"], {}, Rng("compact", 0))
    for seat in range(3):
        state["players"][seat]["pending_choices"] = 0
    state["players"][0]["slots"].update({"主演": "役者2", "脚本家": "脚本家5"})
    state["players"][1]["events"] = [{"name": "話題の独占", "week": 1}] * 2
    template = env.get_template("games/eitsuku/summary.txt.j2")
    view = game.view(state, None)
    text = template.render(view=view, compact=True, game_page="/games/7")
    stock = sum(view["players"][0]["stock"].values())
    assert f"■太郎 ストック{stock}枚\n主演役者2、助演―、脚本家5、音楽家―、演出家―\n" in text
    assert "■花子 ストック" in text and "、イベント場2枚\n" in text and "話題の独占" not in text
    assert "ストック・山札などの中身: /games/7" in text
    assert "アクションフェイズ" not in text and "予算カード残り" not in text
    assert shown_lines(text) <= 10, text
    state, _ = game.apply(state, 0, game.parse("BUY 中"), Rng("compact", 1))
    text = template.render(view=game.view(state, None), compact=True, game_page="/games/7")
    assert "■太郎(スカウトフェイズ) ストック" in text and "予算カード残り2枚" in text
