"""The CDC pipeline end to end in one process: accept, stage, process, read back."""

from __future__ import annotations

import json
import warnings
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)


def event(op: str, entity: str, minute: int, payload: Any = None, **extra: Any) -> dict[str, Any]:
    out = {
        "op": op,
        "entity_id": entity,
        "record_type": "profile",
        "timestamp": (T0 + timedelta(minutes=minute)).isoformat(),
        **extra,
    }
    if payload is not None:
        out["payload"] = payload
    return out


def post(client: TestClient, events: list[dict[str, Any]], **headers: str) -> dict[str, Any]:
    body = "\n".join(json.dumps(e) for e in events)
    response = client.post(
        "/v1/cdc/events", content=body, headers={"Content-Type": "application/x-ndjson", **headers}
    )
    assert response.status_code == 202, response.text
    return response.json()


def process(client: TestClient, run_jobs: RunJobs) -> None:
    assert client.post("/v1/cdc/process").status_code == 202
    run_jobs()


def rows(client: TestClient) -> dict[str, dict[str, Any]]:
    dataset = client.get("/v1/cdc/config").json()["raw_dataset_id"]
    lines = client.get(f"/v1/datasets/{dataset}/rows").text.splitlines()
    return {r["entity_id"]: r for r in map(json.loads, lines)}


def test_events_fold_into_the_raw_table(client: TestClient, run_jobs: RunJobs) -> None:
    client.put(
        "/v1/cdc/config",
        json={"pushdown": [{"name": "country", "path": "address.country", "type": "string"}]},
    ).raise_for_status()
    first = post(
        client,
        [
            event("PUT", "a", 0, {"name": "Ada", "address": {"country": "FR"}, "tags": [1, 2]}),
            event("PATCH", "a", 2, {"name": None, "tags": [3], "address": {"city": "Lyon"}}),
            event("PUT", "b", 0, {"x": 1}, related_ids=["a"]),
            event("DELETE", "b", 5),
            event("PATCH", "c", 1, {"k": {"v": 1}, "big": 2**70, "t": "é\u2028"}),
        ],
    )
    assert first == {"accepted": 5, "first_sequence": 1, "last_sequence": 5}
    process(client, run_jobs)
    got = rows(client)
    assert set(got) == {"a", "c"}
    assert json.loads(got["a"]["document"]) == {
        "address": {"country": "FR", "city": "Lyon"},
        "tags": [3],
    }
    assert got["a"]["country"] == "FR"
    assert got["a"]["cluster_id"] == "a"
    # exact past 64 bits (orjson would make it a float), text as sent
    assert json.loads(got["c"]["document"]) == {"k": {"v": 1}, "big": 2**70, "t": "é\u2028"}
    # a late PUT of b (before its DELETE) must not resurrect it; a late PATCH of a reorders
    post(client, [event("PUT", "b", 3, {"late": True}), event("PATCH", "a", 1, {"zz": 1})])
    process(client, run_jobs)
    got = rows(client)
    assert set(got) == {"a", "c"}
    assert json.loads(got["a"]["document"])["zz"] == 1
    lag = client.get("/v1/cdc/lag").json()
    assert (lag["accepted"], lag["staged"], lag["processed"]) == (7, 7, 7)
    assert lag["replication_lag_seconds"] == 0
    profile = client.get("/v1/cdc/profiles/a").json()
    assert profile["members"] == ["a", "b"]
    assert [r["entity_id"] for r in profile["records"]] == ["a"]
    assert client.get("/v1/cdc/profiles/zzz").status_code == 404
    # the same profile from Spark, one row per cluster
    from workers.cdc.profiles import read_profiles
    from workers.spark.session import get_spark

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # PySpark 3.5's LooseVersion
        scanned = {r.cluster_id: r for r in read_profiles(get_spark(), client.org).collect()}  # type: ignore[attr-defined]
    assert set(scanned) == {"a", "c"}
    assert scanned["a"].members == ["a"]
    assert json.loads(scanned["a"].merged) == profile["merged"]


def test_a_fragmented_raw_table_is_compacted_between_runs(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings

    monkeypatch.setattr(get_settings(), "cdc_compact_files", 2)
    post(client, [event("PUT", f"e{i}", i % 5, {"i": i}) for i in range(20)])
    process(client, run_jobs)
    for run in range(4):  # runs of new entities: each leaves new small files
        post(client, [event("PUT", f"n{run}-{i}", 10, {"j": run}) for i in range(8)])
        process(client, run_jobs)  # past 2 files in a partition: a compaction, run here too
    dataset = client.get("/v1/cdc/config").json()["raw_dataset_id"]
    compactions = [j for j in client.get("/v1/jobs").json()["items"] if j["kind"] == "compact"]
    assert compactions
    assert {j["state"] for j in compactions} == {"succeeded"}
    snapshots = client.get(f"/v1/datasets/{dataset}/snapshots").json()["items"]
    operations = [s["icebatch"].get("icebatch.operation") for s in snapshots]
    assert "compact" in operations, operations
    post(client, [event("DELETE", "e0", 20), event("PATCH", "e1", 20, {"k": 1})])
    process(client, run_jobs)  # the watermark is found past the compaction's snapshot
    got = rows(client)
    assert set(got) == {f"e{i}" for i in range(1, 20)} | {
        f"n{r}-{i}" for r in range(4) for i in range(8)
    }
    assert json.loads(got["e1"]["document"]) == {"i": 1, "k": 1}
    assert json.loads(got["n3-7"]["document"]) == {"j": 3}
    lag = client.get("/v1/cdc/lag").json()
    assert lag["processed"] == lag["accepted"]


def test_a_run_that_deletes_every_row_succeeds_first_time(
    client: TestClient, run_jobs: RunJobs
) -> None:
    """The raw table left with no data file at all (PyIceberg's `inspect.files()` fails on it):
    a first run of deletes only, then a run that deletes every row."""
    post(client, [event("DELETE", "ghost", 0)])
    process(client, run_jobs)
    assert rows(client) == {}
    post(client, [event("PUT", "a", 0, {"x": 1}), event("PUT", "b", 0, {"y": 2})])
    process(client, run_jobs)
    assert set(rows(client)) == {"a", "b"}
    post(client, [event("DELETE", "a", 1), event("DELETE", "b", 1)])
    process(client, run_jobs)
    assert rows(client) == {}
    runs = [j for j in client.get("/v1/jobs").json()["items"] if j["kind"] == "cdc_process"]
    assert [(j["state"], j["attempt"], j["error"]) for j in runs] == [("succeeded", 1, None)] * 3
    post(client, [event("PATCH", "a", 2, {"z": 3})])  # re-created from {} on the empty table
    process(client, run_jobs)
    assert {e: json.loads(r["document"]) for e, r in rows(client).items()} == {"a": {"z": 3}}


def test_a_run_of_whole_images_leaves_the_raw_documents_unread(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A base row's document matters only to a PATCH folded over it: a run of PUTs and DELETEs
    (Debezium's changes) does not read the raw table's `document` column, and a run with a
    PATCH reads it and folds over it."""
    from workers.cdc import inputs
    from workers.cdc import process as processor

    org = client.org  # type: ignore[attr-defined]
    scans: list[list[str]] = []  # each of this org's runs: its distinct scans of the raw table

    def spied(*args: Any) -> inputs.RunInput:
        run = inputs.run_input(*args)
        if args[1] != org:  # a run another test of this worker left queued
            return run
        plan = run.rows._jdf.queryExecution().optimizedPlan().toString()
        # the raw table's scan (printed again inside the cached relations that read it)
        lines = plan.splitlines()
        scans.append(sorted({ln[ln.index("BatchScan") :] for ln in lines if ".cdc_raw[" in ln}))
        return run

    monkeypatch.setattr(processor, "run_input", spied)
    post(client, [event("PUT", e, 0, {"v": 0, "keep": e}) for e in ("a", "b", "c")])
    process(client, run_jobs)
    post(
        client,
        [event("PUT", "a", 1, {"v": 1}), event("DELETE", "b", 1), event("PUT", "d", 1, {"v": 1})],
    )
    process(client, run_jobs)
    post(client, [event("PATCH", "a", 2, {"w": 2}), event("PUT", "c", 2, {"v": 2})])
    process(client, run_jobs)
    documents = {e: json.loads(r["document"]) for e, r in rows(client).items()}
    assert documents == {"a": {"v": 1, "w": 2}, "c": {"v": 2}, "d": {"v": 1}}
    assert [len(s) for s in scans] == [1, 1, 1], scans  # the raw table's scan, once a run
    assert ["document" in s[0] for s in scans] == [False, False, True], scans
