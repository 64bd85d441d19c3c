"""Old audit events moved to the org's Iceberg table (`workers/audit/archive.py`): moved, not lost.

`GET /v1/audit` lists the same events, in the same pages, before and after a move; the count
across SQL and the table is the count before; a move killed between its append and its DELETE
is finished by the next one, with no event twice; the store still refuses a DELETE above the
mark; the table is an admin's only, through the Iceberg REST catalog. On both stores."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from tests.fixtures.catalog import CatalogFor, key_of
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment
from tests.fixtures.profile import budget

FAR = datetime(2999, 1, 1, tzinfo=UTC)
ACTIONS = ["datasets.create", "batches.open", "batches.act.REVERT", "keys.create", "keys.revoke"]


def listing(client: TestClient, limit: int = 100, **params: Any) -> list[dict[str, Any]]:
    """Every event `GET /v1/audit` lists, page after page of `limit`."""
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = {"limit": limit, **params} | ({"cursor": cursor} if cursor else {})
        response = client.get("/v1/audit", params=query)
        assert response.status_code == 200, response.text
        page = response.json()
        assert len(page["items"]) <= limit
        out += page["items"]
        cursor = page["next"]
        if cursor is None:
            return out


def places(org: str) -> tuple[int, int, int]:
    """(events in SQL, rows in the org's Iceberg table, the store's mark)."""
    from app.audit import repository
    from app.db import session_scope
    from app.lake import audit as lake
    from app.lake.catalog import get_catalog

    table = lake.load(get_catalog(), org)
    archived = table.scan().to_arrow().num_rows if table is not None else 0
    with session_scope() as session:
        return repository.count(session, org), archived, repository.mark(session, org)


def archived_seqs(org: str) -> list[int]:
    from app.lake import audit as lake
    from app.lake.catalog import get_catalog

    table = lake.load(get_catalog(), org)
    if table is None:
        return []
    return sorted(table.scan().to_arrow().column("seq").to_pylist())


def move(org: str, before: datetime = FAR, chunk: int = 1000) -> int:
    from workers.audit import archive

    return archive.move_org(org, before, chunk)


def make_events(admin: TestClient, count: int) -> None:
    """`count` audit events of kinds ok, error and denied, through the API."""
    for index in range(count):
        if index % 4 == 3:
            admin.post("/v1/keys", json={"scope": "read"})
        elif index % 4 == 2:
            admin.post("/v1/datasets/missing/vacuum", json={})  # 404: an error event
        else:
            admin.post("/v1/datasets", json={**EVENTS, "name": f"d{index}"})


def test_moved_events_are_listed_as_before_in_every_page_and_filter(
    client_for: ClientFactory,
) -> None:
    admin = client_for()
    other = client_for()
    make_events(admin, 14)
    other.post("/v1/datasets", json=EVENTS)
    before = listing(admin)
    assert len(before) == 14
    others = listing(other)
    filters: list[dict[str, Any]] = [
        {"action": "datasets.create"},
        {"action": "keys.*"},
        {"action": "maintenance.vacuum"},
        {"since": before[5]["at"]},
        {"since": before[9]["at"], "action": "datasets.*"},
    ]
    expected = {
        str(f): [
            e
            for e in before
            if (
                "action" not in f
                or e["action"] == f["action"]
                or (f["action"].endswith(".*") and e["action"].startswith(f["action"][:-1]))
            )
            and ("since" not in f or e["at"] >= f["since"])
        ]
        for f in filters
    }
    assert all(expected.values())

    def same_as_before() -> None:
        for limit in (1, 2, 3, 5, 14, 100):
            assert listing(admin, limit) == before, limit
        for f in filters:
            assert listing(admin, 3, **f) == expected[str(f)], f
        assert listing(other) == others

    # a prefix moves: the events older than the 6th oldest's time, 4 per Iceberg append
    oldest_first = list(reversed(before))
    cutoff = datetime.fromisoformat(oldest_first[6]["at"])
    moved = move(admin.org, cutoff, chunk=4)  # type: ignore[attr-defined]
    assert moved == sum(datetime.fromisoformat(e["at"]) < cutoff for e in before) > 0
    in_sql, archived, mark = places(admin.org)  # type: ignore[attr-defined]
    assert (in_sql, archived) == (14 - moved, moved)
    assert mark == oldest_first[moved - 1]["seq"]
    assert archived_seqs(admin.org) == [e["seq"] for e in oldest_first[:moved]]  # type: ignore[attr-defined]
    same_as_before()

    # the rest moves; the other org keeps its events in SQL
    assert move(admin.org) == 14 - moved  # type: ignore[attr-defined]
    assert places(admin.org)[:2] == (0, 14)  # type: ignore[attr-defined]
    same_as_before()
    assert places(other.org)[:2] == (1, 0)  # type: ignore[attr-defined]

    # new events land in SQL above the mark and page on into the archive
    admin.post("/v1/datasets", json={**EVENTS, "name": "later"})
    after = listing(admin)
    assert after[1:] == before
    assert after[0]["action"] == "datasets.create"
    assert [e["seq"] for e in listing(admin, 1)] == [e["seq"] for e in after]
    assert move(admin.org, cutoff) == 0  # type: ignore[attr-defined]


def test_the_store_refuses_a_delete_above_the_mark_and_a_mark_going_back(
    client_for: ClientFactory,
) -> None:
    from sqlalchemy import delete, update
    from sqlalchemy.exc import DBAPIError

    from app.db import session_scope
    from app.models import AuditArchive, AuditEvent

    admin = client_for()
    make_events(admin, 3)
    assert move(admin.org) == 3  # type: ignore[attr-defined]
    make_events(admin, 2)
    _, _, mark = places(admin.org)  # type: ignore[attr-defined]
    org = admin.org  # type: ignore[attr-defined]
    refused = [
        delete(AuditEvent).where(AuditEvent.org == org),
        delete(AuditEvent).where(AuditEvent.org == org, AuditEvent.seq > mark),
        update(AuditEvent).where(AuditEvent.org == org).values(outcome="ok"),
    ]
    for statement in refused:
        with pytest.raises(DBAPIError, match="append-only"), session_scope() as session:
            session.execute(statement)
    for statement in (
        update(AuditArchive).where(AuditArchive.org == org).values(archived_through_seq=0),
        delete(AuditArchive).where(AuditArchive.org == org),
    ):
        with pytest.raises(DBAPIError, match="only moves forward"), session_scope() as session:
            session.execute(statement)
    assert places(org) == (2, 3, mark)
    assert len(listing(admin)) == 5


def test_a_move_that_fails_after_its_append_is_finished_once(
    client_for: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.audit import archive

    admin = client_for()
    org = admin.org  # type: ignore[attr-defined]
    make_events(admin, 7)
    before = listing(admin)
    real = archive.settle
    calls = []

    def dies_the_second_time(org: str, through: int) -> int:
        calls.append(through)
        if len(calls) == 1:
            return real(org, through)
        raise RuntimeError("the store went away between the append and the DELETE")

    monkeypatch.setattr(archive, "settle", dies_the_second_time)
    with pytest.raises(RuntimeError, match="went away"):
        move(org, chunk=3)
    # the first chunk moved; the second is in the table and still in SQL: listed once
    oldest_first = [e["seq"] for e in reversed(before)]
    assert places(org) == (4, 6, oldest_first[2])
    assert listing(admin) == before
    for limit in (1, 2, 4):
        assert listing(admin, limit) == before
    assert listing(admin, 2, action="datasets.create") == [
        e for e in before if e["action"] == "datasets.create"
    ]
    monkeypatch.setattr(archive, "settle", real)

    assert move(org, chunk=3) == 1  # the second chunk is settled, not appended again
    assert places(org) == (0, 7, oldest_first[-1])
    assert archived_seqs(org) == oldest_first
    assert listing(admin) == before
    assert calls == [oldest_first[2], oldest_first[5]]


def test_the_tables_history_stays_short(client_for: ClientFactory) -> None:
    """One append per event (chunks of 1): the table keeps its newest snapshots, and every
    event, and its mark."""
    from app.lake import audit as lake
    from app.lake.catalog import get_catalog
    from workers.audit import archive

    admin = client_for()
    org = admin.org  # type: ignore[attr-defined]
    make_events(admin, 2 * archive.KEEP_SNAPSHOTS + 1)
    before = listing(admin)
    assert move(org, chunk=1) == len(before)
    table = lake.load(get_catalog(), org)
    assert table is not None
    assert len(table.snapshots()) < 2 * archive.KEEP_SNAPSHOTS
    assert lake.archived_through(table) == before[0]["seq"]
    assert places(org) == (0, len(before), before[0]["seq"])
    assert listing(admin, 4) == before


def test_a_move_killed_after_its_append_is_finished_by_the_next(
    client_for: ClientFactory,
) -> None:
    """A real process killed at the failpoint after the Iceberg commit (before the DELETE)."""
    from app.lake import audit as lake
    from app.lake.catalog import get_catalog

    admin = client_for()
    org = admin.org  # type: ignore[attr-defined]
    make_events(admin, 5)
    before = listing(admin)
    code = (
        "from datetime import UTC, datetime\n"
        "from workers.audit import archive\n"
        f"archive.move_org({org!r}, datetime(2999, 1, 1, tzinfo=UTC), 2)\n"
    )
    env = {**os.environ, "ICEBATCH_FAILPOINTS": "audit-archive-after-commit=120"}
    mover = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert mover.poll() is None, "the mover ended before its failpoint"
            assert time.monotonic() < deadline, "the mover never committed"
            table = lake.load(get_catalog(), org)
            if table is not None and lake.archived_through(table):
                break
            time.sleep(0.2)
        mover.send_signal(signal.SIGKILL)
    finally:
        mover.kill()
        mover.wait()
    assert places(org) == (5, 2, 0)  # appended, not deleted
    assert listing(admin) == before
    assert move(org, chunk=2) == 3
    assert places(org) == (0, 5, before[0]["seq"])
    assert archived_seqs(org) == sorted(e["seq"] for e in before)
    assert listing(admin, 2) == before


def test_the_audit_table_is_an_admins_only_through_the_catalog(
    client_for: ClientFactory, catalog_for: CatalogFor
) -> None:
    from pyiceberg.exceptions import NoSuchTableError

    admin = client_for()
    org = admin.org  # type: ignore[attr-defined]
    admin.post("/v1/datasets", json=EVENTS)
    make_events(admin, 4)
    events = listing(admin)
    lake = catalog_for(key_of(admin))
    assert set(lake.list_tables(org)) == {(org, "events"), (org, "d0"), (org, "d1")}
    with pytest.raises(NoSuchTableError):
        lake.load_table(f"{org}._audit")  # nothing moved yet: no table
    assert move(org) == len(events)

    assert (org, "_audit") in lake.list_tables(org)
    rows = lake.load_table(f"{org}._audit").scan().to_arrow().to_pylist()
    assert sorted((r["seq"], r["action"], r["status_code"]) for r in rows) == sorted(
        (e["seq"], e["action"], e["status_code"]) for e in events
    )
    for scope in ("read", "write"):
        narrow = catalog_for(key_of(client_for(org, scope)))
        assert (org, "_audit") not in narrow.list_tables(org)
        with pytest.raises(NoSuchTableError):
            narrow.load_table(f"{org}._audit")
        assert not narrow.table_exists(f"{org}._audit")
    stranger = catalog_for(key_of(client_for()))
    with pytest.raises(NoSuchTableError):
        stranger.load_table(f"{org}._audit")


def test_the_pruning_pass_moves_old_events_and_counts_them(fresh_stack: Environment) -> None:
    from app.audit import repository
    from app.config import get_settings
    from app.db import session_scope
    from workers.scheduler import prune_task

    now = datetime.now(UTC)
    rows = [
        _row("acme", ACTIONS[i % len(ACTIONS)], now - timedelta(days=days))
        for i, days in enumerate([400, 200, 100, 95, 30, 1, 0])
    ]
    with session_scope() as session:
        repository.append(session, rows)
    settings = get_settings()
    assert settings.audit_retention_days == 90
    pruned = prune_task()
    assert pruned["audit_events"] == 4
    assert places("acme")[:2] == (3, 4)
    assert prune_task()["audit_events"] == 0


def _row(org: str, action: str, at: datetime) -> dict[str, Any]:
    from app.audit import service

    row = service.event_row(
        org=org,
        key_id=None,
        action=action,
        method="POST",
        path=f"/v1/{action}",
        target={"n": action},
        request_id=None,
        status_code=200,
    )
    row["at"] = at
    return row


def test_listing_equals_a_plain_list_under_random_events_and_moves(stack: Environment) -> None:
    """Events of random ages and moves at random cutoffs and chunk sizes, interleaved: every
    listing (random page size and filter) is the model's, a plain list; nothing is in both
    places and nothing in neither."""
    import uuid

    from app.audit import repository, service
    from app.db import session_scope

    class Trail(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.org = f"org_{uuid.uuid4().hex[:8]}"
            self.model: list[tuple[int, str, datetime]] = []  # (seq, action, at), oldest first
            self.now = datetime.now(UTC).replace(microsecond=0)

        @rule(ages=st.lists(st.integers(0, 30), min_size=1, max_size=6), data=st.data())
        def events(self, ages: list[int], data: st.DataObject) -> None:
            actions = [data.draw(st.sampled_from(ACTIONS)) for _ in ages]
            rows = [
                _row(self.org, a, self.now - timedelta(days=d))
                for a, d in zip(actions, ages, strict=True)
            ]
            with session_scope() as session:
                repository.append(session, rows)
                seqs = repository.page(
                    session, self.org, before_seq=None, action=None, since=None, limit=len(rows)
                )
            for event in reversed(seqs):
                self.model.append((event.seq, event.action, event.at))

        @rule(days=st.integers(0, 31), chunk=st.integers(1, 5))
        def moves(self, days: int, chunk: int) -> None:
            move(self.org, self.now - timedelta(days=days) + timedelta(seconds=1), chunk)

        @rule(
            limit=st.integers(1, 7),
            action=st.sampled_from([None, *ACTIONS, "keys.*", "batches.*"]),
            since_days=st.sampled_from([None, 0, 3, 15]),
        )
        def lists(self, limit: int, action: str | None, since_days: int | None) -> None:
            since = None if since_days is None else self.now - timedelta(days=since_days)
            got: list[tuple[int, str, datetime]] = []
            cursor = None
            while True:
                with session_scope() as session:
                    page = service.page(
                        session, self.org, cursor=cursor, action=action, since=since, limit=limit
                    )
                assert len(page.items) <= limit
                got += [(e.seq, e.action, e.at) for e in page.items]
                cursor = page.next
                if cursor is None:
                    break
            expected = [
                e
                for e in reversed(self.model)
                if (
                    action is None
                    or e[1] == action
                    or (action.endswith(".*") and e[1].startswith(action[:-1]))
                )
                and (since is None or e[2] >= since)
            ]
            assert got == expected

        @invariant()
        def moved_not_lost(self) -> None:
            in_sql, archived, mark = places(self.org)
            assert in_sql + archived == len(self.model)
            seqs = [e[0] for e in self.model]
            assert archived_seqs(self.org) == [s for s in seqs if s <= mark]

    run_state_machine_as_test(
        Trail,
        settings=settings(budget(8, 10), suppress_health_check=list(HealthCheck), database=None),
    )
