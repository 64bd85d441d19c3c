"""A batch's GET reads its body and its tag in one statement (`views.read`): at every state
the batch goes through, the same body as the description built query by query (`to_out`), and
the same tag as the poller's version query, so a client's next `If-None-Match` answers 304."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.fixtures.batches import CSV
from tests.fixtures.datasets import EVENTS


def check(org: str, batch_id: str) -> dict[str, Any]:
    from app.batches import service, views
    from app.db import read_scope, session_scope

    with read_scope() as session:
        tag, body = views.read(session, org, batch_id)
    with session_scope() as session:
        assert tag.value == views.version(session, org, batch_id).value
        assert body == views.to_out(session, service.get(session, org, batch_id))
        assert tag.rows == views.version(session, org, batch_id).rows
    return body.model_dump(mode="json")


def test_one_read_answers_what_the_query_by_query_path_does(client: TestClient) -> None:
    from app.db import session_scope
    from app.models import Batch, Job, Restatement

    org = client.org  # type: ignore[attr-defined]
    dataset = client.post("/v1/datasets", json=EVENTS).json()["id"]
    batch = client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()["id"]
    url = f"/v1/batches/{batch}"
    assert check(org, batch)["files"] == []  # loading, no file, no job

    for name in ("b.csv", "a.csv", "c.csv"):  # files come back by name
        assert client.put(f"{url}/files/{name}", content=CSV).status_code == 201
    assert [f["name"] for f in check(org, batch)["files"]] == ["a.csv", "b.csv", "c.csv"]

    assert client.post(f"{url}/complete").status_code == 202  # a job, its progress
    body = check(org, batch)
    assert (body["status"], body["progress"]) == ("staged", 0.0)
    with session_scope() as session:
        session.execute(update(Job).where(Job.id == body["job_id"]).values(progress=0.5))
    assert check(org, batch)["progress"] == 0.5

    restatement = str(uuid.uuid4())  # restated: the restatement's state is in the body
    with session_scope() as session:
        session.add(
            Restatement(
                id=restatement,
                org=org,
                dataset_id=dataset,
                kind="replay",
                state="committed",
                request_id="r",
                batch_id=batch,
                job_id=body["job_id"],
                column="_batch_id",
                ids=[batch],
            )
        )
        session.execute(update(Batch).where(Batch.id == batch).values(restated_by=restatement))
    body = check(org, batch)
    assert body["restatement"] == {
        "id": restatement,
        "kind": "replay",
        "state": "committed",
        "batch_id": batch,
        "job_id": body["job_id"],
    }
    with session_scope() as session:  # a restatement pruned away: its id stays, no detail
        session.execute(update(Batch).where(Batch.id == batch).values(restated_by="gone"))
    body = check(org, batch)
    assert (body["restated_by"], body["restatement"]) == ("gone", None)

    response = client.get(url)  # through the API: the tag it sends answers 304 next time
    again = client.get(url, headers={"If-None-Match": response.headers["ETag"]})
    assert (response.json(), again.status_code) == (body, 304)
    other = client.get(f"/v1/batches/{uuid.uuid4()}")
    assert other.status_code == 404
