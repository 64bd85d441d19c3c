"""The CDC rules as a hypothesis state machine, against an independent model (DESIGN.md §3).

Random PUT/PATCH/DELETE events for a few entities, with shuffled and repeated timestamps and
links, and Debezium change events of a few source rows (creates, updates, snapshot reads,
deletes, truncates, at rising log positions with random clocks, delivered in a random order
and again), are posted through the API, sometimes retried with the same `Idempotency-Key` (one
acceptance) or without one (two), and interleaved with dumper and processor runs. The model is
a plain dict fold of the events each run had applied, in (timestamp, sequence) order, and a
plain union-find of their links; for Debezium's rows, each row's newest change by position.
After every run the raw table read through the API and
through Spark SQL, the lag figures and the profiles equal the model's, and a replica fed the
run's increments (`/changes`: remove deleted, add appended) equals the table.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.app.cdc.test_debezium_accept import staged
from tests.fixtures.cdc_model import Model, model_merge
from tests.fixtures.clients import ClientFactory
from tests.fixtures.debezium import pg_event
from tests.fixtures.profile import budget
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark
ENTITIES = ["e1", "e2", "e3", "e4"]
OTHERS = ["x1", "x2"]  # identities that only ever appear as links
CHECKED: list[int] = []  # rows compared per check: the machine must reach non-empty tables
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
T0_MS = int(T0.timestamp() * 1000)

values = st.one_of(st.integers(0, 3), st.sampled_from(["a", "b"]), st.lists(st.integers(0, 2)))
patches = st.dictionaries(
    st.sampled_from(["k", "m", "n"]),
    st.one_of(
        st.none(),
        values,
        st.dictionaries(st.sampled_from(["p", "q"]), st.one_of(st.none(), values), max_size=2),
    ),
    max_size=3,
)
events = st.lists(
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["PUT", "PATCH", "PATCH", "DELETE"]),
            "entity_id": st.sampled_from(ENTITIES),
            "minute": st.integers(0, 5),  # few distinct times: ties and reorderings
            "payload": patches,
            "related_ids": st.one_of(
                st.none(), st.lists(st.sampled_from(ENTITIES + OTHERS), max_size=2)
            ),
        }
    ),
    min_size=1,
    max_size=6,
)


DBZ_TABLE, DBZ_PREFIX = "inventory.customers", "db:"
debezium_changes = st.lists(
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["c", "u", "u", "d", "r", "t"]),
            "key": st.integers(1, 3),
            "ms": st.integers(T0_MS, T0_MS + 600_000),  # the database's clock: any order
            "after": st.fixed_dictionaries({"v": values}),
        }
    ),
    min_size=1,
    max_size=5,
)


def machine(
    client_for: ClientFactory, run_jobs: RunJobs, spark: Any
) -> type[RuleBasedStateMachine]:
    from app.cdc.service import ensure_job
    from app.db import session_scope
    from app.jobs.kinds import JobKind
    from workers.spark.session import get_spark

    class Replication(RuleBasedStateMachine):
        @initialize()
        def tenant(self) -> None:
            self.client = client_for()
            self.org = self.client.org  # type: ignore[attr-defined]
            self.model = Model()
            self.last: tuple[bytes, str | None, dict[str, Any]] | None = None
            self.replica: dict[tuple[str, str], str] = {}  # from the increments
            self.seen_snapshot: int | None = None
            self.changes: list[dict[str, Any]] = []  # every Debezium change made at the source
            config = {"sources": [{"table": DBZ_TABLE, "entity_prefix": DBZ_PREFIX}]}
            assert self.client.put("/v1/cdc/config", json=config).status_code == 200

        @rule(
            made=debezium_changes,
            redelivered=st.lists(st.integers(0, 40), max_size=4),
            order=st.randoms(use_true_random=False),
        )
        def post_debezium(
            self, made: list[dict[str, Any]], redelivered: list[int], order: Any
        ) -> None:
            """New changes at rising log positions (clocks random), some earlier ones delivered
            again, all in a random order, as one request of the HTTP sink."""
            start = len(self.changes)
            for change in made:
                after = {"id": change["key"], **change["after"]}
                self.changes.append({**change, "after": after, "lsn": 100 + 10 * len(self.changes)})
            batch = self.changes[start:] + [
                self.changes[i] for i in redelivered if i < len(self.changes)
            ]
            order.shuffle(batch)
            values = [
                pg_event(c["op"], c["key"], c["lsn"], ts_ms=c["ms"], after=c["after"])
                for c in batch
            ]
            response = self.client.post(
                "/v1/cdc/debezium",
                content=json.dumps(values),
                headers={"Content-Type": "application/json"},
            )
            assert response.status_code == 202, response.text
            answer = response.json()
            counted = answer["accepted"] - answer["deleted_by_truncate"] + answer["truncates"]
            assert counted + answer["duplicates"] + answer["superseded"] == len(batch)
            first = len(self.model.accepted) + 1
            new = [e for e in staged(self.org) if e["seq"] >= first]
            assert len(new) == answer["accepted"]
            for e in new:  # the accepted events, as the processor must apply them
                self.model.accepted.append(
                    {
                        "op": e["op"],
                        "entity_id": e["entity_id"],
                        "related_ids": None,
                        "payload": json.loads(e["payload"]) if e["payload"] else None,
                        "ts": e["timestamp"],
                        "seq": e["seq"],
                    }
                )

        def debezium_rows(self) -> dict[str, Any]:
            """Each source row's newest change by position, truncates included: its image, or
            nothing."""
            newest: dict[int, tuple[int, dict[str, Any] | None]] = {}
            for change in self.changes:
                if change["op"] == "t":
                    newest = dict.fromkeys(newest, (change["lsn"], None))
                elif change["op"] == "d":
                    newest[change["key"]] = (change["lsn"], None)
                else:
                    newest[change["key"]] = (change["lsn"], change["after"])
            return {f"{DBZ_PREFIX}{k}": doc for k, (_, doc) in newest.items() if doc is not None}

        def accept(self, body: bytes, key: str | None, parsed: list[dict[str, Any]]) -> None:
            headers = {"Content-Type": "application/x-ndjson"}
            if key:
                headers["Idempotency-Key"] = key
            response = self.client.post("/v1/cdc/events", content=body, headers=headers)
            assert response.status_code == 202, response.text
            answer = response.json()
            replayed = response.headers.get("Idempotent-Replayed") == "true"
            if replayed:
                assert self.last is not None
                assert answer == self.last[2]
                return
            first = len(self.model.accepted) + 1
            assert answer == {
                "accepted": len(parsed),
                "first_sequence": first,
                "last_sequence": first + len(parsed) - 1,
            }
            for offset, e in enumerate(parsed):
                self.model.accepted.append({**e, "seq": first + offset})
            self.last = (body, key, answer)

        @rule(batch=events, keyed=st.booleans())
        def post(self, batch: list[dict[str, Any]], keyed: bool) -> None:
            parsed, lines = [], []
            for e in batch:
                ts = T0 + timedelta(minutes=e["minute"])
                line = {
                    "op": e["op"],
                    "entity_id": e["entity_id"],
                    "record_type": "profile",
                    "timestamp": ts.isoformat(),
                    "related_ids": e["related_ids"],
                    "payload": e["payload"] if e["op"] != "DELETE" else None,
                }
                lines.append(json.dumps(line))
                parsed.append({**line, "ts": ts})
            key = uuid.uuid4().hex if keyed else None
            self.accept("\n".join(lines).encode(), key, parsed)
            self.parsed = parsed

        @precondition(lambda self: self.last is not None)
        @rule()
        def retry(self) -> None:
            """The last request again: with its key it is one acceptance, without it two."""
            if self.last is None:
                return
            body, key, _ = self.last
            self.accept(body, key, self.parsed)

        def run(self, kind: JobKind) -> None:
            with session_scope() as session:
                from app.models import CdcTenant

                tenant = session.get(CdcTenant, self.org)
                if tenant is None:
                    return
                ensure_job(session, self.org, kind, tenant.raw_dataset_id)
            run_jobs()

        @precondition(lambda self: self.model.accepted)
        @rule()
        def stage(self) -> None:
            self.run(JobKind.CDC_STAGE)
            self.model.staged = len(self.model.accepted)
            self.check()

        @precondition(lambda self: self.model.accepted)
        @rule()
        def process(self) -> None:
            self.run(JobKind.CDC_PROCESS)
            self.model.processed = self.model.staged
            self.check()

        @precondition(lambda self: self.model.accepted)
        @rule()
        def stage_and_process(self) -> None:
            """What `POST /v1/cdc/process` and the schedule do: stage, then process."""
            self.run(JobKind.CDC_STAGE)
            self.model.staged = len(self.model.accepted)
            self.run(JobKind.CDC_PROCESS)
            self.model.processed = self.model.staged
            self.check()

        def check(self) -> None:
            config = self.client.get("/v1/cdc/config").json()
            if config["raw_dataset_id"] is None:
                return
            expected = self.model.rows()
            CHECKED.append(len(expected))
            lines = self.client.get(f"/v1/datasets/{config['raw_dataset_id']}/rows").text
            got = {r["entity_id"]: r for r in map(json.loads, lines.splitlines())}
            assert set(got) == set(expected)
            for entity, want in expected.items():
                row = got[entity]
                assert json.loads(row["document"]) == want["document"], entity
                assert row["sequence"] == want["sequence"], entity
                assert datetime.fromisoformat(row["timestamp"]) == want["timestamp"]
                assert sorted(row["related_ids"] or []) == want["related_ids"], entity
                assert row["cluster_id"] == want["cluster_id"], entity
            frame = (
                get_spark()
                .sql(f"SELECT entity_id, document, cluster_id FROM {config['raw_table']}")
                .collect()
            )
            assert {r.entity_id: (json.loads(r.document), r.cluster_id) for r in frame} == {
                e: (w["document"], w["cluster_id"]) for e, w in expected.items()
            }
            self.check_increment(config["raw_dataset_id"], got)
            lag = self.client.get("/v1/cdc/lag").json()
            assert {k: lag[k] for k in self.model.lag()} == self.model.lag()
            if self.model.processed == len(self.model.accepted):  # Debezium's rows: the newest
                landed = {e: json.loads(r["document"]) for e, r in got.items() if e[:3] == "db:"}
                assert landed == self.debezium_rows()
            self.check_profiles(expected)

        def check_increment(self, dataset: str, rows: dict[str, dict[str, Any]]) -> None:
            """A replica that applies each increment (remove deleted, add appended) since the
            last check equals the raw table now."""
            end = self.client.get(f"/v1/datasets/{dataset}").json()["current_snapshot_id"]
            if end is None or end == self.seen_snapshot:
                return
            params: dict[str, Any] = {"to_snapshot": end}
            if self.seen_snapshot is not None:
                params["from_snapshot"] = self.seen_snapshot
            for kind in ("deleted", "appended"):
                answer = self.client.get(
                    f"/v1/datasets/{dataset}/changes", params={**params, "kind": kind}
                )
                assert answer.status_code == 200, answer.text
                for change in map(json.loads, answer.text.splitlines()):
                    key = (change["entity_id"], change["_batch_id"])
                    if kind == "deleted":
                        assert key in self.replica, key
                        del self.replica[key]
                    else:
                        assert key not in self.replica, key
                        self.replica[key] = change["document"]
            self.seen_snapshot = end
            assert self.replica == {(e, r["_batch_id"]): r["document"] for e, r in rows.items()}

        def check_profiles(self, rows: dict[str, dict[str, Any]]) -> None:
            clusters = self.model.clusters()
            for entity in ENTITIES + OTHERS:
                answer = self.client.get(f"/v1/cdc/profiles/{entity}")
                if entity not in rows and entity not in clusters:
                    assert answer.status_code == 404, answer.text
                    continue
                assert answer.status_code == 200, answer.text
                profile = answer.json()
                label = clusters.get(entity, entity)
                members = sorted(x for x, c in clusters.items() if c == label) or [entity]
                assert profile["cluster_id"] == label
                assert profile["members"] == members
                live = sorted(m for m in members if m in rows)
                assert [r["entity_id"] for r in profile["records"]] == live
                merged: dict[str, Any] = {}
                for m in sorted(live, key=lambda m: (rows[m]["timestamp"], m)):
                    merged = model_merge(merged, rows[m]["document"])
                assert profile["merged"] == merged

    return Replication


# the state machine runs on the embedded store; the kill tests cover PostgreSQL + Redis
@pytest.mark.parametrize("stack", ["embedded"], indirect=True)
def test_replication_follows_the_model(
    client_for: ClientFactory, run_jobs: RunJobs, spark: Any
) -> None:
    run_state_machine_as_test(
        machine(client_for, run_jobs, spark),
        settings=settings(budget(12, 15), suppress_health_check=list(HealthCheck), database=None),
    )
    assert sum(1 for n in CHECKED if n) >= 3, CHECKED
