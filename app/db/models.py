"""SQLAlchemy 2.0 typed models. The schema changes only through migrations/ (a test compares)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    select,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def in_utc(moment: datetime) -> datetime:
    """A time as a ``UTCDateTime`` column binds it: aware, in UTC; a naive one is refused."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime given to a UTC column")
    return moment.astimezone(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC on every backend (SQLite stores no offset, so one is attached on load)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else in_utc(value)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON(),
    }


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Mail notifications: off unless the user opts in and gives an address.
    email: Mapped[str | None] = mapped_column(String(254), default=None)
    email_notify: Mapped[bool] = mapped_column(Boolean, default=False)
    # The site's address as the request that set the mail up saw it: the links in the mail
    # when BBSGM_BASE_URL is unset (app/notify/delivery.py). No Python default: an INSERT that does
    # not set it leaves it out (as tests that run the models against older revisions need).
    email_base_url: Mapped[str | None] = mapped_column(String(200))


class ApiToken(Base):
    """A login: a browser session (kind "session") or an API bearer token (kind "api").

    Only the SHA-256 of the token is stored, so a copy of the database logs nobody in.
    """

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]

    user: Mapped[User] = relationship(lazy="joined", innerjoin=True)


class AppPassword(Base):
    """A password a user made for one client (a 専ブラ's HTTP Basic sign-in, app/web/bbs_cgi.py),
    so the account's own password need not be kept there. Shown once, when made, as
    ``ap<id>-<secret>``; only the secret's argon2 hash is kept. Revoked by deleting the row."""

    __tablename__ = "app_passwords"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    label: Mapped[str] = mapped_column(String(64))
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(default=None)


class Board(Base):
    __tablename__ = "boards"

    id: Mapped[int] = mapped_column(primary_key=True)
    slug: Mapped[str] = mapped_column(String(64), unique=True)
    title: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(Text, default="")
    sort_order: Mapped[int] = mapped_column(Integer, default=0)
    game_kind: Mapped[str | None] = mapped_column(String(32), default=None)
    thread_count: Mapped[int] = mapped_column(Integer, default=0)


def _dat_key(context: Any) -> int:
    """A new thread's key (``Thread.dat_key``): the UNIX second it was made, or the first later
    second no thread of its board has. A context-sensitive default (SQLAlchemy's
    ``ExecutionContext``: ``get_current_parameters`` and the ``connection`` meant for default
    generators), so every writer of threads — the forum, the card registry, the importer —
    gets one without knowing of it. The board row is locked by ``forum.create_thread``; the
    unique index settles a race of the others."""
    params = context.get_current_parameters()
    created = params.get("created_at") or utcnow()
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    wanted = int(created.timestamp())
    taken = context.connection.execute(
        select(Thread.dat_key)
        .where(Thread.board_id == params["board_id"], Thread.dat_key >= wanted)
        .order_by(Thread.dat_key)
    ).scalars()
    for key in taken:
        if key != wanted:
            break
        wanted += 1
    return wanted


class Thread(Base):
    __tablename__ = "threads"
    __table_args__ = (
        Index("ix_threads_board_last_post", "board_id", "last_post_at", "id"),
        Index("ix_threads_board_dat_key", "board_id", "dat_key", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(100))
    author_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_post_at: Mapped[datetime] = mapped_column(default=utcnow)
    post_count: Mapped[int] = mapped_column(Integer, default=0)
    # The 2ch key of the thread (``/{board}/dat/{key}.dat``): 10 digits that read as its
    # creation time in UNIX seconds, as BBS browsers take a key; unique per board (migration
    # 0018). The web pages keep using ``id``.
    dat_key: Mapped[int] = mapped_column(BigInteger, default=_dat_key)

    board: Mapped[Board] = relationship(lazy="joined", innerjoin=True)


class Post(Base):
    __tablename__ = "posts"
    __table_args__ = (UniqueConstraint("thread_id", "number", name="uq_posts_thread_number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    thread_id: Mapped[int] = mapped_column(ForeignKey("threads.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    author_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None, index=True
    )
    # The name the post shows: a 名前欄's name (1–32) and its trip, ``名前 ◆XXXXXXXXXXXX``
    # (app/forum/names.py SHOWN_MAX, 46; migration 0011). The poster is ``author_id``.
    author_name: Mapped[str] = mapped_column(String(64))
    daily_id: Mapped[str] = mapped_column(String(16))
    body: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16), default="talk")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # For the bot's replies: the post answered, and whether its commands were applied.
    reply_to: Mapped[int | None] = mapped_column(Integer, default=None)
    reply_ok: Mapped[bool | None] = mapped_column(Boolean, default=None)
    reply_error: Mapped[dict[str, Any] | None] = mapped_column(
        JSON(none_as_null=True), default=None
    )
    # A reply that shows the board: after how many applied moves (the picture's ?at=N).
    board_at: Mapped[int | None] = mapped_column(Integer, default=None)
    # The メール欄 as written (``sage``: the thread keeps its place, app/web/bbs_cgi.py); None
    # for a post made without one (the web page, the API, the bot).
    mail: Mapped[str | None] = mapped_column(String(64), default=None)
    # あぼーん: hidden by an admin or the game's GM; the body is kept for admins.
    hidden_at: Mapped[datetime | None] = mapped_column(default=None)
    hidden_by: Mapped[str | None] = mapped_column(String(32), default=None)


class Game(Base):
    """A game hosted in a thread. ``state`` caches fold(apply, setup(seed), moves)."""

    __tablename__ = "games"
    __table_args__ = (Index("ix_games_status_kind", "status", "kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(String(100))
    status: Mapped[str] = mapped_column(String(16), default="recruiting")
    thread_id: Mapped[int] = mapped_column(
        ForeignKey("threads.id", ondelete="CASCADE"), unique=True
    )
    gm_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    seed: Mapped[str] = mapped_column(String(64))
    options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    state: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), default=None)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), default=None)
    version: Mapped[int] = mapped_column(Integer, default=0)
    # The seq of the game's last move (0: none yet); the next move takes last_seq + 1.
    last_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    # Platform options (the game's own options are in ``options``).
    mute_spectators: Mapped[bool] = mapped_column(Boolean, default=False)
    # The GM chose at creation to rate the game even with bots seated (docs/bots.md).
    rated_with_bots: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    deadline_hours: Mapped[int | None] = mapped_column(Integer, default=None)
    deadline_at: Mapped[datetime | None] = mapped_column(default=None, index=True)
    turn_key: Mapped[str | None] = mapped_column(String(64), default=None)
    # The names the game was dealt with at START: replay starts from these, whatever REPLACE did.
    # The wording of the kind's replies (GameImpl.wording) when the game started: the bot's
    # posts say its moves in it, and ``verify`` compares them word for word only while the
    # kind still words them so. None: started before wordings were kept (migration 0023).
    wording: Mapped[int | None] = mapped_column(Integer, default=None)
    players_at_start: Mapped[list[str] | None] = mapped_column(
        JSON(none_as_null=True), default=None
    )
    # Set once the "deadline in 6 hours" notice went out for the current deadline.
    deadline_warned: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)

    thread: Mapped[Thread] = relationship(lazy="joined", innerjoin=True)
    gm: Mapped[User | None] = relationship(lazy="joined")
    players: Mapped[list[GamePlayer]] = relationship(
        order_by="GamePlayer.seat", lazy="selectin", cascade="all, delete-orphan"
    )


class GamePlayer(Base):
    """A seat. Seats are 0-based in join order; LEAVE while recruiting closes the gap."""

    __tablename__ = "game_players"
    __table_args__ = (
        UniqueConstraint("game_id", "seat", name="uq_game_players_game_seat"),
        UniqueConstraint("game_id", "user_id", name="uq_game_players_game_user"),
        # The caller's tables awaiting them (the header's badge, /me, GET /api/me/turns).
        Index("ix_game_players_user_waiting", "user_id", "waiting_since"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seat: Mapped[int] = mapped_column(Integer)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    name: Mapped[str] = mapped_column(String(32))
    joined_at: Mapped[datetime] = mapped_column(default=utcnow)
    # KICK without a replacement: the seat stays and the bot plays its default moves.
    kicked: Mapped[bool] = mapped_column(Boolean, default=False)
    absences_used: Mapped[int] = mapped_column(Integer, default=0)
    # A bot's seat (BOT / ボット, ``"bots": N``; docs/bots.md): no account, played by the game's
    # ``bot_lines`` as soon as the game waits for it. Kept on a bot's seat the GM kicked.
    bot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Since when the game waits for this seat (None: it does not), kept by
    # app/notify/notices.after_save with every save of the game (docs/notifications.md).
    waiting_since: Mapped[datetime | None] = mapped_column(default=None)


class Move(Base):
    """One applied game command, in order. Replaying them from setup rebuilds the state."""

    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("game_id", "seq", name="uq_moves_game_seq"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    post_id: Mapped[int | None] = mapped_column(
        ForeignKey("posts.id", ondelete="SET NULL"), default=None
    )
    post_number: Mapped[int | None] = mapped_column(Integer, default=None)
    actor_seat: Mapped[int | None] = mapped_column(Integer, default=None)  # None: the GM
    actor_name: Mapped[str] = mapped_column(String(32))
    command: Mapped[str] = mapped_column(Text)
    parsed: Mapped[dict[str, Any]] = mapped_column(default=dict)
    undone: Mapped[bool] = mapped_column(Boolean, default=False)
    sealed_id: Mapped[int | None] = mapped_column(
        ForeignKey("sealed_commands.id", ondelete="SET NULL"), default=None
    )
    by_bot: Mapped[bool] = mapped_column(Boolean, default=False)
    # Applied as a sealed command (replay must apply it the same way).
    sealed: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SealedCommand(Base):
    """A private submission: its author and the GM see it until the game reveals it."""

    __tablename__ = "sealed_commands"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    author_name: Mapped[str] = mapped_column(String(32))
    body: Mapped[str] = mapped_column(Text)
    reply: Mapped[str] = mapped_column(Text, default="")
    ok: Mapped[bool] = mapped_column(Boolean, default=False)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Adjustment(Base):
    """ADJUST <name> <±n> <reason>: a GM's correction, shown in the result breakdown."""

    __tablename__ = "adjustments"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    delta: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    post_number: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ModerationEntry(Base):
    """Every GM (and admin) action on a game, for its moderation log page."""

    __tablename__ = "moderation_log"

    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[int | None] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), index=True
    )
    thread_id: Mapped[int | None] = mapped_column(
        ForeignKey("threads.id", ondelete="CASCADE"), index=True
    )
    actor_name: Mapped[str] = mapped_column(String(32))
    action: Mapped[str] = mapped_column(String(32))
    detail: Mapped[str] = mapped_column(Text, default="")
    post_number: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Notification(Base):
    """Something a user should hear about: their turn, a deadline close, a game over.

    Read by the private Atom feed; later channels (webhooks, mail) deliver the same rows.
    """

    __tablename__ = "notifications"
    __table_args__ = (
        Index("ix_notifications_user_created", "user_id", "created_at"),
        Index("ix_notifications_user_read", "user_id", "read_at"),
        Index("ix_notifications_game_turn", "game_id", "turn"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    game_id: Mapped[int | None] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), default=None
    )
    kind: Mapped[str] = mapped_column(String(32))
    text: Mapped[str] = mapped_column(Text)
    url: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # A "your turn" notice's turn (app/gm/turns.notice_turn): one notice per (game, user,
    # turn). None for the other kinds.
    turn: Mapped[str | None] = mapped_column(String(64), default=None)
    # When the reader marked it read on /notifications (None: unread).
    read_at: Mapped[datetime | None] = mapped_column(default=None)


class FeedToken(Base):
    """The secret in a private feed's URL (only its SHA-256 is stored); revocable."""

    __tablename__ = "feed_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


class Webhook(Base):
    """A URL a user (player or GM) wants notifications posted to (Discord/Slack-compatible)."""

    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(500))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # The site's address as the request that registered the webhook saw it: the links in its
    # messages when BBSGM_BASE_URL is unset (app/notify/delivery.py).
    base_url: Mapped[str | None] = mapped_column(String(200), default=None)


class Delivery(Base):
    """One notification to one channel (a webhook or mail): retried with back-off, logged."""

    __tablename__ = "deliveries"
    __table_args__ = (Index("ix_deliveries_due", "status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    notification_id: Mapped[int] = mapped_column(
        ForeignKey("notifications.id", ondelete="CASCADE"), index=True
    )
    channel: Mapped[str] = mapped_column(String(16))  # "webhook" or "email"
    webhook_id: Mapped[int | None] = mapped_column(
        ForeignKey("webhooks.id", ondelete="CASCADE"), default=None
    )
    target: Mapped[str] = mapped_column(String(500))
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    response_status: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)


class RateLimit(Base):
    """One sliding-window counter of app/accounts/ratelimit.py: attempts by ``key`` in one window.

    Times are Unix seconds; a row is deleted once ``expires_at`` (two windows on) has passed.
    """

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window_start: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    hits: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)


class ThreadRead(Base):
    """How far a user has read a thread (the 新着 count on thread lists)."""

    __tablename__ = "thread_reads"
    __table_args__ = (UniqueConstraint("user_id", "thread_id", name="uq_thread_reads_user_thread"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    thread_id: Mapped[int] = mapped_column(ForeignKey("threads.id", ondelete="CASCADE"))
    last_read: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class CardVersion(Base):
    """One version of a card of the card registry (app/gm/cards.py): proposed in the registry
    thread (``CARD NEW`` is version 1, each ``CARD PROMOTE`` the next), then approved or
    rejected by a site admin. Every version is kept; the pool is each card's newest approved
    one. The starter pool is seeded as approved version 1, authored by 公式."""

    __tablename__ = "card_versions"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_card_versions_name_version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    # NFKC + casefold of the name: MAKI and ｍａｋｉ are one card.
    name_key: Mapped[str] = mapped_column(String(64), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # "normal" or "magic"
    version: Mapped[int] = mapped_column(Integer)
    cost: Mapped[int] = mapped_column(Integer)
    attack: Mapped[int] = mapped_column(Integer, default=0)
    durability: Mapped[int] = mapped_column(Integer, default=0)
    # [{"effect", "amount", "timing"}], as CardSpec dumps its abilities.
    abilities: Mapped[list[dict[str, Any]]] = mapped_column(JSON(), default=list)
    text: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), default="proposed")
    author_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    author_name: Mapped[str] = mapped_column(String(32))
    # The registry post that proposed it (None for the seeded starter cards).
    post_id: Mapped[int | None] = mapped_column(
        ForeignKey("posts.id", ondelete="SET NULL"), default=None
    )
    post_number: Mapped[int | None] = mapped_column(Integer, default=None)
    decided_by: Mapped[str | None] = mapped_column(String(32), default=None)
    decided_post_number: Mapped[int | None] = mapped_column(Integer, default=None)
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(default=None)


class CardHolding(Base):
    """A card in a player's collection (掲示板進行カードゲーム, R 「f:規定枚数 ← 9」 normal,
    「3枚以下」 magic; app/gm/collections.py, docs/cards.md "Collections"): how it came —
    ``starter`` (the house's starter cards, given at the account's first need), ``own`` (the
    player's card, approved), ``given`` (GIVE by an official, R 「イベントなどで配布される」) —
    when, and by whom. A card is held at most once (unique by user and card); a released card
    keeps its row with ``released_at`` set, so an account that has had its starter cards never
    gets them again."""

    __tablename__ = "card_holdings"
    __table_args__ = (UniqueConstraint("user_id", "name_key", name="uq_card_holdings_user_card"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(32))
    # card_versions.name_key: the card, whatever its version.
    name_key: Mapped[str] = mapped_column(String(64))
    how: Mapped[str] = mapped_column(String(16))  # "starter", "own" or "given"
    obtained_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Who gave it: 公式 for the starter cards, the approving admin for an own card, the admin
    # who posted the GIVE.
    given_by: Mapped[str] = mapped_column(String(32))
    # The registry post that gave it (None for the starter cards).
    post_number: Mapped[int | None] = mapped_column(Integer, default=None)
    released_at: Mapped[datetime | None] = mapped_column(default=None)


class PinnedThread(Base):
    """A thread shown first on its board, above the others (docs/forum.md, "Pinned threads"):
    the ロビー's guide, written by the site (app/gm/lobby.py)."""

    __tablename__ = "pinned_threads"

    thread_id: Mapped[int] = mapped_column(
        ForeignKey("threads.id", ondelete="CASCADE"), primary_key=True
    )
    # What the site wrote it for ("lobby-guide"), so that start-up finds its own again.
    purpose: Mapped[str] = mapped_column(String(32), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Rating(Base):
    """A player's OpenSkill (Plackett–Luce) rating in one game kind (docs/ratings.md): the
    fold of the rated games of that kind in order of finish (app/gm/ratings.py)."""

    __tablename__ = "ratings"
    __table_args__ = (
        UniqueConstraint("user_id", "kind", name="uq_ratings_user_kind"),
        Index("ix_ratings_kind", "kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class RatedGame(Base):
    """A finished game the ratings have taken in (rated or, with ``excluded``, passed over),
    at the game's ``version``: a game whose version moved on (an ADJUST, an UNDO after the
    end) has its kind's ratings folded again (app/gm/ratings.py)."""

    __tablename__ = "rated_games"
    __table_args__ = (Index("ix_rated_games_kind", "kind"),)

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(32))
    version: Mapped[int] = mapped_column(Integer)
    # Why it counts for nothing: "bots", "players" (fewer than two rated players); None: rated.
    excluded: Mapped[str | None] = mapped_column(String(16), default=None)
    rated_at: Mapped[datetime] = mapped_column(default=utcnow)
