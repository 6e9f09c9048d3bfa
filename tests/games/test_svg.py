"""Board pictures (app/games/svg.py, app/games/<kind>/svg.py): pure functions view -> SVG.

The states are the scripted games of tests/support/fuzz_states.py, played to each stop with
player names that are markup. What every kind's picture must be (it parses, carries nothing
that runs or loads, escapes user text, is the same bytes for the same view) is the contract's
(tests/games/test_game_contract.py); here: the builder, and what えいつく's and 新新エリューシス's
pictures show — only what the views passed in hold: the public 新新エリューシス picture never a
hand, the viewer's picture their own hand.
"""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from collections import Counter
from functools import cache
from typing import Any

import pytest

from app.games import svg
from app.games.eitsuku.svg import board_svg as eitsuku_svg
from app.games.eleusis.svg import board_svg as eleusis_svg
from app.games.svg import HAND_LABEL
from tests.support.fuzz_states import RECRUITING, Script, Stop, script

NS = "{http://www.w3.org/2000/svg}"
MARKUP = "<script>alert(1)</script>"
QUOTES = "\"&'"
NAMES = {
    "eitsuku": [MARKUP, QUOTES, "花子"],
    "eleusis": [MARKUP, QUOTES, "花子", "太郎"],
}
DRAW = {"eitsuku": eitsuku_svg, "eleusis": eleusis_svg}
CARD = re.compile(r"^[♠♥♦♣](?:[2-9]|10|[AJQK])$")


@cache
def played(kind: str) -> Script:
    return script(kind, NAMES[kind])


def started_stops(kind: str) -> list[Stop]:
    return [stop for stop in played(kind).stops if stop.at != RECRUITING]


def view(kind: str, stop: Stop, viewer: Any = None) -> dict[str, Any]:
    return played(kind).impl.view(stop.state, viewer)


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


def card_groups(picture: str) -> list[tuple[str, float, float, str]]:
    """Every drawn playing card: (card, x, y, fill) in document order."""
    found = []
    for node in parse(picture).iter(f"{NS}g"):
        children = list(node)
        if (
            len(children) >= 2
            and local(children[0].tag) == "title"
            and CARD.match(children[0].text or "")
            and local(children[1].tag) == "rect"
        ):
            outline = children[1]
            found.append(
                (
                    children[0].text or "",
                    float(outline.get("x", "0")),
                    float(outline.get("y", "0")),
                    outline.get("fill", ""),
                )
            )
    return found


def group_texts(picture: str) -> list[list[str]]:
    """For every <g>, the texts of its own <text> children."""
    return [
        ["".join(child.itertext()) for child in node if local(child.tag) == "text"]
        for node in parse(picture).iter(f"{NS}g")
    ]


# --------------------------------------------------------------------------- every picture


# --------------------------------------------------------------------------- the builder


@pytest.mark.parametrize(
    ("tag", "attributes"),
    [
        ("script", {}),
        ("foreignObject", {}),
        ("image", {}),
        ("style", {}),
        ("a", {}),
        ("rect", {"onclick": "alert(1)"}),
        ("rect", {"onLoad": "alert(1)"}),
        ("rect", {"href": "https://example.com/"}),
        ("rect", {"style": "fill:red"}),
        ("rect", {"xlink:href": "#x"}),
    ],
)
def test_builder_refuses_what_could_run_or_load(tag: str, attributes: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        svg.Element(tag, tuple(attributes.items()))


def test_builder_escapes_text_and_attribute_values() -> None:
    hostile = "\"'<>&\n"
    picture = svg.document(
        360, 40, hostile, [svg.el("rect", fill=hostile), svg.text(0, 20, hostile)]
    )
    root = parse(picture)
    assert root[0].text == hostile
    assert root.find(f"{NS}rect[@fill]") is not None
    assert [node.get("fill") for node in root.iter(f"{NS}rect")][-1] == hostile
    assert "".join(root.find(f"{NS}text").itertext()) == hostile  # type: ignore[union-attr]


def test_builder_refuses_font_sizes_below_11() -> None:
    with pytest.raises(ValueError):
        svg.text(0, 0, "小さすぎる", size=10)


def test_playing_card_suits_red_and_black() -> None:
    def colours(card: str) -> set[str]:
        element = svg.playing_card(0, 0, card)
        return {
            node.get("fill", "")
            for node in parse(element.render()).iter()
            if local(node.tag) == "text"
        }

    assert colours("♥Q") == colours("♦10") == {svg.RED_SUIT}
    assert colours("♠A") == colours("♣7") == {svg.BLACK_SUIT}
    back = parse(svg.card_back(0, 0).render())
    assert not [node for node in back.iter() if local(node.tag) == "text"]


# --------------------------------------------------------------------------- えいつく


def test_eitsuku_slot_cards_appear_as_text() -> None:
    for stop in started_stops("eitsuku"):
        shown_view = view("eitsuku", stop)
        shown = texts(eitsuku_svg(shown_view))
        for player in shown_view["players"]:
            for slot, card in player["slots"].items():
                assert slot in shown
                if card is not None:
                    assert card in shown, (stop.label, card)
                    assert re.sub(r"\D", "", card) in shown


def test_eitsuku_pile_deck_and_discard_counts_appear_beside_their_labels() -> None:
    for stop in started_stops("eitsuku"):
        shown_view = view("eitsuku", stop)
        groups = group_texts(eitsuku_svg(shown_view))
        for pile, count in shown_view["piles"].items():
            assert [pile, str(count)] in groups, (stop.label, pile)
        for deck, count in shown_view["decks"].items():
            assert [f"山札 {deck}", str(count)] in groups, (stop.label, deck)
        discarded = sum(shown_view["discard"].values())
        assert ["捨て札", str(discarded)] in groups


def test_eitsuku_shows_the_week_whose_turn_and_each_status() -> None:
    script_ = played("eitsuku")
    middle = view("eitsuku", script_.stop("第12週"))
    shown = texts(eitsuku_svg(middle))
    assert any(line.startswith("第12週") for line in shown)
    assert "手番: " + "、".join(middle["waiting_for"]) in shown
    released = [p for p in middle["players"] if p["status"] == "released"]
    assert released and f"第{released[0]['released_week']}週に公開" in shown
    assert shown.count("手番待ち") == len(middle["waiting_for"])
    end = view("eitsuku", script_.stop("終了"))
    shown = texts(eitsuku_svg(end))
    assert "ゲーム終了" in shown and "結果" in shown
    for entry in end["result"]["ranking"]:
        assert entry["name"] in shown and f"{entry['rank']}位" in shown
        assert ("未完成" if entry["score"] is None else f"{entry['score']}点") in shown


def test_eitsuku_stock_and_events_appear_as_text() -> None:
    stop = played("eitsuku").stop("第7週")
    shown_view = view("eitsuku", stop)
    shown = texts(eitsuku_svg(shown_view))
    for player in shown_view["players"]:
        for card, count in player["stock"].items():
            assert (f"{card} ×{count}" if count > 1 else card) in shown
        for event in player["events"]:
            assert event in shown


def test_eitsuku_own_view_only_marks_the_viewers_seat() -> None:
    for stop in started_stops("eitsuku"):
        public = view("eitsuku", stop)
        plain = eitsuku_svg(public)
        # えいつく hides nothing: a seat's view adds nothing to the picture but the mark on
        # that seat (its view says whose it is) ...
        own = view("eitsuku", stop, 1)
        assert own["seat"] == 1
        assert eitsuku_svg(public, {k: v for k, v in own.items() if k != "seat"}) == plain
        marked = eitsuku_svg(public, own)
        added = Counter(texts(marked)) - Counter(texts(plain))
        assert added == Counter({"あなた": 1}) and not Counter(texts(plain)) - Counter(
            texts(marked)
        )


# --------------------------------------------------------------------------- 新新エリューシス


def table_cards(shown_view: dict[str, Any]) -> Counter[str]:
    """The cards face up on the table: the main line, its failed strings, the pending play."""
    cards: Counter[str] = Counter()
    for entry in shown_view["line"]:
        cards[entry["card"]] += 1
        for run in entry["failed"]:
            cards.update(run)
    if shown_view["pending"] is not None:
        cards.update(shown_view["pending"]["cards"])
    return cards


def test_eleusis_public_picture_draws_only_cards_on_the_table() -> None:
    for stop in started_stops("eleusis"):
        public = view("eleusis", stop)
        picture = eleusis_svg(public)
        drawn = Counter(card for card, *_rest in card_groups(picture))
        assert drawn == table_cards(public), stop.label
        assert not any(line.startswith(HAND_LABEL) for line in texts(picture))


def test_eleusis_public_picture_ignores_hands_in_the_view_it_is_given() -> None:
    """A seat's or the GM's view passed as the public one still draws no hand (nor rule)."""
    for stop in played("eleusis").stops:
        public = eleusis_svg(view("eleusis", stop))
        for viewer in (0, 1, 2, 3, "gm"):
            assert eleusis_svg(view("eleusis", stop, viewer)) == public, (stop.label, viewer)


def test_eleusis_own_picture_adds_exactly_the_viewers_hand() -> None:
    for stop in started_stops("eleusis"):
        public = view("eleusis", stop)
        plain = Counter(card for card, *_rest in card_groups(eleusis_svg(public)))
        for seat in range(len(NAMES["eleusis"])):
            own = view("eleusis", stop, seat)
            picture = eleusis_svg(public, own)
            drawn = Counter(card for card, *_rest in card_groups(picture))
            assert drawn - plain == Counter(own["hand"]), (stop.label, seat)
            assert f"{HAND_LABEL}({len(own['hand'])}枚)" in texts(picture)


def test_eleusis_failed_cards_stand_in_a_column_under_the_card_they_followed() -> None:
    stop = played("eleusis").stop("ヒントと預言者の宣言ができる")
    public = view("eleusis", stop)
    assert any(entry["failed"] for entry in public["line"])
    drawn = iter(card_groups(eleusis_svg(public)))
    for entry in public["line"]:
        card, x, y, fill = next(drawn)
        assert card == entry["card"] and fill == "#ffffff"
        below = y
        for run in entry["failed"]:
            for failed in run:
                card, failed_x, failed_y, fill = next(drawn)
                assert (card, failed_x) == (failed, x) and failed_y > below
                assert fill != "#ffffff"
                below = failed_y


def test_eleusis_long_lines_wrap_into_rows_and_the_picture_grows() -> None:
    stop = played("eleusis").stop("ヒントと預言者の宣言ができる")
    public = view("eleusis", stop)
    longer = copy.deepcopy(public)
    longer["line"] = public["line"] * 6
    short_height = float(parse(eleusis_svg(public)).get("viewBox", "").split()[3])
    root = parse(eleusis_svg(longer))
    assert float(root.get("viewBox", "").split()[3]) > short_height
    cards = card_groups(eleusis_svg(longer))
    assert max(x for _card, x, _y, _fill in cards) + 40 <= 360
    assert len({y for _card, _x, y, fill in cards if fill == "#ffffff"}) >= 4


def test_eleusis_rule_text_shows_once_revealed_and_to_the_parent_only_before() -> None:
    script_ = played("eleusis")
    during = script_.stop("第1ラウンドのプレイ中")
    rule = during.state["rule"]
    public = view("eleusis", during)
    assert rule not in eleusis_svg(public)
    parent = during.state["parent"]
    child = (parent + 1) % len(NAMES["eleusis"])
    assert rule not in eleusis_svg(public, view("eleusis", during, child))
    assert f"形式ルール: {rule}" in texts(eleusis_svg(public, view("eleusis", during, parent)))
    after = view("eleusis", script_.stop("第2ラウンドのルール待ち"))
    shown = texts(eleusis_svg(after))
    assert "公開されたルール" in shown and f"形式ルール: {rule}" in shown


def test_eleusis_counts_round_parent_and_scores_appear_as_text() -> None:
    for stop in started_stops("eleusis"):
        public = view("eleusis", stop)
        picture = eleusis_svg(public)
        shown = texts(picture)
        groups = group_texts(picture)
        assert any(line.startswith(f"第{public['round']}ラウンド") for line in shown)
        assert f"親: {public['parent']}" in shown
        assert ["山札", str(public["deck"])] in groups
        assert ["出たカード", str(public["played"])] in groups
        for player in public["players"]:
            score = f"得点 {player['score']}"
            assert any(score in line for line in shown), (stop.label, player["name"])
            if not player["parent"]:
                assert any(f"手札 {player['hand_size']}枚" in line for line in shown)


def test_eleusis_prophet_marker_stands_on_the_card_named_by_prophet_at() -> None:
    stop = played("eleusis").stop("預言者の判定待ち（封印）")
    public = view("eleusis", stop)
    prophet = next(player for player in public["players"] if player["prophet"])
    assert "預言者" in texts(eleusis_svg(public))
    # The view says where the prophet spoke: the card last on the main line then.
    assert prophet["prophet_at"] is not None and 0 <= prophet["prophet_at"] < len(public["line"])
    unmarked = copy.deepcopy(public)
    unmarked["players"][prophet["seat"]]["prophet_at"] = None
    assert "預" not in texts(eleusis_svg(unmarked))  # no position, no marker
    marked = copy.deepcopy(public)
    marked["players"][prophet["seat"]]["prophet_at"] = 2
    picture = eleusis_svg(marked)
    assert "預" in texts(picture)
    marker = next(
        node
        for node in parse(picture).iter(f"{NS}g")
        if len(node) and (node[0].text or "").startswith("預言者の位置")
    )
    main_line = [entry for entry in card_groups(picture) if entry[3] == "#ffffff"]
    _card, x, y, _fill = main_line[2]
    frame = marker[1]
    assert float(frame.get("x", "0")) < x < float(frame.get("x", "0")) + 5
    assert float(frame.get("y", "0")) < y
