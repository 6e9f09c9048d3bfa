"""What players read says things in words: result tables name each breakdown line (in Japanese
and in English) and show a missing value as —, never ``None`` or a key such as ``cards_left``;
notifications, feeds and mail name the turn (第2週), never its key (``week2``); the archive
names as winners only players ranked 1st with a score."""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import feedparser
import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import i18n
from app.archive import listing
from app.db.engine import Database
from app.db.models import Notification
from app.games import GAMES, find_game
from app.games.base import Game, Rng
from app.gm.results import BREAKDOWN_LABELS as APP_LABELS
from app.notify import feeds
from app.web import messages
from tests.conftest import TEST_SECRET, unique_name
from tests.support.fuzz_states import PLAYERS, Script, Table, script
from tests.test_archive_helpers import make_user
from tests.test_i18n import JAPANESE

# A key or a turn key as the code writes them: snake_case, or letters glued to a number.
RAW_KEY = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b|\b[a-z]+\d+\b|\b(?:round|week)\d*:")
NONE = re.compile(r"\bNone\b")
KINDS = sorted(GAMES)


def impl_of(kind: str) -> Game:
    impl = find_game(kind)
    assert impl is not None
    return impl


def finished(kind: str) -> Script:
    """The kind's scripted game (tests/support/fuzz_states.py), played to its end."""
    played = script(kind, [f"p{seat}" for seat in range(PLAYERS[kind])])
    assert played.impl.is_over(played.stops[-1].state), kind
    return played


def breakdown_keys(kind: str) -> set[str]:
    played = finished(kind)
    result = played.impl.result(played.stops[-1].state)
    assert result is not None
    return {key for entry in result.ranking for key in entry.breakdown}


# --- result tables ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_every_breakdown_line_has_a_label_in_japanese_and_english(kind: str) -> None:
    impl = impl_of(kind)
    keys = breakdown_keys(kind) | set(APP_LABELS)  # the GM's ADJUST line too
    for key in keys:
        japanese = messages.breakdown_label(key, impl)
        assert japanese != key and JAPANESE.search(japanese), (kind, key, japanese)
        assert not RAW_KEY.search(japanese), (kind, key, japanese)
        with i18n.use_language("en"):
            english = messages.breakdown_label(key, kind)
        assert english != key and not JAPANESE.search(english), (kind, key, english)
        assert not RAW_KEY.search(english), (kind, key, english)


def test_numbered_keys_are_labelled_with_their_number() -> None:
    assert messages.breakdown_label("round_2", "eleusis") == "第2ラウンド"
    assert messages.breakdown_label("round_12", "eleusis") == "第12ラウンド"
    with i18n.use_language("en"):
        assert messages.breakdown_label("round_2", "eleusis") == "Round 2"
    assert messages.breakdown_label("no_such_line", "eleusis") == "no_such_line"


def test_result_table_shows_labels_not_keys() -> None:
    lines = messages.breakdown_lines({"base": 18, "release": -5, "events": None}, "eitsuku")
    assert lines == [("基礎点数", 18), ("公開週補正", -5), ("イベント修正", "—")]
    unfinished = {"base": None, "release": None, "events": None, "total": None}
    assert messages.breakdown_lines(unfinished, "eitsuku") == []  # the table says — once
    reason = "花子の総コスト 1050 が1000を超えたため太郎の勝ち(R 敗北条件が優先)"
    shown = messages.breakdown_lines({"reason": reason, "total_cost": 1000}, "cardbattle")
    # A result stored before issue 43 with the rule book's label is shown in players' words.
    said = "花子の総コスト 1050 が1000を超えたため太郎の勝ち(超過の負けが優先)"
    assert shown == [("決着の理由", said), ("総コスト", 1000)]
    with i18n.use_language("en"):
        shown = messages.breakdown_lines({"total": 3, "gm": -2}, "eitsuku")
        assert shown == [("Total", 3), ("GM adjustment", -2)]


# --- the turn in words -----------------------------------------------------------------------

# What a reader finds in the notifications of each scripted game: the turns, in words.
NOTICE = re.compile(r"「ファズ卓」であなたの手番です（(.+)）。")
TURN_WORDS = re.compile(
    r"第\d+(?:週|ラウンド|手番)|アイドル指名|最後の特訓|デッキ封印|魔法の宣言"
    r"|種族選択|スキルのドラフト|リソースの配分"
)
TURNS_IN_WORDS = {
    "eitsuku": ("第1週", "第3週", "第12週"),
    "eleusis": ("第1ラウンド", "第2ラウンド"),
    "populous": ("種族選択", "スキルのドラフト", "リソースの配分", "第1ラウンド", "第7ラウンド"),
    "idolwp": ("アイドル指名", "第1ラウンド", "最後の特訓"),
    "cardbattle": ("デッキ封印", "魔法の宣言", "第1手番"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_every_turn_is_named_in_words_in_japanese_and_english(kind: str) -> None:
    impl = impl_of(kind)
    played = finished(kind)
    for stop in played.stops:
        label = impl.turn_label(stop.state)
        if impl.is_over(stop.state):
            assert label == "", stop.label
            continue
        assert label and JAPANESE.search(label), (stop.label, label)
        assert not re.search(r"[A-Za-z_:]", label), (stop.label, label)
        note = f"「卓」であなたの手番です（{label}）。"
        with i18n.use_language("en"):
            english = messages.translate(note)
        assert not JAPANESE.search(english.replace("卓", "")), (stop.label, english)


def test_turn_labels_say_week_round_and_phase() -> None:
    eitsuku = impl_of("eitsuku")
    assert eitsuku.turn_label(eitsuku.setup(["A", "B"], {}, Rng("label", 0))) == "第1週"
    for kind, words in TURNS_IN_WORDS.items():
        labels = {impl_of(kind).turn_label(stop.state) for stop in finished(kind).stops}
        assert set(words) <= labels, (kind, labels)
    assert Game.turn_label(eitsuku, {}) == ""  # the contract's default: nothing to name
    with i18n.use_language("en"):
        assert messages.translate("「卓」であなたの手番です（第2週）。") == (
            "It is your turn in “卓” (Week 2)."
        )
        assert messages.translate("「卓」であなたの手番です（アイドル指名）。") == (
            "It is your turn in “卓” (Idol draft)."
        )
        assert messages.translate("「卓」であなたの手番です。") == "It is your turn in “卓”."


@pytest.mark.parametrize("kind", KINDS)
def test_notifications_name_the_turn_in_words(session: Session, kind: str) -> None:
    master = make_user(session, "gm")
    players = [make_user(session, "p") for _ in range(PLAYERS[kind])]
    played = script(kind, [user.name for user in players])
    table = Table(session, played, master, players, TEST_SECRET)
    table.advance(played.stops[-1])
    texts = list(
        session.scalars(
            select(Notification.text)
            .where(Notification.game_id == table.game.id, Notification.kind == "your_turn")
            .order_by(Notification.id)
        )
    )
    assert texts
    for text in texts:
        assert not RAW_KEY.search(text) and "over" not in text, text
    said = [NOTICE.fullmatch(text) for text in texts]
    assert all(said), texts
    turns = [found.group(1) for found in said if found]
    assert all(TURN_WORDS.fullmatch(turn) for turn in turns), turns
    assert turns[0] == TURNS_IN_WORDS[kind][0]  # at START
    assert len(set(turns)) > 1  # and as the game moved on
    # The private feed's entries are these texts.
    feed = feedparser.parse(feeds.user_feed(session, players[0], "http://bbsgm.test"))
    titles = [entry.title for entry in feed.entries]
    assert titles and all(not RAW_KEY.search(title) for title in titles)
    assert any(f"（{TURNS_IN_WORDS[kind][0]}）" in title for title in titles)


# --- the archive ------------------------------------------------------------------------------


def _nobody_released() -> dict[str, Any]:
    """えいつく with every player posting only what the bot would (CHOOSE, END) to the end."""
    eitsuku = impl_of("eitsuku")
    state = eitsuku.setup(["A", "B", "C"], {}, Rng("nobody", 0))
    seq = 0
    while not eitsuku.is_over(state):
        for seat in eitsuku.waiting_for(state):
            for line in eitsuku.default_commands(state, seat):
                seq += 1
                state, _ = eitsuku.apply(state, seat, eitsuku.parse(line), Rng("nobody", seq))
    result = eitsuku.result(state)
    assert result is not None
    return result.to_json()


def winners(result: dict[str, Any], status: str = "finished") -> list[str]:
    return listing.winners(SimpleNamespace(status=status, result=result))  # type: ignore[arg-type]


def test_the_archive_names_no_winner_when_nobody_finished() -> None:
    result = _nobody_released()
    assert {(entry["rank"], entry["score"]) for entry in result["ranking"]} == {(1, None)}
    assert winners(result) == []


def test_the_archive_counts_only_rank_1_with_a_score() -> None:
    tied = [{"name": "A", "rank": 1, "score": 20}, {"name": "B", "rank": 1, "score": 20}]
    unfinished = [{"name": "C", "rank": 3, "score": None}]
    assert winners({"ranking": tied + unfinished}) == ["A", "B"]
    draw = [{"name": "A", "rank": 1, "score": 0}, {"name": "B", "rank": 1, "score": 0}]
    assert winners({"ranking": draw}) == ["A", "B"]  # a cardbattle draw: both share the win
    assert winners({"ranking": tied}, status="aborted") == []


# --- the pages of a finished game ------------------------------------------------------------


def _ranking_table(html: str) -> str:
    found = re.search(r'<table class="ranking">.*?</table>', html, re.DOTALL)
    assert found, "no result table"
    return found.group(0)


@pytest.fixture(scope="module")
def finished_games(database: Database) -> Iterator[dict[str, tuple[int, int, str, set[str]]]]:
    """kind -> (game id, thread id, title, breakdown keys): each kind's scripted game played to
    its end through the game master, committed; the えいつく one with a GM's ADJUST."""
    made: dict[str, tuple[int, int, str, set[str]]] = {}
    with database.session() as session:
        for kind in KINDS:
            master = make_user(session, "gm")
            players = [make_user(session, "p") for _ in range(PLAYERS[kind])]
            played = script(kind, [user.name for user in players])
            table = Table(session, played, master, players, TEST_SECRET)
            table.advance(played.stops[-1])
            if kind == "eitsuku":
                table.post(master, f"ADJUST {players[1].name} -3 読み違い")
            title = unique_name("done")
            table.game.title = title
            session.flush()
            session.refresh(table.game)
            assert table.game.status == "finished" and table.game.result
            keys = {k for e in table.game.result["ranking"] for k in e["breakdown"]}
            made[kind] = (table.game.id, table.game.thread_id, title, keys)
        session.commit()
    yield made


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_finished_game_s_pages_show_no_none_and_no_raw_keys(
    client: httpx.Client,
    finished_games: dict[str, tuple[int, int, str, set[str]]],
    kind: str,
    lang: str,
) -> None:
    game_id, thread_id, title, keys = finished_games[kind]
    assert keys
    pages = {
        "game": f"/games/{game_id}?lang={lang}",
        "thread": f"/threads/{thread_id}?lang={lang}",
        "panel": f"/games/{game_id}/panel?lang={lang}",
        "replay": f"/games/{game_id}/replay?lang={lang}",
        "archive": f"/archive?q={title}&lang={lang}",
    }
    for where, path in pages.items():
        page = client.get(path)
        assert page.status_code == 200, (where, page.status_code)
        html = page.text
        assert not NONE.search(html), (where, NONE.search(html))
        for raw in ("cards_left", "prophet_failure", "round_1", "total_cost", "week2", "round1:"):
            assert raw not in html, (where, raw)
        if where in ("game", "thread", "panel"):
            table = _ranking_table(html)
            for key in keys:
                # a line of the breakdown begins the cell or follows the separator
                assert not re.search(rf"(?:<td>|/ |／ ){re.escape(key)}:", table), (where, key)
            with i18n.use_language(lang):
                labels = [messages.breakdown_label(key, kind) for key in keys]
            assert all(label in table for label in labels), (where, labels)
        if where == "archive":
            assert title in html
    if kind == "eitsuku":
        table = _ranking_table(client.get(pages["game"]).text)
        assert ("未完成" if lang == "ja" else "unfinished") in table
        assert ("GM の修正: -3" if lang == "ja" else "GM adjustment: -3") in table
        assert "—" in table  # the breakdown of an unfinished film
