"""The batch status web UI in a real headless Chromium (Debian's, driven by Playwright) against
`icebatch up`: sign in, watch an ingest go processing → success without reloading, a failed
batch's errors and their download, a wrong key, another org's batch."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.fixtures.batches import csv_rows
from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import finished, gdpr, upload_batch
from tests.fixtures.service import Service, new_org

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
CHROMIUM = shutil.which("chromium")
BAD = (
    b"event_id,user_id,event_time,payload\n"
    b"1,u1,2024-03-01T10:00:00,ok\nseven,u2,2024-03-01T11:00:00,x\n"
)


@pytest.fixture
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        pytest.fail("Debian's chromium is missing: run scripts/setup.sh")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield launched
        launched.close()


def sign_in(page: Page, url: str, key: str) -> None:
    page.goto(f"{url}/ui/login")
    page.fill("#api-key", key)
    page.click("button[type=submit]")


@pytest.mark.parametrize("service", ["embedded"], indirect=True)
def test_the_ui_follows_batches_live(service: Service, browser: Browser, tmp_path: Path) -> None:
    # every ingest stays 'processing' a few seconds: long enough to watch (a warm Spark is fast)
    service.env["ICEBATCH_FAILPOINTS"] = "ingest-spark=6"
    org = new_org()
    key, other_key = service.create_key(org), service.create_key(new_org())
    service.start_up()
    api = service.client(key)
    dataset = api.post("/v1/datasets", json=EVENTS).json()
    first = upload_batch(api, dataset["id"], "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    assert finished(api, first)["status"] == "success"

    page = browser.new_page(viewport={"width": 1360, "height": 1000}, accept_downloads=True)
    # no key yet: the login page; a wrong key: a clear message, still signed out
    page.goto(f"{service.url}/ui/datasets")
    expect(page).to_have_url(f"{service.url}/ui/login?next=%2Fui%2Fdatasets")
    sign_in(page, service.url, "ib_0123456789ab_wrong")
    expect(page.locator("#login-error")).to_have_text("this API key is unknown")
    expect(page).to_have_url(f"{service.url}/ui/login")

    sign_in(page, service.url, key)
    expect(page).to_have_url(f"{service.url}/ui/datasets")
    row = page.locator(f'tr[data-dataset="{dataset["id"]}"]')
    expect(row).to_contain_text("events")
    expect(row).to_contain_text("success 1")
    assert page.evaluate("sessionStorage.getItem('icebatch.key')") == key
    assert key not in page.context.cookies().__repr__()  # the key is never a cookie

    row.locator("a").click()
    expect(page.locator("#dataset-name")).to_have_text("events")
    expect(page.locator(f"#batch-{first} .pill")).to_have_text("success")
    expect(page.locator("#legend .pill")).to_have_count(8)
    page.evaluate("window.__notReloaded = true")

    # an ingest started through the API appears and goes processing → success, live
    started = upload_batch(api, dataset["id"], "csv", {"b.csv": csv_rows([(3, "u3")])})
    live = page.locator(f"#batch-{started}")
    expect(live).to_have_attribute("data-status", "processing", timeout=60_000)
    expect(live.locator(".pill")).to_have_class("pill processing status-processing")
    expect(live).to_have_attribute("data-status", "success", timeout=120_000)
    expect(live.locator("td").nth(3)).to_have_text("1")  # its rows
    assert page.evaluate("window.__notReloaded") is True
    page.select_option("#status-filter", "success")
    expect(page.locator("#batches tbody tr")).to_have_count(2)
    page.fill("#batch-search", started[:8])
    expect(page.locator("#batches tbody tr")).to_have_count(1)
    page.select_option("#status-filter", "")
    page.fill("#batch-search", "")

    # a failed batch: its row-level errors, and their download
    bad = upload_batch(api, dataset["id"], "csv", {"bad.csv": BAD})
    assert finished(api, bad)["status"] == "failed"
    expect(page.locator(f"#batch-{bad}")).to_have_attribute("data-status", "failed", timeout=30_000)
    api.post(f"/v1/batches/{first}/revert")
    expect(page.locator(f"#batch-{first}")).to_have_attribute(
        "data-status", "reverted", timeout=60_000
    )

    # a GDPR delete through the API: the Privacy page follows it live to complete, and its page
    # says what it hid and that the erasure is still to come
    privacy_id, restated = gdpr(api, dataset["id"], ["u3"])
    page.click("header nav >> text=Privacy")
    expect(page).to_have_url(f"{service.url}/ui/privacy")
    job_row = page.locator(f"#privacy-{privacy_id}")
    expect(job_row.locator("td").nth(2)).to_have_text("user_id")
    expect(job_row).to_have_attribute("data-status", "complete", timeout=120_000)
    expect(job_row.locator(".pill")).to_have_text("complete")
    expect(job_row.locator("td").nth(5)).to_have_text("1")  # rows hidden: u3's one row
    job_row.locator("a").click()
    expect(page.locator("#privacy-datasets tbody tr")).to_have_count(1)
    expect(page.locator("#privacy-datasets tbody tr .pill")).to_have_text("complete")
    expect(page.locator("#receipt")).to_contain_text("Not erased yet")

    # the jobs: the failed ingest and the GDPR restatement, each with its state and stage
    page.click("header nav >> text=Jobs")
    bad_job = api.get(f"/v1/batches/{bad}").json()["job_id"]
    expect(page.locator(f"#job-{bad_job}")).to_have_attribute("data-state", "failed")
    expect(page.locator(f"#job-{restated.job_id}")).to_have_attribute("data-state", "succeeded")
    expect(page.locator(f"#job-{restated.job_id} .pill")).to_have_text("succeeded")

    screenshot = os.environ.get("ICEBATCH_UI_SCREENSHOT") or str(tmp_path / "dataset.png")
    page.goto(f"{service.url}/ui/datasets/{dataset['id']}")
    expect(page.locator("#timeline li")).to_have_count(4)  # two ingests, a revert, a GDPR delete
    page.screenshot(path=screenshot, full_page=True)

    page.locator(f"#batch-{bad} a").click()
    expect(page.locator("#stage")).to_contain_text("failed")
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

    # another org's key: A's batch is not found; A's data never shows
    other = browser.new_page()
    sign_in(other, service.url, other_key)
    expect(other).to_have_url(f"{service.url}/ui/datasets")
    expect(other.locator("#datasets tbody")).to_contain_text("No dataset yet")
    other.goto(f"{service.url}/ui/batches/{bad}")
    expect(other.locator("#not-found")).to_contain_text("does not exist in your organization")
    assert "seven" not in other.content()

    # a batch page follows its ingest live: the stage moves while it runs, then success at 100%
    watched = upload_batch(api, dataset["id"], "csv", {"c.csv": csv_rows([(4, "u4")])})
    page.goto(f"{service.url}/ui/batches/{watched}")
    page.evaluate("window.__notReloaded = true")
    expect(page.locator("#stage")).to_contain_text("running: ", timeout=60_000)
    expect(page.locator("#progress")).not_to_have_class(re.compile(r"\b(done|failed)\b"))
    expect(page.locator("#stage")).to_have_text("success · 100%", timeout=120_000)
    expect(page.locator("#progress")).to_have_class("progress done")
    expect(page.locator("#progress")).to_have_attribute("aria-valuenow", "100")
    assert page.evaluate("window.__notReloaded") is True

    # a key revoked while its page is open: back to sign in, with the API's reason
    made = api.post("/v1/keys", json={"scope": "read"}).json()
    revoked = browser.new_page()
    sign_in(revoked, service.url, made["key"])
    revoked.goto(f"{service.url}/ui/jobs")
    expect(revoked.locator(f"#job-{bad_job}")).to_have_attribute("data-state", "failed")
    assert api.delete(f"/v1/keys/{made['id']}").json()["revoked_at"] is not None
    expect(revoked).to_have_url(re.compile(r"/ui/login\?next=%2Fui%2Fjobs"), timeout=30_000)
    expect(revoked.locator("#login-error")).to_contain_text("this API key was revoked at")
    assert revoked.evaluate("sessionStorage.getItem('icebatch.key')") is None
