"""遊び方 pages (docs/games.md, "遊び方 pages"): one per kind, in Japanese and English, over
real HTTP; every command the grammar knows listed with examples the game accepts, every
house content entry with its effect text, a worked first turn the game plays."""

from __future__ import annotations

import html
import re

import httpx
import pytest
from markupsafe import escape

from app.games import GAMES
from app.games.kit.howto import PLATFORM_COMMANDS, play_first_turn, rules_path, verb_groups
from app.i18n import use_language
from app.web.howto_pages import HOWTOS, command_rows
from tests.conftest import api_user

KINDS = sorted(GAMES)


def esc(text: str) -> str:
    """As the templates escape it (Jinja's autoescape)."""
    return str(escape(text))


CODE = re.compile(r"<code>(.*?)</code>", re.S)
# What the rules' maintainers write beside a rule and players must never read.
LABELS = re.compile(r"\((?:R|I|D)(?:[ :][^)]*)?\)|（(?:R|I|D)[ :：]|\(sealed\)|\bNone\b")


def page(client: httpx.Client, kind: str, lang: str) -> str:
    reply = client.get(rules_path(kind), params={"lang": lang})
    assert reply.status_code == 200, reply.text
    assert f'<html lang="{lang}">' in reply.text
    return reply.text


def body_text(text: str) -> str:
    main = text.split("<main", 1)[-1]
    return html.unescape(re.sub(r"<[^>]+>", "", main))


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_a_howto_page(kind: str) -> None:
    assert kind in HOWTOS


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("kind", KINDS)
def test_howto_page_answers_in_each_language(client: httpx.Client, kind: str, lang: str) -> None:
    text = page(client, kind, lang)
    game = GAMES[kind]
    title = game.title_ja if lang == "ja" else game.title_en
    assert esc(title) in text
    for anchor in ("about", "setup", "turn", "end", "commands", "example"):
        assert f'id="{anchor}"' in text
    if lang == "en":
        assert "How to play" in text
    else:
        assert "の遊び方" in text
    low, high = game.min_players, game.max_players
    counts = {("ja", True): f"{low}人", ("ja", False): f"{low}〜{high}人で遊びます。"}
    counts |= {("en", True): f"{low} players", ("en", False): f"For {low} to {high} players."}
    assert counts[lang, low == high] in text


def test_unknown_kind_is_404_not_500(client: httpx.Client) -> None:
    for path in ("/games/chess/howto", "/games/" + "x" * 300 + "/howto", "/games/%00/howto"):
        reply = client.get(path)
        assert reply.status_code in (404, 422), path


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("kind", KINDS)
def test_no_maintainers_labels_on_howto_pages(client: httpx.Client, kind: str, lang: str) -> None:
    shown = body_text(page(client, kind, lang))
    assert LABELS.search(shown) is None, LABELS.search(shown)


@pytest.mark.parametrize("kind", KINDS)
def test_every_verb_the_grammar_knows_is_on_the_page(client: httpx.Client, kind: str) -> None:
    codes = {html.unescape(code) for code in CODE.findall(page(client, kind, "ja"))}
    missing = [verb for verb in GAMES[kind].verbs() if verb not in codes]
    assert missing == []


@pytest.mark.parametrize("kind", KINDS)
def test_every_verb_has_help_and_an_example(kind: str) -> None:
    game = GAMES[kind]
    own, platform = command_rows(game, HOWTOS[kind])
    assert len(own) + len(platform) == len(verb_groups(game))
    for row in own + platform:
        assert row.what, f"{row.words[0]} has no help"
        assert row.examples, f"{row.words[0]} has no example"
        for example in row.examples:
            first = example.split(" ", 1)[0]
            assert first in row.words, (row.words, example)


def examples_on(text: str) -> list[str]:
    """Every example line of the page: the <code> of its command examples and worked turn."""
    found: list[str] = []
    for block in re.findall(r'<p class="examples">(.*?)</p>', text, re.S):
        found.extend(html.unescape(code) for code in CODE.findall(block))
    for block in re.findall(r'<pre class="lines">(.*?)</pre>', text, re.S):
        found.extend(html.unescape(code) for code in CODE.findall(block))
    for block in re.findall(r'<section id="rule-language">(.*?)</section>', text, re.S):
        found.extend(html.unescape(code) for code in CODE.findall(block))
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_every_example_on_the_page_is_a_line_the_game_accepts(
    client: httpx.Client, kind: str
) -> None:
    game = GAMES[kind]
    examples = examples_on(page(client, kind, "ja"))
    assert len(examples) >= len(verb_groups(game))
    for line in examples:
        assert game.is_command_line(line), line
        game.parse(line)  # raises CommandSyntaxError on a line the grammar refuses


def test_platform_commands_cover_every_platform_verb() -> None:
    game = GAMES["eitsuku"]
    platform = {verb for verb in verb_groups(game) if verb.startswith("common__")}
    assert platform == {help.verb for help in PLATFORM_COMMANDS}


def content_pairs(kind: str) -> list[tuple[str, str]]:
    return [
        (entry.name, entry.text) for section in HOWTOS[kind].content() for entry in section.entries
    ]


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("kind", KINDS)
def test_every_content_entry_with_its_effect_text_is_on_the_page(
    client: httpx.Client, kind: str, lang: str
) -> None:
    text = page(client, kind, lang)
    for name, effect in content_pairs(kind):
        assert f"<dt>{esc(name)}</dt><dd>{esc(effect)}</dd>" in text, name


def test_eitsuku_page_lists_every_event_card_effect() -> None:
    from app.games.eitsuku.events import EVENT_CARDS

    pairs = dict(content_pairs("eitsuku"))
    assert {card.name: card.effect for card in EVENT_CARDS} == pairs


def test_populous_page_lists_every_race_skill_tile_and_epic_kind() -> None:
    from app.games.populous.content import load

    loaded = load()
    names = {name for name, _ in content_pairs("populous")}
    assert (
        set(loaded.races) | set(loaded.skills) | set(loaded.tiles) | set(loaded.epic.counts)
        <= names
    )
    effects = dict(content_pairs("populous"))
    for skill in loaded.skills.values():
        assert effects[skill.name] == skill.text
    for race in loaded.races.values():
        assert race.text in effects[race.name]


def test_idolwp_page_lists_every_idol_card_event_and_space() -> None:
    from app.games.idolwp.content import load

    loaded = load()
    pairs = dict(content_pairs("idolwp"))
    for idol in loaded.idols.values():
        assert idol.text in pairs[idol.name]
    for card in loaded.cards.values():
        assert pairs[card.name] == card.text
    for event in loaded.events.values():
        assert event.name in pairs
    for board in loaded.boards.values():
        shown = pairs[f"{board.id} {board.name}"]
        for space in board.spaces:
            assert re.search(rf"(^| / ){space.id} ", shown), (board.id, space.id)


def test_cardbattle_page_lists_every_starter_card_with_its_abilities() -> None:
    from app.games.cardbattle.cards import ability_text
    from app.games.cardbattle.content import starter_pool

    pairs = dict(content_pairs("cardbattle"))
    for card in starter_pool():
        assert f"コスト{card.cost}" in pairs[card.name]
        for ability in card.abilities:
            assert ability_text(ability) in pairs[card.name]


@pytest.mark.parametrize("kind", KINDS)
def test_worked_first_turn_plays_in_order_with_the_fixed_seed(kind: str) -> None:
    shown = play_first_turn(GAMES[kind], HOWTOS[kind])
    posts = [post for post in shown if not post.auto]
    assert len(posts) >= 2
    assert all(post.public or post.private for post in posts)


@pytest.mark.parametrize("kind", KINDS)
def test_worked_first_turn_is_on_the_page_in_order(client: httpx.Client, kind: str) -> None:
    text = page(client, kind, "ja")
    example = text.split('<section id="example">', 1)[1].split("</section>", 1)[0]
    shown_lines = [html.unescape(code) for code in CODE.findall(example)]
    played = [line for post in play_first_turn(GAMES[kind], HOWTOS[kind]) for line in post.lines]
    assert shown_lines == played
    for post in play_first_turn(GAMES[kind], HOWTOS[kind]):
        for reply in post.public:
            assert esc(reply) in example


def _new_game_text(client: httpx.Client, lang: str) -> str:
    reply = client.get("/games/new", params={"lang": lang})
    assert reply.status_code == 200
    return reply.text


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_new_game_page_describes_each_kind_and_links_its_howto(
    client: httpx.Client, lang: str
) -> None:
    text = _new_game_text(client, lang)
    for kind, howto in HOWTOS.items():
        assert f'href="{rules_path(kind)}"' in text
        with use_language(lang):
            from app.web.messages import translate

            assert esc(translate(howto.summary)) in text


def test_kinds_api_gives_each_rules_url_that_answers(client: httpx.Client) -> None:
    kinds = client.get("/api/games/kinds").json()
    assert {entry["kind"] for entry in kinds} == set(GAMES)
    for entry in kinds:
        assert entry["rules_url"] == rules_path(entry["kind"])
        assert client.get(entry["rules_url"]).status_code == 200


def test_card_pool_page_links_the_cardbattle_howto(client: httpx.Client) -> None:
    for path in ("/cards", "/cards/舞踏子"):
        reply = client.get(path)
        assert reply.status_code == 200
        assert f'href="{rules_path("cardbattle")}"' in reply.text, path


JAPANESE = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


@pytest.mark.parametrize("kind", KINDS)
def test_english_page_has_no_japanese_but_game_text(client: httpx.Client, kind: str) -> None:
    """Game text stays as the game writes it (docs/i18n.md): command words and lines
    (<code>), the bot's answers (<pre>), content names and effects, player names."""
    text = page(client, kind, "en").split("<main", 1)[1].split("</main>", 1)[0]
    text = re.sub(r"<code>.*?</code>|<pre[^>]*>.*?</pre>", "", text, flags=re.S)
    text = re.sub(r'<dl class="howto-content"[^>]*>.*?</dl>', "", text, flags=re.S)
    # The kind's recruiting tables are listed by their titles, which their GMs wrote.
    text = re.sub(r'<a href="/games/\d+">.*?</a>', "", text, flags=re.S)
    for name in HOWTOS[kind].players:
        text = text.replace(name, "")
    left = [text[max(0, m.start() - 40) : m.end() + 40] for m in JAPANESE.finditer(text)]
    assert left == []


@pytest.mark.parametrize("kind", KINDS)
def test_game_page_and_its_thread_link_the_kinds_howto(client: httpx.Client, kind: str) -> None:
    master = api_user(client)
    title = f"{GAMES[kind].title_ja} howto table"  # never the key: listings show none
    made = master.post("/api/games", {"kind": kind, "title": title})
    assert made.status_code == 201, made.text
    game = made.json()
    link = f'class="howto-link" href="{rules_path(kind)}"'
    for path in (f"/games/{game['id']}", f"/threads/{game['thread_id']}"):
        for lang in ("ja", "en"):
            reply = client.get(path, params={"lang": lang})
            assert reply.status_code == 200
            assert link in reply.text, path
    assert client.get(rules_path(kind)).status_code == 200
