"""A new game's options (docs/gm.md, "New games"): /games/new offers each kind's own options
(from its pydantic ``Options``) and the platform's (deadline, spectators) as inputs; a bad value
is told in Japanese naming the option and what it allows — on the page, re-rendered with what
was typed, and in the API's ``{"detail": ...}`` — never in pydantic's words or with its URL;
good values make the game with them."""

from __future__ import annotations

import html
import os
import re
import shutil
from collections.abc import Iterator
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel, Field
from sqlalchemy import select

from app import i18n
from app.config import Settings
from app.db.engine import Database
from app.db.models import Game, User
from app.games import all_games
from app.gm import options as game_options
from tests.conftest import ApiUser, LiveServer
from tests.support.load_support import fast_users, session_cookie
from tests.test_i18n import japanese_outside

CHROMIUM = "/usr/bin/chromium"
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
ALERT = re.compile(r'role="alert">\s*([^<]*)<')
PYDANTIC_WORDS = ("pydantic", "https://errors.pydantic.dev", "Input should", "validation error")
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uff00-\uffef]")
ROUNDS_MESSAGE = "ラウンド数（rounds）は 1〜24 の整数で書いてください。"
DEADLINE_MESSAGE = "手番の期限（deadline_hours）は 1〜672 の整数で書いてください。"


@pytest.fixture
def master(client: httpx.Client, database: Database) -> ApiUser:
    return fast_users(database, 1, client, "opt")[0]


@pytest.fixture
def web(live_server: LiveServer, database: Database, master: ApiUser) -> Iterator[httpx.Client]:
    """A browser logged in as ``master``."""
    with httpx.Client(base_url=live_server.url, timeout=30) as browser:
        browser.cookies.set("bbsgm_session", session_cookie(database, master.name))
        yield browser


def csrf(web: httpx.Client) -> str:
    found = TOKEN.search(web.get("/games/new").text)
    assert found is not None
    return found.group(1)


def no_pydantic(text: str) -> None:
    for word in PYDANTIC_WORDS:
        assert word not in text, f"{word!r} in {text[:500]!r}"


def alert(page: httpx.Response) -> str:
    found = ALERT.search(page.text)
    assert found is not None, f"no message in the page ({page.status_code})"
    return html.unescape(found.group(1))


def games_of(database: Database, name: str) -> list[Game]:
    with database.session() as session:
        master = session.scalar(select(User).where(User.name == name))
        assert master is not None
        found = list(session.scalars(select(Game).where(Game.gm_id == master.id)))
        session.expunge_all()
        return found


def input_tag(page: str, name: str) -> str:
    found = re.search(r'<(?:input|select|textarea)[^>]*name="' + re.escape(name) + '"[^>]*>', page)
    assert found is not None, f"no input {name}"
    return found.group(0)


# --- what is offered -----------------------------------------------------------------------


def test_every_option_a_creator_may_give_is_in_the_form_with_a_japanese_label() -> None:
    for impl in all_games():
        offered = {option.name for option in game_options.form_fields(impl)}
        own = set(impl.Options.model_fields) - game_options.app_set(impl)
        assert offered == own, impl.kind  # nothing left to the JSON API alone
        for option in game_options.form_fields(impl):
            assert JAPANESE.search(option.label), (impl.kind, option.name)
            assert option.help and JAPANESE.search(option.help), (impl.kind, option.name)
            for value, label in option.choices:
                assert JAPANESE.search(label), (impl.kind, option.name, value)
    assert [o.name for o in game_options.PLATFORM_FIELDS] == ["deadline_hours", "mute_spectators"]


def test_the_form_shows_each_kind_s_options_and_the_platform_s(web: httpx.Client) -> None:
    page = web.get("/games/new").text
    for impl in all_games():
        assert f'<fieldset class="game-options" data-kind="{impl.kind}">' in page
        for option in game_options.form_fields(impl):
            assert f'name="{impl.kind}.{option.name}"' in page
            assert option.label in page
    rounds = input_tag(page, "eleusis.rounds")
    assert 'type="number"' in rounds and 'min="1"' in rounds and 'max="24"' in rounds
    assert 'value=""' in rounds  # default: one round per player
    assert "ラウンド数" in page and "空欄なら人数と同じ" in page
    rules = page[page.index('name="eleusis.rules"') : page.index("</select>", page.index("rules"))]
    assert '<option value="any" selected>' in rules and "形式ルールだけ" in rules
    assert "<textarea" in input_tag(page, "idolwp.idols")
    assert 'name="cardbattle.pool"' not in page  # the app's, from the card registry
    deadline = input_tag(page, "deadline_hours")
    assert 'type="number"' in deadline and 'min="1"' in deadline and 'max="672"' in deadline
    spectators = input_tag(page, "mute_spectators")
    assert 'type="checkbox"' in spectators and "checked" not in spectators
    assert "観戦者の書き込みを断る" in page and "手番の期限" in page
    assert '<script src="/static/new_game.js" defer></script>' in page
    assert web.get("/static/new_game.js").status_code == 200


def test_the_form_in_english_says_its_options_in_english(
    web: httpx.Client, settings: Settings, master: ApiUser
) -> None:
    page = web.get("/games/new?lang=en").text
    for label in ("Rounds", "First parent", "Turn deadline", "Refuse spectators' posts"):
        assert html.escape(label, quote=False) in page.replace("&#39;", "'"), label
    assert "Options of New New Eleusis" in page
    assert japanese_outside(page, [settings.site_name, master.name]) == []


class Sample(BaseModel):
    edition: Literal[1, 2] = 2
    size: int = Field(default=3, gt=0, lt=10)
    note: str | None = Field(default=None, max_length=20, title="メモ", description="自由に。")
    flag: bool = True
    table: dict[str, int] = Field(default_factory=dict)


def test_inputs_follow_the_model_s_types_bounds_and_defaults() -> None:
    edition, size, note, flag, table = game_options.fields_of(Sample, {})
    assert (edition.widget, edition.choices, edition.default) == (
        "choice",
        (("1", "1"), ("2", "2")),
        2,
    )
    assert edition.from_form("1") == 1 and edition.from_form("3") == "3"  # the value, typed
    assert (size.widget, size.low, size.high, size.shown()) == ("int", 1, 9, "3")
    assert size.from_form(" ７ ") == 7 and size.from_form("") is game_options.MISSING
    assert (note.widget, note.max_length, note.label, note.help) == ("text", 20, "メモ", "自由に。")
    assert note.problem().message == "メモ（note）は20文字以内の文字列で書いてください。"
    assert (flag.widget, flag.default, flag.from_form("on"), flag.from_form(None)) == (
        "bool",
        True,
        True,
        game_options.MISSING,
    )
    assert (
        table.widget is None and table.problem().message == "table（table）の値が正しくありません。"
    )
    assert size.problem().message == "size（size）は 1〜9 の整数で書いてください。"


# --- the page form -------------------------------------------------------------------------


def test_a_bad_value_is_told_in_japanese_and_the_form_keeps_what_was_typed(
    web: httpx.Client, database: Database, master: ApiUser
) -> None:
    sent = {
        "csrf_token": csrf(web),
        "kind": "eleusis",
        "title": "帰納の卓",
        "eleusis.rounds": "99",
        "eleusis.parent": "taro",
        "eleusis.rules": "formal",
        "deadline_hours": "24",
        "mute_spectators": "on",
    }
    page = web.post("/games", data=sent)
    assert page.status_code == 422
    said = alert(page)
    assert ROUNDS_MESSAGE in said
    no_pydantic(page.text)
    assert f'<p class="form-error" id="error-eleusis-rounds">{ROUNDS_MESSAGE}</p>' in page.text
    assert 'aria-invalid="true"' in input_tag(page.text, "eleusis.rounds")
    assert 'value="99"' in input_tag(page.text, "eleusis.rounds")
    assert 'value="taro"' in input_tag(page.text, "eleusis.parent")
    assert '<option value="formal" selected>' in page.text
    assert 'value="24"' in input_tag(page.text, "deadline_hours")
    assert "checked" in input_tag(page.text, "mute_spectators")
    assert 'value="帰納の卓"' in page.text
    assert '<option value="eleusis" selected>' in page.text
    assert games_of(database, master.name) == []


@pytest.mark.parametrize(
    ("fields", "messages"),
    [
        ({"eleusis.rounds": "0"}, [ROUNDS_MESSAGE]),
        ({"eleusis.rounds": "たくさん"}, [ROUNDS_MESSAGE]),
        ({"eleusis.rounds": "2.5"}, [ROUNDS_MESSAGE]),
        ({"deadline_hours": "0", "eleusis.rounds": "25"}, [DEADLINE_MESSAGE, ROUNDS_MESSAGE]),
        ({"deadline_hours": "1000"}, [DEADLINE_MESSAGE]),
        (
            {"eleusis.rules": "anything"},
            ["親が封印できるルール（rules）は any / formal / hand のどれかです。"],
        ),
        (
            {"mute_spectators": "maybe"},
            ["観戦者の書き込みを断る（mute_spectators）は true か false で書いてください。"],
        ),
    ],
)
def test_each_bad_value_names_its_option_and_what_it_allows(
    web: httpx.Client,
    database: Database,
    master: ApiUser,
    fields: dict[str, str],
    messages: list[str],
) -> None:
    sent = {"csrf_token": csrf(web), "kind": "eleusis", "title": "卓", **fields}
    page = web.post("/games", data=sent)
    assert page.status_code == 422
    said = alert(page)
    for message in messages:
        assert message in said
    no_pydantic(page.text)
    assert games_of(database, master.name) == []


def test_a_bad_value_in_english(web: httpx.Client) -> None:
    sent = {"csrf_token": csrf(web), "kind": "eleusis", "title": "卓", "eleusis.rounds": "99"}
    page = web.post("/games?lang=en", data=sent)
    assert page.status_code == 422
    said = alert(page)
    assert said == "Invalid options: Rounds (rounds) must be a whole number from 1 to 24."
    no_pydantic(page.text)


def test_the_game_is_made_with_the_options_given(
    web: httpx.Client, database: Database, master: ApiUser
) -> None:
    sent = {
        "csrf_token": csrf(web),
        "kind": "eleusis",
        "title": "設定つき",
        "eleusis.rounds": "３",  # full-width digits are the same number
        "eleusis.parent": "taro",
        "eleusis.rules": "hand",
        "deadline_hours": "48",
        "mute_spectators": "on",
        # another kind's inputs (the form shows every kind's without JavaScript): not read
        "idolwp.idols": "taro 春香",
    }
    made = web.post("/games", data=sent)
    assert made.status_code == 303, alert(made)
    [game] = games_of(database, master.name)
    assert made.headers["location"] == f"/games/{game.id}"
    assert game.kind == "eleusis" and game.title == "設定つき"
    assert game.options == {"parent": "taro", "rounds": 3, "rules": "hand"}
    assert game.deadline_hours == 48 and game.mute_spectators is True


def test_empty_inputs_are_the_defaults_for_every_kind(
    web: httpx.Client, database: Database, master: ApiUser
) -> None:
    token = csrf(web)
    blank = {
        f"{impl.kind}.{o.name}": "" for impl in all_games() for o in game_options.form_fields(impl)
    }
    for impl in all_games():
        # Titled by the kind's title, never its key: listings show no raw key (test_tables_http).
        sent = {
            "csrf_token": token,
            "kind": impl.kind,
            "title": impl.title_ja,
            "deadline_hours": "",
        }
        made = web.post("/games", data={**sent, **blank})
        assert made.status_code == 303, (impl.kind, alert(made))
    games = {game.kind: game for game in games_of(database, master.name)}
    assert set(games) == {impl.kind for impl in all_games()}
    assert games["eleusis"].options == {"parent": None, "rounds": None, "rules": "any"}
    assert games["idolwp"].options == {"idols": None}
    assert "pool" in games["cardbattle"].options  # the registry's, put in by the app
    assert all(g.deadline_hours is None and g.mute_spectators is False for g in games.values())


def test_idols_are_written_one_line_a_player(
    web: httpx.Client, database: Database, master: ApiUser
) -> None:
    sent = {
        "csrf_token": csrf(web),
        "kind": "idolwp",
        "title": "指名",
        "idolwp.idols": "taro 春香 千早\r\n\r\nhanako　美希 春香\r\n",
    }
    made = web.post("/games", data=sent)
    assert made.status_code == 303, alert(made)
    [game] = games_of(database, master.name)
    assert game.options == {"idols": {"taro": ["春香", "千早"], "hanako": ["美希", "春香"]}}


# --- the JSON API --------------------------------------------------------------------------


def create(master: ApiUser, kind: str, options: Any) -> httpx.Response:
    return master.post("/api/games", {"kind": kind, "title": "API卓", "options": options})


@pytest.mark.parametrize(
    ("kind", "options", "wanted"),
    [
        ("eleusis", {"rounds": 99}, {"rounds": ROUNDS_MESSAGE}),
        ("eleusis", {"rounds": "many"}, {"rounds": ROUNDS_MESSAGE}),
        (
            "eleusis",
            {"rounds": 0, "deadline_hours": 0},
            {"rounds": ROUNDS_MESSAGE, "deadline_hours": DEADLINE_MESSAGE},
        ),
        ("eitsuku", {"deadline_hours": True}, {"deadline_hours": DEADLINE_MESSAGE}),
        ("eitsuku", {"deadline_hours": "24"}, {"deadline_hours": DEADLINE_MESSAGE}),
        (
            "eitsuku",
            {"mute_spectators": "yes"},
            {
                "mute_spectators": "観戦者の書き込みを断る（mute_spectators）は true か false "
                "で書いてください。"
            },
        ),
        ("eleusis", {"parent": 7}, {"parent": "最初の親（parent）は文字列で書いてください。"}),
        (
            "eitsuku",
            {"rounds": 3},
            {
                "rounds": "「rounds」というオプションはありません"
                "（使えるのは deadline_hours / mute_spectators）。"
            },
        ),
        (
            "idolwp",
            {"idols": {"taro": "春香"}},
            {"idols": "アイドルの指定（idols）は、名前ごとに文字列のリストを書いたオブジェクト"},
        ),
        ("eleusis", [1, 2], {"": "options は JSON のオブジェクト"}),
        ("eleusis", "rounds=3", {"": "options は JSON のオブジェクト"}),
    ],
)
def test_the_api_tells_bad_options_in_japanese(
    master: ApiUser, database: Database, kind: str, options: Any, wanted: dict[str, str]
) -> None:
    answer = create(master, kind, options)
    assert answer.status_code == 422, answer.text
    no_pydantic(answer.text)
    body = answer.json()
    assert isinstance(body["detail"], str)
    assert body["detail"].startswith("オプションが正しくありません: ")
    said = {issue["option"]: issue["message"] for issue in body["errors"]}
    assert set(said) == set(wanted)
    for option, message in wanted.items():
        assert said[option].startswith(message)
        assert said[option] in body["detail"]
    assert games_of(database, master.name) == []


def test_the_api_makes_the_game_with_the_options_given(master: ApiUser, database: Database) -> None:
    options = {"rounds": 2, "rules": "formal", "deadline_hours": 12, "mute_spectators": True}
    answer = create(master, "eleusis", options)
    assert answer.status_code == 201, answer.text
    [game] = games_of(database, master.name)
    assert game.id == answer.json()["id"]
    assert game.options == {"parent": None, "rounds": 2, "rules": "formal"}
    assert game.deadline_hours == 12 and game.mute_spectators is True
    assert create(master, "eleusis", None).status_code == 201  # null: no options


@pytest.mark.parametrize(
    "kind", [impl.kind for impl in all_games() if game_options.EDITION in impl.Options.model_fields]
)
def test_the_rules_edition_is_the_app_s_not_the_creator_s(
    master: ApiUser, database: Database, web: httpx.Client, kind: str
) -> None:
    impl = next(impl for impl in all_games() if impl.kind == kind)
    assert f'name="{kind}.edition"' not in web.get("/games/new").text
    answer = create(master, kind, {"edition": 1})
    assert answer.status_code == 201, answer.text
    [game] = games_of(database, master.name)
    assert game.options["edition"] == impl.edition


def test_the_api_lists_each_kind_s_options(client: httpx.Client) -> None:
    kinds = {kind["kind"]: kind for kind in client.get("/api/games/kinds").json()}
    assert set(kinds) == {impl.kind for impl in all_games()}
    options = {option["name"]: option for option in kinds["eleusis"]["options"]}
    assert options["rounds"] == {
        "name": "rounds",
        "label": "ラウンド数",
        "help": "空欄なら人数と同じ。親は席順に交代します。",
        "type": "int",
        "default": None,
        "min": 1,
        "max": 24,
        "max_length": None,
        "choices": [],
        "platform": False,
    }
    assert options["rules"]["choices"] == ["any", "formal", "hand"]
    assert options["deadline_hours"]["platform"] and options["deadline_hours"]["max"] == 672
    assert options["mute_spectators"]["type"] == "bool"
    assert [o["name"] for o in kinds["cardbattle"]["options"]] == [
        "deadline_hours",
        "mute_spectators",
    ]


def test_option_messages_are_translated_with_their_labels() -> None:
    impl = next(impl for impl in all_games() if impl.kind == "eleusis")
    with pytest.raises(game_options.OptionsInvalid) as raised:
        game_options.check(impl, {"rounds": 30, "rules": "x", "deadline_hours": -1})
    from app.web.game_pages import option_message

    with i18n.use_language("en"):
        said = [option_message(problem) for problem in raised.value.problems]
    assert said == [
        "Turn deadline (deadline_hours) must be a whole number from 1 to 672.",
        "Rounds (rounds) must be a whole number from 1 to 24.",
        "Rules a parent may seal (rules) must be one of any / formal / hand.",
    ]


# --- with JavaScript -----------------------------------------------------------------------


@pytest.mark.browser
def test_only_the_chosen_kind_s_options_show_with_javascript(
    request: pytest.FixtureRequest, live_server: LiveServer, database: Database, master: ApiUser
) -> None:
    if not shutil.which(CHROMIUM) and not os.environ.get("CI"):
        pytest.skip("Debian's chromium is missing (.ci/test installs it)")
    from playwright.sync_api import expect

    browser = request.getfixturevalue("browser")
    context = browser.new_context(base_url=live_server.url, locale="ja-JP")
    try:
        token = session_cookie(database, master.name)
        context.add_cookies([{"name": "bbsgm_session", "value": token, "url": live_server.url}])
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto("/games/new?kind=eitsuku")
        eitsuku = page.locator('fieldset[data-kind="eitsuku"]')
        eleusis = page.locator('fieldset[data-kind="eleusis"]')
        expect(eitsuku).to_be_visible()
        expect(eleusis).to_be_hidden()
        page.select_option("select[name=kind]", "eleusis")
        expect(eleusis).to_be_visible()
        expect(eitsuku).to_be_hidden()
        expect(page.locator("input[name=deadline_hours]")).to_be_visible()
        page.fill("input[name=title]", "ブラウザの設定卓")
        page.fill("input[name='eleusis.rounds']", "2")
        page.check("input[name=mute_spectators]")
        page.click("form.new-game button[type=submit]")
        expect(page.locator(".game-panel h2")).to_contain_text("ブラウザの設定卓")
        assert errors == [], errors
    finally:
        context.close()
    [game] = games_of(database, master.name)
    assert game.options["rounds"] == 2 and game.mute_spectators is True
