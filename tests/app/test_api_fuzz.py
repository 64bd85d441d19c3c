"""Schemathesis, stateful: sequences of calls linked by the ids responses return (links it
infers from the OpenAPI document), with keys of two orgs and negative data (invalid bodies,
parameters, ids), against the in-process app. The property: no call answers 5xx.

Bounded by time (`BUDGET_SECONDS` per store): the machine runs again until the budget is
spent, since its draws depend on what the app answered (Hypothesis then reports `Flaky`, which
only ends that run, as in schemathesis' own runner)."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import hypothesis
import schemathesis
from fastapi.testclient import TestClient
from schemathesis import Case, GenerationMode
from schemathesis.core.transport import Response

from tests.fixtures.batches import CSV
from tests.fixtures.clients import new_key
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment

BUDGET_SECONDS = 25.0
ORGS = ("fuzz_a", "fuzz_b")
SETTINGS = hypothesis.settings(
    max_examples=5,
    stateful_step_count=8,
    deadline=None,
    database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.generate],
)


def seed(client: TestClient, key: str) -> None:
    """A dataset and a loading batch: objects the list responses hand to the machine."""
    headers = {"Authorization": f"Bearer {key}"}
    dataset = client.post("/v1/datasets", json=EVENTS, headers=headers).json()["id"]
    batch = client.post(
        "/v1/batches", json={"dataset_id": dataset, "format": "csv"}, headers=headers
    ).json()["id"]
    client.put(f"/v1/batches/{batch}/files/a.csv", content=CSV, headers=headers)


def test_no_call_answers_5xx(stack: Environment) -> None:
    from app.main import create_app

    app = create_app()
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], allow_x00=False
    )
    with TestClient(app) as client:
        for org in ORGS:
            seed(client, new_key(org))
    keys: list[str] = []
    calls: Counter[tuple[str, str, int]] = Counter()
    failures: list[str] = []

    class Machine(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            # fresh keys per scenario (an earlier one may have revoked its own): an admin key
            # of one org, a read key of it, and every third step the other org's admin key
            first = ORGS[len(keys) % 2]
            other = ORGS[(len(keys) + 1) % 2]
            keys.append(first)
            self.keys = [new_key(first), new_key(first, "read"), new_key(other)]
            self.steps = 0

        def before_call(self, case: Case) -> None:
            self.steps += 1
            index = 2 if self.steps % 3 == 0 else 1 if self.steps % 5 == 0 else 0
            case.headers["Authorization"] = f"Bearer {self.keys[index]}"

        def call(self, case: Case, **kwargs: Any) -> Response:
            try:
                response: Response = super().call(case, **kwargs)
            except Exception as exc:
                failures.append(f"{case.method} {case.formatted_path} raised {exc!r}")
                raise
            return response

        def validate_response(self, response: Response, case: Case, **kwargs: Any) -> None:
            calls[(case.method, case.path, response.status_code)] += 1
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.formatted_path} query={case.query} body={case.body!r} "
                    f"answered {response.status_code}: {response.text[:300]}"
                )

    deadline = time.monotonic() + BUDGET_SECONDS
    while time.monotonic() < deadline and not failures:
        try:
            Machine.run(settings=SETTINGS)
        except hypothesis.errors.Flaky:
            continue
    assert failures == []
    assert sum(calls.values()) >= 40
    # the machine got past the front door: objects made, found, refused, and 404 across orgs
    statuses = {status for (_, _, status) in calls}
    assert {200, 403, 404, 422} <= statuses, calls
