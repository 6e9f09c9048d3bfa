"""ポピュラス 草案21's board picture (app/games/populous/svg.py), drawn from the views of real
games.

Seeded games are played with random legal lines (sealed ones through the sealed path) from the
race choice to the end, and stopped at the points worth drawing: the race choice, the draft,
the cubes, the first genesis choice (both markers on フリー), a worker placement, the first war,
the first ring, the first destroyed town and the end. One player's name is markup. Every picture
must draw every square as a rhombus of its terrain placed by the hex geometry, and show a hand,
a face-down skill or the kind under a face-down card only from the viewer's own view; what
every kind's picture must be (safe, escaped, deterministic) is the contract's
(tests/games/test_game_contract.py).
"""

from __future__ import annotations

import copy
import math
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from itertools import pairwise
from random import Random
from typing import Any

from app.games.base import Rng, State
from app.games.populous import board, game
from app.games.populous.svg import (
    CARD_BACK,
    CARD_STRIP,
    CONTESTED_EDGE,
    GENESIS_EDGE,
    GENESIS_FILL,
    GM_HAND_LABEL,
    GM_SKILLS_LABEL,
    KIND_COLOURS,
    MARKER,
    PACK_LABEL,
    PIECE,
    RING_COLOURS,
    SEALED_LABEL,
    SKILLS_LABEL,
    TERRAIN_FILLS,
    TILE_EDGE,
    board_svg,
    dice_label,
    piece_layout,
    sealed_text,
    war_text,
)
from app.games.svg import HAND_LABEL

NS = "{http://www.w3.org/2000/svg}"
MARKUP = "<script>alert(1)</script>"
NAMES = ("太郎", MARKUP, "花子", "次郎", "三郎")
FILL_TERRAIN = {fill: terrain for terrain, fill in TERRAIN_FILLS.items()}
KIND_FILLS = {fill for fill, _ink in KIND_COLOURS.values()}


def _ruins(state: State) -> bool:
    return any(kind == "x" for pieces in state["pieces"].values() for _seat, kind in pieces)


# What a stop is, by the state it stops at (the first state of the game that matches).
STOPS: dict[str, Callable[[State], bool]] = {
    "種族選択": lambda s: s["phase"] == "race" and any(p["race"] for p in s["players"]),
    "ドラフト": lambda s: s["phase"] == "draft" and s["draft"]["pick"] == 2,
    "リソース配分": lambda s: s["phase"] == "cubes",
    "配分の封印": lambda s: s["phase"] == "cubes" and bool(s["secret"]["sealed"]),
    "最初のエリア選択": lambda s: s["phase"] == "play" and s["step"] == "area",
    "ワーカー配置": lambda s: s["phase"] == "play" and s["round"] >= 2 and s["step"] == "place",
    "戦争の選択": lambda s: s["step"] == "war",
    "戦争のあと": lambda s: s["phase"] == "play" and s["last_war"] is not None,
    "リングあり": lambda s: any(tile["ring"] for tile in s["map"]),
    "破壊されたタウン": _ruins,
    "終了": lambda s: bool(s["over"]),
}


@cache
def played(players: int = 3, seed: str = "svg-3") -> dict[str, State]:
    """A whole game played with random legal lines; the states at the stops."""
    choices = Random(seed)
    state = game.setup(list(NAMES[:players]), {}, Rng(seed, 0))
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
        lines = [(line, False) for line in game.legal(state, seat)]
        lines += [(line, True) for line in game.sealed_legal(state, seat)]
        line, sealed = choices.choice(lines)
        state, _events = game.apply(state, seat, game.parse(line), Rng(seed, seq), sealed=sealed)
    return stops


def view(label: str, viewer: Any = None, players: int = 3) -> dict[str, Any]:
    return game.view(played(players)[label], viewer)


def pictures() -> Iterator[tuple[str, str]]:
    """(label, svg) for every stop: public, for each seat with its own view, and the GM's."""
    for label in STOPS:
        public = view(label)
        yield label, board_svg(public)
        for viewer in (0, 1, 2, "gm"):
            yield f"{label} {viewer}", board_svg(public, view(label, viewer))


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


def flat(picture: str) -> str:
    """Every text run one after the other (wrapped lines join up again)."""
    return "".join(texts(picture))


def group_texts(picture: str) -> list[list[str]]:
    """For every <g>, the texts of its own <text> children."""
    return [
        ["".join(child.itertext()) for child in node if local(child.tag) == "text"]
        for node in parse(picture).iter(f"{NS}g")
    ]


def points(node: ET.Element) -> list[tuple[float, float]]:
    pairs = node.get("points", "").split()
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in pairs)]


def number(node: ET.Element, name: str) -> float:
    return float(node.get(name, "0"))


def squares(picture: str) -> dict[str, ET.Element]:
    """Square id -> its group (a <title> naming the square, then its rhombus)."""
    found = {}
    for node in parse(picture).iter(f"{NS}g"):
        children = list(node)
        if (
            len(children) >= 2
            and local(children[0].tag) == "title"
            and local(children[1].tag) == "polygon"
            and children[1].get("fill") in FILL_TERRAIN
        ):
            found[(children[0].text or "").split(" ", 1)[0]] = node
    return found


def rhombus(square: ET.Element) -> list[tuple[float, float]]:
    return points(list(square)[1])


def shared_corners(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> int:
    return sum(1 for p in a if any(math.dist(p, q) < 0.3 for q in b))


def inside(point: tuple[float, float], polygon: list[tuple[float, float]]) -> bool:
    """Inside the convex polygon (or on its edge)."""
    signs = set()
    for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1], strict=True):
        cross = (x2 - x1) * (point[1] - y1) - (y2 - y1) * (point[0] - x1)
        if abs(cross) > 1e-6:
            signs.add(cross > 0)
    return len(signs) <= 1


def pieces_in(square: ET.Element) -> list[tuple[str, str, float, float, float]]:
    """The pieces drawn on a square: (type, colour, x, y, size)."""
    found = []
    for child in list(square)[2:]:
        tag = local(child.tag)
        if tag == "circle":
            r = number(child, "r")
            found.append(
                ("worker", child.get("fill", ""), number(child, "cx"), number(child, "cy"), 2 * r)
            )
        elif tag == "polygon":
            found.append(("town", child.get("fill", ""), *_house(points(child))))
        elif tag == "g" and [local(c.tag) for c in child] == ["polygon", "path"]:
            house = next(iter(child))
            found.append(("ruin", house.get("stroke", ""), *_house(points(house))))
    return found


def _house(corners: list[tuple[float, float]]) -> tuple[float, float, float]:
    xs = [x for x, _y in corners]
    ys = [y for _x, y in corners]
    return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2, max(xs) - min(xs)


# --------------------------------------------------------------------------- every picture


def test_the_seeded_games_reach_every_stop() -> None:
    assert set(played()) == set(STOPS)
    for players in (4, 5):
        assert {"最初のエリア選択", "終了"} <= set(played(players))


def test_the_map_makes_the_picture_tall_and_shapes_stay_inside_the_width() -> None:
    for label, picture in pictures():
        root = parse(picture)
        assert float(root.get("viewBox", "").split()[3]) > 300, label
        for node in root.iter():
            if local(node.tag) == "rect":
                assert number(node, "x") >= 0, label
                assert number(node, "x") + number(node, "width") <= 360.01, (label, node.attrib)
            if local(node.tag) == "polygon":
                assert all(0 <= x <= 360 for x, _y in points(node)), (label, node.attrib)


# --------------------------------------------------------------------------- the map


def test_every_tile_is_three_rhombi_30_36_42_squares_for_3_4_5_players() -> None:
    for players, tiles in ((3, 10), (4, 12), (5, 14)):
        for label in ("最初のエリア選択", "終了"):
            shown = view(label, players=players)
            assert len(shown["map"]) == tiles
            root = parse(board_svg(shown))
            rhombi = [
                node for node in root.iter(f"{NS}polygon") if node.get("fill") in FILL_TERRAIN
            ]
            assert len(rhombi) == 3 * tiles, (players, label)
            assert all(len(points(node)) == 4 for node in rhombi)
            assert len(squares(board_svg(shown))) == 3 * tiles


def test_every_square_shows_its_id_its_die_faces_and_its_terrain_colour() -> None:
    for label in STOPS:
        shown = view(label)
        drawn = squares(board_svg(shown))
        for tile in shown["map"]:
            for square in tile["squares"]:
                group_node = drawn[square["id"]]
                own_texts = ["".join(c.itertext()) for c in group_node if local(c.tag) == "text"]
                assert own_texts == [square["id"], dice_label(square["dice"])], label
                assert list(group_node)[1].get("fill") == TERRAIN_FILLS[square["terrain"]]
    assert dice_label([1, 2]) == "1-2" and dice_label([5, 6]) == "5-6"
    assert dice_label([1, 4]) == "1・4" and dice_label([3]) == "3"


def test_every_tile_id_is_written_at_its_centre() -> None:
    shown = view("終了")
    picture = board_svg(shown)
    drawn = squares(picture)
    # A tile's id (``1-2``) may read like a square's die faces: it is the text with a halo.
    labels = {
        "".join(node.itertext()): (number(node, "x"), number(node, "y"))
        for node in parse(picture).iter(f"{NS}text")
        if node.get("stroke") == "#ffffff"
    }
    assert len(labels) == len(shown["map"])
    for tile in shown["map"]:
        centre = rhombus(drawn[tile["squares"][0]["id"]])[0]
        x, y = labels[tile["id"]]
        assert abs(x - centre[0]) < 0.2 and abs(y - 4 - centre[1]) < 0.2, tile["id"]


def test_rhombi_share_an_edge_exactly_when_board_py_makes_their_squares_adjacent() -> None:
    for players in (3, 4, 5):
        shown = view("終了", players=players)
        drawn = {square: rhombus(node) for square, node in squares(board_svg(shown)).items()}
        near = board.adjacency(board.map_key(shown["map"]))
        ids = sorted(drawn)
        for index, first in enumerate(ids):
            for second in ids[index + 1 :]:
                adjacent = second in near[first]
                assert (shared_corners(drawn[first], drawn[second]) >= 2) == adjacent, (
                    players,
                    first,
                    second,
                )


def test_a_tile_s_rhombi_meet_at_its_centre_and_fill_a_hexagon() -> None:
    shown = view("終了", players=5)
    drawn = squares(board_svg(shown))
    for tile in shown["map"]:
        corners = [rhombus(drawn[square["id"]]) for square in tile["squares"]]
        centres = {(round(c[0][0], 1), round(c[0][1], 1)) for c in corners}
        assert len(centres) == 1
        outer = [p for c in corners for p in c[1:]]
        distinct = [p for i, p in enumerate(outer) if all(math.dist(p, q) > 0.3 for q in outer[:i])]
        assert len(distinct) == 6, tile["id"]  # three rhombi, six hexagon corners


def test_the_genesis_area_has_a_thick_outline_round_its_hexagon() -> None:
    for label in STOPS:
        shown = view(label)
        picture = board_svg(shown)
        root = parse(picture)
        outlines = [
            node for node in root.iter(f"{NS}polygon") if node.get("stroke") == GENESIS_EDGE
        ]
        area = shown["area"]
        genesis = [tile for tile in shown["map"] if tile["genesis"]]
        if area is None:
            assert not outlines and not genesis, label
            continue
        assert [tile["id"] for tile in genesis] == [area]
        assert len(outlines) == 1 and float(outlines[0].get("stroke-width", "0")) >= 3
        assert f"創世エリア {area}" in texts(picture)
        drawn = squares(picture)
        corners = [p for square in genesis[0]["squares"] for p in rhombus(drawn[square["id"]])]
        assert shared_corners(points(outlines[0]), corners) == 6, label
    assert view("ワーカー配置")["area"] is not None


def test_contested_squares_have_a_dashed_red_outline_while_war_is_to_be_chosen() -> None:
    for label in STOPS:
        shown = view(label)
        picture = board_svg(shown)
        outlines = {
            node.findtext(f"{NS}title", ""): node
            for node in parse(picture).iter(f"{NS}polygon")
            if node.get("stroke") == CONTESTED_EDGE
        }
        contested = [
            square["id"]
            for tile in shown["map"]
            for square in tile["squares"]
            if square.get("contested")
        ]
        assert sorted(outlines) == sorted(f"係争マス {square}" for square in contested), label
        drawn = squares(picture)
        for square in contested:
            outline = outlines[f"係争マス {square}"]
            assert points(outline) == rhombus(drawn[square])
            assert outline.get("stroke-dasharray")
        if contested:
            assert f"赤の破線は係争マス: {'・'.join(contested)}" in texts(picture)
    assert any(
        square.get("contested") for tile in view("戦争の選択")["map"] for square in tile["squares"]
    )


def test_sealed_choices_read_plainly() -> None:
    assert sealed_text({"情熱": 2, "食料": 3, "信仰": 2}) == "情熱2・食料3・信仰2"
    assert sealed_text("軍神") == "軍神"


def test_a_ringed_tile_shows_a_disc_of_the_ring_s_colour_at_its_centre() -> None:
    shown = view("リングあり")
    picture = board_svg(shown)
    drawn = squares(picture)
    discs = {
        (number(node, "cx"), number(node, "cy")): node
        for node in parse(picture).iter(f"{NS}circle")
        if (node.findtext(f"{NS}title") or "").startswith("地形リング")
    }
    ringed = [tile for tile in shown["map"] if tile["ring"]]
    assert ringed and len(discs) == len(ringed)
    for tile in ringed:
        centre = rhombus(drawn[tile["squares"][0]["id"]])[0]
        disc = next(node for (x, y), node in discs.items() if math.dist((x, y), centre) < 0.2)
        assert disc.get("fill") == RING_COLOURS[tile["ring"]]
        assert disc.findtext(f"{NS}title") == f"地形リング: {tile['ring']}"
        for square in tile["squares"]:
            assert list(drawn[square["id"]])[1].get("fill") == TERRAIN_FILLS[tile["ring"]]


def test_pieces_stand_on_their_square_in_their_race_colour() -> None:
    seen: Counter[str] = Counter()
    for label in ("戦争のあと", "リングあり", "破壊されたタウン", "終了"):
        shown = view(label)
        colours = {player["seat"]: player["colour"] for player in shown["players"]}
        drawn = squares(board_svg(shown))
        for tile in shown["map"]:
            for square in tile["squares"]:
                expected = Counter(
                    (piece["type"], colours[piece["seat"]]) for piece in square["pieces"]
                )
                found = pieces_in(drawn[square["id"]])
                assert Counter((kind, colour) for kind, colour, *_ in found) == expected, (
                    label,
                    square["id"],
                )
                seen.update(kind for kind, *_ in found)
    assert seen["worker"] and seen["town"] and seen["ruin"]


def test_pieces_on_one_square_stand_side_by_side_inside_its_rhombus() -> None:
    shown = view("終了")
    for tile in shown["map"]:
        for count, square in zip((3, 5, 9), tile["squares"], strict=True):
            square["pieces"] = [
                {"seat": n % 3, "player": NAMES[n % 3], "type": ("worker", "town", "ruin")[n % 3]}
                for n in range(count)
            ]
    drawn = squares(board_svg(shown))
    for tile in shown["map"]:
        for square in tile["squares"]:
            found = pieces_in(drawn[square["id"]])
            assert len(found) == len(square["pieces"])
            rows: dict[float, list[tuple[float, float]]] = {}
            for _kind, _colour, x, y, size in found:
                rows.setdefault(round(y), []).append((x, size))
            assert len(rows) == (1 if len(found) <= 5 else 2)
            for row in rows.values():
                for (x, size), (after, _size) in pairwise(row):
                    assert after - x >= size - 0.1  # side by side, apart
            if len(rows) == 2:
                top, bottom = sorted(rows)
                assert bottom - top >= max(size for _x, size in rows[top]) - 0.1
            shape = rhombus(drawn[square["id"]])
            for _kind, _colour, x, y, size in found:
                assert size >= (3.5 if len(found) <= 5 else 3)
                for dx in (-size / 2, size / 2):
                    for dy in (-size / 2, size / 2):
                        assert inside((x + dx, y + dy), shape), square["id"]
    # One or two pieces keep the full size.
    assert piece_layout(1, 25) == (1, PIECE) and piece_layout(2, 25) == (2, PIECE)


# --------------------------------------------------------------------------- below the map


def test_markers_lie_on_the_genesis_cards_they_name_both_on_free_at_first() -> None:
    assert view("最初のエリア選択")["markers"] == ["F", "F"]
    checked = set()
    for label in STOPS:
        shown = view(label)
        cards = {}
        for node in parse(board_svg(shown)).iter(f"{NS}g"):
            children = list(node)
            if children and children[0].get("fill") == GENESIS_FILL:
                name = "".join(next(node.iter(f"{NS}text")).itertext())
                cards[name] = sum(1 for c in children if c.get("fill") == MARKER)
        assert list(cards) == ["1", "2", "3", "4", "5", "F"], label
        assert cards == {card: shown["markers"].count(card) for card in cards}, label
        checked.add(tuple(shown["markers"]))
    assert len(checked) > 1  # numbered markers too


def test_rings_left_deck_and_discard_are_shown() -> None:
    for label in ("最初のエリア選択", "リングあり", "終了"):
        shown = view(label)
        shown_texts = texts(board_svg(shown))
        for terrain, count in shown["rings"].items():
            assert f"{terrain}{count}" in shown_texts, label
        assert f"山札 {shown['deck']}枚 ・ 捨て札 {shown['discard']}枚" in shown_texts
    assert any(count < 8 for count in view("リングあり")["rings"].values())


def test_header_shows_round_step_whose_turn_and_the_prompt() -> None:
    for label in ("最初のエリア選択", "ワーカー配置", "戦争のあと"):
        shown = view(label)
        picture = board_svg(shown)
        shown_texts = texts(picture)
        assert f"第{shown['round']}ラウンド / 12" in shown_texts
        assert shown["step_ja"] in shown_texts, label
        assert f"手番: {'、'.join(shown['waiting_for'])}" in shown_texts, label
        assert shown["prompt"] and shown["prompt"] in flat(picture), label
        start = shown["players"][shown["start"]]["name"]
        assert f"スタートプレイヤー: {start}" in shown_texts


def test_race_draft_and_cubes_phases_draw_with_their_phase() -> None:
    race = view("種族選択")
    shown = texts(board_svg(race))
    assert "種族選択" in shown and "全12ラウンド" in shown
    assert "種族未選択" in shown  # the players still to choose
    for player in race["players"]:
        if player["race"]:
            assert f"{player['race']} → {player['name']}" in shown
    chosen = {player["race"] for player in race["players"]}
    for entry in race["races"]:
        if entry["name"] not in chosen:
            assert f"{entry['name']}(適性 {entry['aptitude']})" in shown
    draft = view("ドラフト")
    shown = texts(board_svg(draft))
    assert "スキルのドラフト 2/5巡目" in shown
    assert any(line.startswith("待ち: ") for line in shown)
    assert "リソースの配分" in texts(board_svg(view("リソース配分")))
    for label in ("種族選択", "ドラフト", "リソース配分"):
        assert len(squares(board_svg(view(label)))) == 30, label


def test_the_last_war_is_summarised() -> None:
    shown = view("戦争のあと")
    said = war_text(shown)
    war = shown["last_war"]
    assert said.startswith(f"直前の戦争(第{war['round']}ラウンド、{war['area']} の ")
    for fighter in war["fighters"]:
        assert shown["players"][fighter["seat"]]["name"] in said
        assert f"戦力{fighter['strength']}" in said
    assert said in flat(board_svg(shown))
    assert war_text(view("最初のエリア選択")) == ""


def test_the_finished_game_shows_the_ranking() -> None:
    for players in (3, 4, 5):
        shown = view("終了", players=players)
        shown_texts = texts(board_svg(shown))
        assert "最終結果" in shown_texts and "ゲーム終了" in shown_texts
        for entry in shown["result"]["ranking"]:
            assert f"{entry['rank']}位" in shown_texts
            assert entry["name"] in shown_texts
            assert f"{entry['score']}点" in shown_texts
    assert "最終結果" not in texts(board_svg(view("戦争のあと")))


def test_a_shared_score_shows_the_tie_break_under_it() -> None:
    """Rules: highest VP wins; tie → more towns left on the race board. Under each entry whose
    score another shares, the picture gives that count (the board's table has it as a column);
    under an unshared score, nothing."""
    shown = copy.deepcopy(view("終了", players=3))
    first, second, third = shown["result"]["ranking"]
    for entry, score, rank in ((first, 30, 1), (second, 30, 2), (third, 20, 3)):
        entry["score"], entry["rank"] = score, rank
    towns = {first["name"]: 4, second["name"]: 2, third["name"]: 5}
    for player in shown["players"]:
        player["towns_home"] = towns[player["name"]]
    shown_texts = texts(board_svg(shown))
    assert "同点: 種族ボードに残るタウン 4 (多いほうが上位)" in shown_texts
    assert "同点: 種族ボードに残るタウン 2 (多いほうが上位)" in shown_texts
    assert sum(line.startswith("同点:") for line in shown_texts) == 2
    third["score"] = second["score"] = 25
    apart = texts(board_svg(shown))
    assert "同点: 種族ボードに残るタウン 4 (多いほうが上位)" not in apart
    assert "同点: 種族ボードに残るタウン 2 (多いほうが上位)" in apart
    assert "同点: 種族ボードに残るタウン 5 (多いほうが上位)" in apart
    assert sum(line.startswith("同点:") for line in apart) == 2


# --------------------------------------------------------------------------- players


def test_player_panels_show_race_vp_resources_hand_pieces_and_skills() -> None:
    for label in ("ワーカー配置", "終了"):
        shown = view(label)
        picture = board_svg(shown)
        shown_texts = texts(picture)
        groups = group_texts(picture)
        for player in shown["players"]:
            assert player["name"] in shown_texts
            assert f"{player['race']}(適性 {'・'.join(player['aptitudes'])})" in shown_texts
            assert f"{player['vp']}VP" in shown_texts
            for resource, value in player["resources"].items():
                assert [resource, str(value)] in groups, (label, resource)
            assert (
                f"手札 {player['hand_size']}/{player['max_hand']}枚 ・ 手元 ワーカー"
                f" {player['workers_home']} ・ タウン {player['towns_home']}"
            ) in shown_texts
            for skill in player["skills_revealed"]:
                assert skill["name"] in shown_texts
            if player["skills_face_down"]:
                assert f"伏せスキル {player['skills_face_down']}枚" in shown_texts
        swatches = {node.get("fill") for node in parse(picture).iter(f"{NS}rect")}
        assert {player["colour"] for player in shown["players"]} <= swatches


def test_generations_are_columns_of_cards_face_down_ones_as_backs_with_their_action() -> None:
    shown = view("終了")
    root = parse(board_svg(shown))
    cards = []
    for node in root.iter(f"{NS}g"):
        children = list(node)
        if (
            len(children) >= 2
            and local(children[0].tag) == "rect"
            and (
                children[0].get("fill") == CARD_BACK
                or (
                    children[0].get("fill") in KIND_FILLS
                    and number(children[0], "height") == CARD_STRIP
                )
            )
        ):
            cards.append((children[0], "".join(children[1].itertext())))
    expected = [
        card for player in shown["players"] for gen in player["generations"] for card in gen
    ]
    assert len(cards) == len(expected) > 0
    drawn = iter(cards)
    for player in shown["players"]:
        lefts = []
        for gen in player["generations"]:
            column = [next(drawn) for _card in gen]
            assert len({number(node, "x") for node, _text in column}) == 1  # one column
            tops = [number(node, "y") for node, _text in column]
            assert tops == sorted(tops)  # stacked downwards
            for (node, label), card in zip(column, gen, strict=True):
                if card["down"]:
                    assert node.get("fill") == CARD_BACK and label == card["action"]
                else:
                    assert node.get("fill") == KIND_COLOURS[card["kind"]][0]
                    assert label == card["kind"]
            if column:
                lefts.append(number(column[0][0], "x"))
        assert lefts == sorted(lefts)  # the first generation on the left
    assert any(card["down"] for card in expected) and any(not card["down"] for card in expected)


# --------------------------------------------------------------------------- hidden things


def test_the_public_picture_never_shows_a_hand_a_face_down_skill_or_a_face_down_kind() -> None:
    """Not even when the view passed as the public one is a seat's or the GM's."""
    for label in STOPS:
        public = board_svg(view(label))
        shown = texts(public)
        assert not any(
            line.startswith((HAND_LABEL, GM_HAND_LABEL, SKILLS_LABEL, GM_SKILLS_LABEL))
            for line in shown
        )
        assert not any(line.startswith("伏 ") for line in shown), label
        for viewer in (0, 1, 2, "gm"):
            assert board_svg(view(label, viewer)) == public, (label, viewer)


def test_the_own_picture_adds_exactly_what_the_viewer_s_own_view_holds() -> None:
    held = known = packs = sealed = 0
    for label in STOPS:
        public = view(label)
        plain = Counter(texts(board_svg(public)))
        for seat in range(3):
            own = view(label, seat)
            mine = own["players"][seat]
            drawn = Counter(texts(board_svg(public, own)))
            assert not plain - drawn, (label, seat)  # nothing public is lost
            hand = mine["hand"]
            skills = [
                skill["name"] if skill["revealed"] else f"伏 {skill['name']}"
                for skill in mine["skills"]
            ]
            kinds = [card["kind"] for gen in mine["generations"] for card in gen if card["down"]]
            expected = Counter(
                [*hand, f"{HAND_LABEL}({len(hand)}枚)", "あなた", SKILLS_LABEL, *skills, *kinds]
            )
            expected["なし"] += (not hand) + (not skills)
            if public["phase"] == "draft":
                pack = [skill["name"] for skill in own["draft"]["pack"]]
                expected.update([PACK_LABEL, *pack])
                packs += len(pack)
            mine_sealed = (own["sealed"] or {}).get("mine")
            if mine_sealed is not None:
                expected[f"{SEALED_LABEL}: {sealed_text(mine_sealed)}"] += 1
                sealed += 1
            assert drawn - plain == expected, (label, seat)
            held += len(hand)
            known += len(kinds)
    assert held and known and packs and sealed


def test_the_own_picture_never_shows_another_seat_s_hand() -> None:
    for label in ("ワーカー配置", "終了"):
        public = view(label)
        own = view(label, 0)
        drawn = texts(board_svg(public, own))
        assert drawn.count(f"{HAND_LABEL}({len(own['players'][0]['hand'])}枚)") == 1
        assert sum(1 for line in drawn if line.startswith(HAND_LABEL)) == 1
        assert sum(1 for line in drawn if line == SKILLS_LABEL) == 1


def test_the_gm_s_own_picture_lists_every_hand() -> None:
    public = view("ワーカー配置")
    gm = view("ワーカー配置", "gm")
    drawn = texts(board_svg(public, gm))
    for player in gm["players"]:
        assert f"{GM_HAND_LABEL}({len(player['hand'])}枚)" in drawn
    assert "あなた" not in drawn


def test_tile_outlines_are_drawn_once_per_tile() -> None:
    for players, tiles in ((3, 10), (5, 14)):
        root = parse(board_svg(view("終了", players=players)))
        outlines = [node for node in root.iter(f"{NS}polygon") if node.get("stroke") == TILE_EDGE]
        assert len(outlines) == tiles
        assert all(len(points(node)) == 6 for node in outlines)
