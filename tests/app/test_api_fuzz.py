"""Schemathesis against the in-process app, with keys of two orgs and positive and negative data
(invalid bodies, parameters, ids). The property: no call answers 5xx, and every response is one
the OpenAPI document declares — its status, media type, body schema and headers.

Two passes per store:
- stateful: sequences of calls linked by the ids responses return (links it infers from the
  document). The machine runs `STATEFUL_RUNS` times (a fixed budget: what 25 s bought on an idle
  CI machine when the budget was time; more with ICEBATCH_TEST_PROFILE=deep), since its draws
  depend on what the app answered (Hypothesis then reports `Flaky`, which only ends that run, as
  in schemathesis' own runner).
- seeded: every operation, a few positive and negative draws each, with its path ids set to
  objects that exist (a dataset with rows, a batch, a job), called by the owner org's key and by
  the other org's: the deep answers (streams, snapshots, 409s) that random ids never reach.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import hypothesis
import pyarrow as pa
import schemathesis
from fastapi.testclient import TestClient
from schemathesis import Case, GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.failures import FailureGroup
from schemathesis.core.transport import Response

from tests.fixtures.batches import CSV
from tests.fixtures.clients import new_key
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment
from tests.fixtures.profile import runs

STATEFUL_RUNS = 9
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]  # not negative_data_rejection: the Authorization header the test sets back on every case,
# and arrays in the query that arrive as one value, make it report requests that were valid
ORGS = ("fuzz_a", "fuzz_b")
SETTINGS = hypothesis.settings(
    max_examples=5,
    stateful_step_count=8,
    deadline=None,
    database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.generate],
)
SEEDED = hypothesis.settings(SETTINGS, max_examples=3)


def seed(client: TestClient, key: str, name: str) -> dict[str, str]:
    """A dataset with a snapshot of rows and a loading batch: objects the list responses hand
    to the machine, and the ids of the seeded pass."""
    from app.lake.catalog import get_catalog

    headers = {"Authorization": f"Bearer {key}"}
    # unpartitioned: PyIceberg appends to a partitioned table only with pyiceberg-core
    spec = {**EVENTS, "name": name, "partition": []}
    dataset = client.post("/v1/datasets", json=spec, headers=headers).json()
    table = get_catalog().load_table(dataset["table"].split(".", 1)[1])
    rows = [{"event_id": n, "user_id": f"u{n}", "_batch_id": "seed"} for n in (1, 2)]
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))
    batch = client.post(
        "/v1/batches", json={"dataset_id": dataset["id"], "format": "csv"}, headers=headers
    ).json()["id"]
    client.put(f"/v1/batches/{batch}/files/a.csv", content=CSV, headers=headers)
    job = client.post(f"/v1/datasets/{dataset['id']}/vacuum", json={}, headers=headers).json()
    return {"dataset_id": dataset["id"], "batch_id": batch, "job_id": job["id"], "name": "a.csv"}


class Findings:
    """What the checks found, and which (method, path, status) the calls covered."""

    def __init__(self) -> None:
        self.failures: list[str] = []
        self.calls: Counter[tuple[str, str, int]] = Counter()

    def validate(self, response: Response, case: Case) -> None:
        self.calls[(case.method, case.path, response.status_code)] += 1
        try:
            case.validate_response(response, checks=CHECKS)
        except FailureGroup as group:
            self.failures.append(
                f"{case.method} {case.formatted_path} query={case.query} body={case.body!r} "
                f"answered {response.status_code}: {response.text[:300]}\n"
                + "\n".join(f"  {f.title}: {f.message[:500]}" for f in group.exceptions)
            )


def run_stateful(schema: Any, findings: Findings) -> None:
    keys: list[str] = []

    class Machine(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            # fresh keys per scenario (an earlier one may have revoked its own): an admin key
            # of one org, a read key of it, and every third step the other org's admin key
            first = ORGS[len(keys) % 2]
            keys.append(first)
            self.new_keys()
            self.steps = 0

        def new_keys(self) -> None:
            first, other = ORGS[(len(keys) + 1) % 2], ORGS[len(keys) % 2]
            self.keys = [new_key(first), new_key(first, "read"), new_key(other)]

        def before_call(self, case: Case) -> None:
            self.steps += 1
            index = 2 if self.steps % 3 == 0 else 1 if self.steps % 5 == 0 else 0
            case.headers["Authorization"] = f"Bearer {self.keys[index]}"

        def call(self, case: Case, **kwargs: Any) -> Response:
            try:
                response: Response = super().call(case, **kwargs)
            except Exception as exc:
                findings.failures.append(f"{case.method} {case.formatted_path} raised {exc!r}")
                raise
            return response

        def validate_response(self, response: Response, case: Case, **kwargs: Any) -> None:
            findings.validate(response, case)
            if case.path == "/v1/keys/{key_id}" and response.status_code == 200:
                self.new_keys()  # it may have revoked one of ours: keep exploring, not 401s

    for _ in range(runs(STATEFUL_RUNS)):
        try:
            Machine.run(settings=SETTINGS)
        except hypothesis.errors.Flaky:
            continue


def run_seeded(schema: Any, ids: dict[str, str], key: str, findings: Findings) -> None:
    """Every operation with its path ids set to `ids` (those it has), called with `key`."""
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @hypothesis.given(case=operation.as_strategy(generation_mode=mode))
            @SEEDED
            def call(case: Case) -> None:
                for name in case.path_parameters or {}:
                    if name in ids:
                        case.path_parameters[name] = ids[name]
                case.headers["Authorization"] = f"Bearer {key}"
                findings.validate(case.call(), case)

            try:
                call()
            except hypothesis.errors.Unsatisfiable:
                continue  # nothing to negate (e.g. no parameters, no body)


def test_every_answer_is_declared_and_none_is_5xx(stack: Environment) -> None:
    from app.main import create_app

    app = create_app()
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], allow_x00=False
    )
    with TestClient(app) as client:
        for org in ORGS:
            seed(client, new_key(org), "events")
        findings = Findings()
        run_stateful(schema, findings)
        stateful = sum(findings.calls.values())
        # objects of its own, which the stateful machine (it lists batches) did not touch
        owner = new_key(ORGS[0])
        ids = seed(client, owner, "seeded")
    run_seeded(schema, ids, owner, findings)
    run_seeded(schema, ids, new_key(ORGS[1]), findings)  # another org's ids: 404

    assert findings.failures == [], "\n".join(dict.fromkeys(findings.failures))
    assert stateful >= 40
    # the machine got past the front door: objects made, found, refused, and 404 across orgs
    statuses = {status for (_, _, status) in findings.calls}
    assert {200, 403, 404, 422} <= statuses, findings.calls
    # the seeded pass reached the streams and the services' own refusals
    covered = set(findings.calls)
    for streamed in ("/v1/datasets/{dataset_id}/rows", "/v1/datasets/{dataset_id}/changes"):
        assert ("GET", streamed, 200) in covered, findings.calls
        assert ("GET", streamed, 404) in covered, findings.calls
    assert ("PUT", "/v1/batches/{batch_id}/files/{name}", 201) in covered, findings.calls
    assert any(status == 409 for (_, _, status) in covered), findings.calls
