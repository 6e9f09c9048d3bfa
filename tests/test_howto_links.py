"""Links between the 遊び方 pages and the rest of the site (issue #43, a newcomer's first
evening), over real HTTP, in Japanese and English: the home page and /games link every kind's
遊び方 and each recruiting table its kind's; a 遊び方 page links making a table of its kind
(/games/new?kind=… preselects it) and the recruiting tables of its kind."""

from __future__ import annotations

import html
import re

import httpx
import pytest

from app.games import GAMES
from app.games.kit.howto import rules_path
from tests.conftest import api_user, unique_name
from tests.test_pages import register

KINDS = sorted(GAMES)
HREF = re.compile(r'href="([^"]*)"')


def lobby_section(text: str) -> str:
    return text.split('<section class="lobby"', 1)[1].split("</section>", 1)[0]


def links(text: str) -> list[str]:
    return [html.unescape(href) for href in HREF.findall(text)]


def recruiting_table(client: httpx.Client, kind: str) -> tuple[int, str]:
    """A recruiting table of ``kind`` made over the API: (its id, its title)."""
    title = f"{unique_name('t')}の卓"
    made = api_user(client).post("/api/games", {"kind": kind, "title": title, "options": {}})
    assert made.status_code == 201, made.text
    return int(made.json()["id"]), title


def lobby_item(text: str, game_id: int) -> str:
    items = [
        item
        for item in lobby_section(text).split('<li class="lobby-game">')
        if f'href="/games/{game_id}"' in item
    ]
    assert len(items) == 1, f"game {game_id} is not in the lobby once"
    return items[0].split("</li>", 1)[0]


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("path", ["/", "/games"])
def test_the_lobby_links_every_kinds_howto_next_to_making_a_table(
    client: httpx.Client, path: str, lang: str
) -> None:
    """Slice 1: where games are listed (home page, /games), each game a newcomer can play
    links its 遊び方, whether or not any table recruits."""
    reply = client.get(path, params={"lang": lang})
    assert reply.status_code == 200
    section = lobby_section(reply.text)
    assert "/games/new" in links(section)
    howtos = section.split('<p class="lobby-howtos">', 1)[1].split("</p>", 1)[0]
    assert ("ゲームの遊び方:" if lang == "ja" else "How to play:") in howtos
    for kind in KINDS:
        title = GAMES[kind].title_ja if lang == "ja" else GAMES[kind].title_en
        assert f'href="{rules_path(kind)}">{html.escape(title)}</a>' in howtos


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("kind", ["eleusis", "cardbattle"])
def test_a_recruiting_table_links_its_kinds_howto(
    client: httpx.Client, kind: str, lang: str
) -> None:
    """Slice 1: a recruiting table on the home page links the 遊び方 of its own kind."""
    game_id, _title = recruiting_table(client, kind)
    item = lobby_item(client.get("/", params={"lang": lang}).text, game_id)
    howto_links = [href for href in links(item) if href.endswith("/howto")]
    assert howto_links == [rules_path(kind)]
    label = "遊び方" if lang == "ja" else "How to play"
    assert f">{label}</a>" in item


def form_login(page: str) -> str:
    """The new game form's ログイン link, for a reader not logged in."""
    found = re.search(r'ゲームを作るには<a href="([^"]*)">ログイン</a>', page)
    assert found, "no ログイン link in place of the form"
    return found.group(1)


def kind_select(form: str) -> str:
    return form.split('<select name="kind"', 1)[1].split("</select>", 1)[0]


def play_section(text: str) -> str:
    return text.split('<section id="play">', 1)[1].split("</section>", 1)[0]


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_howto_page_links_making_a_table_of_its_kind(
    client: httpx.Client, kind: str, lang: str
) -> None:
    """Slice 2: 「このゲームの卓を作る」 on the 遊び方 page, at its top and in its way to play,
    goes to /games/new preselecting the kind."""
    text = client.get(rules_path(kind), params={"lang": lang}).text
    label = "このゲームの卓を作る" if lang == "ja" else "Start a table of this game"
    made = f'<a class="new-table" href="/games/new?kind={kind}">{label}</a>'
    top = text.split('<p class="howto-play-links">', 1)[1].split("</p>", 1)[0]
    assert made in top and 'href="#play"' in top
    assert made in play_section(text)


@pytest.mark.parametrize("kind", KINDS)
def test_the_new_game_form_preselects_the_kind_of_its_query(
    client: httpx.Client, kind: str
) -> None:
    """Slice 2: /games/new?kind=<kind> is the form with that kind chosen (only that one), and
    a reader not logged in is sent back to it after logging in."""
    anonymous = client.get("/games/new", params={"kind": kind}).text
    assert form_login(anonymous) == f"/login?next=/games/new%3Fkind%3D{kind}"
    register(client)
    form = client.get("/games/new", params={"kind": kind}).text
    assert re.findall(r'<option value="(\w+)" selected>', kind_select(form)) == [kind]


def test_an_unknown_kind_in_the_query_preselects_nothing(client: httpx.Client) -> None:
    anonymous = client.get("/games/new", params={"kind": '"><b>x'}).text
    assert form_login(anonymous) == "/login?next=/games/new" and "<b>x" not in anonymous
    register(client)
    form = client.get("/games/new", params={"kind": "nope"}).text
    assert "<option" in kind_select(form) and " selected" not in kind_select(form)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_howto_page_lists_the_recruiting_tables_of_its_kind_only(
    client: httpx.Client, lang: str
) -> None:
    """Slice 2: the recruiting tables of the page's kind, each linked, and none of another."""
    game_id, title = recruiting_table(client, "idolwp")
    other_id, other_title = recruiting_table(client, "eitsuku")
    text = client.get(rules_path("idolwp"), params={"lang": lang}).text
    play = play_section(text)
    assert f'<a href="/games/{game_id}">{html.escape(title)}</a>' in play
    assert f"/games/{other_id}" not in text and other_title not in text
    assert "/games?status=recruiting&amp;kind=idolwp" in play
    seats = "0/5席" if lang == "ja" else "0 of 5 seats"
    assert seats in play
