"""Privacy jobs against the tombstones: a GDPR delete is `complete` while the table holds its
tombstones (or its rows in snapshots from before it), and `erased` only once it holds neither.

The one repair re-runs the erasure check that follows every vacuum and expiry
(`app.privacy.erasure`), for deletes whose every copy is gone but whose erasure was not
recorded; a delete marked erased that still has copies needs a human.
"""

from __future__ import annotations

from app.db import session_scope
from app.doctor import repository
from app.doctor.findings import Finding, RepairIncomplete, Subject, finding
from app.lake.catalog import get_catalog
from app.models import JobState, PrivacyJob, Restatement, RestatementKind, RestatementState
from app.privacy import erasure
from app.privacy import repository as privacy_repository

CHECK = "privacy"


def check(subject: Subject) -> list[Finding]:
    table = subject.table
    with session_scope() as session:
        deletes = [
            r
            for r in repository.restatements(session, subject.dataset_id)
            if r.kind == RestatementKind.GDPR
        ]
        job_rows = repository.jobs(session, (r.job_id for r in deletes))
        parts = {
            job_id: privacy_repository.restatements_of_privacy_job(session, job_id)
            for job_id in {r.privacy_job_id for r in deletes if r.privacy_job_id}
        }
        privacy_jobs = repository.privacy_jobs(session, parts.keys())
    snapshots = table.snapshots()
    if not deletes or not snapshots:
        return []
    try:
        held = erasure.held_request_ids(table)
    except Exception:
        return []  # unreadable tombstone files: the tombstones check reports them
    oldest = min(s.sequence_number or 0 for s in snapshots)
    out: list[Finding] = []
    for delete in deletes:
        label = f"the GDPR delete of privacy job {delete.privacy_job_id} (restatement {delete.id})"
        if delete.state != RestatementState.COMMITTED:
            continue
        job = job_rows.get(delete.job_id or "")
        if job is not None and job.state == JobState.FAILED:
            out.append(
                finding(
                    subject,
                    CHECK,
                    f"privacy job {delete.privacy_job_id} reports 'failed' for this dataset (its "
                    f"job {job.id} failed), but {label} is committed in snapshot "
                    f"{delete.snapshot_id}: its rows are hidden",
                    "tell the requester the delete took effect; its status follows the failed "
                    "job row, which no worker will change",
                )
            )
        wrong = _erasure(subject, delete, label, delete.request_id in held, oldest)
        if wrong and delete.erased_at is not None and delete.privacy_job_id:
            parts.pop(delete.privacy_job_id, None)  # its job's mark follows once this is fixed
        out += wrong
    for job_id, members in parts.items():
        out += _privacy_job(subject, privacy_jobs.get(job_id), job_id, members)
    return out


def _erasure(
    subject: Subject, delete: Restatement, label: str, held: bool, oldest: int
) -> list[Finding]:
    before_kept = oldest < (delete.sequence_number or 0)
    if delete.erased_at is None:
        if held:
            return []  # complete: vacuum and expiry will erase it
        if before_kept:
            return [
                finding(
                    subject,
                    CHECK,
                    f"{label} is committed, but no retained snapshot holds its tombstones while "
                    "snapshots from before it are retained: the identity's rows are visible in "
                    "reads of those snapshots, and in the current one unless a vacuum purged "
                    "them",
                    "submit the GDPR delete again (POST /v1/privacy/jobs, same column and "
                    "values), then vacuum and expire the dataset",
                )
            ]
        return [
            finding(
                subject,
                CHECK,
                f"{label} is 'complete', but every copy of its rows is gone (its tombstones "
                "were vacuumed and every snapshot before it expired) and its erasure was never "
                "recorded",
                "--repair runs the erasure check that follows every vacuum and expiry; it marks "
                "the delete erased (and its privacy job, once every dataset is)",
                repair=lambda: recheck(subject.dataset_id, subject.identifier, delete.id),
            )
        ]
    if not held and not before_kept:
        return []
    still = (
        "its tombstones (a vacuum has not purged every file that may hold its rows)"
        if held
        else "snapshots from before it, whose files hold the identity's rows"
    )
    return [
        finding(
            subject,
            CHECK,
            f"{label} is marked erased at {delete.erased_at}, but the table still holds {still}",
            "the erasure receipt is wrong: run a full vacuum (POST /v1/datasets/"
            f"{subject.dataset_id}/vacuum) and an expiry (POST /v1/datasets/"
            f"{subject.dataset_id}/expire), then clear erased_at on the restatement and its "
            "privacy job so the erasure check records it when it is true",
        )
    ]


def _privacy_job(
    subject: Subject, job: PrivacyJob | None, job_id: str, members: list[Restatement]
) -> list[Finding]:
    if job is None:
        return []
    erased = bool(members) and all(m.erased_at for m in members)
    if erased and job.erased_at is None:
        return [
            finding(
                subject,
                CHECK,
                f"privacy job {job_id} is erased on every dataset, but the job itself is not "
                "marked erased (no receipt)",
                "--repair records its erasure and receipt, as the erasure check does",
                repair=lambda: settle(job_id),
            )
        ]
    if not erased and job.erased_at is not None:
        left = ", ".join(m.dataset_id for m in members if not m.erased_at)
        return [
            finding(
                subject,
                CHECK,
                f"privacy job {job_id} is marked erased, but its delete is not erased on "
                f"datasets {left}",
                "the receipt is wrong: clear the job's erased_at and receipt; the erasure check "
                "sets them once every dataset is erased",
            )
        ]
    return []


def recheck(dataset_id: str, identifier: str, restatement_id: str) -> str:
    """Run the erasure check; say why it left the delete when it did."""
    if restatement_id in erasure.check_erasure(dataset_id):
        return f"the erasure check marked restatement {restatement_id} erased"
    with session_scope() as session:
        in_flight = privacy_repository.restated_batch_ids(session, dataset_id, erasure.IN_FLIGHT)
    stray = erasure.stray_parquet(get_catalog().load_table(identifier), in_flight)
    reason = (
        f"{len(stray)} unreferenced Parquet files are left under the table (delete them with "
        "--repair once they are older than the orphan age, or with an expire job)"
        if stray
        else "the table changed meanwhile; run the doctor again"
    )
    raise RepairIncomplete(f"the erasure check left restatement {restatement_id}: {reason}")


def settle(privacy_job_id: str) -> str:
    with session_scope() as session:
        done = erasure.settle_privacy_job(session, privacy_job_id)
    if not done:
        raise RepairIncomplete(f"privacy job {privacy_job_id} is not erased on every dataset")
    return f"marked privacy job {privacy_job_id} erased, with its receipt"
