"""Provably fair randomness, checked: at START the bot posts ``sha256(seed)``; once the game is
over the seed is revealed. ``verify`` recomputes the hash, compares it with the one the bot
published before the first move, replays the whole game from the seed and the moves, and
compares every move's public outcome (dice, draws, shuffles as the bot announced them), the
final view and the result with the record's.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from app.archive.fold import Step, initial_state, steps
from app.archive.records import (
    OVER,
    SEALED,
    GameRecord,
    MoveRecord,
    PostRecord,
    applied,
    export_game,
    jsonable,
    move_lines,
    parse_record,
)
from app.db.models import Game
from app.games import find_game
from app.games.base import CommandSyntaxError, RuleError, State
from app.games.base import Game as GameImpl
from app.gm.reply import BOT_NAME, CUT_NOTE, seed_hash
from app.gm.results import adjusted_result, breakdown_text

MAX_MISMATCHES_SHOWN = 20
# The bot's START reply: 乱数の種の SHA-256: <hex>
_PUBLISHED_HASH = re.compile(r"SHA-256[^0-9a-fA-F]{0,12}([0-9a-f]{64})")
SEED_HASH = "種のハッシュ"
PUBLISHED = "開始時に公開されたハッシュ"
REPLAY = "再生"
BOT_POSTS = "ボットの書き込み"
WORDING = "返信の文面"
# The headers of the bot's posts that answer no post (app/gm/service.py, app/gm/deadlines.py).
SEALED_NOTICE = re.compile(r"(.+) さんから封印コマンドが届きました。")
DEADLINE_HEADERS = ("⏰ 期限切れ: ", "⏰ 期限が過ぎました。", "⏰ 期限が過ぎましたが、")
RANKING_HEADER = "【最終結果】"


@dataclass
class Check:
    name: str
    ok: bool | None  # None: could not be checked (the message says why)
    message: str


@dataclass
class Report:
    checks: list[Check] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    moves_replayed: int = 0
    state: State | None = None

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok is not False for c in self.checks)

    def add(self, name: str, ok: bool | None, message: str) -> None:
        self.checks.append(Check(name, ok, message))

    def failed(self) -> list[str]:
        return [f"{c.name}: {c.message}" for c in self.checks if c.ok is False]

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "moves_replayed": self.moves_replayed,
            "checks": [asdict(c) for c in self.checks],
            "mismatches": self.mismatches[:MAX_MISMATCHES_SHOWN],
            "mismatch_count": len(self.mismatches),
        }

    def lines(self) -> list[str]:
        marks = {True: "OK", False: "NG", None: "--"}
        out = [f"[{marks[c.ok]}] {c.name}: {c.message}" for c in self.checks]
        out += [f"  {m}" for m in self.mismatches[:MAX_MISMATCHES_SHOWN]]
        if len(self.mismatches) > MAX_MISMATCHES_SHOWN:
            out.append(f"  …ほか {len(self.mismatches) - MAX_MISMATCHES_SHOWN} 件")
        out.append(
            "検証: すべて一致しました。" if self.ok else "検証: 一致しないところがあります。"
        )
        return out


def _published_hash(record: GameRecord) -> tuple[str, int] | None:
    """The first hash the bot posted in the thread (its START reply), and that post's number."""
    if record.thread is None:
        return None
    for post in sorted(record.thread.posts, key=lambda p: p.number):
        if post.kind != "gm" or post.hidden:
            continue
        found = _PUBLISHED_HASH.search(post.body)
        if found:
            return found.group(1), post.number
    return None


def _bot_texts(record: GameRecord) -> dict[int, list[str]]:
    """Visible bot posts by the number of the post they answer, and by their own number."""
    texts: dict[int, list[str]] = {}
    if record.thread is None:
        return texts
    for post in record.thread.posts:
        if post.kind != "gm" or post.hidden:
            continue
        texts.setdefault(post.number, []).append(post.body)
        if post.reply_to is not None:
            texts.setdefault(post.reply_to, []).append(post.body)
    return texts


def _check_seed(record: GameRecord, report: Report, seed: str) -> None:
    digest = seed_hash(seed)
    if record.seed_hash is None:
        report.add(SEED_HASH, None, "記録に seed_hash がありません。")
    elif record.seed_hash == digest:
        report.add(SEED_HASH, True, f"sha256(種) = {digest}")
    else:
        report.add(
            SEED_HASH, False, f"sha256(種) = {digest} が記録の {record.seed_hash} と違います"
        )
    published = _published_hash(record)
    first_move = min((m.post_number for m in record.moves if m.post_number), default=None)
    if published is None:
        report.add(PUBLISHED, None, "スレッドにボットの公開したハッシュがありません。")
        return
    value, number = published
    if value != digest:
        report.add(PUBLISHED, False, f">>{number} で公開された {value} が sha256(種) と違います")
    elif first_move is not None and number > first_move:
        report.add(PUBLISHED, False, f"公開（>>{number}）が最初の手（>>{first_move}）より後です")
    else:
        report.add(PUBLISHED, True, f">>{number} で公開されたものと一致")


def verify(record: GameRecord) -> Report:
    """Recompute the seed's hash, replay every move from the seed, and compare."""
    report = Report()
    impl = find_game(record.kind)
    if impl is None:
        report.add("ゲームの種類", False, f"「{record.kind}」というゲームはありません。")
        return report
    if record.status not in OVER or record.seed is None:
        report.add(
            "乱数の種", False, "種は終わるまで公開されないので、終わったゲームだけ検証できます。"
        )
        return report
    _check_seed(record, report, record.seed)
    moves = applied(record.moves)
    if record.players_at_start is None:
        if moves:
            report.add(REPLAY, False, "開始していないのに手があります。")
        else:
            report.add(REPLAY, True, "開始前に終わったゲームです（手はありません）。")
        return report
    hidden = [m.seq for m in moves if m.command == SEALED]
    if hidden:
        report.add(REPLAY, False, f"封印されたままの手があります（手番号 {hidden[:5]}）。")
        return report
    if len({m.seq for m in moves}) != len(moves):
        report.add(REPLAY, False, "同じ手番号の手が二つあります。")
        return report
    current = in_current_wording(record, impl)
    if not current:
        report.add(
            WORDING,
            None,
            "このゲームのボットの返信は以前の文面で書かれています。手の結果は再生（最終盤面・"
            "結果の順位と得点）で照合し、返信の文面とは照合しません。",
        )
    state = _replay(record, report, current)
    if state is None:
        return report
    report.state = state
    over = impl.is_over(state)
    if (record.status == "finished") != over:
        wrong = "終局していません" if not over else "終局していますが、記録は中止です"
        report.add("終局", False, f"再生した盤面は{wrong}")
    view = jsonable(impl.view(state, "gm"))
    if record.final_view is None:
        report.add("最終盤面", False, "記録に final_view がありません。")
    else:
        same = view == jsonable(record.final_view)
        report.add("最終盤面", same, "一致" if same else "再生した最終盤面が記録と違います")
    adjustments = [(a.seat - 1, a.delta) for a in record.adjustments]
    result = adjusted_result(impl, state, record.status, record.players_at_start, adjustments)
    if current:
        same = jsonable(result) == jsonable(record.result)
    else:  # the breakdown's words (a reason said) may be worded anew; ranks and scores not
        same = _ranks(jsonable(result)) == _ranks(jsonable(record.result))
    report.add("結果", same, "一致" if same else "再計算した順位・得点が記録と違います")
    _check_bot_posts(record, impl, state, report, current)
    return report


def in_current_wording(record: GameRecord, impl: GameImpl) -> bool:
    """The record's game started in its kind's current wording (GameImpl.wording): its bot's
    posts, and its moves' ``events``, say the moves in the very words a replay says them. A
    record that names no wording was written before wordings were kept: wording 1."""
    return (record.wording or 1) == impl.wording


def _ranks(result: Any) -> Any:
    """A result's ranking without the breakdowns' words: each entry's rank, name and score."""
    if not isinstance(result, dict) or not isinstance(result.get("ranking"), list):
        return result
    return [
        (e.get("rank"), e.get("name"), e.get("score")) if isinstance(e, dict) else e
        for e in result["ranking"]
    ]


def _replay(record: GameRecord, report: Report, current: bool = True) -> State | None:
    impl = find_game(record.kind)
    assert impl is not None and record.seed is not None and record.players_at_start is not None
    lines = move_lines(record.moves)
    by_seq = {m.seq: m for m in record.moves if not m.undone}
    bot_texts = _bot_texts(record)
    players = record.players_at_start
    try:
        state = initial_state(impl, record.seed, record.options, players)
        for step in steps(impl, record.seed, record.options, players, lines):
            state = step.state
            report.moves_replayed += 1
            if current:  # in older words the texts differ, the outcomes not (final view)
                _compare_events(step, by_seq[step.move.seq], bot_texts, report)
    except (RuleError, CommandSyntaxError) as exc:
        seq = lines[report.moves_replayed].seq
        report.add(REPLAY, False, f"手番号 {seq} が適用できません: {exc}")
        return None
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        report.add(REPLAY, False, f"記録の内容では再生できません: {exc!r}")
        return None
    if report.mismatches:
        count = len(report.mismatches)
        report.add(
            REPLAY, False, f"{report.moves_replayed}手を再生し、{count}手で出目・結果が違います"
        )
    else:
        report.add(REPLAY, True, f"{report.moves_replayed}手を種から再生し、出目・結果はすべて一致")
    return state


def _compare_events(
    step: Step, move: MoveRecord, bot_texts: dict[int, list[str]], report: Report
) -> None:
    """The move's public outcome against the record's ``events`` and what the bot posted."""
    if move.events is not None and move.events != step.public:
        report.mismatches.append(
            f"手番号 {move.seq}（{move.command}）: 記録 {' '.join(move.events) or '（なし）'}"
            f" ／ 再生 {' '.join(step.public) or '（なし）'}"
        )
        return
    text = " ".join(step.public)
    if not text or move.post_number is None:
        return
    answers = bot_texts.get(move.post_number)
    if answers and any(CUT_NOTE in body for body in answers):
        return  # the bot's reply was cut to a post's length: the rest is not in the thread
    # Compared with runs of white space as one space: the bot writes a move's events one a
    # line (older replies joined them with spaces), and both read the same.
    wanted = _spaced(text)
    if answers and not any(wanted in _spaced(body) for body in answers):
        report.mismatches.append(
            f"手番号 {move.seq}（{move.command}）: >>{move.post_number} へのボットの返信に"
            f"再生した結果「{text}」がありません"
        )


def _check_bot_posts(
    record: GameRecord, impl: GameImpl, state: State, report: Report, current: bool = True
) -> None:
    """What the bot wrote (★GM posts), recomputed from the moves and compared: every ★GM post
    is one the bot writes — the answer right after a command post, a sealed command's notice
    for a sealed command of the record, a deadline's notice — and says what the bot said
    there (each move made, as the moves say it: （封印） while sealed); the closing post's
    ranking and seed are the recomputed ones. A talk post rewritten as the GM's, or a changed
    ranking, is named with its number and what differs."""
    if record.thread is None:
        report.add(BOT_POSTS, None, "記録にスレッドがありません。")
        return
    before = len(report.mismatches)
    posts = {post.number: post for post in record.thread.posts}
    answered: dict[int, int] = {}
    notices: dict[str, int] = {}
    for row in record.sealed_commands:
        if row.ok:
            notices[row.author] = notices.get(row.author, 0) + 1
    for post in sorted(record.thread.posts, key=lambda p: p.number):
        if post.kind != "gm":
            if post.author == BOT_NAME:
                report.mismatches.append(
                    f"{post.number}番: ★GM の名前ですが、ボットの書き込みではありません"
                )
            continue
        if post.author != BOT_NAME:
            report.mismatches.append(
                f"{post.number}番: ★GM の書き込みですが、名前が {post.author} です"
            )
            continue
        if post.reply_to is not None:
            asked = posts.get(post.reply_to)
            if asked is None or asked.kind != "command" or post.number != post.reply_to + 1:
                report.mismatches.append(
                    f"{post.number}番: >>{post.reply_to} への★GM の返信ですが、ボットは"
                    "命令の書き込みのすぐ次にだけ返信します"
                )
            elif not post.hidden and not post.body.startswith(f">>{post.reply_to}"):
                report.mismatches.append(
                    f"{post.number}番: ボットの返信の先頭に >>{post.reply_to} がありません"
                )
            answered[post.reply_to] = post.number
            continue
        if post.hidden:
            continue
        first = post.body.split("\n", 1)[0]
        notice = SEALED_NOTICE.fullmatch(first)
        if notice is not None and notices.get(notice.group(1), 0) > 0:
            notices[notice.group(1)] -= 1
        elif not first.startswith(DEADLINE_HEADERS):
            report.mismatches.append(
                f"{post.number}番: ★GM の書き込みですが、ボットの返信・封印の知らせ・期限の"
                f"知らせのどれでもありません（「{first[:40]}」）"
            )
    for post in record.thread.posts:
        if post.kind == "command" and post.number not in answered:
            report.mismatches.append(f"{post.number}番: 命令の書き込みにボットの返信がありません")
    _check_moves_said(record, posts, answered, report)
    _check_closing(record, impl, state, posts, report, current)
    count = len(report.mismatches) - before
    if count:
        report.add(BOT_POSTS, False, f"{count}件、手から再計算したボットの書き込みと違います")
    else:
        report.add(BOT_POSTS, True, "返信・知らせ・最終結果はすべて手から再計算したとおり")


def _check_moves_said(
    record: GameRecord,
    posts: dict[int, PostRecord],
    answered: dict[int, int],
    report: Report,
) -> None:
    """Each move as the bot said it, in the post that answered the move's post (or in the
    bot's own post that made it: a deadline's)."""
    for move in record.moves:
        if move.post_number is None or move.post_number not in posts:
            continue
        made = posts[move.post_number]
        said = made if made.kind == "gm" else posts.get(answered.get(move.post_number, 0))
        if said is None or said.hidden or CUT_NOTE in said.body:
            continue
        shown = SEALED if move.sealed else move.command
        if f"✔ {shown}" not in said.body and f": {shown}" not in said.body:
            report.mismatches.append(
                f"{said.number}番: 手番号 {move.seq} の「{shown}」がボットの書き込みにありません"
            )


def ranking_lines(result: dict[str, Any] | None, impl: GameImpl) -> list[str]:
    """The closing post's 【最終結果】 lines for ``result`` (as app.gm.reply.closing_lines)."""
    lines: list[str] = []
    for entry in (result or {}).get("ranking", []):
        score = "未完成" if entry["score"] is None else f"{entry['score']}点"
        said = breakdown_text(entry["breakdown"], impl) if entry["score"] is not None else ""
        lines.append(f"{entry['rank']}位 {entry['name']} {score}" + (f"（{said}）" if said else ""))
    return lines


def _check_closing(
    record: GameRecord,
    impl: GameImpl,
    state: State,
    posts: dict[int, PostRecord],
    report: Report,
    current: bool = True,
) -> None:
    """The ranking the bot posted when the game ended, and the seed it revealed; in a game of
    an older wording (``current`` false) each ranking line up to its score (「1位 太郎 12点」),
    the breakdown after it being in the words of then."""
    assert record.players_at_start is not None and record.seed is not None
    closing = [
        p
        for p in sorted(posts.values(), key=lambda p: p.number)
        if p.kind == "gm" and not p.hidden and RANKING_HEADER in p.body
    ]
    for post in posts.values():
        if post.kind == "gm" and not post.hidden and "乱数の種: " in post.body:
            revealed = post.body.split("乱数の種: ", 1)[1].split("\n", 1)[0].strip()
            if revealed != record.seed:
                report.mismatches.append(
                    f"{post.number}番: 公開された種 {revealed} が記録の種と違います"
                )
    if not closing:
        hidden = any(p.kind == "gm" and p.hidden for p in posts.values())
        everything = [(a.seat - 1, a.delta) for a in record.adjustments]
        result = adjusted_result(impl, state, record.status, record.players_at_start, everything)
        if ranking_lines(result, impl) and not hidden:  # (a hidden ★GM post may have been it)
            report.mismatches.append("最終結果の書き込み（【最終結果】）がスレッドにありません")
        return
    if len(closing) > 1:
        numbers = "、".join(f"{p.number}番" for p in closing)
        report.mismatches.append(f"最終結果の書き込みが二つ以上あります（{numbers}）")
    post = closing[0]
    # The ranking as it stood then: the GM's ADJUSTs posted before it (ADJUST on a finished
    # game comes later and changes the result, not that post).
    adjustments = [
        (a.seat - 1, a.delta)
        for a in record.adjustments
        if a.post_number is None or a.post_number < post.number
    ]
    result = adjusted_result(impl, state, record.status, record.players_at_start, adjustments)
    wanted = ranking_lines(result, impl)
    after = post.body.split(RANKING_HEADER, 1)[1].lstrip("\n").split("\n")
    posted = after[: len(wanted)] if CUT_NOTE not in post.body else wanted
    for line, want in zip(posted, wanted, strict=False):
        if line != want and (current or _up_to_score(line) != _up_to_score(want)):
            report.mismatches.append(
                f"{post.number}番の最終結果: 「{line}」ですが、再計算では「{want}」です"
            )
    if len(posted) < len(wanted):
        report.mismatches.append(f"{post.number}番の最終結果: 順位の行が足りません")
    extra = after[len(wanted)] if len(after) > len(wanted) else ""
    if re.match(r"\d+位 ", extra):
        report.mismatches.append(
            f"{post.number}番の最終結果: 再計算にない順位「{extra}」があります"
        )


def _up_to_score(line: str) -> str:
    """A ranking line without its breakdown: 「1位 太郎 12点（…）」 → 「1位 太郎 12点」."""
    return line.split("（", 1)[0]


def _spaced(text: str) -> str:
    return " ".join(text.split())


def verify_game(session: Session, game: Game) -> Report:
    """A stored game verified from its own export (what anyone can download)."""
    return verify(parse_record(export_game(session, game)))
