"""The SDK end to end: a real `icebatch api` and worker (PostgreSQL + Redis) driven only through
`icebatch_client`, for the whole walk-through, sync and async, compared with a plain model of
the rows."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icebatch_client import (
    AsyncIcebatch,
    BatchFailed,
    Conflict,
    Icebatch,
    NotFound,
    Unauthorized,
    ValidationFailed,
)

from tests.fixtures.batches import csv_rows
from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import Service, new_org

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

Model = dict[int, str]  # event_id -> user_id: the rows a reader must see


def seen(table: pa.Table) -> Model:
    return dict(zip(table["event_id"].to_pylist(), table["user_id"].to_pylist(), strict=True))


def parquet(records: list[tuple[int, str]]) -> bytes:
    sink = io.BytesIO()
    table = pa.table(
        {
            "event_id": pa.array([r[0] for r in records], pa.int64()),
            "user_id": [r[1] for r in records],
            "event_time": pa.array([1_704_103_200_000_000] * len(records), pa.timestamp("us")),
            "payload": ["p"] * len(records),
        }
    )
    pq.write_table(table, sink)
    return sink.getvalue()


@pytest.mark.parametrize("service", ["postgres"], indirect=True)
def test_the_walkthrough_through_the_sdk(service: Service, tmp_path: Path) -> None:
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker()
    ib = Icebatch(service.url, key, poll_interval=0.2, max_poll_interval=1.0)

    with pytest.raises(Unauthorized) as denied:
        Icebatch(service.url, "ib_nope_nope").get_dataset("events")
    assert denied.value.status == 401
    assert denied.value.request_id

    dataset = ib.create_dataset(
        "events",
        EVENTS["schema"],
        partition=EVENTS["partition"],
        identity_columns=["user_id"],
    )
    assert ib.get_dataset("events").id == dataset.id  # by name or by id
    with pytest.raises(NotFound):
        ib.get_dataset("nothing_here")

    # a path and (name, bytes) pairs: one batch, one snapshot
    day1 = tmp_path / "day1.csv"
    day1.write_bytes(csv_rows([(1, "u1"), (2, "u2")]))
    sent: dict[str, int] = {}
    first = ib.upload_batch(
        "events",
        [day1, ("more.csv", csv_rows([(3, "u1")]))],
        on_upload=lambda name, n, total: sent.__setitem__(name, n),
    )
    assert (first.status, first.row_count, first.file_count) == ("success", 3, 2)
    assert sent == {"day1.csv": day1.stat().st_size, "more.csv": len(csv_rows([(3, "u1")]))}
    model: Model = {1: "u1", 2: "u2", 3: "u1"}
    assert seen(ib.read_rows("events")) == model
    after_first = first.snapshot_id

    second = ib.upload_batch("events", [("b.parquet", parquet([(4, "u4"), (5, "u1")]))])
    model |= {4: "u4", 5: "u1"}
    assert seen(ib.read_rows(dataset.id)) == model
    assert seen(ib.read_rows("events", as_of=after_first)) == {1: "u1", 2: "u2", 3: "u1"}

    # a failing batch: BatchFailed with the row-level errors; the table is untouched
    bad = b"event_id,user_id,event_time,payload\nnot-a-number,u9,2024-01-01T10:00:00,x\n"
    with pytest.raises(BatchFailed) as failed:
        ib.upload_batch("events", [("bad.csv", bad)])
    assert failed.value.errors[0]["field"] == "event_id"
    assert failed.value.errors[0]["file"] == "bad.csv"
    assert seen(ib.read_rows("events")) == model
    with pytest.raises(ValueError, match="format"):
        ib.upload_batch("events", [("x.txt", b"")])  # no format from the extension
    with pytest.raises(ValidationFailed) as invalid:
        ib.vacuum("events", mode="partial")  # a partial vacuum needs a budget
    assert "max_files" in invalid.value.detail
    statuses = {b.id: b.status for b in ib.iter_batches("events")}
    assert sorted(statuses.values()) == ["failed", "success", "success"]

    # a consumer reads each increment once
    consumer = ib.consumer("events", "replica")
    increment = consumer.next_increment()
    assert seen(increment.appended) == model
    assert increment.deleted.num_rows == 0
    consumer.commit(increment)
    assert consumer.next_increment().appended.num_rows == 0

    # revert, replay, GDPR
    reverted = ib.revert(str(second.id))
    assert reverted.status == "reverted"
    model = {k: v for k, v in model.items() if k not in (4, 5)}
    assert seen(ib.read_rows("events")) == model
    with pytest.raises(Conflict):
        ib.revert(str(second.id))
    replay = ib.replay("events", [str(first.id)], [("fix.csv", csv_rows([(1, "u1"), (2, "u7")]))])
    assert replay.status == "success"
    assert ib.get_batch(str(first.id)).status == "replaced"
    model = {1: "u1", 2: "u7"}
    assert seen(ib.read_rows("events")) == model
    privacy = ib.gdpr_delete(["events"], "user_id", ["u1"])
    assert (privacy.status, privacy.rows_hidden) == ("complete", 1)
    model = {2: "u7"}
    assert seen(ib.read_rows("events")) == model
    assert seen(ib.read_rows("events", as_of=after_first)) == {2: "u2"}  # GDPR: every read

    increment = consumer.next_increment()
    assert seen(increment.appended) == {2: "u7"}
    deleted = increment.deleted.to_pylist()
    # the replay's old rows and the revert's, as they were; u1's (1, 3, 5 and the replay's 1,
    # appended and deleted within the range) erased: their identity column only
    assert {(r["event_id"], r["user_id"]) for r in deleted if r["user_id"] != "u1"} == {
        (2, "u2"),
        (4, "u4"),
    }
    erased = [r for r in deleted if r["user_id"] == "u1"]
    assert len(erased) == 4
    assert all(r["event_id"] is None and r["payload"] is None for r in erased)
    consumer.commit(increment)

    job = ib.vacuum("events")
    assert job.state == "succeeded"
    assert seen(ib.read_rows("events")) == model
    changes = ib.changes("events", kind="appended")
    assert seen(changes.table) == model
    assert changes.to_snapshot is not None

    # the async twin: the same calls, awaited, several at once
    async def run() -> None:
        async with AsyncIcebatch(service.url, key, poll_interval=0.2) as aib:
            third, fourth = await asyncio.gather(
                aib.upload_batch("events", [("c.csv", csv_rows([(8, "u8")]))]),
                aib.upload_batch("events", [("d.csv", csv_rows([(9, "u9")]))]),
            )
            assert (third.status, fourth.status) == ("success", "success")
            assert seen(await aib.read_rows("events")) == {**model, 8: "u8", 9: "u9"}
            batches = await aib.iter_batches("events", status="success")
            assert {b.id for b in batches} >= {third.id, fourth.id}
            with pytest.raises(NotFound):
                await aib.get_batch("00000000-0000-0000-0000-000000000000")

    asyncio.run(run())
    ib.close()
