"""templates/games/populous/: the thread-reply summary (rendered by the bot's own
`render_board_summary`) and the board HTML (rendered by the app's Jinja2 environment), from
views of a game played with random legal lines through every phase and step."""

from __future__ import annotations

import re
from functools import cache
from random import Random
from typing import Any

import jinja2
import pytest
from markupsafe import escape

from app.config import get_settings
from app.games.base import Rng, State, Viewer
from app.games.populous import game
from app.gm.text import render_board_summary
from app.web.templating import make_templates

NAMES = ["<b>x</b>", "花子&", "太郎"]
SEED = "templates"
# The points of the game the tests render: the phases, each step of a turn, a war of the
# present round, the end.
LABELS = (
    "race",
    "draft",
    "draft-sealed",
    "cubes",
    "area",
    "wrath",
    "place",
    "play",
    "after",
    "war",
    "town",
    "reveal",
    "last-war",
    "over",
)
OUTCOME_JA = {"win": "勝利", "draw": "引き分け", "lose": "敗北"}
BREAKDOWN_JA = (
    ("play", "ゲーム中のVP"),
    ("workers", "ワーカー"),
    ("towns", "タウン"),
    ("generations", "世代のマジョリティ"),
    ("skills", "スキル"),
)


def _crowded(state: State, line: str, seat: int) -> bool:
    """Does the area of an AREA line hold another player's piece (a war or a mediation)?"""
    low, high = sorted(int(card.lstrip("F")) for card in line.split()[1:])
    return any(
        piece[0] != seat
        for letter in "abc"
        for piece in state["pieces"].get(f"{low}{high}{letter}", ())
    )


def _play(seed: str, found: dict[str, State]) -> None:
    """Play one game with random legal lines (eager to place, move, change generations and
    fight; sealed lines through the sealed path), keeping the first state reaching each label."""
    choices = Random(seed)
    state = game.setup(NAMES, {}, Rng(seed, 0))
    found.setdefault("race", state)
    seq = 0
    while not game.is_over(state):
        seq += 1
        seat = game.waiting_for(state)[0]
        sealed = state["phase"] in ("draft", "cubes")
        if sealed:
            line = choices.choice(game.sealed_legal(state, seat))
        else:
            lines = [line for line in game.legal(state, seat) if line != "END"]
            eager = [line for line in lines if line.startswith(("PLACE", "MOVE", "NEWGEN", "WAR"))]
            if state["step"] == "area":
                eager = [line for line in lines if _crowded(state, line, seat)]
            if not lines or (state["phase"] == "play" and choices.random() < 0.03):
                line = "END"
            elif eager and choices.random() < 0.6:
                line = choices.choice(eager)
            else:
                line = choices.choice(lines)
        state, _ = game.apply(state, seat, game.parse(line), Rng(seed, seq), sealed=sealed)
        label = state["step"] if state["phase"] == "play" else state["phase"]
        found.setdefault(label, state)
        if state["phase"] == "draft" and state["secret"]["sealed"]:
            found.setdefault("draft-sealed", state)
        war = state["last_war"]
        if war is not None and war["round"] == state["round"] and not state["over"]:
            found.setdefault("last-war", state)
    found.setdefault("over", state)


@cache
def played() -> dict[str, State]:
    """The first state reaching each label, over as few seeded games as it takes."""
    found: dict[str, State] = {}
    for number in range(20):
        _play(f"{SEED}-{number}", found)
        if set(found) == set(LABELS):
            return found
    raise AssertionError(f"never reached: {sorted(set(LABELS) - set(found))}")


def view(label: str, viewer: Viewer = None) -> dict[str, Any]:
    return game.view(played()[label], viewer)


def summary(label: str, viewer: Viewer = None) -> str:
    return render_board_summary(game, view(label, viewer))


@pytest.fixture(scope="module")
def env() -> jinja2.Environment:
    # The app's environment (autoescape for .html.j2, trimmed i18n, trim_blocks), in Japanese.
    return make_templates(get_settings()).env


def board(env: jinja2.Environment, label: str, viewer: Viewer = None) -> str:
    return env.get_template("games/populous/board.html.j2").render(view=view(label, viewer))


def tile_name(tile_id: str) -> str:
    return tile_id.replace("-", "−")


def map_line(tile: dict[str, Any]) -> str:
    """A tile's line as the summary writes it, from the view."""
    head = tile_name(tile["id"])
    if tile["genesis"]:
        head += " [創世]"
    if tile["ring"]:
        head += f" (リング: {tile['ring']})"
    squares = []
    for square in tile["squares"]:
        text = f"{square['id']} {square['terrain']}"
        tokens = ""
        for index, piece in enumerate(square["pieces"]):
            before = square["pieces"][index - 1] if index else None
            if before is not None and (piece["type"] != "worker" or before["type"] != "worker"):
                tokens += "、"
            tokens += (
                piece["player"] + {"worker": "●", "town": "の町", "ruin": "の町跡"}[piece["type"]]
            )
        squares.append(f"{text} {tokens}" if tokens else text)
    return f"{head}: " + " / ".join(squares)


def generations_line(player: dict[str, Any], present: bool) -> str:
    parts = []
    for number, gen in enumerate(player["generations"], start=1):
        cards = "・".join(f"裏({c['action']})" if c["down"] else c["kind"] for c in gen)
        mark = "(現代)" if present and number == len(player["generations"]) else ""
        parts.append(f"第{number}世代{mark} {cards}")
    return "世代: " + (" / ".join(parts) if parts else "なし")


# --------------------------------------------------------------------------- the summary


@pytest.mark.parametrize("label", LABELS)
def test_summary_shows_round_phase_players_and_the_map(label: str) -> None:
    shown = view(label)
    text = summary(label)
    assert not re.search(r"  ", text) and "\n\n" not in text, label
    lines = text.splitlines()
    phase = {
        "race": "種族選択",
        "draft": "スキルのドラフト",
        "cubes": "リソースの配分",
        "play": "進行中",
    }
    if shown["over"]:
        assert lines[0] == "【ポピュラス 草案21】終了(全12ラウンド)"
    else:
        assert lines[0] == (
            f"【ポピュラス 草案21】第{shown['round']}ラウンド / 全12ラウンド"
            f"({phase[shown['phase']]})"
        )
    markers = "・".join("フリー" if m == "F" else f"【{m}】" for m in shown["markers"])
    assert f"マーカー: {markers}" in lines
    assert f"エピックカード: 山札 {shown['deck']}枚、捨て札 {shown['discard']}枚" in lines
    for player in shown["players"]:
        race = (
            f"{player['race']}、適性: {'・'.join(player['aptitudes'])}"
            if player["race"]
            else "種族未選択"
        )
        assert f"■{player['name']}({race})" in text
        res = player["resources"]
        assert (
            f"情熱{res['情熱']} 食料{res['食料']} 信仰{res['信仰']} 神の怒り{res['神の怒り']}、"
            f"VP {player['vp']}、手札 {player['hand_size']}枚(上限{player['max_hand']})"
        ) in lines
        assert f"手元: ワーカー{player['workers_home']} タウン{player['towns_home']}" in lines
        revealed = "、".join(s["name"] for s in player["skills_revealed"]) or "なし"
        assert f"スキル: 公開 {revealed} / 伏せ {player['skills_face_down']}枚" in lines
        assert generations_line(player, shown["phase"] == "play") in lines
    for tile in shown["map"]:
        assert map_line(tile) in lines, (label, tile["id"])
        for square in tile["squares"]:
            assert square["id"] in text
    assert text.count("[創世]") == (1 if shown["area"] else 0)


def test_summary_says_who_is_to_move_in_each_phase() -> None:
    race = view("race")
    assert f"種族選択の番: {race['waiting_for'][0]}さん(RACE <種族>)" in summary("race")
    assert "・人間(適性: 平地) 平地の民。" in summary("race")
    for label in ("draft", "draft-sealed", "cubes"):
        shown = view(label)
        assert f"封印待ち: {'、'.join(shown['waiting_for'])}" in summary(label).splitlines()
    assert len(view("draft-sealed")["waiting_for"]) < len(NAMES)
    assert "スキルのドラフト 1/5巡目: 封印して PICK <スキル>" in summary("draft")
    assert "CUBES 情熱 a 食料 b 信仰 c" in summary("cubes")
    for label in ("area", "wrath", "place", "play", "after", "war", "town", "reveal"):
        shown = view(label)
        lines = summary(label).splitlines()
        name = shown["players"][shown["turn"]]["name"]
        assert f"手番: {name}さん({shown['step_ja']})" in lines, label
        assert shown["prompt"] and shown["prompt"] in lines, label
        area = tile_name(shown["area"]) if shown["area"] else "未選択"
        assert f"創世エリア: {area}" in lines, label
    assert "創世エリア: 未選択" in summary("area")
    genesis = [tile for tile in view("place")["map"] if tile["genesis"]]
    assert len(genesis) == 1 and f"{tile_name(genesis[0]['id'])} [創世]: " in summary("place")


def test_summary_map_line_names_terrains_pieces_and_rings() -> None:
    """One line per tile: its squares' terrain and pieces (workers ●, towns, ruins), the ring."""
    state = game.copy_state(played()["place"])
    state["map"] = [dict(tile) for tile in state["map"]]
    area = state["t"]["area"]
    low, high = area.split("-")
    state["pieces"] = {
        f"{low}{high}a": [[0, "w"], [1, "w"]],
        f"{low}{high}b": [[0, "t"]],
        f"{low}{high}c": [[2, "x"], [1, "w"], [1, "w"]],
    }
    other = next(tile for tile in state["map"] if tile["id"] != area)
    other["ring"] = "海"
    shown = game.view(state, None)
    text = render_board_summary(game, shown)
    tile = next(t for t in shown["map"] if t["id"] == area)
    terrains = [square["terrain"] for square in tile["squares"]]
    a, b, c = (f"{low}{high}{letter}" for letter in "abc")
    assert (
        f"{low}−{high} [創世]: {a} {terrains[0]} {NAMES[0]}●{NAMES[1]}● / "
        f"{b} {terrains[1]} {NAMES[0]}の町 / "
        f"{c} {terrains[2]} {NAMES[2]}の町跡、{NAMES[1]}●{NAMES[1]}●"
    ) in text.splitlines()
    prefix = other["id"].replace("-", "")
    # Every square of a ringed tile has the ring's terrain.
    assert (
        f"{tile_name(other['id'])} (リング: 海): {prefix}a 海 / {prefix}b 海 / {prefix}c 海"
    ) in text.splitlines()


def test_summary_last_war_of_the_present_round_only() -> None:
    shown = view("last-war")
    war = shown["last_war"]
    lines = summary("last-war").splitlines()
    squares = "・".join(war["contested"])
    assert f"第{war['round']}ラウンドの戦争({tile_name(war['area'])}、係争マス {squares})" in lines
    for fighter in war["fighters"]:
        name = shown["players"][fighter["seat"]]["name"]
        bonus = f"+スキル{fighter['bonus']}" if fighter["bonus"] else ""
        outcome = OUTCOME_JA[war["outcome"][str(fighter["seat"])]]
        assert (
            f"・{name}: 駒{fighter['pieces']}+サイコロ{fighter['die']}{bonus}"
            f" = 戦力{fighter['strength']} {outcome}"
        ) in lines
    state = game.copy_state(played()["last-war"])
    state["last_war"] = dict(state["last_war"], round=state["round"] - 1)
    assert "ラウンドの戦争(" not in render_board_summary(game, game.view(state, None))


def test_summary_leaves_the_final_ranking_to_the_closing_post() -> None:
    """The final ranking with its breakdown is said once, in the closing post (【最終結果】,
    tests/test_gm_pipeline.py), not again in the board summary."""
    shown = view("over")
    text = summary("over")
    ranking = shown["result"]["ranking"]
    assert len(ranking) == len(NAMES)
    for entry in ranking:
        assert f"{entry['rank']}位 {entry['name']}" not in text
    assert "成績発表" not in text


@pytest.mark.parametrize("label", LABELS)
def test_summary_never_tells_a_secret_even_from_a_private_view(label: str) -> None:
    """The reply goes to everyone: a seat's (or the GM's) view gives the public text — no hand,
    no face-down skill, no card under a face-down card, no draft pack, no sealed choice."""
    public = summary(label)
    for viewer in (0, 1, 2, "gm"):
        assert summary(label, viewer) == public, (label, viewer)
    state = played()[label]
    secrets = [
        name
        for player in state["players"]
        for name in player["skills"]
        if name not in player["revealed"]
    ]
    if state["draft"] is not None:
        secrets += [name for pack in state["draft"]["packs"] for name in pack]
    for name in secrets:
        assert name not in public, (label, name)
    assert "手札:" not in public and "[" not in public.replace("[創世]", "")


# --------------------------------------------------------------------------- the compact summary


PAGE = "/games/7"


def compact(label: str, viewer: Viewer = None) -> str:
    return render_board_summary(game, view(label, viewer), compact=True, game_page=PAGE)


def _five_players() -> State:
    """A 5-player game at its first turn (the longest compact board)."""
    state = game.setup(["一郎", "二郎", "三郎", "四郎", "五郎"], {}, Rng("five", 0))
    seq = 0
    while state["phase"] != "play":
        seq += 1
        seat = game.waiting_for(state)[0]
        sealed = state["phase"] in ("draft", "cubes")
        line = (game.sealed_legal if sealed else game.legal)(state, seat)[0]
        state, _ = game.apply(state, seat, game.parse(line), Rng("five", seq), sealed=sealed)
    return state


@pytest.mark.parametrize("label", LABELS)
def test_compact_summary_is_half_a_phone_screen_and_names_the_game_page(label: str) -> None:
    """The board a reply carries when the round or phase turns (issue #43): at most 17 lines at
    390 px (half a phone screen), the game page named on its last line, and nothing secret."""
    from tests.support.replies import shown_lines

    text = compact(label)
    assert shown_lines(text) <= 17, text
    assert text.splitlines()[-1] == f"マップ・世代・スキル: {PAGE}"
    assert compact(label, 0) == compact(label, "gm") == text
    five = render_board_summary(game, game.view(_five_players(), None), compact=True)
    assert shown_lines(five) <= 17, five


@pytest.mark.parametrize("label", ["area", "wrath", "place", "play", "after", "war", "town"])
def test_compact_summary_gives_the_prompt_and_two_lines_a_player(label: str) -> None:
    shown = view(label)
    lines = compact(label).splitlines()
    assert lines[0] == f"【ポピュラス 草案21】第{shown['round']}/12ラウンド(進行中)"
    assert lines[1] == shown["prompt"] and shown["prompt"].startswith("次: ")
    start = shown["players"][shown["start"]]["name"]
    assert f"山札 {shown['deck']}枚、スタートプレイヤー {start}" in lines
    for player in shown["players"]:
        res = player["resources"]
        first = (
            f"■{player['name']}({player['race']}) VP {player['vp']} 手札{player['hand_size']}"
            f" ワーカー{player['workers_home']} タウン{player['towns_home']}"
        )
        second = (
            f"　情熱{res['情熱']} 食料{res['食料']} 信仰{res['信仰']} 神の怒り{res['神の怒り']}"
            f"、マジョリティ{len(player['majorities'])}"
        )
        assert lines[lines.index(first) + 1] == second, label


def test_compact_summary_of_the_setup_says_who_is_to_choose() -> None:
    race = compact("race")
    assert f"種族選択の番: {view('race')['waiting_for'][0]}さん(RACE <種族>)" in race
    assert "人間(平地)" in race and "平地の民。" not in race
    for label in ("draft", "draft-sealed", "cubes"):
        shown = view(label)
        assert f"封印待ち: {'、'.join(shown['waiting_for'])}" in compact(label).splitlines()
    assert "CUBES 情熱 a 食料 b 信仰 c" in compact("cubes")


def test_compact_summary_keeps_the_war_of_the_round() -> None:
    shown = view("last-war")
    war = shown["last_war"]
    said = ", ".join(
        f"{shown['players'][f['seat']]['name']} 戦力{f['strength']} "
        f"{OUTCOME_JA[war['outcome'][str(f['seat'])]]}"
        for f in war["fighters"]
    ).replace(", ", "、")
    assert (
        f"第{war['round']}ラウンドの戦争({tile_name(war['area'])}): {said}"
        in compact("last-war").splitlines()
    )


# --------------------------------------------------------------------------- the board HTML


@pytest.mark.parametrize("label", LABELS)
def test_board_html_is_an_escaped_fragment_without_scripts_or_styles(
    env: jinja2.Environment, label: str
) -> None:
    for viewer in (None, 0, "gm"):
        html = board(env, label, viewer)
        assert html.startswith('<section class="populous-board"'), label
        assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
        assert "花子&amp;" in html and "花子&<" not in html
        for forbidden in ("<html", "<head>", "<body", "<script", "style=", "<style"):
            assert forbidden not in html
        classes = {c for attr in re.findall(r'class="([^"]*)"', html) for c in attr.split()}
        assert classes and all(c.startswith("populous-") for c in classes)


@pytest.mark.parametrize("label", LABELS)
def test_board_html_lists_the_map_and_the_players(env: jinja2.Environment, label: str) -> None:
    shown = view(label)
    html = board(env, label)
    for tile in shown["map"]:
        assert f'id="populous-tile-{tile["id"]}"' in html
        for square in tile["squares"]:
            assert f'<th scope="row">{square["id"]}</th>' in html
    genesis = re.findall(
        r'<tbody class="populous-tile populous-genesis" id="populous-tile-(.-.)"', html
    )
    assert genesis == ([shown["area"]] if shown["area"] else [])
    assert html.count('class="populous-genesis-mark"') == len(genesis)
    for player in shown["players"]:
        assert f'id="populous-seat-{player["seat"]}"' in html
        assert f"<dt>VP</dt><dd>{player['vp']}</dd>" in html
        assert f"{player['hand_size']}枚(上限 {player['max_hand']})" in html
        for skill in player["skills_revealed"]:
            assert skill["name"] in html
    if shown["phase"] == "play":
        name = shown["players"][shown["turn"]]["name"]
        assert str(escape(f"{name}({shown['step_ja']})")) in html
    if shown["prompt"]:
        assert f'<p class="populous-prompt">{escape(shown["prompt"])}</p>' in html


def test_board_html_hand_and_skills_only_in_their_owner_s_view(env: jinja2.Environment) -> None:
    for label in LABELS:
        public = board(env, label)
        assert 'class="populous-hand"' not in public
        assert 'class="populous-own-skills"' not in public
        assert 'class="populous-under"' not in public
        own = board(env, label, 1)
        assert own.count('class="populous-hand"') == 1, label
        assert own.count('class="populous-own-skills"') == 1, label
        gm = board(env, label, "gm")
        assert gm.count('class="populous-hand"') == len(NAMES), label
        state = played()[label]
        down = [c for gen in state["players"][1]["gens"] for c in gen if c["down"]]
        assert own.count('class="populous-under"') == len(down), label
    state = played()["reveal"]
    html = board(env, "reveal", 0)
    hand = re.search(r'<div class="populous-hand">(.*?)</div>', html, re.DOTALL)
    assert hand is not None
    assert re.findall(r'<li class="populous-card">(.*?)</li>', hand[1]) == sorted(
        state["players"][0]["hand"], key=["祝福", "労働", "奇跡", "啓示", "繁栄"].index
    )
    for name in state["players"][0]["skills"]:
        assert name in html


def test_board_html_draft_pack_sealed_choice_and_races(env: jinja2.Environment) -> None:
    state = played()["draft-sealed"]
    sealed_seat = int(next(iter(state["secret"]["sealed"])))
    pick = state["secret"]["sealed"][str(sealed_seat)]
    mine = board(env, "draft-sealed", sealed_seat)
    assert f"<code>PICK {pick}</code>" in mine
    assert "<code>PICK" not in board(env, "draft-sealed")
    assert 'class="populous-skills populous-pack"' in board(env, "draft", 0)
    for name in played()["draft"]["draft"]["packs"][0]:
        assert name in board(env, "draft", 0)
        assert name not in board(env, "draft")
    races = board(env, "race")
    assert 'class="populous-races"' in races and '<th scope="row">ドワーフ</th>' in races
    assert 'class="populous-races"' not in board(env, "draft")


def test_board_html_war_and_result(env: jinja2.Environment) -> None:
    html = board(env, "last-war")
    war = view("last-war")["last_war"]
    assert 'class="populous-war"' in html
    assert f"係争マス {'・'.join(war['contested'])}" in html
    for fighter in war["fighters"]:
        assert f"populous-{war['outcome'][str(fighter['seat'])]}" in html
    end = board(env, "over")
    assert 'class="populous-result"' in end
    for entry in view("over")["result"]["ranking"]:
        row = f"<td>{entry['rank']}</td>"
        assert row in end and f"<td>{entry['score']}</td>" in end
    for label in LABELS[:-1]:
        assert 'class="populous-result"' not in board(env, label)
