"""Every list answers the same shape ({items, next}, `limit` + `cursor`, a `Link: rel="next"`
header), and following the links visits every item once, in the unpaged order."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from tests.fixtures.batches import CSV
from tests.fixtures.datasets import EVENTS

LINK = re.compile(r'^<(?P<url>[^>]+)>; rel="next"$')


def populate(client: TestClient) -> dict[str, str]:
    """Org objects enough for pages of two on every list: the list urls by name."""
    datasets = [client.post("/v1/datasets", json={**EVENTS, "name": f"d{i}"}).json() for i in "abc"]
    did = datasets[0]["id"]
    for i in range(5):
        batch = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()
        client.put(f"/v1/batches/{batch['id']}/files/a.csv", content=CSV)
        if i % 2:
            client.post(f"/v1/batches/{batch['id']}/abort")
    for i in range(3):
        client.post("/v1/keys", json={"scope": "read", "name": f"k{i}"})
        client.post(f"/v1/datasets/{did}/consumers", json={"name": f"c{i}"})
        client.post(
            "/v1/privacy/jobs",
            json={
                "dataset_ids": [d["id"] for d in datasets],
                "column": "user_id",
                "values": [f"u{i}"],
            },
        )
    return {
        "datasets": "/v1/datasets",
        "batches": f"/v1/batches?dataset_id={did}",
        "jobs": "/v1/jobs",
        "privacy_jobs": "/v1/privacy/jobs",
        "keys": "/v1/keys",
        "consumers": f"/v1/datasets/{did}/consumers",
        "audit": "/v1/audit",
        "snapshots": f"/v1/datasets/{did}/snapshots",
        "tombstones": f"/v1/datasets/{did}/tombstones",
    }


def follow(client: TestClient, url: str) -> list[Any]:
    """Every item of a list, page by page, following only the `Link` headers."""
    items: list[Any] = []
    pages = 0
    next_url: str | None = url + ("&" if "?" in url else "?") + "limit=2"
    while next_url is not None:
        response = client.get(next_url)
        assert response.status_code == 200, response.text
        page = response.json()
        assert set(page) >= {"items", "next"}
        assert len(page["items"]) <= 2
        items += page["items"]
        pages += 1
        link = response.headers.get("Link")
        if page["next"] is None:
            assert link is None
            next_url = None
        else:
            match = LINK.match(link or "")
            assert match, link
            next_url = match["url"]
            assert f"cursor={page['next']}" in next_url
    assert pages == max(1, -(-len(items) // 2))
    return items


def test_following_links_visits_every_item_once_in_order(client: TestClient) -> None:
    lists = populate(client)
    for name, url in lists.items():
        whole = client.get(url).json()
        assert whole["next"] is None, name
        paged = follow(client, url)
        assert paged == whole["items"], name
        # snapshots and tombstones of the dataset may be empty here (no worker ran): the rest
        # hold more than one page
        if name not in ("snapshots", "tombstones"):
            assert len(paged) > 2, name


def test_every_list_route_has_the_one_shape() -> None:
    from app.main import create_app

    app = create_app()
    spec = app.openapi()
    for route in app.routes:
        if not isinstance(route, APIRoute) or "GET" not in route.methods:
            continue
        if not route.include_in_schema:  # the web UI's page shells: HTML, not lists
            continue
        params = {p["name"] for p in spec["paths"][route.path]["get"].get("parameters", [])}
        model = route.response_model
        fields = set(getattr(model, "model_fields", {}))
        if "items" in fields:
            assert "next" in fields, route.path
            assert {"limit", "cursor"} <= params, route.path
            assert "offset" not in params, route.path


@pytest.mark.parametrize("cursor", ["nonsense", "b29mZnNldA", "x" * 64])
def test_a_cursor_the_api_did_not_give_is_refused(client: TestClient, cursor: str) -> None:
    client.post("/v1/datasets", json=EVENTS)
    for url in ("/v1/datasets", "/v1/jobs", "/v1/batches", "/v1/keys", "/v1/audit"):
        response = client.get(url, params={"cursor": cursor})
        assert response.status_code == 422, (url, response.text)
        assert "cursor" in response.json()["detail"]
