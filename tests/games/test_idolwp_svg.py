"""IM@S x Workerplacement's board picture (app/games/idolwp/svg.py) and its board templates
(templates/games/idolwp/), drawn from the views of real games.

Seeded games are played with legal lines only, from the draft to the end, and stopped at the
points worth drawing: the draft, the first turn, an event to enter, after a results step, the
last round's goal order, the final 特訓, the end. One player's name is markup. Every picture must
show every idol, space and the event, and a hand only from the viewer's own view; what every
kind's picture must be (safe, escaped, deterministic) is the contract's
(tests/games/test_game_contract.py).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from functools import cache
from random import Random
from typing import Any

import jinja2
import pytest

from app.games.base import Rng, State
from app.games.idolwp import game
from app.games.idolwp.svg import PLAYER_COLOURS, board_svg, space_amount
from app.games.resources import resource_dir
from app.games.svg import HAND_LABEL

NS = "{http://www.w3.org/2000/svg}"
MARKUP = "<script>x</script>&\"'"
NAMES = ["太郎", MARKUP, "花子"]
# What a stop is, by the state it stops at (the first state of the game that matches).
STOPS: dict[str, Callable[[State], bool]] = {
    "指名中": lambda s: s["phase"] == "draft" and s["draft"]["index"] == 2,
    "第1ラウンド開始": lambda s: s["phase"] == "play" and s["round"] == 1,
    "イベント参加待ち": lambda s: (s["pending"] or {}).get("kind") == "event",
    "途中のラウンド": lambda s: s["round"] == 4 and _off_start(s) >= 3 and s["pending"] is None,
    "結果のあと": lambda s: len(s["results"]) >= 2 and s["phase"] == "play",
    "最終ラウンドのゴール": lambda s: s["round"] == 9 and s["phase"] == "play" and s["finished"],
    "最後の特訓": lambda s: s["phase"] == "final",
    "終了": lambda s: s["over"],
}


def _off_start(state: State) -> int:
    return sum(
        1 for player in state["players"] for space in player["positions"].values() if space != "S"
    )


@cache
def played(seed: str = "svg-1", names: tuple[str, ...] = tuple(NAMES)) -> dict[str, State]:
    """A whole game played with legal lines; events and cards are taken when offered, so
    results have EVP and hands hold cards."""
    choices = Random(seed)
    state = game.setup(list(names), {}, Rng(seed, 0))
    stops: dict[str, State] = {}
    seq = 0
    while True:
        for label, matches in STOPS.items():
            if label not in stops and matches(state):
                stops[label] = state
        if game.is_over(state):
            break
        seq += 1
        seat = game.waiting_for(state)[0]
        lines = game.legal(state, seat)
        eager = [line for line in lines if line.startswith(("EVENT", "CARD", "TRAIN V"))]
        moves = [line for line in lines if line.startswith(("MOVE", "PICK", "DISCARD", "TRAIN"))]
        pool = eager if eager and choices.random() < 0.6 else (moves or lines)
        state, _events = game.apply(state, seat, game.parse(choices.choice(pool)), Rng(seed, seq))
    assert set(stops) == set(STOPS), set(STOPS) - set(stops)
    return stops


def view(label: str, viewer: Any = None) -> dict[str, Any]:
    return game.view(played()[label], viewer)


def started(label: str) -> bool:
    return label not in ("指名中",)


def pictures() -> list[tuple[str, str]]:
    """(label, svg) for every stop: public, and for each seat with its own view."""
    drawn = []
    for label in STOPS:
        public = view(label)
        drawn.append((label, board_svg(public)))
        for seat in range(len(NAMES)):
            drawn.append((f"{label} seat {seat}", board_svg(public, view(label, seat))))
    return drawn


def parse(picture: str) -> ET.Element:
    return ET.fromstring(picture)


def local(tag: str) -> str:
    return tag.removeprefix(NS)


def texts(picture: str) -> list[str]:
    """The text of every <text> and <title>, in document order."""
    return [
        "".join(node.itertext())
        for node in parse(picture).iter()
        if local(node.tag) in ("text", "title")
    ]


def number(node: ET.Element, name: str) -> float:
    return float(node.get(name, "0"))


# --------------------------------------------------------------------------- every picture


def test_every_box_stays_inside_the_width() -> None:
    for label, picture in pictures():
        for node in parse(picture).iter():
            if local(node.tag) == "rect":
                assert number(node, "x") >= 0, label
                assert number(node, "x") + number(node, "width") <= 360.01, (label, node.attrib)


# --------------------------------------------------------------------------- what it shows


def test_every_space_id_and_printed_amount_and_every_idol_appear() -> None:
    for label in STOPS:
        shown_view = view(label)
        shown = texts(board_svg(shown_view))
        for space in shown_view["board"]["spaces"]:
            assert space["id"] in shown, (label, space["id"])
            if space_amount(space):
                assert space_amount(space) in shown, (label, space)
        for player in shown_view["players"]:
            for idol in player["idols"]:
                assert idol in shown, (label, idol)


def test_idol_tokens_stand_in_their_spaces_box_in_their_player_s_colour() -> None:
    for label in filter(started, STOPS):
        shown_view = view(label)
        root = parse(board_svg(shown_view))
        tokens = [
            (node, child)
            for node in root.iter(f"{NS}g")
            for child in node
            if local(child.tag) == "rect"
            and child.get("fill") in PLAYER_COLOURS
            and child.get("height") == "16"
        ]
        expected = sum(len(player["idols"]) for player in shown_view["players"])
        assert len(tokens) == expected, label
        placed = [
            (number(rect, "x"), number(rect, "y"), number(rect, "width")) for _g, rect in tokens
        ]
        # No two tokens overlap (many idols stand on the start and the goal).
        for index, (x, y, width) in enumerate(placed):
            for other_x, other_y, other_width in placed[index + 1 :]:
                apart = other_x >= x + width or x >= other_x + other_width
                assert apart or abs(other_y - y) >= 16, label
        colours = {_colour_name(group_node): rect.get("fill") for group_node, rect in tokens}
        for player in shown_view["players"]:
            for idol in player["idols"]:
                assert colours[idol] == PLAYER_COLOURS[player["seat"]], (label, idol)


def _colour_name(node: ET.Element) -> str:
    return "".join(next(child for child in node.iter(f"{NS}text")).itertext())


def test_every_edge_is_an_arrow_with_a_head() -> None:
    for label in ("第1ラウンド開始", "最終ラウンドのゴール"):
        shown_view = view(label)
        root = parse(board_svg(shown_view))
        heads = [node for node in root.iter(f"{NS}polygon")]
        assert len(heads) == len(shown_view["board"]["edges"]), label
        for head in heads:
            assert len(head.get("points", "").split()) == 3


def test_header_shows_round_board_phase_turn_and_the_event() -> None:
    for label in filter(started, STOPS):
        shown_view = view(label)
        shown = texts(board_svg(shown_view))
        assert f"第{shown_view['round']}ラウンド / 9" in shown
        assert any(shown_view["board"]["name"] in line for line in shown)
        event = shown_view["event"]
        assert f"イベント「{event['name']}」" in shown, label
        for level in event["levels"]:
            assert level["text"] in shown and f"Lv{level['level']}" in shown
        if shown_view["over"]:
            assert "ゲーム終了" in shown
        elif shown_view["phase"] == "play" and shown_view["pending"] is None:
            due = shown_view["players"][shown_view["turn_seat"]]["due"]
            assert f"手番: {shown_view['turn']}(動かせる: {'・'.join(due)})" in shown


def test_header_says_who_the_bot_waits_for() -> None:
    pending = view("イベント参加待ち")
    who = pending["players"][pending["pending"]["seat"]]["name"]
    assert f"イベント参加待ち: {who}" in texts(board_svg(pending))
    final = view("最後の特訓")
    assert f"特訓の番: {final['turn']}" in texts(board_svg(final))


def test_the_draft_shows_whose_pick_and_the_idols_left() -> None:
    shown_view = view("指名中")
    shown = texts(board_svg(shown_view))
    picking = shown_view["draft"]["order"][shown_view["draft"]["index"]]
    assert f"指名の番: {picking}" in shown
    assert any(line.endswith(f"{picking} ← 指名中") for line in shown)
    for idol in shown_view["draft"]["pool"]:
        assert idol in shown
    assert shown_view["board"]["spaces"][0]["id"] in shown  # the board is drawn already


def test_players_points_abilities_chips_and_cards_appear() -> None:
    shown_view = view("結果のあと")
    picture = board_svg(shown_view)
    shown = texts(picture)
    groups = [
        ["".join(child.itertext()) for child in node if local(child.tag) == "text"]
        for node in parse(picture).iter(f"{NS}g")
    ]
    for player in shown_view["players"]:
        assert ["得点", str(player["points"])] in groups
        assert ["EVP", str(player["evp"])] in groups
        assert ["思い出", str(player["memory"])] in groups
        assert ["マニー", str(player["money"])] in groups
        for ability in ("Vo", "Da", "Vi"):
            assert [f"{ability} 能力", str(player["abilities"][ability])] in groups
        kept = f"・表{len(player['kept'])}枚" if player["kept"] else ""
        assert f"カード 伏せ{player['cards']}枚{kept}" in shown
        for card in player["kept"]:
            assert f"表: {card}" in shown
    for player in shown_view["players"]:
        for ability in ("Vo", "Da", "Vi"):
            assert f"チップ {player['chips'][ability]}" in shown


def test_results_so_far_and_the_final_ranking() -> None:
    for label in ("結果のあと", "終了"):
        shown_view = view(label)
        shown = texts(board_svg(shown_view))
        for entry in shown_view["results"]:
            assert f"第{entry['round']}R" in shown
            for row in entry["rows"]:
                assert f"{row['evp']}+{row['reward']}" in shown
    end = view("終了")
    shown = texts(board_svg(end))
    assert "最終結果" in shown
    for entry in end["result"]["ranking"]:
        assert f"{entry['rank']}位" in shown and f"{entry['score']}点" in shown
        breakdown = entry["breakdown"]
        assert f"イベント {breakdown['events']} ・ 能力順位 {breakdown['abilities']}" in shown


def test_the_last_round_shows_the_goal_order() -> None:
    shown_view = view("最終ラウンドのゴール")
    shown = texts(board_svg(shown_view))
    ranked = [player for player in shown_view["players"] if player["finish_rank"] is not None]
    assert ranked
    for player in ranked:
        assert f"ゴール{player['finish_rank']}番" in shown


# --------------------------------------------------------------------------- hands


def test_the_public_picture_never_shows_a_hand() -> None:
    """Not even when the view passed as the public one is a seat's or the GM's."""
    for label in STOPS:
        public = board_svg(view(label))
        assert not any(line.startswith(HAND_LABEL) for line in texts(public)), label
        for viewer in (0, 1, 2, "gm"):
            assert board_svg(view(label, viewer)) == public, (label, viewer)


def test_the_own_picture_adds_exactly_the_viewer_s_hand() -> None:
    held = 0
    for label in STOPS:
        public = view(label)
        plain = Counter(texts(board_svg(public)))
        for seat in range(len(NAMES)):
            own = view(label, seat)
            hand = own["players"][seat]["hand"]
            added = Counter(texts(board_svg(public, own))) - plain
            expected = Counter([*hand, f"{HAND_LABEL}({len(hand)}枚)", "あなた"])
            if not hand:
                expected["なし"] += 1
            assert added == expected, (label, seat)
            held += len(hand)
    assert held  # some seat held cards at some stop


# --------------------------------------------------------------------------- templates


@pytest.fixture(scope="module")
def env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_dir("templates")),
        autoescape=jinja2.select_autoescape(["html", "html.j2"]),
        undefined=jinja2.StrictUndefined,
        extensions=["jinja2.ext.i18n"],
    )
    env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]
    return env


def summary(label: str) -> str:
    plain = jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_dir("templates")),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
    )
    return plain.get_template("games/idolwp/summary.txt.j2").render(view=view(label)).strip()


def test_summary_text_at_every_stop() -> None:
    for label in STOPS:
        shown_view = view(label)
        text = summary(label)
        assert not re.search(r"  ", text) and "\n\n" not in text, label
        for player in shown_view["players"]:
            assert f"■{player['name']}: 得点 {player['points']}、EVP {player['evp']}" in text
        if shown_view["over"]:
            # The final ranking is said once, in the closing post (【最終結果】), not here.
            for entry in shown_view["result"]["ranking"]:
                assert f"{entry['rank']}位 {entry['name']}" not in text
        else:
            assert f"第{shown_view['round']}ラウンド / 全9ラウンド" in text
            assert f"イベント「{shown_view['event']['name']}」" in text
            for level in shown_view["event"]["levels"]:
                assert f"Lv{level['level']} {level['text']} → {level['evp']}EVP" in text
    assert "指名の番: " in summary("指名中")
    assert "イベント参加待ち" in summary("イベント参加待ち")
    assert "最後の特訓: " in summary("最後の特訓")
    middle = view("途中のラウンド")
    due = middle["players"][middle["turn_seat"]]["due"]
    assert f"手番: {middle['turn']}さん(動かせるアイドル: {'・'.join(due)})" in summary(
        "途中のラウンド"
    )
    for entry in view("結果のあと")["results"]:  # issue #43: told once, on the game page after
        assert f"結果 第{entry['round']}ラウンド「{entry['event']}」" not in summary("結果のあと")


def test_board_html_is_an_escaped_fragment_without_scripts_or_styles(
    env: jinja2.Environment,
) -> None:
    for label in STOPS:
        for viewer in (None, 0, "gm"):
            html = env.get_template("games/idolwp/board.html.j2").render(view=view(label, viewer))
            assert html.startswith('<section class="idolwp-board"'), label
            assert "<script>x" not in html and "&lt;script&gt;x&lt;/script&gt;&amp;" in html
            for forbidden in ("<html", "<head>", "<body", "<script", "style=", "<style"):
                assert forbidden not in html
            classes = {c for attr in re.findall(r'class="([^"]*)"', html) for c in attr.split()}
            assert classes and all(c.startswith("idolwp-") for c in classes)


def test_board_html_lists_spaces_players_and_a_hand_only_when_the_view_has_it(
    env: jinja2.Environment,
) -> None:
    template = env.get_template("games/idolwp/board.html.j2")
    for label in filter(started, STOPS):
        public = view(label)
        html = template.render(view=public)
        for space in public["board"]["spaces"]:
            assert f'<th scope="row">{space["id"]}</th>' in html
        for player in public["players"]:
            assert f'id="idolwp-seat-{player["seat"]}"' in html
            for idol in player["idols"]:
                assert idol in html
        assert 'class="idolwp-hand"' not in html
        own = template.render(view=view(label, 1))
        assert own.count('class="idolwp-hand"') == 1
        assert template.render(view=view(label, "gm")).count('class="idolwp-hand"') == 3
    assert 'class="idolwp-result"' in template.render(view=view("終了"))
    assert 'class="idolwp-draft"' in template.render(view=view("指名中"))
