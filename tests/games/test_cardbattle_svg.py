"""掲示板進行カードゲーム's picture (app/games/cardbattle/svg.py) and its templates
(templates/games/cardbattle/summary.txt.j2, board.html.j2), drawn from views of battles played
with the real game: decks sealed, magic declared, attacks by the automatic rule and by ATTACK
a>t, up to the end. One player's name is markup.
"""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from collections import Counter
from functools import cache
from typing import Any

import jinja2
import pytest

from app import i18n
from app.games.base import Rng, State
from app.games.cardbattle import content, game
from app.games.cardbattle.cards import Ability
from app.games.cardbattle.svg import OWN_MAGIC_LABEL, SEALED_LABEL, board_svg
from app.games.kit.content import ContentError
from app.games.resources import resource_dir
from tests.support.cardbattle import magic, normal
from tests.test_i18n import _strings, japanese_outside

NS = "{http://www.w3.org/2000/svg}"
MARKUP = "<script>x</script>&\"'"
NAMES = [MARKUP, "花子"]


# A pool of our own, so that the battle reaches every look a card has (a shield, a raised
# attack, an ability used, destroyed, removed) and a total cost over 1,000, whatever the
# starter pool's data holds.
POOL = {
    card.name: card
    for card in (
        normal("舞踏子", 300, 120, 200, Ability(effect="shield", amount=50, timing="entry")),
        normal("ホープ", 250, 100, 180, Ability(effect="heal", amount=50, timing="turn_start")),
        normal("MAKI", 350, 150, 150, Ability(effect="revive", amount=100, timing="destroyed")),
        normal(
            "鉄壁の守護者", 200, 60, 300, Ability(effect="attack_up", amount=30, timing="attack")
        ),
        normal(
            "疾風の剣士ファルシオン",
            280,
            170,
            120,
            Ability(effect="damage_all", amount=30, timing="attack"),
        ),
        normal("見習い魔導士", 150, 80, 100, Ability(effect="damage", amount=40, timing="entry")),
        magic("火球", 100, Ability(effect="damage", amount=120)),
        magic("封印の鎖", 150, Ability(effect="remove")),
        magic("癒しの風", 80, Ability(effect="heal", amount=100)),
        magic("守りの盾", 60, Ability(effect="shield", amount=80)),
    )
}
DECKS = (
    "DECK 舞踏子 ホープ MAKI MAGIC 火球 封印の鎖",
    "DECK 鉄壁の守護者 疾風の剣士ファルシオン 見習い魔導士 MAGIC 癒しの風 守りの盾",
)


class Battle:
    """A battle played line by line, its state kept at named stops."""

    def __init__(self) -> None:
        self.state: State = game.setup(NAMES, {"pool": POOL}, Rng("cardbattle-svg", 0))
        self.seq = 1
        self.stops: dict[str, State] = {}

    def act(self, seat: int, line: str, *, sealed: bool = False) -> None:
        assert line in game.legal(self.state, seat) + game.sealed_legal(self.state, seat) or (
            line.startswith(("DECK", "ATTACK "))
        ), (line, game.legal(self.state, seat))
        self.state, _events = game.apply(
            self.state, seat, game.parse(line), Rng("cardbattle-svg", self.seq), sealed=sealed
        )
        self.seq += 1

    def stop(self, label: str) -> None:
        self.stops[label] = copy.deepcopy(self.state)

    def window(self, declare: dict[int, str] | None = None) -> None:
        """Close the magic window: each seat declares what `declare` says, then both pass."""
        for seat, line in (declare or {}).items():
            if line in game.legal(self.state, seat):
                self.act(seat, line)
        for seat in (0, 1):
            if not self.state["over"] and "PASS" in game.legal(self.state, seat):
                self.act(seat, "PASS")


@cache
def played() -> dict[str, State]:
    battle = Battle()
    battle.stop("封印前")
    battle.act(0, DECKS[0], sealed=True)
    battle.stop("片方が封印")
    battle.act(1, DECKS[1], sealed=True)
    battle.stop("公開直後")
    first = battle.state["first"]
    battle.act(1, "PASS")
    battle.stop("片方がPASS")
    battle.act(0, "PASS")
    battle.stop("第1手番の攻撃待ち")
    battle.act(first, "ATTACK 1>2")
    battle.stop("第1手番の魔法受付")
    battle.window({0: "MAGIC 封印の鎖", 1: "MAGIC 守りの盾"})
    battle.stop("魔法のあと")
    while not battle.state["over"]:
        seat = game.waiting_for(battle.state)[0]
        battle.act(seat, "ATTACK")
        if battle.state["over"]:
            break
        if battle.state["turn"] == 4:
            battle.stop("途中の魔法受付")
        battle.window({1: "MAGIC 癒しの風"} if battle.state["turn"] == 3 else None)
    battle.stop("決着")
    return battle.stops


STOPS = [
    "封印前",
    "片方が封印",
    "公開直後",
    "片方がPASS",
    "第1手番の攻撃待ち",
    "第1手番の魔法受付",
    "魔法のあと",
    "途中の魔法受付",
    "決着",
]


def view(label: str, viewer: Any = None) -> dict[str, Any]:
    return game.view(played()[label], viewer)


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


# --------------------------------------------------------------------------- the battle


def test_the_battle_reaches_every_look_the_picture_has() -> None:
    """The stops hold what the picture must draw: both decks sealed, magic declared and not,
    destroyed and removed cards, a shield, a used ability, a total over 1,000, the end."""
    assert set(played()) == set(STOPS)
    assert played()["封印前"]["phase"] == "deck"
    assert played()["第1手番の攻撃待ち"]["phase"] == "attack"
    assert played()["第1手番の魔法受付"]["log"]
    cards = [
        card for label in STOPS for player in played()[label]["players"] for card in player["field"]
    ]
    states = {card["state"] for card in cards}
    assert states == {"active", "destroyed", "removed"}
    assert any(card["shield"] for card in cards)
    assert any(card["bonus"] for card in cards)
    assert any(card["ability_used"] for card in cards)
    end = played()["決着"]
    assert end["over"] and end["reason"]
    assert any(view("決着")["players"][seat]["total_cost"] > 1000 for seat in (0, 1))
    assert any(view(label)["players"][0]["magic_used"] for label in STOPS)
    assert any(view(label)["players"][1]["magic_left"] for label in STOPS[2:])


# --------------------------------------------------------------------------- every picture


def test_everything_stays_inside_the_picture() -> None:
    for label, picture in pictures():
        root = parse(picture)
        height = float(root.get("viewBox", "").split()[3])
        for node in root.iter():
            if local(node.tag) == "rect":
                assert number(node, "x") >= 0, label
                assert number(node, "x") + number(node, "width") <= 360.01, (label, node.attrib)
                assert number(node, "y") + number(node, "height") <= height + 0.01, label
            if local(node.tag) == "text":
                assert 0 <= number(node, "x") <= 360 and number(node, "y") <= height, label


def test_a_long_card_name_and_ability_still_give_a_valid_picture() -> None:
    changed = view("途中の魔法受付")
    changed["players"][1]["field"][0]["name"] = "とても長いカードの名前です十六文字"
    changed["players"][1]["field"][0]["ability"] = "手番開始時 全体ダメージ 999"
    changed["players"][1]["field"][0]["shield"] = 999
    shown = texts(board_svg(changed))
    assert "とても長いカードの名前です十六文字" in shown
    assert any("手番開始時 全体ダメージ 999" in line for line in shown)


# --------------------------------------------------------------------------- what it shows


def test_every_field_card_appears_with_its_number_cost_attack_and_durability() -> None:
    for label in STOPS[2:]:
        shown_view = view(label)
        shown = texts(board_svg(shown_view))
        for player in shown_view["players"]:
            assert len(player["field"]) == 3
            for card in player["field"]:
                assert card["name"] in shown, (label, card["name"])
                assert f"コスト {card['cost']}" in shown
                assert str(card["attack"]) in shown
                assert f"{card['durability']}/{card['max_durability']}" in shown
                if card["ability"]:
                    assert f"能力 {card['ability']}" in shown, (label, card)
                if card["shield"]:
                    assert f"防御 {card['shield']}" in shown
                if card["attack"] != card["base_attack"]:
                    assert f"(+{card['attack'] - card['base_attack']})" in shown


def test_destroyed_cards_are_crossed_and_removed_ones_dashed() -> None:
    for label in STOPS[2:]:
        shown_view = view(label)
        picture = board_svg(shown_view)
        root = parse(picture)
        states = [card["state"] for p in shown_view["players"] for card in p["field"]]
        shown = texts(picture)
        assert shown.count("破壊") - _destroyed_rows(shown_view) == states.count("destroyed")
        assert shown.count("除外") == states.count("removed"), label
        dashed = [node for node in root.iter(f"{NS}rect") if node.get("stroke-dasharray")]
        assert len(dashed) == states.count("removed"), label
        crosses = [node for node in root.iter(f"{NS}path") if node.get("stroke") == "#e57373"]
        assert len(crosses) == states.count("destroyed"), label


def _destroyed_rows(shown_view: dict[str, Any]) -> int:
    return sum(1 for row in shown_view["log"] if row["destroyed"])


def test_header_shows_turn_phase_whose_turn_and_the_dice() -> None:
    phases = {
        "deck": "デッキ封印待ち",
        "attack": "攻撃",
        "window": "魔法の宣言受付",
        "over": "決着",
    }
    for label in STOPS:
        shown_view = view(label)
        shown = texts(board_svg(shown_view))
        assert phases[shown_view["phase"]] in shown, label
        turn = shown_view["turn"]
        assert (f"第{turn}手番 / 20" if turn else "開始前(全20手番)") in shown
        names = [player["name"] for player in shown_view["players"]]
        dice = " ・ ".join(f"{n} {d}" for n, d in zip(names, shown_view["dice"], strict=True))
        assert f"先攻決めのダイス: {dice} → 先攻 {shown_view['first']}" in " ".join(shown)
        first = shown_view["first_seat"]
        assert shown.count("先攻") == 1 and shown.count("後攻") == 1, label
        assert shown.index(names[first]) < shown.index(names[1 - first]), label
    attack = view("第1手番の攻撃待ち")
    assert f"{attack['turn_player']}の攻撃(ATTACK 待ち)" in texts(board_svg(attack))
    one = view("片方がPASS")
    shown = texts(board_svg(one))
    passed = f"PASS済み: {one['passed'][0]} ・ 待ち: {one['waiting_for'][0]}"
    assert passed in " ".join(shown)
    assert "PASS済み" in shown
    deck = texts(board_svg(view("片方が封印")))
    assert "未封印: 花子" in deck and "封印済み" in deck and "未封印" in deck


def test_costs_against_1000_and_red_when_over() -> None:
    for label in STOPS[2:]:
        shown_view = view(label)
        picture = board_svg(shown_view)
        shown = texts(picture)
        for player in shown_view["players"]:
            total = player["total_cost"]
            assert f"{total} / 1000" in shown
            assert any(line.startswith(f"デッキコスト {player['deck_cost']}") for line in shown)
            fills = [
                node.get("fill")
                for node in parse(picture).iter(f"{NS}text")
                if node.text == f"{total} / 1000"
            ]
            assert fills[0] == ("#c62828" if total > 1000 else "#212121"), (label, total)


def test_declared_magic_by_name_and_undeclared_as_card_backs() -> None:
    for label in STOPS[2:]:
        shown_view = view(label)
        picture = board_svg(shown_view)
        shown = texts(picture)
        backs = [node for node in parse(picture).iter(f"{NS}rect") if node.get("fill") == "#3949ab"]
        assert len(backs) == sum(p["magic_left"] for p in shown_view["players"]), label
        for player in shown_view["players"]:
            for name in player["magic_used"]:
                assert f"{name} 宣言済み" in shown
            if player["magic_left"]:
                assert f"未宣言 {player['magic_left']}枚" in shown


def test_the_last_result_is_a_table() -> None:
    shown_view = view("第1手番の魔法受付")
    shown = texts(board_svg(shown_view))
    first = shown_view["players"][shown_view["first_seat"]]["name"]
    assert f"第1手番の結果({first}の攻撃)" in shown
    for row in shown_view["log"]:
        assert f"{row['attacker_number']} {row['attacker']}" in shown
        assert f"→{row['target_number']} {row['target']}" in shown
    attack = view("第1手番の攻撃待ち")
    assert not attack["log"] and not any("の結果" in line for line in texts(board_svg(attack)))
    later = view("途中の魔法受付")
    assert any(line.startswith(f"第{later['turn']}手番の結果") for line in texts(board_svg(later)))


def test_the_winner_and_the_reason_once_over() -> None:
    end = view("決着")
    shown = texts(board_svg(end))
    assert (f"勝者: {end['winner']}" if end["winner"] else "引き分け") in shown
    assert end["reason"].startswith(shown[shown.index(f"勝者: {end['winner']}") + 1])
    for label in STOPS[:-1]:
        assert not any(line.startswith("勝者") for line in texts(board_svg(view(label))))


def test_a_battle_from_the_starter_pool_is_drawn_at_every_step() -> None:
    """The shipped cards (app/games/cardbattle/content/cards.toml), played by the bot's own
    defaults from the first suggested decks to the end."""
    try:
        pool = {card.name: card for card in content.starter_pool()}
    except ContentError:
        pytest.skip("the starter pool's data file is not there yet")
    state = game.setup(NAMES, {"pool": pool}, Rng("starter", 0))
    seq = 1
    for _step in range(200):
        public = game.view(state, None)
        for seat in (0, 1):
            picture = board_svg(public, game.view(state, seat))
            assert parse(picture).tag == f"{NS}svg"
        shown = texts(board_svg(public))
        for player in public["players"]:
            assert player["name"] in shown
            for card in player["field"]:
                assert card["name"] in shown
        if state["over"]:
            assert f"勝者: {public['winner']}" in shown or "引き分け" in shown
            return
        seat = game.waiting_for(state)[0]
        line = game.default_commands(state, seat)[0]
        state, _events = game.apply(
            state, seat, game.parse(line), Rng("starter", seq), sealed=line.startswith("DECK")
        )
        seq += 1
    raise AssertionError("the battle did not end")


# --------------------------------------------------------------------------- secrets


def test_the_public_picture_never_shows_undeclared_magic_or_a_sealed_deck() -> None:
    """Not even when the view passed as the public one is a seat's or the GM's."""
    for label in STOPS:
        public = board_svg(view(label))
        shown = texts(public)
        assert OWN_MAGIC_LABEL not in shown and SEALED_LABEL not in shown, label
        for viewer in (0, 1, "gm"):
            assert board_svg(view(label, viewer)) == public, (label, viewer)
        state = played()[label]
        for player in state["players"]:
            for name in player["magic"]:
                assert not any(name in line for line in shown), (label, name)
    # Before the reveal no card name at all: the sealed decks stay sealed.
    for label in ("封印前", "片方が封印"):
        joined = " ".join(texts(board_svg(view(label))))
        assert not any(name in joined for name in POOL), label


def test_the_own_picture_adds_the_viewer_s_magic_and_sealed_deck_only() -> None:
    seen_magic = seen_deck = 0
    for label in STOPS:
        public = view(label)
        plain = Counter(texts(board_svg(public)))
        for seat in (0, 1):
            own = view(label, seat)
            picture = board_svg(public, own)
            shown = texts(picture)
            entry = own["players"][seat]
            other = played()[label]["players"][1 - seat]
            for name in other["magic"]:
                assert not any(name in line for line in shown), (label, seat, name)
            added = Counter(shown) - plain
            if public["phase"] == "deck":
                if "sealed_deck" in entry:
                    seen_deck += 1
                    assert SEALED_LABEL in added
                    for name in entry["sealed_deck"]["cards"]:
                        assert any(name in line for line in added), (label, name)
                    other_deck = played()[label]["step"]["sealed"].get(str(1 - seat))
                    for name in (other_deck or {}).get("cards", []):
                        assert not any(name in line for line in shown)
                else:
                    assert SEALED_LABEL not in added
            else:
                assert OWN_MAGIC_LABEL in added, (label, seat)
                for name in entry["magic"]:
                    seen_magic += 1
                    assert added[name] == 1, (label, seat, name)
            assert "あなた" in added
            # The viewer sits at the bottom: the opponent's name comes first.
            names = [p["name"] for p in public["players"]]
            assert shown.index(names[1 - seat]) < shown.index(names[seat]), label
    assert seen_magic and seen_deck


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


def summary(label: str, viewer: Any = None) -> str:
    plain = jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_dir("templates")),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
    )
    template = plain.get_template("games/cardbattle/summary.txt.j2")
    return template.render(view=view(label, viewer)).strip()


def test_summary_text_at_every_stop() -> None:
    for label in STOPS:
        shown_view = view(label)
        text = summary(label)
        assert not re.search(r"  ", text) and "\n\n" not in text, label
        assert text.startswith("【掲示板進行カードゲーム】"), label
        for player in shown_view["players"]:
            assert f"■{player['name']}" in text
            if shown_view["phase"] == "deck":
                continue
            assert f"総コスト {player['total_cost']} / 1000" in text
            for number, card in enumerate(player["field"], start=1):
                assert f"{number}.{card['name']} 攻撃{card['attack']} " in text, (label, card)
                assert f"耐久{card['durability']}/{card['max_durability']}" in text
            for name in player["magic_used"]:
                assert name in text
        for name in shown_view["waiting_for"]:
            assert name in text.splitlines()[-1], label
        # The result table is the reply's events: never repeated here.
        for row in shown_view["log"]:
            assert f"→ 相手{row['target_number']}番" not in text
    assert "封印待ち: 花子" in summary("片方が封印")
    assert "第1手番 / 20(攻撃)" in summary("第1手番の攻撃待ち")
    # The end is said once: 【決着】 by the move's event, the ranking by the closing post.
    assert "【決着】" not in summary("決着") and "勝者" not in summary("決着")


def test_summary_never_tells_a_secret_even_from_a_private_view() -> None:
    for label in STOPS:
        for viewer in (0, 1, "gm"):
            text = summary(label, viewer)
            assert text == summary(label), (label, viewer)
            for player in played()[label]["players"]:
                for name in player["magic"]:
                    assert name not in text


def board(env: jinja2.Environment, label: str, viewer: Any = None) -> str:
    template = env.get_template("games/cardbattle/board.html.j2")
    return template.render(view=view(label, viewer))


def test_board_html_is_an_escaped_fragment_without_scripts_or_styles(
    env: jinja2.Environment,
) -> None:
    for label in STOPS:
        for viewer in (None, 0, "gm"):
            html = board(env, label, viewer)
            assert html.startswith('<section class="cardbattle-board"'), label
            assert "<script>x" not in html and "&lt;script&gt;x&lt;/script&gt;&amp;" in html
            for forbidden in ("<html", "<head>", "<body", "<script", "style=", "<style"):
                assert forbidden not in html
            classes = {c for attr in re.findall(r'class="([^"]*)"', html) for c in attr.split()}
            assert classes and all(c.startswith("cardbattle-") for c in classes)


def test_board_html_shows_the_field_and_own_magic_only_when_the_view_has_it(
    env: jinja2.Environment,
) -> None:
    for label in STOPS[2:]:
        public = view(label)
        html = board(env, label)
        for player in public["players"]:
            assert f'id="cardbattle-seat-{player["seat"]}"' in html
            for card in player["field"]:
                assert card["name"] in html
                assert f"cardbattle-card-{card['state']}" in html
            for name in player["magic_used"]:
                assert name in html
        assert 'class="cardbattle-own-magic"' not in html
        for player in played()[label]["players"]:
            for name in player["magic"]:
                assert name not in html
        assert board(env, label, 1).count('class="cardbattle-own-magic"') == 1
        assert board(env, label, "gm").count('class="cardbattle-own-magic"') == 2
    assert 'class="cardbattle-log"' in board(env, "第1手番の魔法受付")
    assert 'class="cardbattle-result"' in board(env, "決着")
    sealed = board(env, "片方が封印", 0)
    assert 'class="cardbattle-sealed-deck"' in sealed
    assert 'class="cardbattle-sealed-deck"' not in board(env, "片方が封印")
    assert 'class="cardbattle-sealed-deck"' not in board(env, "片方が封印", 1)


def test_board_html_in_english_leaves_only_game_data_japanese() -> None:
    """As the app renders it (trimmed i18n, gettext in the reader's language): every fixed
    label has its English; card names, ability texts and the reason stay as written."""
    i18n.load_catalogs()
    english = jinja2.Environment(
        loader=jinja2.FileSystemLoader(resource_dir("templates")),
        autoescape=jinja2.select_autoescape(["html", "html.j2"]),
        undefined=jinja2.StrictUndefined,
        extensions=["jinja2.ext.i18n"],
        trim_blocks=True,
        lstrip_blocks=True,
    )
    english.policies["ext.i18n.trimmed"] = True
    english.install_gettext_callables(  # type: ignore[attr-defined]
        i18n.gettext, i18n.ngettext, newstyle=True, pgettext=i18n.pgettext
    )
    template = english.get_template("games/cardbattle/board.html.j2")
    with i18n.use_language("en"):
        for label in STOPS:
            for viewer in (None, 0, "gm"):
                shown_view = view(label, viewer)
                html = template.render(view=shown_view)
                data = [*_strings(shown_view), *POOL]
                left = japanese_outside(html, data)
                assert not left, (label, viewer, left)
        assert "Turn 1 of 20" in template.render(view=view("第1手番の攻撃待ち"))
