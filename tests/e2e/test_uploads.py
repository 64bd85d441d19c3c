"""Concurrent uploads into one batch against a real API process: nothing lost or mixed up."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import Service, new_org

pytestmark = pytest.mark.e2e


def test_concurrent_uploads(service: Service) -> None:
    service.start_api()
    key = service.create_key(new_org())
    client = service.client(key)
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    batch_id = client.post(
        "/v1/batches", json={"dataset_id": dataset["id"], "format": "csv"}
    ).json()["id"]
    header = b"event_id,user_id,event_time,payload\n"
    bodies = {
        f"f{i}.csv": header
        + b"".join(b"%d,u,2024-01-01T00:00:00,%s\n" % (j, b"x" * i) for j in range(2000))
        for i in range(8)
    }
    same = [header + b"%d,u,2024-01-01T00:00:00,same\n" % i for i in range(6)]

    def put(name: str, body: bytes) -> int:
        with service.client(key) as c:
            return c.put(f"/v1/batches/{batch_id}/files/{name}", content=body).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = list(pool.map(put, [*bodies, *["same.csv"] * len(same)], [*bodies.values(), *same]))
    assert codes == [201] * (len(bodies) + len(same))

    batch = client.get(f"/v1/batches/{batch_id}").json()
    files = {f["name"]: f for f in batch["files"]}
    assert set(files) == {*bodies, "same.csv"}
    assert batch["file_count"] == len(bodies) + 1
    for name, body in bodies.items():
        assert files[name]["sha256"] == hashlib.sha256(body).hexdigest()
    # the last writer of "same.csv" wins, whole: its size and digest belong to one upload
    staged = Path(service.home) / "staging" / batch_id
    on_disk = (staged / "same.csv").read_bytes()
    assert on_disk in same
    assert files["same.csv"]["sha256"] == hashlib.sha256(on_disk).hexdigest()
    assert batch["bytes"] == sum(len(b) for b in bodies.values()) + len(on_disk)
    assert sorted(p.name for p in staged.iterdir()) == sorted([*bodies, "same.csv"])  # no .part
