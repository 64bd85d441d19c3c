"""The web UI's page shells (no data, no key, a strict CSP) and the privacy jobs list its
Privacy page reads. What the pages show is tested in a browser: tests/e2e/test_ui_e2e.py."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS

PAGES = {
    "/ui/login": "login",
    "/ui/datasets": "datasets",
    "/ui/datasets/{dataset}": "dataset",
    "/ui/batches/b-1": "batch",
    "/ui/jobs": "jobs",
    "/ui/jobs/j-1": "job",
    "/ui/privacy": "privacy-jobs",
    "/ui/privacy/p-1": "privacy",
}


@pytest.mark.parametrize("path", sorted(PAGES))
def test_a_page_shell_holds_no_data_and_loads_only_our_code(
    client_for: ClientFactory, path: str
) -> None:
    owner = client_for()
    dataset = owner.post("/v1/datasets", json={**EVENTS, "name": "secret_events"}).json()["id"]
    anonymous = TestClient(owner.app)  # no key: the shell answers; its script asks for one
    response = anonymous.get(path.format(dataset=dataset))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert f'data-page="{PAGES[path]}"' in response.text
    assert "secret_events" not in response.text  # the dataset's name comes from /v1, keyed
    assert response.headers["Cache-Control"] == "no-store"
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp
    assert "connect-src 'self'" in csp
    # every script and stylesheet is ours, served by the API process
    assert re.findall(r'(?:src|href)="(/ui/static/[^"]+)"', response.text) == [
        "/ui/static/app.css",
        "/ui/static/app.js",
    ]
    assert "http://" not in response.text
    assert "https://" not in response.text


def test_the_ui_root_goes_to_the_datasets_and_the_script_is_served(client: TestClient) -> None:
    response = client.get("/ui", follow_redirects=False)
    assert (response.status_code, response.headers["location"]) == (307, "/ui/datasets")
    script = client.get("/ui/static/app.js")
    assert script.status_code == 200
    assert '"privacy-jobs": privacyJobsPage' in script.text
    assert "sessionStorage" in script.text
    assert "localStorage" not in script.text
    assert "If-None-Match" in script.text
    assert "updated_since" in script.text


def test_privacy_jobs_list_pages_newest_first_and_stays_in_the_org(
    client_for: ClientFactory,
) -> None:
    a, b = client_for(), client_for()
    dataset = a.post("/v1/datasets", json=EVENTS).json()["id"]
    made = [
        a.post(
            "/v1/privacy/jobs",
            json={"dataset_ids": [dataset], "column": "user_id", "values": values},
        ).json()
        for values in (["u1"], ["u2", "u3"])
    ]
    first = a.get("/v1/privacy/jobs", params={"limit": 1})
    assert first.status_code == 200
    page = first.json()
    assert [p["id"] for p in page["items"]] == [made[1]["id"]]  # newest first
    assert page["items"][0] == a.get(f"/v1/privacy/jobs/{made[1]['id']}").json()
    assert page["items"][0]["value_count"] == 2
    assert page["next"] is not None
    assert 'rel="next"' in first.headers["Link"]
    assert page["next"] in first.headers["Link"]
    rest = a.get("/v1/privacy/jobs", params={"limit": 1, "cursor": page["next"]}).json()
    assert ([p["id"] for p in rest["items"]], rest["next"]) == ([made[0]["id"]], None)
    assert b.get("/v1/privacy/jobs").json() == {"items": [], "next": None}
