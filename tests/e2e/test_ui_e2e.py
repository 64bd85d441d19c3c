"""The batch status web UI in a real headless Chromium (Debian's, driven by Playwright) against
`icebatch up`: sign in, watch an ingest go processing → success without reloading, a failed
batch's errors and their download, privacy jobs and jobs, another org's batch, a revoked key.

One installation serves the whole module (its tests run in file order and build on what the ones
before made: the screenshot test shows them all); each test has a fresh browser tab.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.fixtures.batches import csv_rows
from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import finished, gdpr, privacy_complete, upload_batch
from tests.fixtures.service import Service, embedded_env, new_org, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
CHROMIUM = shutil.which("chromium")
BAD = (
    b"event_id,user_id,event_time,payload\n"
    b"1,u1,2024-03-01T10:00:00,ok\nseven,u2,2024-03-01T11:00:00,x\n"
)


@dataclass
class Lake:
    """The module's installation: org A's key, client, dataset and first batch; B's key."""

    service: Service
    key: str
    other_key: str
    api: httpx.Client
    dataset: str
    first: str

    @property
    def url(self) -> str:
        return self.service.url


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    env = embedded_env()
    # every ingest stays 'processing' a few seconds: long enough to watch (a warm Spark is fast)
    env["ICEBATCH_FAILPOINTS"] = "ingest-spark=6"
    env["ICEBATCH_CDC_LAG_SAMPLE_SECONDS"] = "1"  # the lag history fills while the tests run
    service = Service(env, tmp_path_factory.mktemp("ui"))
    try:
        org = new_org()
        service.start_up()
        key, other_key = service.create_key(org), service.create_key(new_org())
        api = service.client(key)
        dataset = api.post("/v1/datasets", json=EVENTS).json()["id"]
        first = upload_batch(api, dataset, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
        assert finished(api, first)["status"] == "success"
        yield Lake(service, key, other_key, api, dataset, first)
    finally:
        service.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.fail("Debian's chromium is missing: run scripts/setup.sh")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh tab (its own sessionStorage: signed out)."""
    context = browser.new_context(viewport={"width": 1360, "height": 1000}, accept_downloads=True)
    yield context.new_page()
    context.close()


def sign_in(page: Page, url: str, key: str) -> None:
    page.goto(f"{url}/ui/login")
    page.fill("#api-key", key)
    page.click("button[type=submit]")


def signed_in(page: Page, lake: Lake, key: str | None = None) -> None:
    sign_in(page, lake.url, key or lake.key)
    expect(page).to_have_url(f"{lake.url}/ui/datasets")


def test_sign_in_needs_a_known_key(lake: Lake, page: Page) -> None:
    # no key yet: the login page; a wrong key: a clear message, still signed out
    page.goto(f"{lake.url}/ui/datasets")
    expect(page).to_have_url(f"{lake.url}/ui/login?next=%2Fui%2Fdatasets")
    sign_in(page, lake.url, "ib_0123456789ab_wrong")
    expect(page.locator("#login-error")).to_have_text("this API key is unknown")
    expect(page).to_have_url(f"{lake.url}/ui/login")

    signed_in(page, lake)
    row = page.locator(f'tr[data-dataset="{lake.dataset}"]')
    expect(row).to_contain_text("events")
    expect(row).to_contain_text("success 1")
    assert page.evaluate("sessionStorage.getItem('icebatch.key')") == lake.key
    assert lake.key not in repr(page.context.cookies())  # the key is never a cookie


def test_an_ingest_goes_processing_then_success_without_a_reload(lake: Lake, page: Page) -> None:
    signed_in(page, lake)
    page.locator(f'tr[data-dataset="{lake.dataset}"] a').click()
    expect(page.locator("#dataset-name")).to_have_text("events")
    expect(page.locator(f"#batch-{lake.first} .pill")).to_have_text("success")
    expect(page.locator("#legend .pill")).to_have_count(8)
    page.evaluate("window.__notReloaded = true")

    # an ingest started through the API appears and goes processing → success, live
    started = upload_batch(lake.api, lake.dataset, "csv", {"b.csv": csv_rows([(3, "u3")])})
    live = page.locator(f"#batch-{started}")
    expect(live).to_have_attribute("data-status", "processing", timeout=60_000)
    expect(live.locator(".pill")).to_have_class("pill processing status-processing")
    expect(live).to_have_attribute("data-status", "success", timeout=120_000)
    expect(live.locator(".pill")).to_have_class("pill success status-success")
    expect(live.locator("td").nth(3)).to_have_text("1")  # its rows
    assert page.evaluate("window.__notReloaded") is True
    # filter by status, search by id
    page.select_option("#status-filter", "success")
    expect(page.locator("#batches tbody tr")).to_have_count(2)
    page.fill("#batch-search", started[:8])
    expect(page.locator("#batches tbody tr")).to_have_count(1)
    page.select_option("#status-filter", "failed")
    expect(page.locator("#batches tbody tr")).to_have_text("No batch matches.")


def test_a_failed_batch_shows_its_row_errors_and_their_download(lake: Lake, page: Page) -> None:
    bad = upload_batch(lake.api, lake.dataset, "csv", {"bad.csv": BAD})
    assert finished(lake.api, bad)["status"] == "failed"
    signed_in(page, lake)
    page.goto(f"{lake.url}/ui/datasets/{lake.dataset}")
    expect(page.locator(f"#batch-{bad} .pill")).to_have_class("pill failed status-failed")
    page.locator(f"#batch-{bad} a").click()
    expect(page.locator("#stage")).to_contain_text("failed")
    expect(page.locator("#progress")).to_have_class("progress failed")
    details = page.locator("dl.fields")
    expect(details).to_contain_text("bad.csv (95 B)")
    expect(details).to_contain_text("Rows2")  # <dt>Rows</dt><dd>2</dd>
    expect(page.locator("#main")).not_to_contain_text("[object")
    expect(page.locator("#main")).not_to_contain_text("null")
    errors = page.locator("#errors-table tbody tr")
    expect(errors).to_have_count(1)
    expect(errors.first).to_contain_text("bad.csv")
    expect(errors.first).to_contain_text("event_id")
    expect(errors.first).to_contain_text("seven")
    with page.expect_download() as download:
        page.click("#download-errors")
    saved = Path(download.value.path()).read_text()
    assert saved.splitlines()[0] == "file,row,field,value,reason"
    assert '"bad.csv"' in saved
    assert '"seven"' in saved


def test_privacy_and_jobs_pages_follow_a_gdpr_delete(lake: Lake, page: Page) -> None:
    # a GDPR delete through the API: the Privacy page follows it live to complete, and its page
    # says what it hid and that the erasure is still to come
    privacy_id, restated = gdpr(lake.api, lake.dataset, ["u1"])
    signed_in(page, lake)
    page.click("header nav >> text=Privacy")
    expect(page).to_have_url(f"{lake.url}/ui/privacy")
    job_row = page.locator(f"#privacy-{privacy_id}")
    expect(job_row.locator("td").nth(2)).to_have_text("user_id")
    expect(job_row).to_have_attribute("data-status", "complete", timeout=120_000)
    expect(job_row.locator(".pill")).to_have_text("complete")
    expect(job_row.locator("td").nth(5)).to_have_text("1")  # rows hidden: u1's one row
    job_row.locator("a").click()
    expect(page.locator("#privacy-datasets tbody tr")).to_have_count(1)
    expect(page.locator("#privacy-datasets tbody tr .pill")).to_have_text("complete")
    expect(page.locator("dl.fields")).to_contain_text("Identity columnuser_id")
    expect(page.locator("dl.fields")).to_contain_text("Rows hidden1")
    expect(page.locator("#main")).not_to_contain_text("[object")
    expect(page.locator("#receipt")).to_contain_text("Not erased yet")

    # the jobs: the first ingest and the GDPR restatement, each with its state and stage
    page.click("header nav >> text=Jobs")
    first_job = lake.api.get(f"/v1/batches/{lake.first}").json()["job_id"]
    expect(page.locator(f"#job-{first_job}")).to_have_attribute("data-state", "succeeded")
    expect(page.locator(f"#job-{first_job} td").nth(1)).to_have_text("ingest")
    expect(page.locator(f"#job-{restated.job_id}")).to_have_attribute("data-state", "succeeded")
    expect(page.locator(f"#job-{restated.job_id} .pill")).to_have_text("succeeded")


def shown_jobs(page: Page) -> list[str]:
    """The job ids of the jobs table's rows, top to bottom."""
    ids: list[str] = page.locator("#jobs tbody tr[id^=job-]").evaluate_all(
        "rows => rows.map((r) => r.id.slice(4))"
    )
    return ids


def api_jobs(lake: Lake, query: str) -> list[str]:
    return [j["id"] for j in lake.api.get(f"/v1/jobs?{query}&limit=500").json()["items"]]


def test_the_job_page_and_the_jobs_filters_show_what_the_api_says(lake: Lake, page: Page) -> None:
    first_job = lake.api.get(f"/v1/batches/{lake.first}").json()["job_id"]
    job = lake.api.get(f"/v1/jobs/{first_job}").json()
    prefix = lake.key.split("_")[1]
    keys = lake.api.get("/v1/keys").json()["items"]
    key_id = next(k["id"] for k in keys if k["prefix"] == prefix)
    assert job["key_id"] == key_id
    signed_in(page, lake)

    # from the jobs list to the first ingest's page: what it serves, who started it, its stages
    page.goto(f"{lake.url}/ui/jobs")
    row = page.locator(f"#job-{first_job}")
    expect(row.locator("td.dataset a")).to_have_text("events")
    expect(row.locator("td.serves a.serves-batch")).to_have_attribute(
        "href", f"/ui/batches/{lake.first}"
    )
    row.locator("td").first.locator("a").click()
    expect(page).to_have_url(f"{lake.url}/ui/jobs/{first_job}")
    fields = page.locator("#job-fields")
    expect(fields).to_contain_text(f"Attempts{job['attempt']} of {job['max_attempts']}")
    expect(page.locator("#job-dataset")).to_have_attribute("href", f"/ui/datasets/{lake.dataset}")
    expect(page.locator("#job-dataset")).to_have_text("events")
    expect(fields.locator("a.serves-batch")).to_have_attribute("href", f"/ui/batches/{lake.first}")
    expect(page.locator("#job-request")).to_have_text(job["request_id"])
    expect(page.locator("#job-key")).to_have_text(key_id)
    stages = page.locator("#job-stages tbody tr")
    expect(stages).to_have_count(len(job["stages"]))
    assert [s["stage"] for s in job["stages"]][:2] == ["queued", "starting"]
    assert job["stages"][-1]["stage"] == "done"
    for i, stage in enumerate(job["stages"]):
        expect(stages.nth(i)).to_have_attribute("data-stage", stage["stage"])
        expect(stages.nth(i).locator("td").last).to_have_text(f"{stage['seconds']:.3f}")
    expect(page.locator("#stuck")).to_have_count(0)
    expect(page.locator("#main")).not_to_contain_text("[object")

    # the GDPR restatement's job links its privacy job
    gdpr_job = lake.api.get("/v1/jobs?kind=gdpr").json()["items"][0]
    page.goto(f"{lake.url}/ui/jobs/{gdpr_job['id']}")
    expect(page.locator("#job-fields a.serves-privacy")).to_have_attribute(
        "href", f"/ui/privacy/{gdpr_job['privacy_job_id']}"
    )

    # filters: each view lists exactly what GET /v1/jobs answers to the query the page sent
    page.goto(f"{lake.url}/ui/jobs")
    expect(page.locator("body")).to_have_attribute("data-loaded", "all")
    page.select_option("#filter-kind", "ingest")
    expect(page.locator("body")).to_have_attribute("data-loaded", "kind=ingest")
    ingests = api_jobs(lake, "kind=ingest")
    assert len(ingests) >= 2
    assert shown_jobs(page) == ingests
    expect(page.locator("#jobs-count")).to_have_text(f"{len(ingests)} job(s)")
    page.select_option("#filter-state", "failed")
    expect(page.locator("body")).to_have_attribute("data-loaded", "kind=ingest&state=failed")
    failed = api_jobs(lake, "kind=ingest&state=failed")
    assert shown_jobs(page) == failed
    assert len(failed) == 1  # the bad batch's ingest, which failed for good on its row errors
    page.select_option("#filter-state", "")
    page.select_option("#filter-kind", "")
    page.select_option("#filter-dataset_id", lake.dataset)
    expect(page.locator("body")).to_have_attribute("data-loaded", f"dataset_id={lake.dataset}")
    mine = api_jobs(lake, f"dataset_id={lake.dataset}")
    assert shown_jobs(page) == mine
    assert first_job in mine
    assert gdpr_job["id"] in mine
    # a time window, to the second: from the GDPR job's creation on
    created = datetime.fromisoformat(gdpr_job["created_at"])
    local = page.evaluate(
        "(iso) => { const d = new Date(iso); d.setMilliseconds(0);"
        " return new Date(d - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19); }",
        gdpr_job["created_at"],
    )
    page.fill("#filter-since", local)
    page.locator("#filter-since").dispatch_event("change")
    expect(page.locator("body")).to_have_attribute(
        "data-loaded", re.compile(r"dataset_id=.*&since=")
    )
    loaded = page.locator("body").get_attribute("data-loaded") or ""
    windowed = api_jobs(lake, loaded)
    assert shown_jobs(page) == windowed
    assert gdpr_job["id"] in windowed
    assert first_job not in windowed
    for job_id in windowed:
        made = lake.api.get(f"/v1/jobs/{job_id}").json()["created_at"]
        assert datetime.fromisoformat(made) >= created.replace(microsecond=0)
    # the filtered view is the page's URL: a reload keeps it
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-loaded", loaded)
    assert shown_jobs(page) == windowed


def materialized(lake: Lake) -> list[dict[str, Any]] | None:
    """The snapshot log once the newest tombstones are in position deletes, else None."""
    snapshots: list[dict[str, Any]] = lake.api.get(f"/v1/datasets/{lake.dataset}/snapshots").json()[
        "items"
    ]
    newest = max(
        (
            s["sequence_number"]
            for s in snapshots
            if int(s["tombstone"].get("tombstone.metrics.added.count", 0))
        ),
        default=0,
    )
    return snapshots if snapshots[0]["tombstones"]["materialized_seq"] >= newest else None


def test_the_dataset_page_shows_the_timeline_and_makes_the_screenshot(
    lake: Lake, page: Page, tmp_path: Path
) -> None:
    assert lake.api.post(f"/v1/batches/{lake.first}/revert").status_code == 202
    signed_in(page, lake)
    page.goto(f"{lake.url}/ui/datasets/{lake.dataset}")
    expect(page.locator(f"#batch-{lake.first}")).to_have_attribute(
        "data-status", "reverted", timeout=60_000
    )
    # the revert's tombstone becomes position deletes a moment later: a `materialize` snapshot
    snapshots = wait_for(lambda: materialized(lake), 60, "the materializer")
    page.reload()  # the timeline and charts are drawn once per load
    timeline = page.locator("#timeline li")
    expect(timeline).to_have_count(len(snapshots))
    expect(timeline.first.locator(".op")).to_have_text("materialize")
    expect(timeline.nth(1).locator(".op")).to_have_text("revert")
    expect(timeline.last.locator(".op")).to_have_text("ingest")
    expect(timeline.last).to_contain_text(f"batch {lake.first[:8]}")
    screenshot = os.environ.get("ICEBATCH_UI_SCREENSHOT") or str(tmp_path / "dataset.png")
    page.screenshot(path=screenshot, full_page=True)


def test_another_orgs_batch_is_not_found(lake: Lake, page: Page) -> None:
    signed_in(page, lake, lake.other_key)
    expect(page.locator("#datasets tbody")).to_contain_text("No dataset yet")
    page.goto(f"{lake.url}/ui/batches/{lake.first}")
    expect(page.locator("#not-found")).to_contain_text("does not exist in your organization")
    assert "a.csv" not in page.content()


def test_a_batch_page_follows_its_ingest_live(lake: Lake, page: Page) -> None:
    # the stage moves while it runs, then success at 100%, without a reload
    watched = upload_batch(lake.api, lake.dataset, "csv", {"c.csv": csv_rows([(4, "u4")])})
    signed_in(page, lake)
    page.goto(f"{lake.url}/ui/batches/{watched}")
    page.evaluate("window.__notReloaded = true")
    expect(page.locator("#stage")).to_contain_text("running: ", timeout=60_000)
    expect(page.locator("#progress")).not_to_have_class(re.compile(r"\b(done|failed)\b"))
    expect(page.locator("dl.fields")).to_contain_text("c.csv")
    expect(page.locator("#main")).not_to_contain_text("null")
    expect(page.locator("#stage")).to_have_text("success · 100%", timeout=120_000)
    expect(page.locator("#progress")).to_have_class("progress done")
    expect(page.locator("#progress")).to_have_attribute("aria-valuenow", "100")
    assert page.evaluate("window.__notReloaded") is True


def test_the_replication_page_follows_the_lag_and_shows_a_profile(lake: Lake, page: Page) -> None:
    # another tenant (B's key) posts change events; the beat stages and processes them and the
    # lag card follows without a reload; a profile lookup shows the linked cluster merged
    now = datetime.now(UTC)
    events = [
        {
            "op": "PUT",
            "entity_id": "u1",
            "record_type": "profile",
            "related_ids": ["crm:1"],
            "timestamp": (now - timedelta(minutes=3)).isoformat(),
            "payload": {"name": "Ada"},
        },
        {
            "op": "PUT",
            "entity_id": "crm:1",
            "record_type": "account",
            "timestamp": (now - timedelta(minutes=2)).isoformat(),
            "payload": {"tier": "gold"},
        },
        {
            "op": "PATCH",
            "entity_id": "u1",
            "record_type": "profile",
            "timestamp": (now - timedelta(minutes=1)).isoformat(),
            "payload": {"city": "Lyon"},
        },
    ]
    api = lake.service.client(lake.other_key)
    body = "\n".join(json.dumps(e) for e in events)
    answer = api.post(
        "/v1/cdc/events", content=body, headers={"Content-Type": "application/x-ndjson"}
    )
    assert answer.json() == {"accepted": 3, "first_sequence": 1, "last_sequence": 3}
    signed_in(page, lake, lake.other_key)
    page.click("header nav >> text=Replication")
    expect(page).to_have_url(f"{lake.url}/ui/cdc")
    card = page.locator("section[id^=lag-]")
    expect(card.locator('[data-stage="accepted"]')).to_have_text("3")
    expect(card.locator('[data-stage="processed"]')).to_have_text("3", timeout=120_000)
    expect(card).to_have_attribute("data-behind", "false")
    expect(card.locator('[data-field="Replication lag"]')).to_have_text("0 s")
    page.fill("#profile-id", "crm:1")
    page.click("#profile-form button")
    expect(page.locator("dl.fields").last).to_contain_text("Memberscrm:1, u1")
    merged = json.loads(page.locator("#profile-merged").inner_text())
    assert merged == {"name": "Ada", "city": "Lyon", "tier": "gold"}
    page.fill("#profile-id", "nobody")
    page.click("#profile-form button")
    expect(page.locator("#main")).to_contain_text("No record or link of that identity.")
    expect(page.locator("#main")).not_to_contain_text("[object")
    api.close()


def test_a_revoked_key_goes_back_to_sign_in(lake: Lake, page: Page) -> None:
    # a key revoked while its page polls: back to sign in, with the API's reason
    made = lake.api.post("/v1/keys", json={"scope": "read"}).json()
    signed_in(page, lake, made["key"])
    page.goto(f"{lake.url}/ui/jobs")
    first_job = lake.api.get(f"/v1/batches/{lake.first}").json()["job_id"]
    expect(page.locator(f"#job-{first_job}")).to_have_attribute("data-state", "succeeded")
    assert lake.api.delete(f"/v1/keys/{made['id']}").json()["revoked_at"] is not None
    expect(page).to_have_url(re.compile(r"/ui/login\?next=%2Fui%2Fjobs"), timeout=30_000)
    expect(page.locator("#login-error")).to_contain_text("this API key was revoked at")
    assert page.evaluate("sessionStorage.getItem('icebatch.key')") is None


def shown_duration(start: str, end: str) -> str:
    """The UI's duration text (app.js `duration`), for the API's two times."""

    def millis(text: str) -> datetime:  # JavaScript's Date keeps milliseconds
        moment = datetime.fromisoformat(text)
        return moment.replace(microsecond=moment.microsecond // 1000 * 1000)

    secs = (millis(end) - millis(start)).total_seconds()
    if secs < 60:
        return f"{secs:.1f} s"
    if secs < 3600:
        return f"{int(secs // 60)} min {round(secs % 60)} s"
    return f"{secs / 3600:.1f} h"


def read_count(api: httpx.Client, dataset: str) -> int:
    """An independent count: the rows a read of the dataset returns."""
    answer = api.get(f"/v1/datasets/{dataset}/rows")
    assert answer.status_code == 200, answer.text
    return len(answer.text.splitlines())


def test_the_rows_shown_are_the_rows_a_read_returns(lake: Lake, page: Page) -> None:
    # issue 24: "rows" counted GDPR-hidden rows (5 shown, 2 readable) and a CDC raw table
    # showed 0 rows while it held 2. Here: A's dataset after ingests, a revert and two GDPR
    # deletes, one hiding a row of a live batch; B's CDC raw table, which no batch writes.
    privacy_complete(lake.api, gdpr(lake.api, lake.dataset, ["u3"])[0])
    signed_in(page, lake)
    stats = lake.api.get(f"/v1/datasets/{lake.dataset}/stats").json()
    readable = read_count(lake.api, lake.dataset)
    assert stats["rows"] == readable < stats["rows_ingested"]  # GDPR hid an ingested row
    row = page.locator(f'tr[data-dataset="{lake.dataset}"]')
    expect(row.locator('[data-field="rows"]')).to_have_text(str(readable))
    expect(row.locator('[data-field="rows-ingested"]')).to_have_text(str(stats["rows_ingested"]))
    page.goto(f"{lake.url}/ui/datasets/{lake.dataset}")
    expect(page.locator("#stat-rows .value")).to_have_text(str(readable))
    expect(page.locator("#stat-rows-ingested .value")).to_have_text(str(stats["rows_ingested"]))

    other = lake.service.client(lake.other_key)
    raw = other.get("/v1/cdc/config").json()["raw_dataset_id"]
    held = read_count(other, raw)
    assert held == 2  # u1's profile cluster: u1 and crm:1, one row each
    assert other.get(f"/v1/datasets/{raw}/stats").json()["rows"] == held
    page.goto(f"{lake.url}/ui/login")
    signed_in(page, lake, lake.other_key)
    expect(page.locator(f'tr[data-dataset="{raw}"] [data-field="rows"]')).to_have_text(str(held))
    other.close()


def test_a_reverted_batch_keeps_its_duration_and_says_what_restated_it(
    lake: Lake, page: Page
) -> None:
    # issue 24: a revert rewrote the batch's completed_at (a 3 s ingest showed 46 s)
    batch = lake.api.get(f"/v1/batches/{lake.first}").json()
    assert batch["status"] == "reverted"
    restatement = batch["restatement"]
    assert (restatement["kind"], restatement["state"]) == ("revert", "committed")
    snapshot = lake.api.get(f"/v1/datasets/{lake.dataset}/snapshots").json()["items"]
    landed = next(s for s in snapshot if s["snapshot_id"] == batch["snapshot_id"])
    assert datetime.fromisoformat(batch["completed_at"]) == datetime.fromisoformat(
        landed["committed_at"]
    )
    assert batch["restated_at"] > batch["completed_at"]
    signed_in(page, lake)
    page.goto(f"{lake.url}/ui/batches/{lake.first}")
    details = page.locator("dl.fields")
    duration = shown_duration(batch["created_at"], batch["completed_at"])
    expect(details).to_contain_text(f"Duration{duration}")
    restated = page.locator("#restated-by")
    expect(restated).to_have_attribute("data-kind", "revert")
    expect(restated).to_contain_text("revert (committed)")
    expect(restated.locator("a")).to_have_attribute("href", f"/ui/jobs/{restatement['job_id']}")
    expect(page.locator("#main")).not_to_contain_text("null")


def visit_links(page: Page, url: str, starts: list[str]) -> set[str]:
    """Visit `starts`, then every /ui link they show (once each); assert none lands on Not
    found and a `#fragment` names an element of its page. The links followed."""
    followed: set[str] = set()
    found: list[str] = []
    for start in starts:
        page.goto(f"{url}{start}")
        expect(page.locator("#main :is(h1, h2)").first).to_be_visible()
        expect(page.locator("#not-found")).to_have_count(0)
        hrefs = page.eval_on_selector_all(
            "#main a[href^='/ui/']", "as => as.map(a => a.getAttribute('href'))"
        )
        found.extend(h for h in hrefs if h not in followed and h not in found)
    for href in found:
        page.goto("about:blank")  # a link to the same page's #fragment is a navigation too
        answer = page.goto(f"{url}{href}")
        assert answer is not None, href
        assert answer.status < 400, href
        expect(page.locator("#main :is(h1, h2)").first).to_be_visible()
        expect(page.locator("#not-found"), href).to_have_count(0)
        if "#" in href:
            expect(page.locator(f"#{href.split('#', 1)[1]}"), href).to_have_count(1)
        followed.add(href)
    return followed


def test_every_id_link_leads_somewhere_real(lake: Lake, page: Page) -> None:
    # issue 24: the CDC snapshot's "batch cdc-…" link led to Not found
    signed_in(page, lake)
    batches = lake.api.get("/v1/batches", params={"dataset_id": lake.dataset}).json()["items"]
    followed = visit_links(
        page,
        lake.url,
        ["/ui/datasets", f"/ui/datasets/{lake.dataset}", f"/ui/batches/{lake.first}"],
    )
    assert {f"/ui/batches/{b['id']}" for b in batches} <= followed
    page.goto(f"{lake.url}/ui/login")
    signed_in(page, lake, lake.other_key)
    other = lake.service.client(lake.other_key)
    raw = other.get("/v1/cdc/config").json()["raw_dataset_id"]
    other.close()
    followed = visit_links(page, lake.url, ["/ui/datasets", f"/ui/datasets/{raw}", "/ui/cdc"])
    assert "/ui/cdc" in followed
    page.goto(f"{lake.url}/ui/datasets/{raw}")
    expect(page.locator("#timeline")).to_contain_text("CDC run")


def shown_seconds(value: float) -> str:
    """The UI's text for a number of seconds (app.js `seconds`)."""
    if not value:
        return "0 s"
    if value < 120:
        return f"{value:.1f} s"
    if value < 7200:
        return f"{value / 60:.1f} min"
    return f"{value / 3600:.1f} h"


def test_the_dataset_page_monitors_batches_errors_and_consumers(lake: Lake, page: Page) -> None:
    # batches over time by status, row errors by reason, consumer checkpoints and how far
    # behind they are: each figure shown against a model built from the plain API lists
    snapshots = lake.api.get(f"/v1/datasets/{lake.dataset}/snapshots").json()["items"]
    oldest = snapshots[-1]
    consumer = {"name": "billing", "snapshot_id": oldest["snapshot_id"]}
    assert lake.api.post(f"/v1/datasets/{lake.dataset}/consumers", json=consumer).is_success
    batches = lake.api.get("/v1/batches", params={"dataset_id": lake.dataset}).json()["items"]
    by_status: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for batch in batches:
        by_status[batch["status"]] = by_status.get(batch["status"], 0) + 1
        if batch["status"] != "failed":
            continue
        for error in batch["errors"] or []:
            reasons[error["reason"]] = reasons.get(error["reason"], 0) + 1
    assert reasons  # the failed batch's row error
    signed_in(page, lake)
    page.goto(f"{lake.url}/ui/datasets/{lake.dataset}")
    segments = page.locator("#batch-timeline rect[data-status]")
    expect(segments.first).to_be_visible()
    shown: dict[str, int] = {}
    for status, n in segments.evaluate_all(
        "rs => rs.map(r => [r.dataset.status, Number(r.dataset.n)])"
    ):
        shown[status] = shown.get(status, 0) + n
    assert shown == by_status
    for reason, count in reasons.items():
        row = page.locator(f'#error-groups tr[data-reason="{reason}"]')
        expect(row.locator('[data-field="errors"]')).to_have_text(str(count))
        expect(row.locator('[data-field="batches"]')).to_have_text("1")
    current = snapshots[0]
    behind = [s for s in snapshots if s["sequence_number"] > oldest["sequence_number"]]
    lag = (
        datetime.fromisoformat(current["committed_at"])
        - datetime.fromisoformat(oldest["committed_at"])
    ).total_seconds()
    row = page.locator('#consumers tr[data-consumer="billing"]')
    expect(row.locator('[data-field="snapshots-behind"]')).to_have_text(str(len(behind)))
    expect(row.locator('[data-field="seconds-behind"]')).to_have_text(shown_seconds(lag))
    api_lag = lake.api.get(f"/v1/datasets/{lake.dataset}/consumer-lag").json()["consumers"][0]
    assert (api_lag["snapshots_behind"], api_lag["seconds_behind"]) == (len(behind), lag)


def test_the_replication_page_draws_the_lag_over_time(lake: Lake, page: Page) -> None:
    # the beat's CDC pass samples B's lag (here every second): the chart is those samples
    other = lake.service.client(lake.other_key)
    wait_for(
        lambda: len(other.get("/v1/cdc/lag/history").json()["samples"]) >= 2, 30, "lag samples"
    )
    signed_in(page, lake, lake.other_key)
    page.goto(f"{lake.url}/ui/cdc")
    expect(page.locator("#replication-history circle").first).to_be_attached()
    values = page.locator("#replication-history circle").evaluate_all(
        "cs => cs.map(c => Number(c.dataset.value))"
    )
    history = other.get("/v1/cdc/lag/history").json()
    other.close()
    assert history["sample_seconds"] == 1
    assert values == [p["replication_lag_seconds"] for p in history["samples"]][: len(values)]
