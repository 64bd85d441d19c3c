"""`/ui`: the web UI's pages. Each is a shell (Jinja2) that `static/app.js` fills from `/v1`
with the signed-in key, so the UI sees exactly what that key may see (another org's ids: 404).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates

HERE = Path(__file__).parent
STATIC = HERE / "static"
templates = Jinja2Templates(directory=HERE / "templates")
router = APIRouter(prefix="/ui", include_in_schema=False)

# the pages load only our own script and styles; the key never leaves for another origin
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def page(request: Request, name: str, title: str, **ids: str) -> HTMLResponse:
    """A page's shell: the script reads `data-page` and the ids from the body."""
    response = templates.TemplateResponse(
        request, "page.html", {"page": name, "title": title, "ids": ids}
    )
    response.headers.update(SECURITY_HEADERS)
    return response


@router.get("")
def ui_root() -> RedirectResponse:
    return RedirectResponse("/ui/datasets", status_code=307)


@router.get("/login", response_class=HTMLResponse)
def ui_login(request: Request) -> HTMLResponse:
    return page(request, "login", "Sign in")


@router.get("/datasets", response_class=HTMLResponse)
def ui_datasets(request: Request) -> HTMLResponse:
    return page(request, "datasets", "Datasets")


@router.get("/datasets/{dataset_id}", response_class=HTMLResponse)
def ui_dataset(request: Request, dataset_id: str) -> HTMLResponse:
    return page(request, "dataset", "Dataset", dataset=dataset_id)


@router.get("/batches/{batch_id}", response_class=HTMLResponse)
def ui_batch(request: Request, batch_id: str) -> HTMLResponse:
    return page(request, "batch", "Batch", batch=batch_id)


@router.get("/jobs", response_class=HTMLResponse)
def ui_jobs(request: Request) -> HTMLResponse:
    return page(request, "jobs", "Jobs")


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
def ui_job(request: Request, job_id: str) -> HTMLResponse:
    return page(request, "job", "Job", job=job_id)


@router.get("/privacy", response_class=HTMLResponse)
def ui_privacy_jobs(request: Request) -> HTMLResponse:
    return page(request, "privacy-jobs", "Privacy jobs")


@router.get("/privacy/{job_id}", response_class=HTMLResponse)
def ui_privacy(request: Request, job_id: str) -> HTMLResponse:
    return page(request, "privacy", "Privacy job", job=job_id)


@router.get("/cdc", response_class=HTMLResponse)
def ui_cdc(request: Request) -> HTMLResponse:
    return page(request, "cdc", "Replication")
