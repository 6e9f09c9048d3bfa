"""Accounts: names, argon2 passwords, tokens (service tier)."""

from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import User
from app.errors import Conflict, Invalid, Unauthorized
from tests.conftest import unique_name


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "入力"),
        ("a b", "空白"),
        ("x" * 33, "32文字"),
        ("★GM", "予約"),
        ("gm", "予約"),
        ("a<b", "<"),
        ("a\x07", "制御文字"),
    ],
)
def test_name_rules(raw: str, reason: str) -> None:
    with pytest.raises(Invalid, match=reason):
        accounts.validate_name(raw)


def test_name_is_nfkc_normalised() -> None:
    assert accounts.validate_name(" ＡＢＣ１ ") == "ABC1"


def test_password_is_hashed_with_argon2(session: Session) -> None:
    user = accounts.register(session, unique_name(), "password123")
    assert user.password_hash.startswith("$argon2")
    assert "password123" not in user.password_hash


def test_short_password_refused(session: Session) -> None:
    with pytest.raises(Invalid, match="8文字以上"):
        accounts.register(session, unique_name(), "short")


def test_taken_name_is_a_conflict(session: Session, user: User) -> None:
    with pytest.raises(Conflict):
        accounts.register(session, user.name, "password123")


def test_authenticate_right_and_wrong_password(session: Session, user: User) -> None:
    assert accounts.authenticate(session, user.name, "password123").id == user.id
    with pytest.raises(Unauthorized):
        accounts.authenticate(session, user.name, "wrong-password")
    with pytest.raises(Unauthorized):
        accounts.authenticate(session, unique_name(), "password123")


@pytest.mark.parametrize("name", ["\x0f\x00(F", "ab\x00", "\x07bell", "del\x7f"])
def test_a_name_no_account_can_have_is_not_found_not_an_error(session: Session, name: str) -> None:
    """A login with a control character in the name is 'wrong name or password' (401): on
    PostgreSQL a NUL in the lookup was a DataError, a 500 (found by schemathesis)."""
    with pytest.raises(Unauthorized, match="名前かパスワードが違います"):
        accounts.authenticate(session, name, "password123")


def test_tokens_are_stored_hashed_and_kind_bound(session: Session, user: User) -> None:
    token = accounts.issue_token(session, user, "api")
    found = accounts.user_for_token(session, token, "api")
    assert found is not None and found.id == user.id
    assert accounts.user_for_token(session, token, "session") is None
    accounts.revoke_token(session, token)
    assert accounts.user_for_token(session, token, "api") is None


def test_passwords_are_hashed_and_checked_outside_any_transaction(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """argon2 takes a fifth of a second; on SQLite an open transaction holds the write lock
    (BEGIN IMMEDIATE), so no transaction may be open while it runs (docs/performance.md)."""
    name = unique_name()
    with database.session() as s:
        open_during: list[bool] = []
        real = accounts._hasher

        class Watching:
            """The real hasher, noting whether a transaction is open at each use."""

            def hash(self, password: str) -> str:
                open_during.append(s.in_transaction())
                return real.hash(password)

            def verify(self, hashed: str, password: str) -> bool:
                open_during.append(s.in_transaction())
                return real.verify(hashed, password)

            def check_needs_rehash(self, hashed: str) -> bool:
                return real.check_needs_rehash(hashed)

        monkeypatch.setattr(accounts, "_hasher", Watching())
        accounts.register(s, name, "password123")
        s.commit()
        assert accounts.authenticate(s, name, "password123").name == name
        with pytest.raises(Unauthorized):
            accounts.authenticate(s, name, "wrong-password")
        with pytest.raises(Unauthorized):
            accounts.authenticate(s, unique_name(), "password123")  # the decoy hash as well
    assert open_during == [False, False, False, False]
