"""Lookups by a list as long as the workload makes it: the GDPR restatements in force on a
dataset grow with its restatements (100,000 in bench.scale), past the bound parameters one
statement may carry (65,535 on PostgreSQL, 32,766 on SQLite)."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from app.chunks import in_chunks
from tests.fixtures.datasets import EVENTS


@given(st.lists(st.integers()), st.integers(min_value=1, max_value=7))
def test_in_chunks_keeps_every_value_in_order(values: list[int], size: int) -> None:
    parts = list(in_chunks(values, size))
    assert [v for part in parts for v in part] == values
    assert all(1 <= len(part) <= size for part in parts)


def test_restatement_values_are_found_among_70000_ids(client: TestClient) -> None:
    from app.db import session_scope
    from app.models import Restatement
    from app.privacy import repository

    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    body = {"dataset_ids": [did], "column": "user_id", "values": ["u1", "u2"]}
    assert client.post("/v1/privacy/jobs", json=body).status_code == 202
    with session_scope() as session:
        mine = {
            r.id: sorted(r.ids)
            for r in session.query(Restatement).filter(Restatement.dataset_id == did)
        }
    assert mine
    assert all(ids for ids in mine.values())
    absent = [str(uuid.uuid4()) for _ in range(70_000)]
    with session_scope() as session:
        found = repository.ids_of(session, [*absent[:35_000], *mine, *absent[35_000:]])
    assert {key: sorted(ids) for key, ids in found.items()} == mine
