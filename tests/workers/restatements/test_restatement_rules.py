"""The restatement rules as a hypothesis state machine (DESIGN.md §3).

Random sequences of ingest, replay, revert and GDPR delete run through the API and an in-process
worker. A plain Python model keeps the set of visible rows: ingest adds a batch's rows, revert
removes a batch's rows, replay removes its predecessors' rows and adds its own, GDPR removes the
rows of a user present at that moment (rows of the user ingested later stay). After every step
the rows read now and at every earlier snapshot, through the API and through the Spark helper,
equal what the model recorded for that snapshot, minus the rows a later GDPR delete erased: time
travel is exact for reverts and replays, never for an erased person (issue 10).

Vacuum, compaction and the metadata store's pruning (no visible row or status changes)
interleave, and the materializer of Iceberg
position deletes (issue 13) may be paused for some steps, so snapshots are read with their
tombstones materialized, partly materialized and not at all. Plain engines (PyIceberg's scan,
Spark SQL without Icebatch's helper) apply the delete files alone: at every snapshot they never
hide a row the model shows (a delete file only marks rows a tombstone hides), and once the
materializer has caught up, the current snapshot reads in them exactly as the model.

The table as the Iceberg REST catalog serves it (`/iceberg`, read by PyIceberg's `RestCatalog`)
reads exactly as the model at every snapshot it serves, whatever the materializer's progress:
it serves only snapshots whose tombstones are all Iceberg deletes and none from before a GDPR
delete; once the materializer has caught up it serves the current snapshot (issue 23).
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.fixtures.batches import ids, ingest, replay
from tests.fixtures.catalog import CatalogFor, key_of
from tests.fixtures.datasets import EVENTS
from tests.fixtures.profile import budget
from tests.fixtures.spark import RunJobs
from tests.fixtures.state_machines import USERS, Rows, allocate, to_csv

pytestmark = pytest.mark.spark
RETENTIONS = (
    "job_retention_days",
    "outbox_retention_days",
    "idempotency_key_retention_days",
    "restatement_retention_days",
    "privacy_job_retention_days",
)


def machine(
    client: TestClient, run_jobs: RunJobs, spark: Any, catalog: Any
) -> type[RuleBasedStateMachine]:
    from workers.spark.read import INLINE_IDS, read_dataset

    class Restatements(RuleBasedStateMachine):
        @initialize()
        def create(self) -> None:
            body = {**EVENTS, "name": f"events_{len(client.get('/v1/datasets').json()['items'])}"}
            created = client.post("/v1/datasets", json=body)
            assert created.status_code == 201, created.text
            self.dataset = created.json()
            self.next_id = 0
            self.user_of: dict[int, str | None] = {}
            self.rows_of: dict[str, set[int]] = {}  # batch -> its rows
            self.live: list[str] = []  # 'success' batches: can be reverted or replayed
            self.visible: set[int] = set()
            self.history: list[tuple[int, frozenset[int]]] = []  # (snapshot, visible rows)
            self.step_of: dict[int, int] = {}  # row -> the step that committed it
            self.deletes: list[tuple[int, list[str]]] = []  # (step, users) of GDPR deletes

        def new_rows(self, users: list[str | None]) -> Rows:
            records, self.next_id = allocate(self.user_of, self.next_id, users)
            self.step_of.update((r, len(self.history)) for r, _ in records)
            return records

        def erased(self, row: int) -> bool:
            """A GDPR delete after the row's commit, of its user, hides it from every read."""
            return any(
                step > self.step_of[row] and self.user_of[row] in users
                for step, users in self.deletes
            )

        def record(self, snapshot_id: int) -> None:
            assert snapshot_id not in {s for s, _ in self.history}, "a step reused a snapshot"
            self.history.append((snapshot_id, frozenset(self.visible)))

        @rule(users=st.lists(st.sampled_from(USERS), min_size=1, max_size=4))
        def ingest(self, users: list[str | None]) -> None:
            records = self.new_rows(users)
            batch = ingest(client, run_jobs, self.dataset["id"], "csv", {"a.csv": to_csv(records)})
            assert batch["status"] == "success", batch
            self.rows_of[batch["id"]] = {r for r, _ in records}
            self.live.append(batch["id"])
            self.visible |= self.rows_of[batch["id"]]
            self.record(batch["snapshot_id"])

        @precondition(lambda self: bool(self.live))
        @rule(data=st.data())
        def revert(self, data: st.DataObject) -> None:
            batch_id = data.draw(st.sampled_from(self.live))
            response = client.post(f"/v1/batches/{batch_id}", params={"action": "REVERT"})
            assert response.status_code == 202, response.text
            run_jobs()
            job = client.get(f"/v1/jobs/{response.json()['job']['id']}").json()
            assert job["state"] == "succeeded", job
            assert job["result"]["rows_hidden"] == len(self.rows_of[batch_id] & self.visible)
            self.live.remove(batch_id)
            self.visible -= self.rows_of[batch_id]
            assert client.get(f"/v1/batches/{batch_id}").json()["status"] == "reverted"
            self.record(job["result"]["snapshot_id"])

        @precondition(lambda self: bool(self.live))
        @rule(data=st.data(), users=st.lists(st.sampled_from(USERS), min_size=1, max_size=3))
        def replay(self, data: st.DataObject, users: list[str | None]) -> None:
            predecessors = data.draw(
                st.lists(st.sampled_from(self.live), min_size=1, max_size=2, unique=True)
            )
            records = self.new_rows(users)
            batch = replay(client, run_jobs, self.dataset["id"], predecessors, to_csv(records))
            assert batch["status"] == "success", batch
            for predecessor in predecessors:
                self.live.remove(predecessor)
                self.visible -= self.rows_of[predecessor]
                status = client.get(f"/v1/batches/{predecessor}").json()["status"]
                assert status == "replaced"
            self.rows_of[batch["id"]] = {r for r, _ in records}
            self.live.append(batch["id"])
            self.visible |= self.rows_of[batch["id"]]
            self.record(batch["snapshot_id"])

        @rule(users=st.lists(st.sampled_from(USERS[:3]), min_size=1, max_size=2, unique=True))
        def gdpr_delete(self, users: list[str]) -> None:
            response = client.post(
                "/v1/privacy/jobs",
                json={"dataset_ids": [self.dataset["id"]], "column": "user_id", "values": users},
            )
            assert response.status_code == 202, response.text
            run_jobs()
            status = client.get(f"/v1/privacy/jobs/{response.json()['id']}").json()
            assert status["status"] == "complete", status
            hidden = {r for r in self.visible if self.user_of[r] in users}
            assert status["rows_hidden"] == len(hidden)
            assert status["tombstones_written"] == len(users)
            self.visible -= hidden
            self.deletes.append((len(self.history), users))
            self.record(status["datasets"][0]["snapshot_id"])

        @rule(kind=st.sampled_from(["vacuum", "compact"]))
        def rewrite(self, kind: str) -> None:
            response = client.post(f"/v1/datasets/{self.dataset['id']}/{kind}", json={})
            assert response.status_code == 202, response.text
            run_jobs()
            job = client.get(f"/v1/jobs/{response.json()['id']}").json()
            assert job["state"] == "succeeded", job
            if job["result"].get("snapshot_id"):
                self.record(job["result"]["snapshot_id"])

        @rule(paused=st.booleans())
        def materializer(self, paused: bool) -> None:
            """Pause the materializer, or resume it (the scheduler's pass queues what waits)."""
            from app.config import get_settings
            from workers.scheduler import schedule_once

            get_settings().materialize_deletes = not paused
            if not paused:
                schedule_once()
                run_jobs()

        @rule()
        def prune(self) -> None:
            """Prune the metadata store with every retention at almost nothing (issue 26): the
            statuses of batches and privacy jobs stay as they were, and the invariants read the
            rows as the model has them (no GDPR delete in force is pruned)."""
            from app.config import get_settings
            from app.pruning import service

            def statuses() -> dict[str, str]:
                did = self.dataset["id"]
                batches = client.get("/v1/batches", params={"dataset_id": did, "limit": 500})
                privacy = client.get("/v1/privacy/jobs", params={"limit": 500})
                assert (batches.status_code, privacy.status_code) == (200, 200)
                assert (batches.json()["next"], privacy.json()["next"]) == (None, None)
                return {
                    item["id"]: item["status"]
                    for item in batches.json()["items"] + privacy.json()["items"]
                }

            before = statuses()
            settings = get_settings()
            saved = {name: getattr(settings, name) for name in RETENTIONS}
            try:
                for name in RETENTIONS:
                    setattr(settings, name, 1e-9)
                service.prune(settings)
            finally:
                for name, value in saved.items():
                    setattr(settings, name, value)
            assert statuses() == before

        @invariant()
        def plain_engines_never_hide_a_visible_row(self) -> None:
            if not self.history:
                return
            from app.config import get_settings
            from app.lake import tombstones
            from app.lake.catalog import get_catalog

            name = self.dataset["table"]
            table = get_catalog().load_table(name.split(".", 1)[1])
            for snapshot_id, recorded in self.history:
                scan = table.scan(selected_fields=("event_id",), snapshot_id=snapshot_id)
                plain = set(scan.to_arrow()["event_id"].to_pylist())
                assert {r for r in recorded if not self.erased(r)} <= plain, snapshot_id
            current = table.current_snapshot()
            pending = tombstones.unmaterialized(table, current).num_rows
            if get_settings().materialize_deletes and not pending:
                spark_sql = {r[0] for r in spark.sql(f"SELECT event_id FROM {name}").collect()}
                assert spark_sql == self.visible
                assert set(table.scan(selected_fields=("event_id",)).to_arrow()[0].to_pylist()) == (
                    self.visible
                )

        @invariant()
        def the_catalog_serves_only_what_the_model_shows(self) -> None:
            if not self.history:
                return
            from pyiceberg.exceptions import ServiceUnavailableError

            from app.config import get_settings
            from app.lake import tombstones
            from app.lake.catalog import get_catalog

            identifier = self.dataset["table"].split(".", 1)[1]  # org.name, without Spark's
            lake = get_catalog().load_table(identifier)  # catalog name
            try:
                served = catalog.load_table(identifier)
            except ServiceUnavailableError:
                # nothing is servable: only while a GDPR delete waits for the materializer
                pending = tombstones.unmaterialized(lake, lake.current_snapshot())
                assert "gdpr" in pending["operation"].to_pylist()
                return
            seq_of = {s.snapshot_id: s.sequence_number for s in lake.metadata.snapshots}
            steps = sorted((seq_of[s], rows) for s, rows in self.history if s in seq_of)
            for snapshot in served.metadata.snapshots:
                before = [rows for seq, rows in steps if seq <= snapshot.sequence_number]
                expected = {r for r in before[-1] if not self.erased(r)} if before else set()
                scan = served.scan(selected_fields=("event_id",), snapshot_id=snapshot.snapshot_id)
                assert set(scan.to_arrow()["event_id"].to_pylist()) == expected, snapshot
            current = lake.current_snapshot()
            if (
                get_settings().materialize_deletes
                and not tombstones.unmaterialized(lake, current).num_rows
            ):
                assert served.metadata.current_snapshot_id == lake.metadata.current_snapshot_id
                now = served.scan(selected_fields=("event_id",)).to_arrow()["event_id"]
                assert set(now.to_pylist()) == self.visible

        def teardown(self) -> None:
            from app.config import get_settings

            get_settings().materialize_deletes = True  # the next example starts with it on

        @invariant()
        def every_snapshot_reads_as_the_model(self) -> None:
            if not self.history:
                return
            did, name = self.dataset["id"], self.dataset["table"]
            assert ids(client, did) == sorted(self.visible)
            assert sorted(r.event_id for r in read_dataset(spark, name).collect()) == sorted(
                self.visible
            )
            for n, (snapshot_id, recorded) in enumerate(self.history):
                expected = {r for r in recorded if not self.erased(r)}
                assert ids(client, did, as_of=snapshot_id) == sorted(expected), snapshot_id
                # every other snapshot through the joins, the others through the filter
                inline = 0 if n % 2 else INLINE_IDS
                frame = read_dataset(spark, name, as_of=snapshot_id, inline_ids=inline)
                events = frame.select("event_id").collect()
                assert sorted(r.event_id for r in events) == sorted(expected), (snapshot_id, inline)

    return Restatements


# the state machine runs on the embedded store; the other restatement tests cover both
@pytest.mark.parametrize("stack", ["embedded"], indirect=True)
@pytest.mark.usefixtures("materializer")
def test_restatements_follow_the_model(
    client: TestClient, run_jobs: RunJobs, spark: Any, catalog_for: CatalogFor
) -> None:
    run_state_machine_as_test(
        machine(client, run_jobs, spark, catalog_for(key_of(client))),
        settings=settings(budget(6, 8), suppress_health_check=list(HealthCheck), database=None),
    )
