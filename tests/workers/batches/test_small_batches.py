"""Small batches skip Spark (workers/uploads/small.py): the same random input, ingested once
through the Spark job and once through the small path, gives the same table contents, data
file layout, batch outcome, errors and job stage; a retried small ingest appends once."""

from __future__ import annotations

import base64
import csv
import io
import itertools
import re
from datetime import UTC, date
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.fixtures.batches import ingest
from tests.fixtures.cells import CELLS, stamps
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark

SCHEMA: list[dict[str, Any]] = [
    {"name": "id", "type": "long", "required": True},
    {"name": "b", "type": "boolean"},
    {"name": "i", "type": "int"},
    {"name": "f", "type": "float"},
    {"name": "d", "type": "double"},
    {"name": "dec", "type": "decimal(9,2)"},
    {"name": "day", "type": "date"},
    {"name": "ts", "type": "timestamp"},
    {"name": "tstz", "type": "timestamptz"},
    {"name": "s", "type": "string"},
    {"name": "bin", "type": "binary"},
]
NAMES = [f["name"] for f in SCHEMA]
_names = itertools.count()

VALID: dict[str, st.SearchStrategy[str]] = {
    "id": st.integers(-(2**63), 2**63 - 1).map(str),
    "b": st.sampled_from(["true", "False", "1", "0", "yes", "N", "t", ""]),
    "i": st.integers(-(2**31), 2**31 - 1).map(str) | st.just(""),
    "f": st.floats(width=32).map(repr) | st.sampled_from(["1e40", "0.1", "NaN", "-inf", ""]),
    "d": st.floats().map(repr) | st.just(""),
    "dec": st.decimals(-(10**7), 10**7, places=3, allow_nan=False).map(str),
    "day": st.dates().map(str).filter(lambda s: len(s) == 10) | st.just(""),
    "ts": stamps.map(lambda t: t.isoformat(sep="T")) | st.just("2024-03-02"),
    "tstz": stamps.map(lambda t: t.isoformat(sep=" ", timespec="minutes")) | st.just(""),
    "s": CELLS["s"],
    "bin": st.binary(max_size=8).map(lambda b: base64.b64encode(b).decode()),
}


SURE_BAD = {  # valid cells, and now and then one Spark's cast certainly turns into null
    name: st.one_of(valid, valid, valid, valid, st.sampled_from(bad))
    for (name, valid), bad in zip(
        VALID.items(),
        [
            ["9223372036854775808", "x1", "1.5"],
            ["maybe", "ja"],
            ["2147483648", "a", "-2.0"],
            ["x", "1e"],
            ["--1"],
            ["abc", "123456789.5"],
            ["2024-02-30", "never"],
            ["2024-03-01T25:00:00", "x"],
            ["2024-02-30 10:00"],
            ["any text"],
            ["YQ=="],
        ],
        strict=True,
    )
}


def csv_file(rows: list[dict[str, str]], columns: list[str]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([row[c] for c in columns])
    return out.getvalue().encode()


@st.composite
def csv_batches(draw: st.DrawFn) -> dict[str, bytes]:
    files = {}
    for n in range(draw(st.integers(1, 2))):
        optional = draw(st.lists(st.sampled_from(NAMES[1:]), unique=True, min_size=8))
        columns = draw(st.permutations(["id", *optional]))
        # every cell valid; or some Spark certainly rejects; or any (mostly sent to Spark)
        cells = draw(st.sampled_from([VALID, VALID, SURE_BAD, CELLS]))
        rows = draw(st.lists(st.fixed_dictionaries(cells), min_size=3, max_size=10))
        files[f"part-{n}.csv"] = csv_file(rows, columns)
    return files


PARQUET_TYPES: dict[str, list[pa.DataType]] = {  # what a client may send for each column
    "id": [pa.int64(), pa.int32(), pa.uint16()],
    "b": [pa.bool_()],
    "i": [pa.int32(), pa.int8()],
    "f": [pa.float32()],
    "d": [pa.float64(), pa.float32()],
    "dec": [pa.decimal128(9, 2), pa.decimal128(5, 1), pa.int16()],
    "day": [pa.date32()],
    "ts": [pa.timestamp("us"), pa.timestamp("ms"), pa.timestamp("us", tz="Europe/Paris")],
    "tstz": [pa.timestamp("us", tz="UTC"), pa.timestamp("us"), pa.timestamp("ns")],
    "s": [pa.string(), pa.large_string()],
    "bin": [pa.binary()],
}


def parquet_value(name: str, dtype: pa.DataType) -> st.SearchStrategy[Any]:
    if pa.types.is_integer(dtype):
        info = (2 ** (dtype.bit_width - 1)) if pa.types.is_signed_integer(dtype) else 0
        high = 2 ** (dtype.bit_width - (1 if pa.types.is_signed_integer(dtype) else 0)) - 1
        return st.integers(-info, high)
    if pa.types.is_decimal(dtype):
        bound = Decimal(10 ** (dtype.precision - dtype.scale)) - Decimal(1).scaleb(-dtype.scale)
        return st.decimals(-bound, bound, places=dtype.scale, allow_nan=False)
    if pa.types.is_floating(dtype):
        return st.floats(width=dtype.bit_width)
    if pa.types.is_timestamp(dtype):
        return stamps.map(lambda t: t.replace(tzinfo=UTC) if dtype.tz else t)
    strategies: dict[str, st.SearchStrategy[Any]] = {
        "b": st.booleans(),
        "day": st.dates(date(1970, 1, 1)),  # Spark stops at dates before 1582 (and retries)
        "s": st.text(max_size=10),
        "bin": st.binary(max_size=8),
    }
    return strategies[name]


@st.composite
def parquet_batches(draw: st.DrawFn) -> dict[str, bytes]:
    files = {}
    for n in range(draw(st.integers(1, 2))):
        optional = draw(st.lists(st.sampled_from(NAMES[1:]), unique=True, min_size=8))
        count = draw(st.integers(1, 10))
        arrays, fields = [], []
        for name in ["id", *optional]:
            dtype = draw(st.sampled_from(PARQUET_TYPES[name]))
            nulls = st.none() if name != "id" or draw(st.booleans()) else st.nothing()
            values = draw(
                st.lists(parquet_value(name, dtype) | nulls, min_size=count, max_size=count)
            )
            arrays.append(pa.array(values, dtype))
            fields.append(pa.field(name, dtype))
        out = io.BytesIO()
        pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), out)
        files[f"part-{n}.parquet"] = out.getvalue()
    return files


def contents(client: TestClient, dataset: dict[str, Any]) -> tuple[Any, ...]:
    """Rows (without the batch id), Arrow schema, and data files' layout of a dataset's table."""
    from app.lake.catalog import get_catalog

    table = get_catalog().load_table(dataset["table"].split(".", 1)[1])
    scanned = table.scan().to_arrow()
    rows = sorted(
        (
            tuple((k, repr(v)) for k, v in r.items() if k != "_batch_id")
            for r in scanned.to_pylist()
        ),
    )
    layout = []
    for task in table.scan().plan_files():
        f = task.file
        with table.io.new_input(f.file_path).open() as stream:
            meta = pq.ParquetFile(stream).metadata
            codecs = {
                meta.row_group(g).column(c).compression
                for g in range(meta.num_row_groups)
                for c in range(meta.num_columns)
            }
        layout.append(
            (str(f.partition), f.record_count, f.spec_id, f.sort_order_id, sorted(codecs))
        )
    # by repr: the files of one table may carry a sort order id or none (None < int fails)
    return rows, scanned.schema.remove_metadata(), sorted(layout, key=repr)


def outcome(client: TestClient, batch: dict[str, Any]) -> tuple[Any, ...]:
    job = client.get(f"/v1/jobs/{batch['job_id']}").json()
    return batch["status"], batch.get("row_count"), batch.get("errors"), job["state"], job["stage"]


def masked(value: Any) -> str:
    """Without the ids in a Spark error (where both paths end in Spark, e.g. a Parquet file of
    nanosecond timestamps): its JVM object, stage, task and TID numbers, and its Java stack
    (the reason is cut at a fixed length, so ids of other lengths shift where its tail ends;
    the reason may be an error's last key or not)."""
    text = re.sub(r"\b(o|stage |task |TID )[0-9.]+", r"\1#", repr(value))
    return re.sub(r"\\n\\tat .*?(?=['\"](, '|\}))", "...", text)


def same_outcome(small: tuple[Any, ...], spark: tuple[Any, ...]) -> None:
    """Equal, the job's last stage included: `validating` for errors in the files' headers,
    `writing` for rows rejected while writing (each path records it before it writes)."""
    assert masked(small[:4]) == masked(spark[:4])
    assert small[4] == spark[4]


@pytest.fixture
def both_paths(client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Ingest the same files through Spark and through the small path; how many took the
    small path is counted (input only Spark reads exactly goes to Spark)."""
    from app.config import get_settings
    from workers.uploads import small

    took: list[bool] = []
    read_small = small.read_small

    def counted(*args: Any) -> Any:
        try:
            result = read_small(*args)
        except small.NeedsSpark:
            took.append(False)
            raise
        took.append(True)
        return result

    monkeypatch.setattr(small, "read_small", counted)

    def run(fmt: str, files: dict[str, bytes]) -> tuple[Any, Any, bool]:
        results = []
        for limit in (0, 1 << 20):  # Spark, then the small path
            monkeypatch.setattr(get_settings(), "small_batch_bytes", limit)
            spec = {
                "name": f"small{next(_names)}",
                "schema": SCHEMA,
                "partition": [{"column": "ts", "transform": "day"}],
            }
            dataset = client.post("/v1/datasets", json=spec).json()
            took.clear()
            batch = ingest(client, run_jobs, dataset["id"], fmt, files)
            results.append((outcome(client, batch), contents(client, dataset)))
        return results[0], results[1], took == [True]

    return run


PARITY = settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@PARITY
@given(files=csv_batches())
def test_csv_small_path_equals_spark(both_paths: Any, files: dict[str, bytes]) -> None:
    spark, small, took = both_paths("csv", files)
    event(f"small path: {took}, written: {small[0][0] == 'success'}")
    same_outcome(small[0], spark[0])
    assert small[1] == spark[1]


@PARITY
@given(files=parquet_batches())
def test_parquet_small_path_equals_spark(both_paths: Any, files: dict[str, bytes]) -> None:
    spark, small, took = both_paths("parquet", files)
    event(f"small path: {took}, written: {small[0][0] == 'success'}")
    same_outcome(small[0], spark[0])
    assert small[1] == spark[1]


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)  # the store has no part in typing
def test_an_integer_cell_with_a_fraction_is_a_bad_row_on_both_paths(both_paths: Any) -> None:
    """Spark's cast reads "1.5" as 1 and "2.0" as 2: the ingest rejects them, as its JSON reader
    does 1.5, with the row and the reason; a whole number between blanks is still read."""
    bad = b"id,i,ts\n1,1.5,2024-03-01T10:00:00\n2,2.0,2024-03-01T10:00:00\n3,4,2024-03-01\n"
    spark, small, took = both_paths("csv", {"a.csv": bad})
    same_outcome(small[0], spark[0])
    assert small[1] == spark[1]
    status, row_count, errors, _, _ = small[0]
    assert status == "failed", small[0]
    assert row_count == 3  # rows read
    found = {(e["row"], e["field"], e["value"], e["reason"]) for e in errors}
    assert found == {
        (1, "i", "1.5", "cannot parse '1.5' as int: expected a whole number"),
        (2, "i", "2.0", "cannot parse '2.0' as int: expected a whole number"),
    }, errors
    assert small[1][0] == []  # nothing written

    good = b"id,i,ts\n1,+4,2024-03-01T10:00:00\n2, 7 ,2024-03-01T10:00:00\n3,-0,2024-03-01\n"
    spark, small, took = both_paths("csv", {"a.csv": good})
    assert not took  # the blanks send it to Spark
    same_outcome(small[0], spark[0])
    assert small[1] == spark[1]
    assert small[0][0] == "success", small[0]
    assert sorted(dict(r)["i"] for r in small[1][0]) == ["0", "4", "7"]


def replayed(
    client: TestClient, run_jobs: RunJobs, dataset_id: str, fmt: str, files: dict[str, bytes]
) -> dict[str, Any]:
    """A base batch of two rows, then `files` as its replay: the replay batch once run."""
    base = ingest(client, run_jobs, dataset_id, "csv", {"base.csv": b"id\n1\n2\n"})
    assert base["status"] == "success", base
    opened = client.post(
        "/v1/batches",
        json={
            "dataset_id": dataset_id,
            "format": fmt,
            "replay": {"predecessors": [base["id"]], "reason": "parity"},
        },
    )
    assert opened.status_code == 201, opened.text
    batch_id = opened.json()["id"]
    for name, body in files.items():
        put = client.put(f"/v1/batches/{batch_id}/files/{name}", content=body)
        assert put.status_code == 201, put.text
    done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    assert done.json()["job"]["kind"] == "replay", done.text
    run_jobs()
    return client.get(f"/v1/batches/{batch_id}").json()


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    fmt_files=st.one_of(
        csv_batches().map(lambda f: ("csv", f)), parquet_batches().map(lambda f: ("parquet", f))
    )
)
def test_a_small_replay_stages_what_spark_stages(
    client: TestClient,
    run_jobs: RunJobs,
    monkeypatch: pytest.MonkeyPatch,
    fmt_files: tuple[str, dict[str, bytes]],
) -> None:
    """A replay's rows staged without Spark (`replay.stage_small`) and by Spark: the same
    outcome, errors and stage, and after its commit the same table (rows, types, layout)."""
    from app.config import get_settings

    fmt, files = fmt_files
    results = []
    for limit in (0, 1 << 20):  # Spark, then the small path
        monkeypatch.setattr(get_settings(), "small_batch_bytes", limit)
        spec = {
            "name": f"replay{next(_names)}",
            "schema": SCHEMA,
            "partition": [{"column": "ts", "transform": "day"}],
        }
        dataset = client.post("/v1/datasets", json=spec).json()
        batch = replayed(client, run_jobs, dataset["id"], fmt, files)
        results.append((outcome(client, batch), contents(client, dataset)))
    (spark_outcome, spark_table), (small_outcome, small_table) = results
    event(f"replay {fmt}: {small_outcome[0]}")
    assert masked(small_outcome) == masked(spark_outcome)
    assert small_table == spark_table


@pytest.mark.parametrize("crash_at", ["ingest-spark", "after-ingest-commit"])
def test_a_retried_small_ingest_appends_once(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    """The worker dies (an exception here) just before or just after the small path's commit;
    the job's retry finds its request id in the snapshot log (or commits, when nothing landed)
    and the batch's rows are in the table once."""
    from app.lake import pipeline
    from app.lake.catalog import get_catalog
    from workers.uploads import small

    run_jobs()  # jobs other tests left queued in this store run now, not into the crash below
    appends: list[int] = []
    append = small.append

    def counted(*args: Any) -> Any:
        appends.append(1)
        return append(*args)

    crashed: list[str] = []

    def crash(name: str) -> None:
        if name == crash_at and not crashed:
            crashed.append(name)
            raise RuntimeError(f"worker killed at {name}")

    monkeypatch.setattr(small, "append", counted)
    monkeypatch.setattr(pipeline, "failpoint", crash)
    spec = {"name": f"small{next(_names)}", "schema": SCHEMA[:3], "partition": []}
    dataset = client.post("/v1/datasets", json=spec).json()
    body = b"id,b,i\n1,true,7\n2,,\n3,no,-1\n"
    batch = ingest(client, run_jobs, dataset["id"], "csv", {"a.csv": body})

    assert crashed == [crash_at]
    assert batch["status"] == "success", batch
    job = client.get(f"/v1/jobs/{batch['job_id']}").json()
    assert job["state"] == "succeeded"
    assert job["attempt"] == 2
    assert len(appends) == 1  # the small path, once: the retry found the snapshot or committed
    table = get_catalog().load_table(dataset["table"].split(".", 1)[1])
    landed = [s for s in table.snapshots() if s.summary and s.summary.get("icebatch.batch-id")]
    assert len(landed) == 1
    assert landed[0].summary is not None
    assert landed[0].summary["icebatch.request-id"] == job["request_id"]
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
