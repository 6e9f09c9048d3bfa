"""The ``bbsgm`` command: serve, migrate, check, makemigration."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app.config import Settings, get_settings

BASE_URL_UNSET = (
    "bbsgm: warning: BBSGM_BASE_URL is not set. Links in webhook and mail notifications use "
    "the address each webhook or mail address was registered from (its request's Host); set "
    "BBSGM_BASE_URL to the site's public URL (e.g. https://bbs.example.org) so that they all "
    "lead there."
)


def _prepare_database(settings: Settings) -> None:
    from app.db import migrate
    from app.db.engine import Database
    from app.gm.lobby import ensure_guide
    from app.gm.service import ensure_game_boards

    migrate.upgrade(settings)
    secret = settings.resolved_secret_key()  # made once, before several workers could race
    db = Database(settings.database_url)
    try:
        with db.session() as session:
            ensure_game_boards(session, secret)
            ensure_guide(session, secret, settings.base_url)
            session.commit()
    finally:
        db.dispose()


# What `serve` hands uvicorn: the app's factory, imported and called by each worker process.
SERVE_APP = "app.main:app_factory"
# After SIGTERM or Ctrl-C, how long each worker may take to finish its requests before
# uvicorn cancels what is left (live streams end at once: sse-starlette sees the stop).
STOP_SECONDS = 30


def _database_answers(settings: Settings) -> str | None:
    """None when the database accepts a connection; otherwise why not, said once here
    rather than by every worker as it fails to start."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from app.db.engine import Database

    db = Database(settings.database_url)
    try:
        with db.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        return str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    finally:
        db.dispose()
    return None


def cmd_serve(args: argparse.Namespace) -> int:
    """uvicorn serves the app, in ``--workers`` processes of its own (its documented
    ``workers`` option: one listening socket, a parent that restarts a worker that dies and
    stops them all on SIGTERM or SIGINT). What needs doing once is done here, before any
    worker starts: migrations (on SQLite, or with ``--migrate``), the secret key made."""
    import uvicorn

    settings = get_settings()
    if settings.is_sqlite or args.migrate:
        _prepare_database(settings)
    elif (problem := _database_answers(settings)) is not None:
        print(f"bbsgm: the database does not answer: {problem}", file=sys.stderr)
        return 1
    settings.resolved_secret_key()  # made once, before several workers could race
    print(f"bbsgm: serving on http://{args.host}:{args.port}/ ({settings.database_url})")
    if settings.base_url is None:
        print(BASE_URL_UNSET, file=sys.stderr)
    else:
        print(f"bbsgm: links in webhooks and mail: {settings.base_url}/")
    uvicorn.run(
        SERVE_APP,
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        proxy_headers=True,  # from the addresses in FORWARDED_ALLOW_IPS (uvicorn's default)
        log_level=args.log_level,
        timeout_graceful_shutdown=STOP_SECONDS,
    )
    return 0


def cmd_migrate(_args: argparse.Namespace) -> int:
    _prepare_database(get_settings())
    print("bbsgm: database is up to date")
    return 0


def cmd_makemigration(args: argparse.Namespace) -> int:
    from app.db import migrate

    migrate.make_revision(get_settings(), args.message)
    return 0


def cmd_check(_args: argparse.Namespace) -> int:
    """Checks the stored data against its invariants and reports every difference."""
    from app.archive.checks import run_checks
    from app.db.engine import Database

    settings = get_settings()
    db = Database(settings.database_url)
    try:
        with db.session() as session:
            problems = run_checks(session)
        for line in problems:
            print(line)
        print(f"bbsgm check: {len(problems)} problem(s)")
        return 1 if problems else 0
    finally:
        db.dispose()


def cmd_tick(_args: argparse.Namespace) -> int:
    """Apply every turn deadline that has passed (for cron; `serve` also does this itself)."""
    from app.db.engine import Database
    from app.gm.deadlines import tick

    settings = get_settings()
    db = Database(settings.database_url)
    try:
        done = tick(db, settings.resolved_secret_key())
    finally:
        db.dispose()
    print(f"bbsgm tick: {len(done)} game(s) moved on" + (f": {done}" if done else ""))
    return 0


def cmd_deliver(_args: argparse.Namespace) -> int:
    """Send due webhook and mail notifications (`serve` also does this itself)."""
    from app.db.engine import Database
    from app.notify.delivery import deliver_due

    settings = get_settings()
    db = Database(settings.database_url)
    try:
        counts = deliver_due(db, settings)
    finally:
        db.dispose()
    print(
        f"bbsgm deliver: {counts['sent']} sent, {counts['retry']} to retry, "
        f"{counts['failed']} failed"
    )
    return 0


def cmd_admin(args: argparse.Namespace) -> int:
    from app.db.engine import Database
    from app.errors import ServiceError
    from app.forum.moderation import set_admin

    settings = get_settings()
    db = Database(settings.database_url)
    try:
        with db.session() as session:
            try:
                user = set_admin(session, args.name, args.action == "grant")
            except ServiceError as exc:
                print(f"bbsgm admin: {exc.message}", file=sys.stderr)
                return 1
            session.commit()
            state = "an admin" if user.is_admin else "no longer an admin"
            print(f"bbsgm admin: {user.name} is {state}")
    finally:
        db.dispose()
    return 0


def _read_record_file(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as handle:
        return handle.read()


def cmd_import(args: argparse.Namespace) -> int:
    """Re-create a finished game and its thread from an export; verified by replay first."""
    from app.archive.importer import import_game, load_record
    from app.db.engine import Database
    from app.errors import ServiceError

    try:
        record = load_record(_read_record_file(args.file))
    except OSError as exc:
        print(f"bbsgm import: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except ServiceError as exc:
        print(f"bbsgm import: {args.file}: {exc.message}", file=sys.stderr)
        return 1
    settings = get_settings()
    if settings.is_sqlite:
        _prepare_database(settings)
    db = Database(settings.database_url)
    try:
        with db.session() as session:
            try:
                imported = import_game(session, record)
            except ServiceError as exc:
                session.rollback()
                print(f"bbsgm import: {args.file}: {exc.message}", file=sys.stderr)
                return 1
            session.commit()
            game = imported.game
            print(
                f"bbsgm import: game {game.id} (thread {game.thread_id}) imported; "
                f"{imported.report.moves_replayed} moves replayed from the seed and verified"
            )
    finally:
        db.dispose()
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Check an export (or a stored game): seed hash, full replay, final view and result."""
    from app.archive.records import load_record
    from app.archive.verify import Report, verify, verify_game
    from app.db.engine import Database
    from app.errors import ServiceError
    from app.gm.service import get_game

    report: Report
    if (args.file is None) == (args.game is None):
        print("bbsgm verify: give an export FILE or --game ID", file=sys.stderr)
        return 2
    try:
        if args.file is not None:
            report = verify(load_record(_read_record_file(args.file)))
        else:
            db = Database(get_settings().database_url)
            try:
                with db.session() as session:
                    report = verify_game(session, get_game(session, args.game))
            finally:
                db.dispose()
    except OSError as exc:
        print(f"bbsgm verify: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except ServiceError as exc:
        print(f"bbsgm verify: {exc.message}", file=sys.stderr)
        return 1
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


def cmd_ratings(args: argparse.Namespace) -> int:
    """Bring the ratings up to date with the finished games (docs/ratings.md); with
    ``--rebuild``, fold every kind again from scratch, in order of finish."""
    from app.db.engine import Database
    from app.gm import ratings

    settings = get_settings()
    db = Database(settings.database_url)
    try:
        with db.session() as session:
            if args.rebuild:
                count = ratings.rebuild(session)
                print(f"bbsgm ratings: rebuilt from {count} rated game(s)")
            else:
                count = ratings.catch_up(session)
                print(f"bbsgm ratings: {count} game(s) or kind(s) brought up to date")
            session.commit()
        return 0
    finally:
        db.dispose()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bbsgm", description="掲示板 with a game-master bot")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the web service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--log-level", default="info")
    serve.add_argument(
        "--migrate",
        action="store_true",
        help="apply migrations before serving (always done on SQLite)",
    )
    serve.set_defaults(func=cmd_serve)

    sub.add_parser("migrate", help="apply database migrations").set_defaults(func=cmd_migrate)
    sub.add_parser("check", help="replay every game and compare").set_defaults(func=cmd_check)

    sub.add_parser("tick", help="apply passed turn deadlines").set_defaults(func=cmd_tick)
    sub.add_parser("deliver", help="send due webhook/mail notifications").set_defaults(
        func=cmd_deliver
    )
    admin = sub.add_parser("admin", help="grant or revoke site admin rights")
    admin.add_argument("action", choices=["grant", "revoke"])
    admin.add_argument("name")
    admin.set_defaults(func=cmd_admin)

    importer = sub.add_parser("import", help="re-create a finished game from its export")
    importer.add_argument("file", help="an export (GET /api/games/{id}/export); - for stdin")
    importer.set_defaults(func=cmd_import)
    verifier = sub.add_parser("verify", help="check a finished game's seed hash and replay")
    verifier.add_argument("file", nargs="?", help="an export file; - for stdin")
    verifier.add_argument("--game", type=int, help="a game stored in the database instead")
    verifier.set_defaults(func=cmd_verify)

    rater = sub.add_parser("ratings", help="bring the ratings per kind up to date")
    rater.add_argument(
        "--rebuild", action="store_true", help="fold every finished game again from scratch"
    )
    rater.set_defaults(func=cmd_ratings)

    make = sub.add_parser("makemigration", help="autogenerate a migration (developers)")
    make.add_argument("message")
    make.set_defaults(func=cmd_makemigration)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
