"""The card registry of 掲示板進行カードゲーム (docs/cards.md): players propose cards by posting
``CARD NEW …`` in the registry thread, site admins (the source's 公式) answer ``APPROVE`` or
``REJECT``; a card used in a game may be promoted (``CARD PROMOTE …``, its next version, approved
the same way). Every version is kept; the pool is each card's newest approved version, and a
cardbattle game gets a copy of it in its options when it is made, so its record names the
versions it was played with.

The registry thread works like a game thread: the bot answers a post with command lines in the
same transaction, all or nothing, with the line, column and reason of a refused line. The
language is app/games/cardbattle/registry.py (pure); this module owns the rows. Like the other
services it never commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Board, CardVersion, Post, Thread, User, utcnow
from app.forum import service as forum
from app.games.cardbattle import registry
from app.games.cardbattle.cards import (
    MAX_ATTACK,
    MAX_COST,
    MAX_DURABILITY,
    CardSpec,
    card_line,
)
from app.games.cardbattle.content import starter_copy, starter_pool
from app.games.cardbattle.registry import (
    Approve,
    Give,
    NewCard,
    PromoteCard,
    RegistryCommand,
    Reject,
    Release,
    name_key,
)
from app.gm import collections
from app.gm.card_pool import KINDS, card_spec, history, pool, pool_entries, pool_options
from app.gm.card_uses import CARD_GAME_KIND, CardGame, deck_cards, played_in, used_in_games
from app.gm.collections import Hand
from app.gm.lines import command_lines
from app.gm.reply import BOT_NAME, failure_text
from app.gm.submission import LineError, Refusal, Refused, apply_all, read

__all__ = [
    "CARD_GAME_KIND",
    "KINDS",
    "OFFICIAL",
    "REGISTRY_BOARD",
    "STATUSES",
    "CardGame",
    "card_spec",
    "deck_cards",
    "ensure_registry",
    "handle_registry_post",
    "history",
    "played_in",
    "pool",
    "pool_entries",
    "pool_options",
    "registry_lines",
    "registry_thread_id",
    "used_in_games",
]

REGISTRY_SLUG = "cards"
REGISTRY_BOARD: tuple[str, str, str, str | None] = (
    REGISTRY_SLUG,
    "カード登録",
    "掲示板進行カードゲームのカードを提案し、公式（サイトの管理者）が承認する板。",
    None,
)
REGISTRY_TITLE = "カード登録所"
# The author of the starter cards, and who approved them: the house (R 公式).
OFFICIAL = "公式"
STATUSES = ("proposed", "approved", "rejected")
STATUS_JA = {"proposed": "承認待ち", "approved": "承認済み", "rejected": "却下"}


# --- the registry thread -----------------------------------------------------------------------


def welcome_text() -> str:
    """The registry thread's first post: how to propose and judge cards."""
    return "\n".join(
        [
            "【カード登録所】掲示板進行カードゲームのカードは、ここで提案して公式（サイトの管理者）が"
            "承認します。承認されたカードはカードプール（/cards）に入り、それ以降に作られるゲームで"
            "使えます。",
            "",
            "■ 通常カードの提案",
            "CARD NEW 炎の剣 COST 300 ATK 200 DUR 300 ABILITY 登場時 ダメージ 100",
            "（カード 新規 炎の剣 コスト 300 攻撃 200 耐久 300 能力 登場時 ダメージ 100）",
            "■ 魔法カードの提案",
            "CARD NEW 火球 MAGIC COST 200 ABILITY 全体ダメージ 100",
            "■ 昇格（ゲームで使われたカードの能力値の書き換え。作者か管理者が申請）",
            "CARD PROMOTE 炎の剣 COST 300 ATK 250 DUR 300 ABILITY 登場時 ダメージ 100",
            "■ 公式の判定（サイトの管理者だけ）",
            "APPROVE 炎の剣（承認 炎の剣） / REJECT 炎の剣 攻撃力が高すぎます（却下 …）",
            "■ コレクション（通常カード9枚・マジックカード3枚まで。デッキは持っているカードから）",
            "GIVE alice 赤竜（配布 alice 赤竜。公式だけ） / RELEASE 歩兵（手放す 歩兵）",
            "",
            "能力は「タイミング 効果 量」で書き、複数は , で区切ります（4つまで。魔法カードは"
            "タイミングなし）。",
            "タイミング: 登場時・攻撃時・破壊時・手番開始時",
            "効果: ダメージ・全体ダメージ・回復・防御・攻撃強化・除外（量なし）・復活・"
            "コスト（±の量）",
            f"コストは 0〜{MAX_COST}、攻撃力は 0〜{MAX_ATTACK}、耐久力は 1〜{MAX_DURABILITY}。"
            "カードの説明は行の最後に TEXT … で書けます。",
            "1つの書き込みの命令は、すべて受け付けられるか、どれも受け付けられないかのどちらかです。",
        ]
    )


def registry_thread(session: Session) -> Thread | None:
    """The registry thread: the first thread the bot opened on the registry board (people
    may open threads of their own there to talk about cards; only this one takes commands)."""
    return session.scalar(
        select(Thread)
        .join(Board, Board.id == Thread.board_id)
        .where(Board.slug == REGISTRY_SLUG, Thread.author_id.is_(None))
        .order_by(Thread.id)
        .limit(1)
    )


def registry_thread_id(session: Session) -> int | None:
    thread = registry_thread(session)
    return thread.id if thread is not None else None


def ensure_registry(session: Session, secret: str, now: datetime | None = None) -> Thread:
    """The registry board's thread and the starter pool, whatever of them is missing
    (idempotent; runs at start-up beside the seeded boards, after ``forum.ensure_boards``
    made the board). A starter card whose name is already in the registry is left alone."""
    now = now or utcnow()
    thread = registry_thread(session)
    if thread is None:
        board = forum.get_board(session, REGISTRY_SLUG)
        thread = forum.create_site_thread(
            session, board, REGISTRY_TITLE, welcome_text(), secret, author_name=BOT_NAME, now=now
        )
    known = set(session.scalars(select(CardVersion.name_key)))
    for card in starter_pool():
        if name_key(card.name) in known:
            continue
        session.add(
            _row(
                card.model_copy(update={"version": 1}),
                status="approved",
                author=None,
                author_name=OFFICIAL,
                decided_by=OFFICIAL,
                now=now,
            )
        )
        known.add(name_key(card.name))
    session.flush()
    return thread


# --- the registry thread's posts ---------------------------------------------------------------


def registry_lines(session: Session, thread_id: int, body: str) -> list[tuple[int, str]]:
    """The lines of a post the registry answers: its command lines when the post goes to the
    registry thread (the thread is looked up only for a post that has such lines)."""
    lines = command_lines(registry.LANGUAGE, forum.clean_body(body))
    if not lines or registry_thread_id(session) != thread_id:
        return []
    return lines


@dataclass
class _Version:
    """A version as this post sees it; ``row`` is None for one the post proposes."""

    name: str
    version: int
    status: str
    kind: str
    author_id: int | None
    author_name: str
    row: CardVersion | None = None
    card: CardSpec | None = None
    decided: bool = False  # approved or rejected by this post
    decided_by: str | None = None
    reason: str | None = None


@dataclass
class _Working:
    """The registry, and the collections, as one post changes them; written only when every
    line went through."""

    session: Session
    cards: dict[str, list[_Version]] = field(default_factory=dict)
    hands: dict[int, Hand] = field(default_factory=dict)
    _kinds: dict[str, str] | None = None
    _costs: dict[str, int] | None = None

    def versions(self, name: str) -> list[_Version]:
        key = name_key(name)
        if key not in self.cards:
            rows = self.session.scalars(
                select(CardVersion).where(CardVersion.name_key == key).order_by(CardVersion.version)
            )
            self.cards[key] = [
                _Version(
                    row.name, row.version, row.status, row.kind, row.author_id, row.author_name, row
                )
                for row in rows
            ]
        return self.cards[key]

    def kinds(self) -> dict[str, str]:
        """name_key -> kind of every approved card, as this post left them."""
        if self._kinds is None:
            self._kinds = collections.approved_kinds(self.session)
        found = dict(self._kinds)
        for key, versions in self.cards.items():
            if _newest_approved(versions) is not None:
                found[key] = versions[0].kind
        return found

    def stored_cost(self, name: str) -> int:
        """The cost of the card's newest approved version as stored (one query a post)."""
        if self._costs is None:
            self._costs = collections.approved_costs(self.session)
        return self._costs.get(name_key(name), MAX_COST + 1)

    def hand(self, user: User) -> Hand:
        if user.id not in self.hands:
            self.hands[user.id] = Hand.load(self.session, user, self.kinds())
        return self.hands[user.id]

    def waiting(self, user_id: int, kind: str) -> int:
        """The account's own new cards of ``kind`` waiting for approval: each keeps a place in
        its collection (an approved card joins it)."""
        mine = select(CardVersion.name_key).where(
            CardVersion.author_id == user_id, CardVersion.status == "proposed"
        )
        keys = set(self.session.scalars(mine)) | set(self.cards)
        count = 0
        for key in keys:
            versions = self.versions(key)
            pending = _pending(versions)
            if (
                pending is not None
                and pending.author_id == user_id
                and pending.kind == kind
                and _newest_approved(versions) is None
            ):
                count += 1
        return count


def _pending(versions: list[_Version]) -> _Version | None:
    return next((v for v in versions if v.status == "proposed"), None)


def _newest_approved(versions: list[_Version]) -> _Version | None:
    approved = [v for v in versions if v.status == "approved"]
    return approved[-1] if approved else None


def _where(version: _Version) -> str:
    return f"版{version.version}・{STATUS_JA[version.status]}"


def _next_version(versions: list[_Version]) -> int:
    return max((v.version for v in versions), default=0) + 1


def _is_official(user: User) -> bool:
    return bool(user.is_admin)


def _apply(work: _Working, command: RegistryCommand, user: User) -> str:
    """Check one command against the registry as this post left it, change the working copy,
    and say what happened (raises Refusal)."""
    if isinstance(command, NewCard | PromoteCard) and (copied := starter_copy(command.card)):
        raise Refusal(copied)
    if isinstance(command, NewCard):
        card = command.card
        versions = work.versions(card.name)
        taken = _pending(versions) or _newest_approved(versions)
        if taken is not None:
            raise Refusal(
                f"「{taken.name}」という名前のカードはもうあります（{_where(taken)}）。"
                "別の名前にしてください"
                "（ゲームで使われたカードの能力値を変えるなら CARD PROMOTE）。"
            )
        _check_room(work, user, card.kind)
        number = _next_version(versions)
        versions.append(
            _Version(
                card.name,
                number,
                "proposed",
                card.kind,
                user.id,
                user.name,
                card=card.model_copy(update={"version": number}),
            )
        )
        return f"新しいカード「{card.name}」を受け付けました（版{number}・承認待ち）: " + card_line(
            card
        )
    if isinstance(command, PromoteCard):
        return _promote(work, command, user)
    if isinstance(command, Give):
        return _give(work, command, user)
    if isinstance(command, Release):
        return _release(work, command, user)
    if isinstance(command, Approve | Reject):
        verb = "APPROVE" if isinstance(command, Approve) else "REJECT"
        if not _is_official(user):
            raise Refusal(
                f"{verb} できるのは公式（サイトの管理者）だけです。"
                "提案されたカードは管理者の判定を待ってください。"
            )
        versions = work.versions(command.name)
        if not versions:
            raise Refusal(f"「{command.name}」というカードはありません。")
        pending = _pending(versions)
        if pending is None:
            raise Refusal(f"「{versions[-1].name}」に承認待ちの版はありません。")
        pending.decided, pending.decided_by = True, user.name
        if isinstance(command, Reject):
            pending.status, pending.reason = "rejected", command.reason
            return f"「{pending.name}」版{pending.version}を却下しました。理由: {command.reason}"
        pending.status = "approved"
        before = [v for v in versions if v.status == "approved" and v is not pending]
        if before:
            return (
                f"「{pending.name}」版{pending.version}を承認しました。カードプールの"
                f"「{pending.name}」は版{before[-1].version}から版{pending.version}になりました。"
            )
        said = f"「{pending.name}」版{pending.version}を承認しました。カードプールに入りました。"
        return said + _own_card_joins(work, pending, user)
    raise AssertionError(f"not a registry command: {command!r}")


# --- collections (app/gm/collections.py) ----------------------------------------------------


def _check_room(work: _Working, user: User, kind: str) -> None:
    """A new card keeps a place in its author's collection while it waits (it joins the
    collection when approved): refused when the collection has none left."""
    collections.check_room(work.hand(user), kind, work.waiting(user.id, kind), own=True)


def _own_card_joins(work: _Working, approved: _Version, judge: User) -> str:
    """A new card, approved, joins its author's collection (a full one: said, not added)."""
    author = work.session.get(User, approved.author_id) if approved.author_id else None
    if author is None:
        return ""
    return collections.own_card_joins(work.hand(author), approved.name, approved.kind, judge.name)


def _give(work: _Working, command: Give, user: User) -> str:
    """GIVE <player> <card>: an official hands a player an approved card (R 「イベントなどで
    配布される」)."""
    if not _is_official(user):
        raise Refusal("GIVE（配布）できるのは公式（サイトの管理者）だけです。")
    player = work.session.scalar(select(User).where(User.name == command.player))
    if player is None:
        raise Refusal(f"「{command.player}」という利用者はいません。")
    versions = work.versions(command.name)
    card = _newest_approved(versions)
    if card is None:
        if not versions:
            raise Refusal(f"「{command.name}」というカードはありません。")
        raise Refusal(
            f"「{versions[-1].name}」はまだ承認されていません。配れるのは承認済みのカードです。"
        )
    waiting = work.waiting(player.id, card.kind)
    return collections.give(work.hand(player), card.name, card.kind, waiting, user.name)


def _cost(work: _Working, name: str) -> int:
    if name_key(name) not in work.cards:  # not touched by this post: as stored
        return work.stored_cost(name)
    current = _newest_approved(work.versions(name))
    if current is None:
        return MAX_COST + 1
    if current.card is not None:
        return current.card.cost
    assert current.row is not None
    return current.row.cost


def _release(work: _Working, command: Release, user: User) -> str:
    """RELEASE <card>: the poster lets one of their cards go, to make room."""
    return collections.release(work.hand(user), command.name, lambda name: _cost(work, name))


def _promote(work: _Working, command: PromoteCard, user: User) -> str:
    card = command.card
    versions = work.versions(card.name)
    current = _newest_approved(versions)
    if current is None:
        if not versions:
            raise Refusal(f"「{card.name}」というカードはありません（新しいカードは CARD NEW）。")
        raise Refusal(
            f"「{versions[-1].name}」はまだ承認されていません。昇格できるのは承認済みのカードです。"
        )
    pending = _pending(versions)
    if pending is not None:
        raise Refusal(
            f"「{pending.name}」には承認待ちの版{pending.version}があります。"
            "それが承認か却下されるまで、次の昇格は申請できません。"
        )
    author = versions[0]
    if not (_is_official(user) or (author.author_id is not None and author.author_id == user.id)):
        raise Refusal(
            f"「{current.name}」の昇格を申請できるのは、カードの作者（{author.author_name}）と"
            "公式（サイトの管理者）だけです。"
        )
    if card.kind != current.kind:
        kinds = {"normal": "通常カード", "magic": "魔法カード"}
        raise Refusal(
            f"「{current.name}」は{kinds[current.kind]}です。昇格でカードの種類は変えられません。"
        )
    if not used_in_games(work.session, current.name):
        raise Refusal(
            f"「{current.name}」はまだどのゲームでも使われていません。昇格できるのは、"
            "進行中か終了したゲームで使われたカードだけです。"
        )
    number = _next_version(versions)
    promoted = card.model_copy(update={"name": current.name, "version": number})
    versions.append(
        _Version(current.name, number, "proposed", card.kind, user.id, user.name, card=promoted)
    )
    return (
        f"「{current.name}」の昇格を受け付けました（版{number}・承認待ち。いまは版"
        f"{current.version}）: {card_line(promoted)}"
    )


def _row(
    card: CardSpec,
    *,
    status: str,
    author: User | None,
    author_name: str,
    now: datetime,
    post: Post | None = None,
    decided_by: str | None = None,
) -> CardVersion:
    return CardVersion(
        name=card.name,
        name_key=name_key(card.name),
        kind=card.kind,
        version=card.version,
        cost=card.cost,
        attack=card.attack,
        durability=card.durability,
        abilities=[ability.model_dump(mode="json") for ability in card.abilities],
        text=card.text,
        status=status,
        author_id=author.id if author is not None else None,
        author_name=author_name,
        post_id=post.id if post is not None else None,
        post_number=post.number if post is not None else None,
        decided_by=decided_by,
        reason=None,
        created_at=now,
        decided_at=now if decided_by is not None else None,
    )


def _save(work: _Working, post: Post, user: User, now: datetime) -> None:
    for versions in work.cards.values():
        for version in versions:
            if version.row is None:
                assert version.card is not None
                row = _row(
                    version.card,
                    status="proposed",
                    author=user,
                    author_name=user.name,
                    now=now,
                    post=post,
                )
                if version.decided:  # proposed and judged in one post (by an admin)
                    row.status, row.decided_by = version.status, version.decided_by
                    row.decided_at, row.decided_post_number = now, post.number
                    row.reason = version.reason
                work.session.add(row)
            elif version.decided:
                version.row.status = version.status
                version.row.decided_by = version.decided_by
                version.row.decided_at = now
                version.row.decided_post_number = post.number
                version.row.reason = version.reason
    work.session.flush()
    collections.write_new(work.session, work.hands.values(), now, post.number)


def _failure_text(anchor: str, refused: Refused) -> str:
    return failure_text(anchor, refused.error, refused.legal, unchanged="カード登録所")


def _run(
    session: Session, post: Post, user: User, lines: list[tuple[int, str]], now: datetime
) -> tuple[str, LineError | None]:
    """The bot's answer to a registry post and, when every line went through, its changes
    (the loop of a game's submissions, app/gm/submission.py)."""
    anchor = f">>{post.number}"
    commands = read(registry.LANGUAGE, lines)
    if isinstance(commands, Refused):
        return _failure_text(anchor, commands), commands.error
    work = _Working(session)
    said: list[str] = []
    refused = apply_all(commands, lambda _index, command: said.append(_apply(work, command, user)))
    if refused is not None:
        return _failure_text(anchor, refused), refused.error
    _save(work, post, user, now)
    if any(isinstance(c.command, NewCard | PromoteCard) for c in commands):
        pending = [
            v.name
            for versions in work.cards.values()
            for v in versions
            if v.row is None and v.status == "proposed"
        ]
        if pending:
            said.append(
                f"公式（サイトの管理者）が APPROVE {pending[0]} で承認すると、"
                "カードプールに入ります。"
            )
    return "\n".join([anchor, *said]), None


def handle_registry_post(
    session: Session,
    thread_id: int,
    post: Post,
    user: User,
    lines: list[tuple[int, str]],
    secret: str,
    now: datetime,
    number: int,
) -> Post:
    """The bot's reply to a post in the registry thread (``post``, already stored), written as
    post ``number``, which the caller took together with the post's own: the registry changed
    by every command line of the post, or by none of them and the reply says which line
    could not be taken, where and why (app/gm/service.py: submit_post)."""
    text, error = _run(session, post, user, lines, now)
    if len(text) > forum.MAX_BODY_CHARS:
        note = "\n…（長すぎるためここまでにします。続きはカード一覧 /cards に）"
        text = text[: forum.MAX_BODY_CHARS - len(note)] + note
    return forum.add_post(
        session,
        thread_id,
        author=None,
        author_name=BOT_NAME,
        body=text,
        kind="gm",
        secret=secret,
        now=now,
        number=number,
        reply_to=post.number,
        reply_ok=error is None,
        reply_error=error.to_json() if error is not None else None,
    )
