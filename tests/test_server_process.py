"""What ``bbsgm serve``'s workers do to their own process as the app starts: the garbage
collector settled (app.main.settle_garbage_collector, docs/performance.md). An app
made by ``create_app`` for a test or an embedding process leaves the process as it is."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

import app.main
from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.main import YOUNG_GC_THRESHOLD, app_factory, create_app


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector as it was, after the test."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def _start_and_stop(app: object) -> None:
    async def serve() -> None:
        async with app.router.lifespan_context(app):  # type: ignore[attr-defined]
            pass

    asyncio.run(serve())


def _sqlite_file(tmp_path: Path) -> tuple[Settings, Database]:
    url = f"sqlite:///{tmp_path}/server.db"
    settings = Settings(database_url=url, secret_key="k" * 40)
    database = Database(url)
    migrate.upgrade(settings, database.engine)
    return settings, database


def test_a_server_process_freezes_what_its_start_left_and_collects_young_objects_later(
    tmp_path: Path, collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``app_factory`` (uvicorn's entry, one app per worker process): once started, the
    objects alive then are out of the collector's sight and a young collection waits for
    YOUNG_GC_THRESHOLD objects; the older generations' thresholds stay the interpreter's
    (CPython 3.14's incremental collector reads them differently from 3.11–3.13's)."""
    settings, database = _sqlite_file(tmp_path)
    database.dispose()
    monkeypatch.setattr(app.main, "get_settings", lambda: settings)
    gc.unfreeze()
    gc.set_threshold(700, 7, 9)
    before = gc.get_threshold()  # as this interpreter keeps them (3.14 ignores the third)
    served = app_factory()
    assert gc.get_freeze_count() == 0  # made, not started
    _start_and_stop(served)
    assert gc.get_freeze_count() > 1000
    assert gc.get_threshold()[0] == YOUNG_GC_THRESHOLD
    assert gc.get_threshold()[1:] == before[1:]


def test_an_app_made_for_a_test_leaves_the_collector_alone(tmp_path: Path, collector: None) -> None:
    settings, database = _sqlite_file(tmp_path)
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    _start_and_stop(create_app(settings, database))
    database.dispose()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == (700, 10, 10)


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_settled_collector_still_frees_the_reference_cycles_made_later(
    tmp_path: Path, collector: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no ``gc.collect`` after the cycle is made: the collector runs by itself once
    YOUNG_GC_THRESHOLD objects more are alive, and frees the cycles no longer reachable."""
    settings, database = _sqlite_file(tmp_path)
    database.dispose()
    monkeypatch.setattr(app.main, "get_settings", lambda: settings)
    _start_and_stop(app_factory())
    assert gc.isenabled()
    gc.collect()  # every generation's count at 0: no collection while the cycle is made
    first = _Node()
    gone = weakref.ref(first)
    del first
    assert gone() is not None  # a cycle: its reference count never reaches zero
    kept = [[] for _ in range(YOUNG_GC_THRESHOLD * 2)]  # alive containers, counted by the collector
    assert gone() is None
    del kept
