"""The commit pipeline's rules (app/lake/pipeline.py), once for every operation: on a PyIceberg
SQLite catalog, with an operation that commits tombstones through the fenced PyIceberg adapter
and writes one file of its own when it plans (no Spark)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import Table

from app.lake import commit, lease, pipeline, snapshots, tables, tombstones
from app.lake.pipeline import Committed, OperationKind, Replan, Summary
from app.lake.tombstones import NewTombstone
from app.lake.types import schema_from_specs
from tests.fixtures.environments import Environment

WAREHOUSE = "wh"


@pytest.fixture
def catalog(tmp_path: Path) -> SqlCatalog:
    return SqlCatalog(
        "t", uri=f"sqlite:///{tmp_path}/c.db", warehouse=(tmp_path / WAREHOUSE).as_uri()
    )


@pytest.fixture
def table(catalog: SqlCatalog) -> Table:
    schema = schema_from_specs(
        [{"name": "id", "type": "long", "required": True}, {"name": "user_id", "type": "string"}]
    )
    return tables.create_table(catalog, "o.t", schema, [])


class Result(BaseModel):
    snapshot_id: int | None
    recovered: bool = False


@dataclass
class Plan:
    values: list[str]
    scratch: Path  # a file the plan wrote: the pipeline must remove it if the plan is dropped


@dataclass
class Erase:
    """Tombstones for `values`, through the fenced commit; `before_commit` runs before each
    commit attempt (a racing writer), `fail` makes the next attempts raise."""

    values: list[str]
    folder: Path
    request_id: str = field(default_factory=lambda: f"req-{uuid.uuid4()}")
    kind: OperationKind = OperationKind.RESTATE
    before_commit: Callable[[int], None] = lambda attempt: None
    replan_first: int = 0  # this many first attempts raise Replan
    replan_planning: int = 0  # this many first plans raise Replan (having dropped their file)
    fail: Exception | None = None
    plans: list[Plan] = field(default_factory=list)
    discarded: list[Path] = field(default_factory=list)
    commits: int = 0
    recorded: list[Committed] = field(default_factory=list)

    def plan(self, table: Table) -> Plan:
        scratch = self.folder / f"plan-{len(self.plans)}.parquet"
        pq.write_table(pa.table({"x": [1]}), scratch)
        self.plans.append(Plan(self.values, scratch))
        if len(self.plans) <= self.replan_planning:  # e.g. a staged apply whose files changed
            self.discard(self.plans[-1])
            raise Replan("the files changed while planning")
        return self.plans[-1]

    def summary(self, plan: Plan) -> Summary:
        return Summary("gdpr", self.request_id)

    def commit(self, table: Table, plan: Plan, summary: Summary) -> Committed:
        self.before_commit(self.commits)
        self.commits += 1
        if self.replan_first >= self.commits:
            raise Replan("the files changed")
        if self.fail is not None:
            raise self.fail
        field_id = table.schema().find_field("user_id").field_id
        new = [NewTombstone(field_id, v, self.request_id, "gdpr") for v in plan.values]
        snapshot = commit.commit(
            table, files=[], new_tombstones=new, properties=summary.properties()
        )
        return Committed.of(snapshot)

    def discard(self, plan: Plan) -> None:
        plan.scratch.unlink()
        self.discarded.append(plan.scratch)

    def record(self, committed: Committed, plan: Plan | None) -> Result:
        self.recorded.append(committed)
        return Result(snapshot_id=committed.snapshot_id, recovered=plan is None)

    def nothing(self) -> Result:
        return Result(snapshot_id=None)


def erased(table: Table) -> list[str]:
    table.refresh()
    return sorted(tombstones.active(table, table.current_snapshot())["id"].to_pylist())


def run(op: Erase, table: Table, **kwargs: object) -> Result:
    return pipeline.run(op, lambda: table.catalog.load_table("o.t"), job=None, **kwargs)  # type: ignore[arg-type]


def racer(catalog: SqlCatalog, value: str, at: set[int]) -> Callable[[int], None]:
    """Another writer: commits a tombstone for `value` before the attempts numbered `at`."""

    def race(attempt: int) -> None:
        if attempt in at:
            other = catalog.load_table("o.t")
            field_id = other.schema().find_field("user_id").field_id
            new = [NewTombstone(field_id, value, f"racer-{attempt}", "gdpr")]
            commit.commit(other, files=[], new_tombstones=new, properties={})

    return race


def test_a_commit_that_meets_a_new_parent_is_built_again_on_it(
    table: Table, catalog: SqlCatalog, tmp_path: Path
) -> None:
    op = Erase(["a"], tmp_path, before_commit=racer(catalog, "r", {0, 1}))
    result = run(op, table)
    assert op.commits == 3  # two attempts met a new parent; the third landed on it
    assert erased(table) == ["a", "r", "r"]  # the racers' tombstones were kept, not overwritten
    snapshot = table.current_snapshot()
    assert snapshot is not None
    assert snapshot.snapshot_id == result.snapshot_id
    parent = table.snapshot_by_id(snapshot.parent_snapshot_id or -1)
    assert parent is not None
    assert parent.summary is not None
    assert parent.summary.additional_properties.get(snapshots.REQUEST_ID) is None  # the racer
    assert op.discarded == []  # the plan was committed: its file stays


def test_a_parent_that_keeps_moving_exhausts_the_budget_and_drops_the_plan(
    table: Table, catalog: SqlCatalog, tmp_path: Path
) -> None:
    op = Erase(["a"], tmp_path, before_commit=racer(catalog, "r", set(range(10))))
    with pytest.raises(pipeline.GaveUp):
        run(op, table, budget=pipeline.Budget(replans=1, attempts=3))
    assert op.commits == 3
    assert erased(table) == ["r", "r", "r"]
    assert op.discarded == [op.plans[0].scratch]
    assert not op.plans[0].scratch.exists()


def test_an_operation_whose_snapshot_landed_is_recorded_not_committed_again(
    table: Table, tmp_path: Path
) -> None:
    first = Erase(["a"], tmp_path)
    landed = run(first, table)
    retry = Erase(["a"], tmp_path, request_id=first.request_id)  # a retried job: same id
    again = run(retry, table)
    assert again == Result(snapshot_id=landed.snapshot_id, recovered=True)
    assert retry.commits == 0
    assert retry.plans == []
    assert erased(table) == ["a"]  # one tombstone, not two
    assert len(table.metadata.snapshots) == 1


def test_a_snapshot_that_lands_while_the_plan_waits_is_found_before_the_next_attempt(
    table: Table, catalog: SqlCatalog, tmp_path: Path
) -> None:
    """Another holder commits the same request (a duplicate delivery) after this plan was
    made: the attempt finds it in the log on the table state it would commit on."""
    op = Erase(["a"], tmp_path)
    twin = Erase(["a"], tmp_path, request_id=op.request_id)

    def duplicate(attempt: int) -> None:
        if attempt == 0:
            run(twin, catalog.load_table("o.t"))

    op.before_commit = duplicate
    result = run(op, table)
    assert result.snapshot_id == twin.recorded[0].snapshot_id
    assert op.recorded[0].recovered
    assert erased(table) == ["a"]
    assert op.commits == 1  # its one attempt met the twin's parent; the next found the twin


def test_a_plan_the_table_invalidates_is_discarded_and_made_again(
    table: Table, tmp_path: Path
) -> None:
    op = Erase(["a"], tmp_path, replan_first=2)
    result = run(op, table, budget=pipeline.Budget(replans=3, attempts=2))
    assert len(op.plans) == 3
    assert op.discarded == [op.plans[0].scratch, op.plans[1].scratch]
    assert op.plans[2].scratch.exists()
    assert erased(table) == ["a"]
    assert result.snapshot_id is not None


def test_a_plan_that_finds_itself_invalid_is_made_again(table: Table, tmp_path: Path) -> None:
    op = Erase(["a"], tmp_path, replan_planning=2)
    result = run(op, table, budget=pipeline.Budget(replans=3, attempts=2))
    assert len(op.plans) == 3
    assert op.commits == 1  # the invalid plans never reached the lease or an attempt
    assert op.discarded == [op.plans[0].scratch, op.plans[1].scratch]
    assert erased(table) == ["a"]
    assert result.snapshot_id is not None
    op = Erase(["b"], tmp_path / "again", replan_planning=3)
    (tmp_path / "again").mkdir()
    with pytest.raises(pipeline.GaveUp):
        run(op, table, budget=pipeline.Budget(replans=3, attempts=2))
    assert op.commits == 0
    assert erased(table) == ["a"]


def test_a_failed_commit_discards_its_files_unless_its_snapshot_landed(
    table: Table, tmp_path: Path
) -> None:
    failing = Erase(["a"], tmp_path, fail=OSError("catalog unreachable"))
    with pytest.raises(OSError, match="catalog unreachable"):
        run(failing, table)
    assert failing.discarded == [failing.plans[0].scratch]
    assert erased(table) == []

    # the commit landed, then the call failed (its outcome unknown to the caller): keep the files
    landed = Erase(["b"], tmp_path)

    def lost_reply(attempt: int) -> None:
        if attempt == 1:
            raise TimeoutError("no reply")

    original = landed.commit

    def commit_then_fail(table: Table, plan: Plan, summary: Summary) -> Committed:
        done = original(table, plan, summary)
        lost_reply(landed.commits)
        return done

    landed.commit = commit_then_fail  # type: ignore[method-assign]
    with pytest.raises(TimeoutError):
        run(landed, table)
    assert landed.discarded == []
    assert landed.plans[0].scratch.exists()
    assert erased(table) == ["b"]
    retried = Erase(["b"], tmp_path, request_id=landed.request_id)
    assert run(retried, table).recovered  # the retry records what landed


def test_the_commit_lease_is_held_renewed_and_yielded(
    stack: Environment, table: Table, tmp_path: Path
) -> None:
    dataset = str(uuid.uuid4())
    held = lease.acquire(dataset)
    assert held is not None
    waiting = Erase(["a"], tmp_path)
    with pytest.raises(lease.LeaseTimeout):  # another holder keeps it: the wait gives up
        run(waiting, table, lease=pipeline.Lease(dataset, wait_seconds=0.3))
    assert waiting.commits == 0
    assert waiting.discarded == [waiting.plans[0].scratch]

    # a lease the caller holds, lost before the attempt: nothing is committed
    lease.release(dataset, held)
    token = lease.acquire(dataset)
    assert token is not None
    lease.release(dataset, token)  # expired for its holder: renew must fail
    lost = Erase(["b"], tmp_path)
    with pytest.raises(lease.CommitLeaseLost):
        run(lost, table, lease=pipeline.Lease(dataset, held=token))
    assert lost.commits == 0
    assert erased(table) == []

    # taken for the commit, renewed before it, and released after
    ok = Erase(["c"], tmp_path)
    run(ok, table, lease=pipeline.Lease(dataset, wait_seconds=5))
    assert erased(table) == ["c"]
    assert lease.acquire(dataset) is not None  # free again


def test_an_engine_that_names_no_snapshot_has_it_found_by_its_request_id(
    table: Table, tmp_path: Path
) -> None:
    """A Spark write says nothing of its snapshot: the pipeline finds it in the log, and a
    commit that says it committed but left nothing there is an error, not a success."""
    silent = Erase(["a"], tmp_path)
    loud = silent.commit

    def commit_silently(table: Table, plan: Plan, summary: Summary) -> Committed | None:
        loud(table, plan, summary)
        return None

    silent.commit = commit_silently  # type: ignore[assignment]
    result = run(silent, table)
    snapshot = table.refresh().current_snapshot()
    assert snapshot is not None
    assert result.snapshot_id == snapshot.snapshot_id
    assert silent.recorded[0].snapshot is not None

    lying = Erase(["b"], tmp_path)
    lying.commit = lambda table, plan, summary: None  # type: ignore[assignment,method-assign,return-value]
    with pytest.raises(RuntimeError, match="not in the log"):
        run(lying, table)
    assert erased(table) == ["a"]
