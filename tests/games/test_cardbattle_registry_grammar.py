"""grammar/cardbattle_registry.lark: the card registry's lines (docs/cards.md, "Syntax"), parsed
by app/games/cardbattle/registry.py into frozen dataclasses with a validated CardSpec."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark import Lark

from app.games.base import STRICT_AVAILABLE, CommandSyntaxError, normalise
from app.games.cardbattle.cards import EFFECT_JA, EFFECTS, TIMING_JA, TIMINGS, Ability, CardSpec
from app.games.cardbattle.registry import (
    LANGUAGE,
    PARSER,
    SYNTAX_EXAMPLES,
    Approve,
    NewCard,
    PromoteCard,
    Reject,
    card_text,
    name_key,
    parse,
)
from app.games.resources import resource_dir
from app.gm.lines import classify_line, command_lines, misspelt_verb
from tests.support.cardbattle import magic, normal

SWORD = normal("炎の剣", 300, 200, 300, Ability(timing="entry", effect="damage", amount=100))
FIREBALL = magic("火球", 200, Ability(effect="damage_all", amount=100))


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("CARD NEW 炎の剣 COST 300 ATK 200 DUR 300", NewCard(normal("炎の剣", 300, 200, 300))),
        ("CARD NEW 炎の剣 COST 300 ATK 200 DUR 300 ABILITY 登場時 ダメージ 100", NewCard(SWORD)),
        ("card new 炎の剣 cost 300 atk 200 dur 300 ability entry damage 100", NewCard(SWORD)),
        (
            "カード 新規 炎の剣 コスト 300 攻撃 200 耐久 300 能力 登場時 ダメージ 100",
            NewCard(SWORD),
        ),
        (
            "カード 登録 炎の剣 コスト300 攻撃力200 耐久力300 能力 登場時 ダメージ100",
            NewCard(SWORD),
        ),
        ("ＣＡＲＤ　ＮＥＷ　炎の剣　ＣＯＳＴ　３００　ＡＴＫ　２００　ＤＵＲ　３００", None),
        ("CARD NEW 炎の剣 COST 300 ATTACK 200 DURABILITY 300 ABILITIES entry damage 100", None),
        ("CARD NEW 火球 MAGIC COST 200 ABILITY 全体ダメージ 100", NewCard(FIREBALL)),
        ("カード 新規 火球 魔法 コスト 200 能力 damage_all 100", NewCard(FIREBALL)),
        ("CARD PROMOTE 炎の剣 COST 300 ATK 200 DUR 300 ABILITY 登場時 ダメージ 100", None),
        ("カード 昇格 炎の剣 コスト 300 攻撃 200 耐久 300 能力 登場時 ダメージ 100", None),
        ("カード プロモーション 炎の剣 COST 300 ATK 200 DUR 300 ABILITY entry damage 100", None),
        ("APPROVE 炎の剣", Approve("炎の剣")),
        ("承認 炎の剣", Approve("炎の剣")),
        ("approve 炎の剣", Approve("炎の剣")),
        ("REJECT 炎の剣 攻撃力が高すぎます", Reject("炎の剣", "攻撃力が高すぎます")),
        ("却下 炎の剣 強すぎる。 コストを上げて", Reject("炎の剣", "強すぎる。 コストを上げて")),
    ],
)
def test_lines_parse_to_commands(line: str, command: object) -> None:
    parsed = parse(line)
    if command is None:  # the same card as the line above it in spirit: only check the shape
        assert isinstance(parsed, NewCard | PromoteCard)
        assert parsed.card.name == "炎の剣" and parsed.card.cost == 300
    else:
        assert parsed == command


def test_promote_has_the_shape_of_new() -> None:
    line = "CARD PROMOTE 炎の剣 COST 300 ATK 250 DUR 300 ABILITY 登場時 ダメージ 100"
    promoted = parse(line)
    assert isinstance(promoted, PromoteCard)
    assert promoted.card == SWORD.model_copy(update={"attack": 250})
    magic_promoted = parse("CARD PROMOTE 火球 MAGIC COST 150 ABILITY 全体ダメージ 100")
    assert magic_promoted == PromoteCard(FIREBALL.model_copy(update={"cost": 150}))


def test_several_abilities_with_commas_slashes_or_spaces() -> None:
    expected = normal(
        "盾の騎士",
        400,
        100,
        500,
        Ability(timing="entry", effect="shield", amount=50),
        Ability(timing="destroyed", effect="remove"),
        Ability(timing="turn_start", effect="heal", amount=30),
    )
    for separator in (", ", "、", " / ", " "):
        line = (
            f"CARD NEW 盾の騎士 COST 400 ATK 100 DUR 500 ABILITY 登場時 防御 50{separator}"
            f"破壊時 除外{separator}手番開始時 回復 30"
        )
        assert parse(line) == NewCard(expected), separator


def test_every_timing_and_effect_in_both_languages() -> None:
    """cards.py's vocabulary and the grammar's TIMING / EFFECT terminals are the same words."""
    for timing in TIMINGS:
        for word in (timing, TIMING_JA[timing], timing.upper()):
            line = f"CARD NEW 剣 COST 1 ATK 1 DUR 1 ABILITY {word} heal 5"
            command = parse(line)
            assert isinstance(command, NewCard)
            assert command.card.abilities == (Ability(timing=timing, effect="heal", amount=5),)
    for effect in EFFECTS:
        amount = "" if effect == "remove" else (" -20" if effect == "cost" else " 20")
        for word in (effect, EFFECT_JA[effect]):
            command = parse(f"CARD NEW 呪文 MAGIC COST 1 ABILITY {word}{amount}")
            assert isinstance(command, NewCard)
            assert command.card.abilities[0].effect == effect
            wanted = 0 if effect == "remove" else (-20 if effect == "cost" else 20)
            assert command.card.abilities[0].amount == wanted


def test_amounts_may_be_negative_for_cost_and_take_the_minus_sign() -> None:
    for minus in ("-", "\u2212"):
        command = parse(f"CARD NEW 値引き MAGIC COST 0 ABILITY コスト {minus}100")
        assert isinstance(command, NewCard)
        assert command.card.abilities == (Ability(effect="cost", amount=-100),)
    command = parse("CARD NEW 値上げ MAGIC COST 0 ABILITY cost +50")
    assert isinstance(command, NewCard) and command.card.abilities[0].amount == 50


def test_text_is_the_rest_of_the_line() -> None:
    command = parse("CARD NEW 炎の剣 COST 300 ATK 200 DUR 300 TEXT 伝説の 炎の剣。")
    assert isinstance(command, NewCard) and command.card.text == "伝説の 炎の剣。"
    command = parse("CARD NEW 火球 MAGIC COST 200 ABILITY 全体ダメージ 100 説明 熱い")
    assert isinstance(command, NewCard) and command.card.text == "熱い"


@pytest.mark.parametrize(
    "command",
    [
        NewCard(SWORD),
        NewCard(FIREBALL),
        PromoteCard(SWORD.model_copy(update={"text": "伝説の 剣"})),
        NewCard(magic("値引き", 0, Ability(effect="cost", amount=-100))),
        NewCard(
            normal(
                "MAKI",
                500,
                300,
                200,
                Ability(timing="attack", effect="attack_up", amount=10),
                Ability(timing="destroyed", effect="remove"),
            )
        ),
        Approve("炎の剣"),
        Reject("炎の剣", "攻撃力が 高すぎます"),
    ],
)
def test_canonical_round_trip(command: object) -> None:
    assert hasattr(command, "canonical")
    text = command.canonical()  # type: ignore[attr-defined]
    assert parse(text) == command
    assert text.startswith(("CARD NEW ", "CARD PROMOTE ", "APPROVE ", "REJECT "))


# -- values the card model refuses: a friendly message at the token it is about


@pytest.mark.parametrize(
    ("line", "message", "at"),
    [
        (
            "CARD NEW 炎の剣 COST 1200 ATK 200 DUR 300",
            "コストは 0〜1000 です（1200 は書けません）。",
            "1200",
        ),
        (
            "CARD NEW 炎の剣 COST 300 ATK 1000 DUR 300",
            "攻撃力は 0〜999 です（1000 は書けません）。",
            "1000",
        ),
        ("CARD NEW 炎の剣 COST 300 ATK 200 DUR 0", "通常カードの耐久力は 1〜999 です", "0"),
        (
            "CARD NEW 炎の剣 COST 300 ATK 200 DUR 5000",
            "耐久力は 1〜999 です（5000 は書けません）。",
            "5000",
        ),
        ("CARD NEW 炎の剣 COST 99999999999999999999999999 ATK 1 DUR 1", "コストは 0〜1000", "9999"),
        (
            "CARD NEW 炎の剣 COST 3 ATK 1 DUR 1 ABILITY 登場時 ダメージ",
            "「ダメージ」には 1 以上の量",
            "ダメージ",
        ),
        (
            "CARD NEW 炎の剣 COST 3 ATK 1 DUR 1 ABILITY 登場時 ダメージ 0",
            "「ダメージ」には 1 以上の量",
            "0",
        ),
        (
            "CARD NEW 炎の剣 COST 3 ATK 1 DUR 1 ABILITY 登場時 除外 5",
            "「除外」には量を書きません。",
            "5",
        ),
        (
            "CARD NEW 値引き MAGIC COST 3 ABILITY コスト 0",
            "「コスト」には増減する量を 0 以外で",
            "0",
        ),
        (
            "CARD NEW 炎の剣 COST 3 ATK 1 DUR 1 ABILITY 登場時 回復 1000",
            "能力の量は -999〜999 です",
            "1000",
        ),
        (
            "CARD NEW 炎 COST 3 ATK 1 DUR 1 ABILITY 登場時 回復 1, 登場時 回復 2, 登場時 回復 3,"
            " 登場時 回復 4, 破壊時 回復 5",
            "能力は4つまでです。",
            "破壊時",
        ),
        (
            "CARD NEW 炎の剣炎の剣炎の剣炎の剣炎の剣炎の剣 COST 3 ATK 1 DUR 1",
            "カード名は16文字までです。",
            "炎",
        ),
        ("CARD NEW 剣,盾 COST 3 ATK 1 DUR 1", "カード名に , は使えません", "剣"),
        ("CARD NEW 剣/盾 COST 3 ATK 1 DUR 1", "カード名に / は使えません", "剣"),
        ("CARD NEW 1>2 COST 3 ATK 1 DUR 1", "カード名に > は使えません", "1"),
        ("CARD NEW 123 COST 3 ATK 1 DUR 1", "数字だけのカード名は使えません。", "123"),
        ("CARD NEW MAGIC COST 3 ATK 1 DUR 1", "「MAGIC」は命令の言葉なので", "MAGIC"),
        ("CARD NEW コスト COST 3 ATK 1 DUR 1", "「コスト」は命令の言葉なので", "コスト"),
        ("CARD NEW 登場時 COST 3 ATK 1 DUR 1", "「登場時」は命令の言葉なので", "登場時"),
        (
            "CARD NEW 剣 COST 3 ATK 1 DUR 1 TEXT " + "あ" * 201,
            "カードの説明は200文字までです。",
            "あ",
        ),
        ("REJECT 剣 " + "理" * 501, "却下の理由は500文字までです。", "理"),
    ],
)
def test_values_out_of_range_get_a_reason_and_a_column(line: str, message: str, at: str) -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert caught.value.message.startswith(message), caught.value.message
    assert caught.value.column is not None
    assert caught.value.line[caught.value.column - 1 :].startswith(at)


# -- friendly syntax errors


EXAMPLES = [(label, line) for label, lines in SYNTAX_EXAMPLES.items() for line in lines]


@pytest.mark.parametrize(("label", "line"), EXAMPLES)
def test_syntax_examples_yield_their_message(label: str, line: str) -> None:
    """The match-examples table: every malformed example fails to parse and gets its label."""
    with pytest.raises(CommandSyntaxError) as caught:
        parse(line)
    assert caught.value.message == label
    assert PARSER.example_label(line) == label
    assert caught.value.column is not None and caught.value.column >= 1
    assert caught.value.line == normalise(line)


def test_syntax_example_tables_do_not_overlap() -> None:
    """No parser state is claimed by two of the registry's labels (the first would win)."""
    owner: dict[tuple[int, ...], str] = {}
    for label, lines in SYNTAX_EXAMPLES.items():
        for line in lines:
            key = PARSER._error_key(normalise(line))
            assert key is not None, line
            assert owner.setdefault(key, label) == label, line


def test_syntax_error_column_and_expected() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        parse("CARD NEW 炎の剣 COST 300 ATK 200")
    assert caught.value.column == len("CARD NEW 炎の剣 COST 300 ATK 200") + 1
    assert caught.value.expected == ["DUR(耐久)"]
    with pytest.raises(CommandSyntaxError) as caught:
        parse("CARD NEW 炎の剣 COST 300 ATK x DUR 300")
    assert caught.value.column == len("CARD NEW 炎の剣 COST 300 ATK ") + 1
    assert caught.value.expected == ["数字"]
    with pytest.raises(CommandSyntaxError) as caught:
        parse("CARD NEW 火球 MAGIC COST 200 ABILITY 登場時 ダメージ 100")
    assert caught.value.column == len("CARD NEW 火球 MAGIC COST 200 ABILITY ") + 1
    assert "タイミングは書きません" in caught.value.message
    with pytest.raises(CommandSyntaxError) as caught:
        parse("CARD NEW 炎の剣 COST 300 ATK 200 DUR 300 ABILITY ダメージ 100")
    assert caught.value.column == len("CARD NEW 炎の剣 COST 300 ATK 200 DUR 300 ABILITY ") + 1
    assert caught.value.message.startswith("通常カードの能力は、タイミング")


def test_platform_commands_are_not_registry_commands() -> None:
    for line in ("JOIN", "START", "AS 太郎 APPROVE 剣", "DECK 舞踏子 ホープ MAKI"):
        assert not PARSER.is_command_line(line)
        with pytest.raises(CommandSyntaxError):
            parse(line)


# -- which lines of a post are commands


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("CARD NEW 炎の剣 COST 300 ATK 200 DUR 300", "command"),
        ("カード 新規 炎の剣", "command"),  # a verb: answered, with the syntax error
        ("承認 炎の剣", "command"),
        ("却下", "command"),
        ("APPROVE", "command"),
        ("Card games are fun", "talk"),  # English verb, not in capitals, not a whole line
        ("card new 炎の剣 cost 300 atk 200 dur 300", "command"),  # ... unless it parses
        ("approve of this", "talk"),
        ("カードを作りました", "talk"),
        ("よろしくお願いします", "talk"),
        ("", "talk"),
        ("APROVE 炎の剣", "misspelt"),
        ("REJCT 炎の剣 だめ", "misspelt"),
    ],
)
def test_classify_line(line: str, kind: str) -> None:
    assert classify_line(LANGUAGE, line) == kind


def test_command_lines_number_the_lines_of_a_post() -> None:
    body = "提案します\nCARD NEW 炎の剣 COST 300 ATK 200 DUR 300\nよろしく\n承認 火球"
    assert command_lines(LANGUAGE, body) == [
        (2, "CARD NEW 炎の剣 COST 300 ATK 200 DUR 300"),
        (4, "承認 火球"),
    ]
    assert misspelt_verb(LANGUAGE, "APROVE 炎の剣") == "APPROVE"
    assert misspelt_verb(LANGUAGE, "APPROVE 炎の剣") is None


@pytest.mark.parametrize(
    ("line", "verb"),
    [
        ("カ一ド 新規 炎の剣 COST 300 ATK 200 DUR 300", "カード"),  # 一 (one) for ー
        ("crad new 炎の剣 cost 300 atk 200 dur 300", "CARD"),
        ("APROVE 炎の剣", "APPROVE"),
        ("カードを作りました", None),
        ("aprove 炎の剣", None),  # the rest is a name: nothing says it was meant as a command
        ("Crad games are fun", None),
    ],
)
def test_the_registry_reads_misspelt_verbs_as_a_game_thread_does(
    line: str, verb: str | None
) -> None:
    """docs/forum.md: a first word close to a verb is a misspelt verb in capitals, or when
    the rest of the line reads as that verb's arguments (app/gm/lines.py, one reading for
    every thread the bot answers)."""
    assert misspelt_verb(LANGUAGE, line) == verb
    assert classify_line(LANGUAGE, line) == ("talk" if verb is None else "misspelt")


def test_verbs_include_every_alias() -> None:
    assert {"CARD", "カード", "APPROVE", "承認", "REJECT", "却下"} | {
        "GIVE",
        "配布",
        "RELEASE",
        "手放す",
    } == set(PARSER.verb_words)


def test_name_key_folds_case_and_width() -> None:
    assert name_key("MAKI") == name_key("maki") == name_key("ＭＡＫＩ")
    assert name_key("舞踏子") != name_key("ホープ")


def test_grammar_builds_in_lalr_strict_mode() -> None:
    """STYLE.md: Lark.open(..., parser="lalr", strict=True) — no shift/reduce conflicts, no
    colliding terminals (コスト is both the COST keyword and an effect: never in one state)."""
    parser = Lark.open(
        str(resource_dir("grammar") / "cardbattle_registry.lark"),
        parser="lalr",
        strict=True,
        maybe_placeholders=True,
    )
    assert parser.options.strict
    assert STRICT_AVAILABLE
    text = (resource_dir("grammar") / "cardbattle_registry.lark").read_text(encoding="utf-8")
    assert "%import .common" in text


# -- canonical round trip over generated cards

names = st.text(alphabet="炎の剣火球盾ABCxyz_-", min_size=1, max_size=12).filter(
    lambda name: not PARSER.is_keyword(name)
)
amounts = st.integers(1, 999)
normal_abilities = st.builds(
    Ability,
    timing=st.sampled_from(TIMINGS),
    effect=st.sampled_from([e for e in EFFECTS if e not in ("remove", "cost")]),
    amount=amounts,
)
magic_abilities = st.one_of(
    st.builds(Ability, effect=st.just("remove")),
    st.builds(Ability, effect=st.just("cost"), amount=st.integers(-999, -1) | amounts),
    st.builds(Ability, effect=st.sampled_from(["damage", "heal", "revive"]), amount=amounts),
)
texts = st.text(alphabet="伝説の剣 abc", max_size=20).map(normalise)
cards = st.one_of(
    st.builds(
        CardSpec,
        name=names,
        kind=st.just("normal"),
        cost=st.integers(0, 1000),
        attack=st.integers(0, 999),
        durability=st.integers(1, 999),
        abilities=st.lists(normal_abilities, max_size=4).map(tuple),
        text=texts,
    ),
    st.builds(
        CardSpec,
        name=names,
        kind=st.just("magic"),
        cost=st.integers(0, 1000),
        abilities=st.lists(magic_abilities, min_size=1, max_size=4).map(tuple),
        text=texts,
    ),
)


@settings(max_examples=150, deadline=None)
@given(card=cards, promote=st.booleans())
def test_generated_cards_round_trip(card: CardSpec, promote: bool) -> None:
    command = PromoteCard(card) if promote else NewCard(card)
    assert parse(command.canonical()) == command
    assert card_text(card).startswith(card.name + " ")


def test_every_starter_card_can_be_written_as_a_registry_line() -> None:
    """The house's cards obey the registry's rules for names and values, so a group may post
    a card of the same shape (and the bot could quote any of them as a line)."""
    from app.games.cardbattle.content import starter_pool

    for card in starter_pool():
        command = NewCard(card)
        assert parse(command.canonical()) == command, card.name
