"""docs/security.md, "No answer depends on a hidden or random result" (issue #40): a line that
draws, rolls or is judged ends what a preview can say, and a later line of the same post that
is refused no longer undoes it. Each test builds two games that differ only in what nobody may
see — a closed deck's order, the secret rule, the die — and the same post must get the same
answer from both, byte for byte."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import Game, Move, Post, User
from app.games.base import Rng, RuleError, State
from app.games.cardbattle import game as cardbattle
from app.games.idolwp import game as idolwp
from app.games.populous import game as populous
from app.games.populous import rules as populous_rules
from app.gm import service as gm
from app.gm.play import _hidden_moved
from app.gm.replay import replay
from tests.conftest import unique_name
from tests.games.test_idolwp_rules import play as idolwp_play
from tests.games.test_issue40_idolwp import waiting_on
from tests.games.test_issue40_populous import after_a_generation_change
from tests.support.cardbattle import ability, magic, normal
from tests.support.fuzz_states import PLAYERS as FUZZ_PLAYERS
from tests.support.fuzz_states import script as fuzz_script
from tests.support.load_support import fast_users, started_eitsuku
from tests.test_gm_pipeline import SECRET, seed_without_choice

RULE_ODD_EVEN = "prev.parity != card.parity"
RULE_SAME_PARITY = "prev.parity == card.parity"


def _user(session: Session) -> User:
    return accounts.register(session, unique_name("or"), "password123")


def _table(session: Session, kind: str, players: int, seed: str, **options: Any) -> dict[str, Any]:
    master = _user(session)
    seated = [_user(session) for _ in range(players)]
    game = gm.create_game(session, master, kind, "卓", dict(options), SECRET, seed=seed)
    for user in seated:
        gm.submit_post(session, game.thread_id, user, "JOIN", SECRET)
    _, replies = gm.submit_post(session, game.thread_id, master, "START", SECRET)
    assert replies[0].reply_ok, replies[0].body
    return {"gm": master, "players": seated, "game": game}


def _answers(
    session: Session,
    game: Game,
    hidden: Callable[[State], None],
    ask: Callable[[], list[Post]],
) -> list[tuple[bool | None, str]]:
    """What ``ask`` gets once ``hidden`` has changed the game's hidden parts, all of it then
    rolled back (a savepoint), so the next variant starts from the same game."""
    nested = session.begin_nested()
    state = dict(game.state or {})
    hidden(state)
    game.state = state
    session.flush()
    replies = ask()
    said = [(reply.reply_ok, reply.body) for reply in replies]
    nested.rollback()
    return said


# --------------------------------------------------------------------------- えいつく SCOUT


def _eitsuku(session: Session) -> tuple[dict[str, Any], str, str]:
    """A started game whose first seat may SCOUT 役者: the table, a 役者 card of the closed
    deck that seat does not hold, and another card of that deck."""
    names_seed = seed_without_choice(["x", "y"])  # any seed; the deck order is set below
    table = _table(session, "eitsuku", 2, names_seed)
    state = table["game"].state
    stock = state["players"][0]["stock"]
    deck = state["decks"]["役者"]
    wanted = next(card for card in deck if card not in stock)
    other = next(card for card in deck if card != wanted)
    return table, wanted, other


def _on_top(card: str) -> Callable[[State], None]:
    def change(state: State) -> None:
        decks = {name: list(cards) for name, cards in state["decks"].items()}
        deck = decks["役者"]
        deck.remove(card)
        deck.append(card)  # the end is the top
        state["decks"] = decks

    return change


def test_a_preview_of_scout_then_set_is_the_same_whatever_the_decks_top(session: Session) -> None:
    """R: the closed deck's next card is nobody's to know; a preview of ``SCOUT 役者`` then
    ``SET 主演 <card>`` read the SET against the card drawn (accepted only when it was the
    top): now the preview stops after the SCOUT, saying so, and names no card."""
    table, wanted, other = _eitsuku(session)
    game, player = table["game"], table["players"][0]
    body = f"SCOUT 役者\nSET 主演 {wanted}"

    def ask() -> list[Post]:
        return gm.preview(session, game.thread_id, player, body, SECRET)[1]

    top = _answers(session, game, _on_top(wanted), ask)
    not_top = _answers(session, game, _on_top(other), ask)
    assert top == not_top
    assert top[0][0] is True
    assert "1行目で山札からカードを引くため、2行目から先の命令はプレビューできません" in top[0][1]
    assert "2行目から先の命令はプレビューできません" in top[0][1]
    assert wanted not in top[0][1] and other not in top[0][1].replace(f"SET 主演 {wanted}", "")


def test_a_refused_line_after_a_scout_does_not_undo_the_scout(session: Session) -> None:
    """docs/gm.md: a line that draws is final once applied. ``SCOUT 役者`` then a SET of a
    card not drawn: the SCOUT is kept (its reply ok, the move logged) and the SET gets its own
    refusal, which says the line before it was applied; posted again, the post cannot draw
    again for free."""
    table, wanted, other = _eitsuku(session)
    game, player = table["game"], table["players"][0]
    state = dict(game.state)
    _on_top(other)(state)
    game.state = state
    session.flush()
    before = game.last_seq
    _, replies = gm.submit_post(
        session, game.thread_id, player, f"SCOUT 役者\nSET 主演 {wanted}", SECRET
    )
    assert [r.reply_ok for r in replies] == [True, False], [r.body for r in replies]
    assert f"{other} をスカウトしました" in replies[0].body
    assert "2行目の命令は受け付けられませんでした" in replies[1].body
    assert "1行目までは適用済みです" in replies[1].body
    assert replies[1].reply_error is not None and replies[1].reply_error["line"] == 2
    session.refresh(game)
    assert game.last_seq == before + 1
    moves = session.query(Move).filter(Move.game_id == game.id, Move.seq > before).all()
    assert [m.command for m in moves] == ["SCOUT 役者"]


def test_lines_after_the_last_draw_are_still_all_or_nothing(session: Session) -> None:
    """docs/gm.md: a refused line undoes the lines after the last that drew, not the draw:
    ``SCOUT`` (kept), a SET that went through, a second SET refused — the first SET is
    undone with the refused one, and the refusal says the lines before line 2 were kept."""
    table, _wanted, _other = _eitsuku(session)
    game, player = table["game"], table["players"][0]
    stock = game.state["players"][0]["stock"]
    actor = next((card for card in stock if card.startswith("役者")), None)
    if actor is None:
        pytest.skip("no 役者 card in the first stock")
    before = game.last_seq
    body = f"SCOUT 役者\nSET 主演 {actor}\nSET 主演 {actor}"
    _, replies = gm.submit_post(session, game.thread_id, player, body, SECRET)
    assert [r.reply_ok for r in replies] == [True, False], [r.body for r in replies]
    assert replies[1].reply_error is not None and replies[1].reply_error["line"] == 3
    assert "1行目までは適用済みです" in replies[1].body
    session.refresh(game)
    moves = session.query(Move).filter(Move.game_id == game.id, Move.seq > before).all()
    assert [m.command for m in moves] == ["SCOUT 役者"]


# --------------------------------------------------------------------------- エリューシス PLAY


def _eleusis(session: Session) -> tuple[dict[str, Any], User, str]:
    """A 4-seat game, seat 1 the parent, its rule sealed: seat 2 to play, and a card of its
    hand."""
    table = _table(session, "eleusis", 4, "oracle-eleusis", rounds=1)
    parent = table["players"][0]
    row, _post = gm.submit_sealed(
        session, table["game"].id, parent, f"RULE {RULE_ODD_EVEN}", SECRET
    )
    assert row.ok, row.reply
    game = table["game"]
    session.refresh(game)
    player = table["players"][1]
    card = game.state["players"][1]["hand"][0]
    return table, player, card


def _rule(text: str) -> Callable[[State], None]:
    def change(state: State) -> None:
        state["rule"] = text

    return change


@pytest.mark.parametrize("declaration", ["○", "●"])
def test_a_preview_of_play_then_prophet_is_the_same_whatever_the_secret_rule(
    session: Session, declaration: str
) -> None:
    """R: the secret rule's judgment is the parent's secret until the card is played; a
    preview of ``PLAY <decl> X`` + ``PROPHET`` was accepted only when the declaration was right.
    Under two rules judging X opposite ways the preview is the same, stopping after the PLAY."""
    table, player, card = _eleusis(session)
    game = table["game"]
    body = f"PLAY {declaration} {card}\nPROPHET"

    def ask() -> list[Post]:
        return gm.preview(session, game.thread_id, player, body, SECRET)[1]

    one = _answers(session, game, _rule(RULE_ODD_EVEN), ask)
    other = _answers(session, game, _rule(RULE_SAME_PARITY), ask)
    assert one == other
    assert one[0][0] is True
    assert "秘密のルールで判定される" in one[0][1] and "判定 " not in one[0][1]


def test_a_refused_line_after_a_play_keeps_the_judged_play(session: Session) -> None:
    """A refused real post let the child retry with the other declaration unpunished: the
    PLAY is now final once judged, whatever follows it — the third line (a second PROPHET)
    is refused on its own reply, the same under either rule, and the PLAY stays."""
    table, player, card = _eleusis(session)
    game = table["game"]
    before = game.last_seq
    refusals = []
    for text in (RULE_ODD_EVEN, RULE_SAME_PARITY):
        said = _answers(
            session,
            game,
            _rule(text),
            lambda: gm.submit_post(
                session, game.thread_id, player, f"PLAY ○ {card}\nPROPHET\nPROPHET", SECRET
            )[1],
        )
        assert len(said) == 2 and said[0][0] is True, said  # the PLAY is kept, right or wrong
        assert "判定 " in said[0][1] and "✔ PROPHET" not in said[0][1]
        assert said[1][0] is False and "3行目の命令は受け付けられませんでした" in said[1][1]
        assert "1行目までは適用済みです" in said[1][1]
        refusals.append(said[1])
    assert refusals[0] == refusals[1]
    session.refresh(game)
    assert game.last_seq == before  # the savepoints rolled back


# --------------------------------------------------------------------------- カードゲーム MAGIC


TWO_FACED = {
    card.name: card
    for card in (
        normal("反撃手", 100, 10, 100, ability("damage_all", 100, "destroyed")),
        normal("壁", 100, 10, 900),
        normal("狙われ", 100, 50, 100, ability("cost", 300, "destroyed")),
        normal("追放者", 100, 10, 100, ability("remove", 0, "destroyed")),
        normal("盾A", 100, 10, 900),
        normal("盾B", 100, 10, 900),
        magic("大火", 10, ability("damage_all", 100)),
        magic("二面", 10, ability("damage", 10), ability("heal", 10)),
    )
}


def _do(state: State, seat: int, line: str, seq: int, seed: str = "do") -> State:
    command = cardbattle.parse(line)
    sealed = cardbattle.needs_seal(state, command) is True
    state, _ = cardbattle.apply(state, seat, command, Rng(seed, seq), sealed=sealed)
    return state


def test_a_magic_cards_target_is_refused_or_not_whatever_the_die() -> None:
    """R 複数記載されている場合、ランダムで実行される内容が選ばれる (ダイス) and R 除外: B's 3 is
    removed, A's 3 is not; 二面 damages A's side or heals B's. Its refusal hung on the die
    (a retry got the same die, seeded by the unadvanced move number): now the target is
    checked for every ability the die may choose, before the roll."""
    state = cardbattle.setup(["A", "B"], {"pool": TWO_FACED}, Rng("t", 0))
    state = _do(state, 0, "DECK 追放者 盾A 盾B MAGIC 大火", 1)
    state = _do(state, 1, "DECK 反撃手 壁 狙われ MAGIC 二面", 2)
    state = _do(state, 0, "MAGIC 大火", 3)
    assert state["players"][1]["field"][2]["state"] == "removed"
    assert state["players"][0]["field"][2]["state"] == "active"
    said: set[str] = set()
    for n in range(24):
        try:
            _do(state, 1, "MAGIC 二面 3", 4, seed=f"die-{n}")
            said.add("accepted")
        except RuleError as error:
            said.add(error.message)
    assert said == {"3番のカードは除外されているので対象にできません。"}


def test_a_magic_card_with_several_abilities_reveals_its_die() -> None:
    """Game.reveals: such a MAGIC line is final once applied (the die picks the ability)."""
    state = cardbattle.setup(["A", "B"], {"pool": TWO_FACED}, Rng("t", 0))
    assert cardbattle.reveals(state, cardbattle.parse("MAGIC 二面")) == "ダイスで能力が決まる"
    assert cardbattle.reveals(state, cardbattle.parse("MAGIC 大火")) is None


# --------------------------------------------------------------------------- over HTTP


# Games whose hidden parts a test rewrote: once it is over, their state is set to what their
# log replays to, so the shared database stays one that `bbsgm check` finds clean (other
# modules check the whole of it: tests/test_gm_pipeline.py).
_REWRITTEN: set[int] = set()


@pytest.fixture(autouse=True)
def _settle_rewritten_games(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if not _REWRITTEN:
        return
    database: Database = request.getfixturevalue("database")
    with database.session() as s:
        for game_id in sorted(_REWRITTEN):
            game = s.get(Game, game_id)
            assert game is not None
            game.state = replay(s, game)
        s.commit()
    _REWRITTEN.clear()


def _rewrite(database: Database, game_id: int, change: Callable[[Game], None]) -> None:
    """Change what nobody sees of a game (its state's hidden parts, its seed), committed."""
    _REWRITTEN.add(game_id)
    with database.session() as s:
        game = s.get(Game, game_id)
        assert game is not None
        change(game)
        s.commit()


def _stored_state(database: Database, game_id: int) -> State:
    with database.session() as s:
        game = s.get(Game, game_id)
        assert game is not None and game.state is not None
        return dict(game.state)


def _state_change(change: Callable[[State], None]) -> Callable[[Game], None]:
    def on(game: Game) -> None:
        state = copy.deepcopy(game.state or {})
        change(state)
        game.state = state

    return on


def _said(reply: httpx.Response) -> list[tuple[Any, Any, Any]]:
    """A post's replies as the poster reads them, without their times."""
    assert reply.status_code in (200, 201), reply.text
    return [(r["ok"], r["body"], r["error"]) for r in reply.json()["replies"]]


def test_http_eitsuku_scout_then_set_previews_alike_and_keeps_the_scout(
    client: httpx.Client, database: Database
) -> None:
    """Issue #40's first example, through the API: four decks read card by card with
    previews of ``SCOUT 役者`` + ``SET 主演 役者N``. Both deck orders answer alike; posted,
    the SCOUT is kept and the SET refused on its own reply."""
    master, player, other = fast_users(database, 3, client, prefix="orc")
    game = started_eitsuku(master, [player, other], "神託")
    gid, tid = game["id"], game["thread_id"]
    for _ in range(8):  # the dice may have left cards to CHOOSE first
        legal = player.get(f"/api/games/{gid}/legal").json()["commands"]
        choose = [line for line in legal if line.startswith("CHOOSE")]
        if not choose:
            break
        assert player.post(f"/api/threads/{tid}/posts", {"body": choose[0]}).json()["replies"][0][
            "ok"
        ]
    state = _stored_state(database, gid)
    stock, deck = state["players"][0]["stock"], state["decks"]["役者"]
    wanted = next(card for card in deck if card not in stock)
    spare = next(card for card in deck if card != wanted)
    body = {"body": f"SCOUT 役者\nSET 主演 {wanted}"}
    previews = []
    for top in (wanted, spare):
        _rewrite(database, gid, _state_change(_on_top(top)))
        previews.append(_said(player.post(f"/api/games/{gid}/preview", body)))
    assert previews[0] == previews[1]
    assert previews[0][0][0] is True and "プレビューできません" in previews[0][0][1]
    posted = _said(player.post(f"/api/threads/{tid}/posts", body))  # the spare on top
    assert [ok for ok, _, _ in posted] == [True, False]
    assert f"{spare} をスカウトしました" in posted[0][1]
    assert posted[1][2]["line"] == 2 and "1行目までは適用済みです" in posted[1][1]
    moves = client.get(f"/api/games/{gid}/moves").json()
    assert "SCOUT 役者" in [move.get("command", move.get("line")) for move in moves][-1:]


def test_http_eleusis_play_then_prophet_previews_alike_under_either_rule(
    client: httpx.Client, database: Database
) -> None:
    """Issue #40's second example: ``PLAY ○ X`` + ``PROPHET`` against ``PLAY ● X`` +
    ``PROPHET`` told the secret rule's verdict. Under two rules judging X opposite ways,
    each preview answers alike."""
    master, *seats = fast_users(database, 5, client, prefix="ore")
    made = master.post("/api/games", {"kind": "eleusis", "title": "神託", "options": {"rounds": 1}})
    game = made.json()
    gid, tid = game["id"], game["thread_id"]
    for seat in seats:
        seat.post(f"/api/threads/{tid}/posts", {"body": "JOIN"})
    assert master.post(f"/api/threads/{tid}/posts", {"body": "START"}).json()["replies"][0]["ok"]
    sealed = seats[0].post(f"/api/games/{gid}/sealed", {"body": f"RULE {RULE_ODD_EVEN}"})
    assert sealed.json()["sealed"]["ok"], sealed.text
    card = _stored_state(database, gid)["players"][1]["hand"][0]
    for declaration in ("○", "●"):
        body = {"body": f"PLAY {declaration} {card}\nPROPHET"}
        previews = []
        for rule in (RULE_ODD_EVEN, RULE_SAME_PARITY):
            _rewrite(database, gid, _state_change(_rule(rule)))
            previews.append(_said(seats[1].post(f"/api/games/{gid}/preview", body)))
        assert previews[0] == previews[1], previews
        assert previews[0][0][0] is True and "判定 " not in previews[0][0][1]
        assert "1行目で出したカードが秘密のルールで判定されるため" in previews[0][0][1]
        assert "2行目から先の命令はプレビューできません" in previews[0][0][1]


def test_http_cardbattle_magic_refusal_is_the_same_whatever_the_die(
    client: httpx.Client, database: Database
) -> None:
    """Issue #40's third example: a refusal of ``MAGIC <card> <n>`` hung on the die, and the
    die (seeded by the move's number, which a refusal does not advance) was the same on the
    retry. Under seeds whose dice choose either ability, the preview and the refusal read
    alike, and nothing is applied."""
    master, *players = fast_users(database, 3, client, prefix="orm")
    made = master.post("/api/games", {"kind": "cardbattle", "title": "神託", "options": {}})
    game = made.json()
    gid, tid = game["id"], game["thread_id"]
    for user in players:
        user.post(f"/api/threads/{tid}/posts", {"body": "JOIN"})
    assert master.post(f"/api/threads/{tid}/posts", {"body": "START"}).json()["replies"][0]["ok"]
    names = [user.name for user in players]
    state = cardbattle.setup(names, {"pool": TWO_FACED}, Rng("t", 0))
    state = _do(state, 0, "DECK 追放者 盾A 盾B MAGIC 大火", 1)
    state = _do(state, 1, "DECK 反撃手 壁 狙われ MAGIC 二面", 2)
    state = _do(state, 0, "MAGIC 大火", 3)

    def dealt(seed: str) -> Callable[[Game], None]:
        def on(game: Game) -> None:
            game.state = copy.deepcopy(state)
            game.seed = seed

        return on

    body = {"body": "MAGIC 二面 3"}
    answers = []
    for n in range(6):
        _rewrite(database, gid, dealt(f"die-{n}"))
        preview = _said(players[1].post(f"/api/games/{gid}/preview", body))
        posted = _said(players[1].post(f"/api/threads/{tid}/posts", body))
        # Each try is a new post: only its number (the first line, >>N) differs.
        answers.append([(ok, text.split("\n", 1)[1], e) for ok, text, e in preview + posted])
    assert all(answer == answers[0] for answer in answers), answers
    assert [ok for ok, _, _ in answers[0]] == [False, False] and "除外" in answers[0][1][1]


# --------------------------------------------------------------------------- every kind


# What a preview does with a post, at the library's level (app/gm/play.py with preview=True):
# each line applied in turn, the first refusal told, the first line that draws, rolls or is
# judged (``Game.reveals``, or a change of what ``hidden(state, None)`` lists) ending it.
Answer = tuple[Any, ...]


class _Watched(Rng):
    """As app/gm/working.py's: a move's randomness that remembers being drawn on."""

    used = False

    def randint(self, a: int, b: int) -> int:
        self.used = True
        return super().randint(a, b)

    def shuffle(self, items: Any) -> None:
        self.used = True
        super().shuffle(items)

    def choice(self, items: Any) -> Any:
        self.used = True
        return super().choice(items)


def _preview(
    impl: Any, state: State, actor: Any, lines: list[str], sealed: bool, seed: str
) -> Answer:
    for index, line in enumerate(lines):
        command = impl.parse(line)
        what = impl.reveals(state, command)
        rng = _Watched(seed, 100 + index)
        try:
            after, _ = impl.apply(state, actor, command, rng, sealed=sealed)
        except RuleError as error:
            return ("refused", index, error.message, tuple(error.legal))
        if what is None and rng.used:
            what = "rolled"
        viewer = actor if isinstance(actor, int) else None
        if what is None and impl.hidden(state, viewer) != impl.hidden(after, viewer):
            what = "hidden"
        if what is not None:
            return ("stops", index, what)
        state = after
    return ("accepted",)


def _shuffled(kind: str, state: State) -> State:
    """``state`` with what nobody sees changed: every closed deck in the other order (and
    エリューシス's sealed rule judged the other way)."""
    other = copy.deepcopy(state)
    if kind == "eitsuku":
        other["decks"] = {name: cards[::-1] for name, cards in other["decks"].items()}
    elif kind == "eleusis":
        other["deck"] = other["deck"][::-1]
        if other.get("rule") == RULE_ODD_EVEN or other.get("rule"):
            other["rule"] = RULE_SAME_PARITY if other["rule"] != RULE_SAME_PARITY else RULE_ODD_EVEN
    elif kind == "idolwp":
        other["card_deck"] = other["card_deck"][::-1]
        other["event_deck"] = other["event_deck"][::-1]
    elif kind == "populous":
        other["deck"] = other["deck"][::-1]
    return other


FUZZ_NAMES = ["太郎", "次郎", "花子", "四郎", "三郎", "六郎"]
KINDS = ["eitsuku", "eleusis", "idolwp", "populous", "cardbattle"]
FIRST_LINES = 10
SECOND_LINES = 8


@pytest.mark.parametrize("kind", KINDS)
def test_every_kinds_two_line_previews_are_the_same_whatever_is_hidden(kind: str) -> None:
    """docs/security.md, per kind: at each point of a played game (tests/support/
    fuzz_states.py), for each seat's legal first line and each line that could follow it, a
    preview of the two-line post answers the same from two games that differ only in their
    closed decks' order, the secret rule and the seed."""
    played = fuzz_script(kind, FUZZ_NAMES[: FUZZ_PLAYERS[kind]])
    impl = played.impl
    checked = stopped = 0
    for stop in played.stops[1:]:
        state = stop.state
        if impl.is_over(state):
            continue
        hidden = _shuffled(kind, state)
        for actor in [*range(len(played.names)), "gm"]:
            thread, sealed_lines = impl.legal_split(state, actor)
            for sealed, firsts in ((False, thread), (True, sealed_lines)):
                for first in firsts[:FIRST_LINES]:
                    command = impl.parse(first)
                    try:
                        after, _ = impl.apply(state, actor, command, Rng("a", 100), sealed=sealed)
                    except RuleError:
                        continue
                    then = impl.legal_split(after, actor)[1 if sealed else 0][:SECOND_LINES]
                    for second in dict.fromkeys([*then, *firsts[:SECOND_LINES]]):
                        body = [first, second]
                        one = _preview(impl, state, actor, body, sealed, "a")
                        two = _preview(impl, hidden, actor, body, sealed, "b")
                        assert one == two, (stop.label, actor, body)
                        checked += 1
                        stopped += one[0] == "stops"
    assert checked > 0
    if kind != "cardbattle":  # its first draws come with the sealed decks' reveal
        assert stopped > 0, "no line of the played game drew, rolled or was judged"


def test_a_sealed_command_keeps_its_lines_up_to_the_decks_reveal(session: Session) -> None:
    """docs/gm.md, sealed commands go through the same run: the second DECK reveals both decks
    and rolls their dice, so it is kept though the PASS after it is refused (a PASS is given
    in the thread); the sealed row is accepted, its reply says how many lines were, and it
    keeps the refused line's error."""
    table = _table(session, "cardbattle", 2, "oracle-cardbattle")
    game = table["game"]
    impl = gm.game_impl("cardbattle")
    first, second = table["players"]
    deck = impl.default_commands(game.state, 0)[0]
    row, _post = gm.submit_sealed(session, game.id, first, deck, SECRET)
    assert row.ok, row.reply
    row, post = gm.submit_sealed(session, game.id, second, f"{deck}\nPASS", SECRET)
    assert row.ok and row.error is not None and row.error["line"] == 2, row.reply
    assert "封印コマンドのうち1行を受け付けました。" in row.reply
    assert "2行目の命令は受け付けられませんでした" in row.reply
    assert "1行目までは適用済みです" in row.reply
    assert post is not None and "【デッキ公開】" in post.body
    session.refresh(game)
    assert game.state["phase"] != "deck"


def test_playing_from_ones_own_hand_is_not_a_reveal_so_a_turn_stays_all_or_nothing() -> None:
    """docs/security.md: a line is final once applied when it changes what its player may not
    see; a card played from one's own hand (IM@S ファンレター) changes only what the others may
    not see, so the steps of a turn written in one post stay all or nothing — while a draw
    from the closed deck (企画会議) is final."""
    state = waiting_on("event", ["ファンレター", "企画会議"])
    seat = state["turn"]
    played, _ = idolwp_play(state, seat, "CARD ファンレター")
    assert _hidden_moved(idolwp, None, state, played)  # the thread saw a hidden card go
    assert not _hidden_moved(idolwp, seat, state, played)
    drew, _ = idolwp_play(state, seat, "CARD 企画会議")
    assert _hidden_moved(idolwp, seat, state, drew)


def test_a_town_written_before_an_automatic_war_is_never_refused_by_its_dice() -> None:
    """docs/security.md, a refusal never hangs on a die: A has changed generation and may
    still discard; ``TOWN 13c`` closes that step, and the war on 24c (A cannot pay to
    mediate) is fought by dice. When B's die wins, A's worker there is gone, 13c is the one
    square left and the town builds itself — that was a refusal, the same on the retry with
    the same die. Now the war and the town are the line's result either way."""
    state = after_a_generation_change({"24c": [[1, "w"]], "13c": [[0, "w"]]})
    state["players"][0]["res"]["食料"] = 0
    state["players"][1]["res"]["情熱"] = 6
    assert populous_rules.contested_squares(state) == ["24c"]
    assert populous.reveals(state, populous.parse("TOWN 13c")) is not None
    seen = set()
    for n in range(40):
        after, events = populous.apply(state, 0, populous.parse("TOWN 13c"), Rng(f"die-{n}", 1))
        assert [0, "t"] in after["pieces"]["13c"]
        seen.add(any(e["type"] == "skipped" for e in events))
    assert seen == {True, False}  # the die decided, and neither way was a refusal
