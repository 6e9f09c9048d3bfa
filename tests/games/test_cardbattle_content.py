"""掲示板進行カードゲーム's starter pool (app/games/cardbattle/content/cards.toml, checked by
app/games/cardbattle/content.py): the shipped file loads; it holds the source's three names
(舞踏子, ホープ, MAKI — the players' own cards of its 第一・第七世界版) and enough house cards
to play (24 normal, 12 magic, every effect and timing); decks fit the 1000 initial cost; and a
bad file is refused at start-up with the file and the line of the bad card.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.games.cardbattle.cards import EFFECTS, TIMINGS, CardSpec, card_line
from app.games.cardbattle.content import StarterCards, _check, starter_pool
from app.games.kit.content import ContentError, clear_cache, content_dir, load_content

INITIAL_COST = 1000  # R 初期コスト 1000, for the deck and the declared magic together


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    clear_cache()
    yield
    clear_cache()


@pytest.fixture(scope="module")
def pool() -> tuple[CardSpec, ...]:
    return starter_pool()


def normal(pool: tuple[CardSpec, ...]) -> list[CardSpec]:
    return [card for card in pool if card.kind == "normal"]


def magic(pool: tuple[CardSpec, ...]) -> list[CardSpec]:
    return [card for card in pool if card.kind == "magic"]


def by_name(pool: tuple[CardSpec, ...]) -> dict[str, CardSpec]:
    return {card.name: card for card in pool}


# --------------------------------------------------------------------------- the shipped file


def test_the_shipped_pool_loads_with_24_normal_and_12_magic_cards(
    pool: tuple[CardSpec, ...],
) -> None:
    assert len(normal(pool)) >= 24
    assert len(magic(pool)) >= 12
    assert len(pool) == len(normal(pool)) + len(magic(pool))


def test_the_shipped_file_passes_the_same_checks_read_directly() -> None:
    path = content_dir("cardbattle") / "cards.toml"
    loaded = load_content(path, StarterCards, _check)
    assert tuple(loaded.cards) == starter_pool()


def test_source_players_own_cards_are_in_the_pool(pool: tuple[CardSpec, ...]) -> None:
    cards = by_name(pool)
    for name in ("舞踏子", "ホープ", "MAKI"):
        assert cards[name].kind == "normal"


def test_the_players_cards_are_balanced_all_rounders(pool: tuple[CardSpec, ...]) -> None:
    cards = by_name(pool)
    players = [cards["舞踏子"], cards["ホープ"], cards["MAKI"]]
    costs = [card.cost for card in players]
    assert max(costs) - min(costs) <= 50
    for card in players:
        # several abilities (the die picks one) of different kinds: not one-trick cards
        assert len(card.abilities) >= 2
        assert len({ability.effect for ability in card.abilities}) == len(card.abilities)
        # neither a wall nor a glass cannon
        assert 4 <= card.durability / card.attack <= 9
    # MAKI's abilities are the weakest of the three (a first-turn heal, a cost cut that only
    # pays for magic), so it has the most durability; the spread stays small
    bulk = [card.attack * card.durability for card in players]
    assert max(bulk) <= 1.5 * min(bulk)


def test_the_file_says_it_is_house_content_and_names_the_source_cards() -> None:
    text = (content_dir("cardbattle") / "cards.toml").read_text(encoding="utf-8")
    head = text[: text.index("[[cards]]")]
    assert "HOUSE CONTENT" in head
    assert "ハウスルール" in head
    for name in ("舞踏子", "ホープ", "MAKI"):
        assert name in head


def test_every_effect_and_every_timing_is_used(pool: tuple[CardSpec, ...]) -> None:
    effects = {ability.effect for card in pool for ability in card.abilities}
    assert effects == set(EFFECTS)
    timings = {ability.timing for card in normal(pool) for ability in card.abilities}
    assert timings == set(TIMINGS)
    # magic fires when declared: no timing on any of its abilities
    assert all(ability.timing is None for card in magic(pool) for ability in card.abilities)


def test_the_pool_has_cost_reducers_and_cards_with_several_abilities(
    pool: tuple[CardSpec, ...],
) -> None:
    reducers = [
        card
        for card in pool
        if any(ability.effect == "cost" and ability.amount < 0 for ability in card.abilities)
    ]
    assert len(reducers) >= 2
    assert sum(1 for card in normal(pool) if len(card.abilities) >= 2) >= 3
    assert any(len(card.abilities) == 3 for card in normal(pool))
    assert any(not card.abilities for card in normal(pool))  # plain cards to start with


def test_names_are_unique_short_words_and_every_card_has_flavour(
    pool: tuple[CardSpec, ...],
) -> None:
    names = [card.name for card in pool]
    assert len(set(names)) == len(names)
    for card in pool:
        assert re.fullmatch(r"\S{1,16}", card.name)
        assert card.text.strip()
        assert card.version == 1
        assert card_line(card).startswith(card.name)


# --------------------------------------------------------------------------- costs and balance


def test_every_card_costs_at_most_the_initial_cost(pool: tuple[CardSpec, ...]) -> None:
    assert all(0 < card.cost <= INITIAL_COST for card in pool)


def test_costs_and_stats_stay_in_the_playable_ranges(pool: tuple[CardSpec, ...]) -> None:
    for card in normal(pool):
        assert 150 <= card.cost <= 450, card.name
        assert 20 <= card.attack <= 250, card.name
        assert 200 <= card.durability <= 700, card.name
    for card in magic(pool):
        assert 50 <= card.cost <= 300, card.name


def test_at_least_ten_decks_of_three_normal_cards_fit_the_initial_cost(
    pool: tuple[CardSpec, ...],
) -> None:
    decks = [
        deck
        for deck in itertools.combinations(normal(pool), 3)
        if sum(card.cost for card in deck) <= INITIAL_COST
    ]
    assert len(decks) >= 10
    # every normal card is in some deck that fits, even the dearest
    assert {card.name for deck in decks for card in deck} == {card.name for card in normal(pool)}


def test_a_deck_and_three_magic_cards_can_fit_the_initial_cost(
    pool: tuple[CardSpec, ...],
) -> None:
    cheapest_deck = sorted(card.cost for card in normal(pool))[:3]
    cheapest_magic = sorted(card.cost for card in magic(pool))[:3]
    assert sum(cheapest_deck) + sum(cheapest_magic) <= INITIAL_COST


def test_dearer_plain_cards_are_stronger(pool: tuple[CardSpec, ...]) -> None:
    plain = sorted((card for card in normal(pool) if not card.abilities), key=lambda c: c.cost)
    assert len(plain) >= 2
    bulk = [card.attack * card.durability for card in plain]
    assert bulk == sorted(bulk)


def test_dearer_normal_cards_carry_more_stats_on_the_whole(pool: tuple[CardSpec, ...]) -> None:
    cards = sorted(normal(pool), key=lambda card: card.cost)
    third = len(cards) // 3
    cheap, dear = cards[:third], cards[-third:]

    def mean(group: list[CardSpec]) -> float:
        return sum(card.attack * card.durability for card in group) / len(group)

    assert mean(dear) > 1.5 * mean(cheap)


# --------------------------------------------------------------------------- bad files

NORMAL_CARD = """\
[[cards]]
name = "{name}"
kind = "normal"
cost = 200
attack = 50
durability = 300
abilities = [{{effect = "damage", amount = 60, timing = "entry"}}]
text = "試験用"
"""

MAGIC_CARD = """\
[[cards]]
name = "{name}"
kind = "magic"
cost = 100
abilities = [{{effect = "heal", amount = 100}}]
"""


def good_file(normal_count: int = 24, magic_count: int = 12, players: bool = True) -> str:
    """A file that passes every check: the source's three cards, then numbered house cards."""
    names = ["舞踏子", "ホープ", "MAKI"] if players else []
    names += [f"兵士{index}" for index in range(normal_count - len(names))]
    parts = ["# a test pool\n"]
    parts += [NORMAL_CARD.format(name=name) for name in names]
    parts += [MAGIC_CARD.format(name=f"魔法{index}") for index in range(magic_count)]
    return "\n".join(parts)


def header_line(text: str, name: str) -> int:
    """The line of the ``[[cards]]`` header of the card whose name line is ``name = "<name>"``
    (the last such card when the name repeats)."""
    lines = text.splitlines()
    index = max(i for i, line in enumerate(lines) if line == f'name = "{name}"')
    while lines[index] != "[[cards]]":
        index -= 1
    return index + 1


def pool_error(tmp_path: Path, text: str) -> ContentError:
    path = tmp_path / "cards.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ContentError) as caught:
        load_content(path, StarterCards, _check)
    assert caught.value.path == path.resolve()
    return caught.value


def test_a_good_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "cards.toml"
    path.write_text(good_file(), encoding="utf-8")
    loaded = load_content(path, StarterCards, _check)
    assert len(loaded.cards) == 36
    assert loaded.cards[0].abilities[0].timing == "entry"


def test_a_duplicate_name_is_refused_at_the_repeat(tmp_path: Path) -> None:
    text = good_file() + "\n" + NORMAL_CARD.format(name="兵士3")
    error = pool_error(tmp_path, text)
    assert error.line == header_line(text, "兵士3")
    assert error.line > 100  # the repeat, at the end, not the first 兵士3
    assert error.message == "cards[36].name: '兵士3' is already used by cards[6]"
    assert str(error) == f"cards.toml:{error.line}: {error.message}"


def test_a_normal_card_without_durability_is_refused_at_its_line(tmp_path: Path) -> None:
    text = good_file().replace(
        'name = "兵士5"\nkind = "normal"\ncost = 200\nattack = 50\ndurability = 300\n',
        'name = "兵士5"\nkind = "normal"\ncost = 200\nattack = 50\n',
    )
    error = pool_error(tmp_path, text)
    assert error.line == header_line(text, "兵士5")
    assert error.message.startswith("cards[8]: ")
    assert "durability 1 or more" in error.message
    assert str(error).startswith(f"cards.toml:{error.line}: cards[8]")


def test_a_magic_card_with_attack_is_refused_at_its_line(tmp_path: Path) -> None:
    text = good_file().replace(
        'name = "魔法4"\nkind = "magic"\n', 'name = "魔法4"\nkind = "magic"\nattack = 100\n'
    )
    error = pool_error(tmp_path, text)
    assert error.line == header_line(text, "魔法4")
    assert error.message.startswith("cards[28]: ")
    assert "no attack or durability" in error.message


def test_a_normal_ability_without_timing_is_refused_at_its_line(tmp_path: Path) -> None:
    text = good_file().replace(
        'name = "ホープ"\nkind = "normal"\ncost = 200\nattack = 50\ndurability = 300\n'
        'abilities = [{effect = "damage", amount = 60, timing = "entry"}]',
        'name = "ホープ"\nkind = "normal"\ncost = 200\nattack = 50\ndurability = 300\n'
        'abilities = [{effect = "damage", amount = 60}]',
    )
    error = pool_error(tmp_path, text)
    assert error.line == header_line(text, "ホープ")
    assert error.message.startswith("cards[1]: ")
    assert "says when it fires" in error.message


def test_an_unknown_effect_is_refused_at_its_card(tmp_path: Path) -> None:
    text = good_file().replace(
        'name = "兵士10"\nkind = "normal"\ncost = 200\nattack = 50\ndurability = 300\n'
        'abilities = [{effect = "damage"',
        'name = "兵士10"\nkind = "normal"\ncost = 200\nattack = 50\ndurability = 300\n'
        'abilities = [{effect = "poison"',
    )
    error = pool_error(tmp_path, text)
    assert error.line == header_line(text, "兵士10")
    assert error.message.startswith("cards[13].abilities[0].effect: Input should be 'damage'")


def test_an_unknown_effect_in_a_multiline_ability_list_is_refused_at_its_card(
    tmp_path: Path,
) -> None:
    text = good_file().replace(
        'name = "MAKI"\nkind = "normal"\ncost = 200\nattack = 50\ndurability = 300\n'
        'abilities = [{effect = "damage", amount = 60, timing = "entry"}]',
        'name = "MAKI"\nkind = "normal"\ncost = 200\nattack = 50\ndurability = 300\n'
        "abilities = [\n"
        '    {effect = "heal", amount = 60, timing = "turn_start"},\n'
        '    {effect = "teleport", amount = 60, timing = "entry"},\n'
        "]",
    )
    error = pool_error(tmp_path, text)
    assert error.line == header_line(text, "MAKI")
    assert error.message.startswith("cards[2].abilities[1].effect: Input should be")


def test_a_magic_ability_with_a_timing_is_refused(tmp_path: Path) -> None:
    text = good_file().replace(
        '{effect = "heal", amount = 100}', '{effect = "heal", amount = 100, timing = "entry"}', 1
    )
    error = pool_error(tmp_path, text)
    assert error.line == header_line(text, "魔法0")
    assert "no timing" in error.message


def test_too_few_cards_are_refused_at_the_first_card(tmp_path: Path) -> None:
    text = good_file(normal_count=23)
    error = pool_error(tmp_path, text)
    first = text.splitlines().index("[[cards]]") + 1
    assert str(error) == f"cards.toml:{first}: cards: at least 24 normal and 12 magic cards"


def test_a_pool_without_the_source_cards_is_refused(tmp_path: Path) -> None:
    text = good_file(normal_count=27, players=False)
    error = pool_error(tmp_path, text)
    assert error.line == text.splitlines().index("[[cards]]") + 1
    assert "舞踏子" in error.message and "ホープ" in error.message and "MAKI" in error.message


def test_a_pool_where_no_deck_fits_the_initial_cost_is_refused(tmp_path: Path) -> None:
    text = good_file().replace("cost = 200\n", "cost = 400\n")
    error = pool_error(tmp_path, text)
    assert error.line == text.splitlines().index("[[cards]]") + 1
    assert error.message == "cards: no deck of 3 normal cards fits 1000 (the cheapest costs 1200)"
