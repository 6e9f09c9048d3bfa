"""grammar/eitsuku.lark: the game's command lines (docs/rules/eitsuku.md, "Command syntax")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.games.base import CommandSyntaxError, normalise
from app.games.commands import As
from app.games.eitsuku import game
from app.games.eitsuku.cards import BUDGET_CARDS, ROLE_DECKS, ROLE_NUMBERS, SLOTS, fits
from app.games.eitsuku.commands import (
    Buy,
    Choose,
    Draw,
    End,
    PlayEvent,
    Release,
    Scout,
    SetRole,
    Shuffle,
)
from app.games.eitsuku.events import EVENT_NAMES, EVENTS
from app.games.eitsuku.grammar import PARSER, SYNTAX_EXAMPLES


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("EVENT タイアップキャンペーン", PlayEvent("タイアップキャンペーン")),
        ("イベント 【タイアップキャンペーン】", PlayEvent("タイアップキャンペーン")),
        ("EVENT プロモーターの介入 3", PlayEvent("プロモーターの介入", number=3)),
        ("EVENT 新たなるチャンス 役者3", PlayEvent("新たなるチャンス", card="役者3")),
        ("EVENT 独自の情報網 【脚本家/5】", PlayEvent("独自の情報網", card="脚本家5")),
        ("EVENT ストライキ 花子", PlayEvent("ストライキ", player="花子")),
        ("EVENT 方針転換 主演 役者5", PlayEvent("方針転換", slot="主演", card="役者5")),
        ("SCOUT 役者", Scout("役者")),
        ("スカウト 演出家", Scout("演出家")),
        ("BUY 中", Buy("予算・中")),
        ("購入 予算・大", Buy("予算・大")),
        ("BUY 中 WITH 小 小 小", Buy("予算・中", ("予算・小",) * 3)),
        (
            "購入 大 裏返し 予算・中, 予算・中、予算・小 予算・小",
            Buy("予算・大", ("予算・中", "予算・中", "予算・小", "予算・小")),
        ),
        ("DRAW", Draw()),
        ("ドロー", Draw()),
        ("SET 主演 役者3", SetRole("主演", "役者3")),
        (
            "配置 脚本家 脚本家4 支払 中 中 小 小",
            SetRole("脚本家", "脚本家4", ("予算・中", "予算・中", "予算・小", "予算・小")),
        ),
        (
            "SET 助演 役者/2 支払い 【予算・中】 予算中",
            SetRole("助演", "役者2", ("予算・中", "予算・中")),
        ),
        (
            "SET 音楽家 【音楽家3】 PAY 予算/小×3 中",
            SetRole("音楽家", "音楽家3", ("予算・中", "予算・小", "予算・小", "予算・小")),
        ),
        ("RELEASE", Release()),
        ("公開", Release()),
        ("END", End()),
        ("終了", End()),
        ("end", End()),
        ("CHOOSE 音楽家", Choose("音楽家")),
        ("選択 役者", Choose("役者")),
        ("SHUFFLE 役者", Shuffle("役者")),
        ("切り直し 演出", Shuffle("演出家")),
        ("SHUFFLE イベント", Shuffle("イベント")),
        ("shuffle event", Shuffle("イベント")),
    ],
)
def test_game_command_lines_parse(line: str, command: object) -> None:
    """Rules page: EVENT/イベント, SCOUT/スカウト, BUY/購入 [WITH], DRAW/ドロー,
    SET/配置 [PAY/支払], RELEASE/公開, END/終了, CHOOSE/選択; cards written 役者3, 【役者/3】,
    役者/3; budget cards 予算・小, 小, 【予算・小】; lists by spaces or commas/、."""
    assert game.parse(line) == command
    assert game.parse(command.canonical()) == command  # type: ignore[attr-defined]


def test_card_spellings_are_one_card() -> None:
    """Rules page: "A card is written 役者3 (also 【役者/3】, 役者/3)"."""
    for spelling in ("役者3", "役者/3", "【役者/3】", "【役者3】", "役者／３", "【役者／３】"):
        assert game.parse(f"SET 主演 {spelling}") == SetRole("主演", "役者3")
    for spelling in ("予算・小", "予算小", "予算/小", "小", "【予算・小】", "予算･小", "小×1"):
        assert game.parse(f"SET 主演 役者3 PAY {spelling}") == SetRole(
            "主演", "役者3", ("予算・小",)
        )


@pytest.mark.parametrize("bad", ["役者7", "役者0", "脚本家12", "【演出家/9】"])
def test_role_numbers_1_to_6_only(bad: str) -> None:
    """R 2−1: role decks hold 『1〜3』 and 『4〜6』 only, so 役者7 is a syntax error."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(f"SET 主演 {bad}")
    assert "役割カードの数字は 1〜6 です" in caught.value.message
    assert caught.value.column == len("SET 主演 ") + 1


def test_budget_multiplier_limited_to_weekly_five() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("SET 主演 役者3 PAY 小×6")
    assert "1〜5" in caught.value.message


def test_buy_takes_one_card() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("BUY 中×2")
    assert "1枚だけ" in caught.value.message


def test_promoter_number_1_to_6() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("EVENT プロモーターの介入 7")
    assert "1〜6" in caught.value.message
    assert caught.value.column == len("EVENT プロモーターの介入 ") + 1


EXAMPLES = [(label, line) for label, lines in SYNTAX_EXAMPLES.items() for line in lines]


@pytest.mark.parametrize(("label", "line"), EXAMPLES)
def test_syntax_examples_yield_their_message(label: str, line: str) -> None:
    """The match-examples table: every malformed example fails to parse and gets its label."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(line)
    assert caught.value.message == label
    assert PARSER.example_label(line) == label


def test_syntax_example_tables_do_not_overlap() -> None:
    """No parser state is claimed by two labels (the first would silently win)."""
    owner: dict[tuple[int, ...], str] = {}
    for label, lines in PARSER.examples.items():
        for line in lines:
            key = PARSER._error_key(normalise(line))
            assert key is not None, line
            assert owner.setdefault(key, label) == label, line


def test_syntax_error_column_points_at_the_problem() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("SET 主演 役者3 ほげ")
    assert caught.value.column == len("SET 主演 役者3 ") + 1
    assert caught.value.line == "SET 主演 役者3 ほげ"
    assert set(caught.value.expected) == {"PAY(支払)", "行末"}
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("ＳＣＯＵＴ")
    assert caught.value.column == len("SCOUT") + 1
    assert caught.value.line == "SCOUT"


def test_event_names_are_the_fifteen_of_the_rulebook() -> None:
    """R 3 カードリスト: the 15 event kinds, each parsed by its name."""
    assert len(EVENT_NAMES) == 15
    for name in EVENT_NAMES:
        args = {"number": "3", "card": "役者3", "slot": "主演", "player": "花子"}
        line = " ".join(["EVENT", name, *(args[a] for a in EVENTS[name].args)])
        command = game.parse(line)
        assert isinstance(command, PlayEvent) and command.name == name


budget_lists = st.one_of(
    st.none(), st.lists(st.sampled_from(BUDGET_CARDS), min_size=1, max_size=5).map(tuple)
)
role_cards = st.builds(
    lambda d, n: f"{d}{n}", st.sampled_from(ROLE_DECKS), st.sampled_from(ROLE_NUMBERS)
)
names = st.text(alphabet="abcXYZ太郎花子_-1", min_size=1, max_size=8)


def _event_command(name: str, number: int, card: str, slot: str, player: str) -> PlayEvent:
    args = EVENTS[name].args
    return PlayEvent(
        name,
        number=number if "number" in args else None,
        card=card if "card" in args else None,
        slot=slot if "slot" in args else None,
        player=player if "player" in args else None,
    )


commands = st.one_of(
    st.builds(
        _event_command,
        st.sampled_from(EVENT_NAMES),
        st.integers(1, 6),
        role_cards,
        st.sampled_from(SLOTS),
        names,
    ),
    st.builds(Scout, st.sampled_from(ROLE_DECKS)),
    st.builds(Choose, st.sampled_from(ROLE_DECKS)),
    st.builds(Shuffle, st.sampled_from([*ROLE_DECKS, "イベント"])),
    st.builds(Buy, st.sampled_from(BUDGET_CARDS), budget_lists),
    st.builds(SetRole, st.sampled_from(SLOTS), role_cards, budget_lists),
    st.just(Draw()),
    st.just(Release()),
    st.just(End()),
)


@given(commands)
@settings(max_examples=300, deadline=None)
def test_canonical_round_trip_every_game_command(command: object) -> None:
    """Every command object has canonical() with game.parse(cmd.canonical()) == cmd."""
    line = command.canonical()  # type: ignore[attr-defined]
    assert game.parse(line) == command
    assert game.is_command_line(line)


def test_fits_matches_slot_rules() -> None:
    """I: 役者 cards go to 主演 or 助演; every other role card only to its own slot."""
    assert fits("役者3", "主演") and fits("役者3", "助演")
    assert not fits("役者3", "脚本家")
    assert fits("脚本家3", "脚本家") and not fits("脚本家3", "主演")


# --- as the rulebook writes it (issue: "Input as Japanese players write it") ---------------


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("配置 タイアップキャンペーン", PlayEvent("タイアップキャンペーン")),
        ("配置 【タイアップキャンペーン】", PlayEvent("タイアップキャンペーン")),
        ("配置タイアップキャンペーン", PlayEvent("タイアップキャンペーン")),
        ("配置 脚本家大賞", PlayEvent("脚本家大賞")),
        ("配置 プロモーターの介入 3", PlayEvent("プロモーターの介入", number=3)),
        ("配置 新たなるチャンス 役者3", PlayEvent("新たなるチャンス", card="役者3")),
        ("配置 独自の情報網 【脚本家/5】", PlayEvent("独自の情報網", card="脚本家5")),
        ("配置 ストライキ 花子", PlayEvent("ストライキ", player="花子")),
        ("配置 方針転換 主演 役者5", PlayEvent("方針転換", slot="主演", card="役者5")),
        ("AS 花子 配置 電撃発表", As("花子", PlayEvent("電撃発表"))),
    ],
)
def test_haichi_places_an_event_as_the_source_writes_it(line: str, command: object) -> None:
    """R アクションフェイズ「【タイアップキャンペーン】を配置しました」: 配置 <event card> is EVENT;
    its canonical line stays EVENT."""
    assert game.parse(line) == command
    assert game.is_command_line(line)
    canonical = command.canonical()  # type: ignore[attr-defined]
    assert "配置" not in canonical and game.parse(canonical) == command


def test_haichi_still_sets_a_role_card() -> None:
    """配置 <slot> <card> stays SET: the word after 配置 tells the two apart."""
    assert game.parse("配置 主演 役者3") == SetRole("主演", "役者3")
    assert game.parse("配置 脚本家 脚本家4 支払 中") == SetRole("脚本家", "脚本家4", ("予算・中",))
    assert game.parse("配置 演出家大賞") == PlayEvent("演出家大賞")
    assert game.parse("配置 演出家 演出家2") == SetRole("演出家", "演出家2")


def test_haichi_with_neither_a_slot_nor_an_event_names_both() -> None:
    """配置 x: the message shows both forms (it used to speak of 役割場 only)."""
    for line in ("配置", "配置 x", "配置 未知のカード", "配置 役者3"):
        with pytest.raises(CommandSyntaxError) as caught:
            game.parse(line)
        message = caught.value.message
        assert "配置 主演 役者3" in message and "配置 タイアップキャンペーン" in message, line
        assert "イベントカード名" in caught.value.expected and "主演" in caught.value.expected


def test_haichi_event_errors_get_the_event_messages() -> None:
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("配置 プロモーターの介入")
    assert caught.value.message.startswith("プロモーターの介入 には宣言する数字")
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("配置 プロモーターの介入 7")
    assert "1〜6" in caught.value.message
    assert caught.value.column == len("配置 プロモーターの介入 ") + 1


def test_english_set_of_an_event_points_at_event() -> None:
    """The English verbs keep one meaning each; SET <event> says where events go."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse("SET タイアップキャンペーン")
    assert "EVENT か 配置" in caught.value.message


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("SCOUT 音楽", Scout("音楽家")),
        ("スカウト脚本", Scout("脚本家")),
        ("スカウト 演出", Scout("演出家")),
        ("CHOOSE 演出", Choose("演出家")),
        ("選択 音楽", Choose("音楽家")),
        ("SET 脚本 脚本家2", SetRole("脚本家", "脚本家2")),
        (
            "配置 音楽 【音楽家/3】 支払 中 小",
            SetRole("音楽家", "音楽家3", ("予算・中", "予算・小")),
        ),
        ("SET 演出 演出家6", SetRole("演出家", "演出家6")),
        ("EVENT 方針転換 脚本 脚本家1", PlayEvent("方針転換", slot="脚本家", card="脚本家1")),
        ("配置 方針転換 音楽 音楽家4", PlayEvent("方針転換", slot="音楽家", card="音楽家4")),
    ],
)
def test_short_deck_names_of_the_rulebook(line: str, command: object) -> None:
    """R 2−2「1・2役者、3音楽、4演出、5脚本、6任意」: 脚本, 音楽, 演出 name the deck or slot;
    canonical lines spell them out."""
    assert game.parse(line) == command
    canonical = command.canonical()  # type: ignore[attr-defined]
    assert game.parse(canonical) == command
    assert all(f"{short} " not in f"{canonical} " for short in ("脚本", "音楽", "演出"))


@pytest.mark.parametrize("card", ["音楽3", "脚本2", "演出5"])
def test_role_cards_keep_the_full_deck_name(card: str) -> None:
    """The rulebook writes cards only with the full name (『音楽家1〜3』, 【音楽家/1】)."""
    with pytest.raises(CommandSyntaxError) as caught:
        game.parse(f"SET 音楽 {card}")
    assert caught.value.column == len("SET 音楽 ") + 1


def test_haichi_examples_cover_every_set_and_event_example() -> None:
    """配置 reaches each SET/EVENT error by its own parser stack: each example has its 配置 twin
    with a friendly message (not the bare "expected one of" list)."""
    for lines in SYNTAX_EXAMPLES.values():
        for line in lines:
            verb, _, rest = line.partition(" ")
            if verb in ("SET", "EVENT"):
                twin = f"配置 {rest}".strip()
                assert PARSER.example_label(twin) is not None, twin
