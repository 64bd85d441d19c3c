"""The GDPR read path for a snapshot read with its position deletes (issue 26) returns exactly
what the whole GDPR set returns, as a hypothesis state machine on both stores.

`app.privacy.reads.in_force` with `with_deletes_of=S` gives only the GDPR deletes past S's
materialized mark; without it, every GDPR delete in force: the read path before issue 26, kept
for increments, and the model here. Random histories of ingests, GDPR deletes, materializer
passes (one of them resolved before a GDPR delete and committed after it, as a pass in flight
does), vacuums and compactions; after every step each retained snapshot reads the same through
`/rows` (the new path) as through `visible.row_batches` with the whole set, and both as a plain
model of the visible rows (a GDPR-deleted identity's older rows are hidden in every snapshot).
Spark's `read_dataset` is compared the same way at a drawn snapshot. The set a read of S gets is
exactly the whole set's GDPR deletes above S's mark.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from pyiceberg.table import Table

from tests.fixtures.batches import ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.profile import budget
from tests.fixtures.spark import RunJobs
from tests.fixtures.state_machines import USERS, Rows, allocate, to_csv

pytestmark = pytest.mark.spark


def whole_set(dataset_id: str, table: Table) -> Any:
    """Every GDPR delete in force, whatever snapshot is read: the model's GDPR set."""
    from app.db import session_scope
    from app.privacy import reads

    with session_scope() as session:
        return reads.in_force(session, dataset_id, table)


def for_snapshot(dataset_id: str, table: Table, snapshot_id: int) -> Any:
    """The set a reader of `snapshot_id` that applies its position deletes gets."""
    from app.db import session_scope
    from app.privacy import reads

    with session_scope() as session:
        return reads.in_force(session, dataset_id, table, table.snapshot_by_id(snapshot_id))


def model_read(dataset_id: str, table: Table, snapshot_id: int) -> list[int]:
    """The rows of a snapshot with every GDPR delete in force applied (the path before)."""
    from app.lake import visible

    snapshot = table.snapshot_by_id(snapshot_id)
    gdpr = whole_set(dataset_id, table)
    _, batches = visible.row_batches(table, snapshot, columns=["event_id"], gdpr=gdpr)
    return sorted(v for b in batches for v in b.column(0).to_pylist())


def key(rows: Any) -> list[tuple[int, str, int]]:
    """A set's tombstones as sorted (namespace, id, sequence number)."""
    columns = (rows[c].to_pylist() for c in ("namespace", "id", "added_seq"))
    return sorted(zip(*columns, strict=True))


def machine(client: TestClient, run_jobs: RunJobs, spark: Any) -> type[RuleBasedStateMachine]:
    from app.config import get_settings
    from app.lake import tombstones
    from app.lake.catalog import get_catalog

    class GdprReads(RuleBasedStateMachine):
        @initialize()
        def create(self) -> None:
            get_settings().materialize_deletes = False  # passes run when a rule says so
            body = {**EVENTS, "name": f"gdpr_{uuid.uuid4().hex[:8]}"}
            created = client.post("/v1/datasets", json=body)
            assert created.status_code == 201, created.text
            self.dataset = created.json()
            self.identifier = self.dataset["table"].split(".", 1)[1]
            self.next_id = 0
            self.user_of: dict[int, str | None] = {}
            self.step_of: dict[int, int] = {}  # row -> the step that committed it
            self.deletes: list[tuple[int, list[str]]] = []  # (step, users) of GDPR deletes
            self.visible: set[int] = set()
            self.history: list[tuple[int, frozenset[int]]] = []  # (snapshot, visible rows)
            self.ingest([*USERS, *USERS])  # every user has rows from the start

        def table(self) -> Table:
            return get_catalog().load_table(self.identifier)

        def record(self, snapshot_id: int) -> None:
            self.history.append((snapshot_id, frozenset(self.visible)))

        def erased(self, row: int) -> bool:
            return any(
                step > self.step_of[row] and self.user_of[row] in users
                for step, users in self.deletes
            )

        def expected(self, table: Table, snapshot_id: int) -> list[int]:
            """The model's rows at any retained snapshot: those of the newest step at or
            before it (a materializer's, a vacuum's or a compaction's snapshot shows no other),
            minus every row a GDPR delete erased."""
            seq_of = {s.snapshot_id: s.sequence_number or 0 for s in table.metadata.snapshots}
            at = seq_of[snapshot_id]
            before = [rows for s, rows in self.history if seq_of[s] <= at]
            return sorted(r for r in (before[-1] if before else ()) if not self.erased(r))

        @rule(users=st.lists(st.sampled_from(USERS), min_size=1, max_size=4))
        def ingest(self, users: list[str | None]) -> None:
            records: Rows
            records, self.next_id = allocate(self.user_of, self.next_id, users)
            self.step_of.update((r, len(self.history)) for r, _ in records)
            did = self.dataset["id"]
            batch = ingest(client, run_jobs, did, "csv", {"a.csv": to_csv(records)})
            assert batch["status"] == "success", batch
            self.visible |= {r for r, _ in records}
            self.record(batch["snapshot_id"])

        @rule(users=st.lists(st.sampled_from(USERS[:3]), min_size=1, max_size=2, unique=True))
        def gdpr_delete(self, users: list[str]) -> None:
            body = {"dataset_ids": [self.dataset["id"]], "column": "user_id", "values": users}
            response = client.post("/v1/privacy/jobs", json=body)
            assert response.status_code == 202, response.text
            run_jobs()
            status = client.get(f"/v1/privacy/jobs/{response.json()['id']}").json()
            assert status["status"] == "complete", status
            self.visible -= {r for r in self.visible if self.user_of[r] in users}
            self.deletes.append((len(self.history), users))
            self.record(status["datasets"][0]["snapshot_id"])

        @rule()
        def materialize(self) -> None:
            """A materializer pass (the scheduler's queues what waits)."""
            from workers.scheduler import schedule_once

            get_settings().materialize_deletes = True
            try:
                schedule_once()
                run_jobs()
            finally:
                get_settings().materialize_deletes = False

        @rule(users=st.lists(st.sampled_from(USERS[:3]), min_size=1, max_size=2, unique=True))
        def materialize_around_a_delete(self, users: list[str]) -> None:
            """A pass in flight: resolved on the current snapshot, a GDPR delete commits, then
            the pass commits on it (its mark stops below the delete's sequence number)."""
            from app.lake import materialize_plan
            from workers.maintenance.materialize import commit_resolution
            from workers.spark import iceberg_java

            table = self.table()
            resolution = materialize_plan.resolve(table, table.current_snapshot())
            self.gdpr_delete(users)
            if resolution is None:
                return
            java_table = iceberg_java.load_table(spark, self.identifier)
            properties = {
                "icebatch.operation": "materialize",
                "icebatch.request-id": f"test-{uuid.uuid4().hex}",
            }
            commit_resolution(spark, java_table, self.table(), resolution, properties)

        @rule(kind=st.sampled_from(["vacuum", "compact"]))
        def rewrite(self, kind: str) -> None:
            response = client.post(f"/v1/datasets/{self.dataset['id']}/{kind}", json={})
            assert response.status_code == 202, response.text
            run_jobs()
            job = client.get(f"/v1/jobs/{response.json()['id']}").json()
            assert job["state"] == "succeeded", job

        @rule(data=st.data())
        def spark_read(self, data: st.DataObject) -> None:
            """`read_dataset` (its GDPR set looked up for the snapshot) against the whole set."""
            from workers.spark.read import read_dataset

            table = self.table()
            if table.current_snapshot() is None:
                return
            snapshot_id = data.draw(st.sampled_from([s.snapshot_id for s in table.snapshots()]))
            name = self.dataset["table"]
            new = read_dataset(spark, name, as_of=snapshot_id).select("event_id").collect()
            old = read_dataset(  # through the joins: the new read takes the filter expression
                spark,
                name,
                as_of=snapshot_id,
                gdpr=whole_set(self.dataset["id"], table),
                inline_ids=0,
            )
            old_ids = sorted(r.event_id for r in old.select("event_id").collect())
            assert sorted(r.event_id for r in new) == old_ids == self.expected(table, snapshot_id)

        @invariant()
        def every_snapshot_reads_as_with_the_whole_set(self) -> None:
            table = self.table()
            did = self.dataset["id"]
            for snapshot in table.snapshots():
                sid = snapshot.snapshot_id
                model = model_read(did, table, sid)
                assert model == self.expected(table, sid), sid
                assert ids(client, did, as_of=sid) == model, sid
                mark = tombstones.materialized_seq(table, snapshot)
                assert key(for_snapshot(did, table, sid).rows) == [
                    k for k in key(whole_set(did, table).rows) if k[2] > mark
                ], (sid, mark)

        def teardown(self) -> None:
            get_settings().materialize_deletes = False

    return GdprReads


def test_gdpr_reads_of_a_snapshot_equal_reads_with_the_whole_set(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    run_state_machine_as_test(
        machine(client, run_jobs, spark),
        settings=settings(budget(6, 12), suppress_health_check=list(HealthCheck), database=None),
    )
