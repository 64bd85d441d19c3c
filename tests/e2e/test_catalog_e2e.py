"""Other engines through the Iceberg REST catalog, against real processes on PostgreSQL and
Redis, with clients nobody here wrote: PyIceberg's `RestCatalog` and DuckDB's iceberg extension
(`ATTACH ... TYPE iceberg`).

After ingest, revert, replay, a GDPR delete, vacuum, compaction and expiry, each engine's scan
equals the rows the API returns; no snapshot the catalog serves shows the erased identity;
another org's key lists and loads nothing of this org; a revoked key is refused at once; an
append through PyIceberg is refused and changes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import ForbiddenError, NoSuchNamespaceError, NoSuchTableError

from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import TLS, Service, new_org, wait_for
from tests.fixtures.workload import Workload

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
Rows = Counter[tuple[int, str, str]]


def _catalog(service: Service, key: str) -> RestCatalog:
    return RestCatalog("icebatch", uri=f"{service.url}/iceberg", token=key)


def _duckdb(service: Service, key: str) -> Any:
    import duckdb
    import duckdb_ext

    con = duckdb.connect()
    duckdb_ext.init(con)
    con.execute("LOAD httpfs")
    con.execute("LOAD iceberg")
    con.execute(f"CREATE SECRET k (TYPE iceberg, TOKEN '{key}')")
    con.execute(
        f"ATTACH 'warehouse' AS lake (TYPE iceberg, ENDPOINT '{service.url}/iceberg', SECRET k)"
    )
    return con


def _pyiceberg_rows(catalog: RestCatalog, identifier: str, snapshot_id: int | None = None) -> Rows:
    table = catalog.load_table(identifier)
    scan = table.scan(
        selected_fields=("event_id", "user_id", "_batch_id"),
        snapshot_id=snapshot_id,
    )
    data = scan.to_arrow()
    return Counter(
        zip(
            data["event_id"].to_pylist(),
            data["user_id"].to_pylist(),
            data["_batch_id"].to_pylist(),
            strict=True,
        )
    )


def _duckdb_rows(service: Service, key: str, identifier: str) -> Rows:
    con = _duckdb(service, key)
    found = con.execute(f"SELECT event_id, user_id, _batch_id FROM lake.{identifier}").fetchall()
    return Counter(tuple(r) for r in found)


def _engines_agree(service: Service, key: str, workload: Workload, identifier: str) -> Rows:
    """Once every job has run and the catalog serves the newest snapshot, PyIceberg and DuckDB
    read exactly the API's rows (which `Workload.check` compared with the model)."""
    catalog = _catalog(service, key)

    def serves_the_newest() -> bool:
        dataset = workload.call("GET", f"/v1/datasets/{workload.dataset_id}").json()
        served = catalog.load_table(identifier).metadata.current_snapshot_id
        return bool(served == dataset["current_snapshot_id"])

    wait_for(serves_the_newest, 60, "the catalog to serve the newest snapshot", every=0.5)
    expected = workload.rows()
    assert _pyiceberg_rows(catalog, identifier) == expected
    assert _duckdb_rows(service, key, identifier) == expected
    return expected


def _served(catalog: RestCatalog, identifier: str) -> set[int]:
    return {s.snapshot_id for s in catalog.load_table(identifier).metadata.snapshots}


def _served_history_hides(catalog: RestCatalog, identifier: str, users: set[str]) -> set[int]:
    """Every snapshot the catalog serves, scanned: none shows a row of `users`."""
    served = _served(catalog, identifier)
    assert served
    for snapshot_id in served:
        rows = _pyiceberg_rows(catalog, identifier, snapshot_id)
        assert not [r for r in rows if r[1] in users], snapshot_id
    return served


@pytest.mark.parametrize("service", ["postgres"], indirect=True)
def test_engines_read_through_the_catalog_what_icebatch_shows(service: Service) -> None:
    org = new_org()
    service.start_api()
    key = service.create_key(org)
    service.start_worker()
    workload = Workload(service.client(key), explain=service.report)
    # unpartitioned: PyIceberg appends to a day-partitioned table only with pyiceberg-core, and
    # the append below must reach the catalog to be refused there
    created = workload.call("POST", "/v1/datasets", json={**EVENTS, "partition": []})
    assert created.status_code == 201, created.text
    workload.dataset_id = created.json()["id"]
    identifier = f"{org}.events"
    base = [workload.ingest([f"u{i}", f"u{i + 10}", "g1" if i >= 2 else "u99"]) for i in range(4)]
    workload.wait_batches(base)
    before = _engines_agree(service, key, workload, identifier)
    assert sum(1 for r in before if r[1] == "g1") == 2
    served_before = _served(_catalog(service, key), identifier)
    assert len(served_before) >= 4  # every batch's snapshot: time travel before any restatement

    # restatements: the engines follow once the materializer has run
    workload.revert(base[0])
    workload.ingest(["u1", "u30"], replay_of=base[1])
    workload.gdpr(["g1"])
    workload.check()
    after = _engines_agree(service, key, workload, identifier)
    assert not [r for r in after if r[1] == "g1"]
    assert not [r for r in after if r[2] in (base[0], base[1])]
    catalog = _catalog(service, key)
    served = _served_history_hides(catalog, identifier, {"g1"})
    assert not served & served_before  # they show g1: withheld since the delete

    # vacuum, compaction and expiry rewrite and drop files: nothing changes for the engines
    for kind in ("vacuum", "compact"):
        answer = workload.call("POST", f"/v1/datasets/{workload.dataset_id}/{kind}", json={})
        assert answer.status_code == 202, answer.text
        workload.jobs[answer.json()["id"]] = kind
        workload.settle()
    workload.check()
    assert _engines_agree(service, key, workload, identifier) == after
    policy = {"min_snapshots": 1, "max_snapshot_age_seconds": 0, "orphan_age_seconds": 0}
    assert workload.call(
        "PUT", f"/v1/datasets/{workload.dataset_id}/retention", json=policy
    ).is_success
    expired = workload.call("POST", f"/v1/datasets/{workload.dataset_id}/expire", json={})
    assert expired.status_code == 202, expired.text
    jobs = {j["id"]: j for j in workload.settle()}
    assert jobs[expired.json()["id"]]["state"] == "succeeded", jobs[expired.json()["id"]]
    assert workload.rows() == workload.model_rows()  # the snapshot log is shorter now
    assert _engines_agree(service, key, workload, identifier) == after
    assert len(_served(_catalog(service, key), identifier)) == 1
    _served_history_hides(_catalog(service, key), identifier, {"g1"})

    # another org sees nothing of this one, through either client
    stranger_key = service.create_key(new_org())
    stranger = _catalog(service, stranger_key)
    assert [ns for ns in stranger.list_namespaces() if ns == (org,)] == []
    with pytest.raises(NoSuchNamespaceError):
        stranger.list_tables(org)
    with pytest.raises(NoSuchTableError):
        stranger.load_table(identifier)
    with pytest.raises(Exception, match="events|exist|found"):
        _duckdb_rows(service, stranger_key, identifier)

    # a revoked key: refused from the next request on
    admin = service.client(key)
    reader = admin.post("/v1/keys", json={"scope": "read"}).json()
    assert _pyiceberg_rows(_catalog(service, reader["key"]), identifier) == after
    assert admin.delete(f"/v1/keys/{reader['id']}").status_code == 200
    refused = httpx.get(
        f"{service.url}/iceberg/v1/namespaces/{org}/tables/events",
        headers={"Authorization": f"Bearer {reader['key']}"},
        verify=TLS,
    )
    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "NotAuthorizedException"

    # an append through PyIceberg is refused and changes nothing
    dataset = workload.call("GET", f"/v1/datasets/{workload.dataset_id}").json()
    table = _catalog(service, key).load_table(identifier)
    extra = table.scan(limit=1).to_arrow()
    with pytest.raises((NotImplementedError, ForbiddenError)):
        table.append(extra)
    again = workload.call("GET", f"/v1/datasets/{workload.dataset_id}").json()
    assert again["current_snapshot_id"] == dataset["current_snapshot_id"]
    assert workload.rows() == after
    loads = admin.get("/v1/audit", params={"action": "catalog.load_table", "limit": 200})
    assert {e["target"]["table"] for e in loads.json()["items"]} == {identifier}
