"""Run the checks over the chosen datasets, repair what is repairable, and check again."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from app.db import session_scope
from app.doctor import batches, files, privacy, repository, restatements, tombstones
from app.doctor.findings import Finding, Subject
from app.lake.catalog import get_catalog
from app.lake.retention import effective_policy

log = logging.getLogger(__name__)
Check = Callable[[Subject], list[Finding]]
# in repair order: orphans go before privacy (an unreferenced Parquet file delays erasure)
CHECKS: tuple[tuple[str, Check], ...] = (
    ("batches", batches.check),
    ("restatements", restatements.check),
    ("tombstones", tombstones.check),
    ("files", files.check),
    ("privacy", privacy.check),
)


@dataclass
class Report:
    """What one doctor run found, what `--repair` did, and what is still wrong after it."""

    datasets_checked: int
    findings: list[Finding]
    repaired: bool = False  # --repair was asked
    remaining: list[Finding] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not (self.remaining if self.repaired else self.findings)


def examine(org: str | None = None, dataset: str | None = None) -> tuple[int, list[Finding]]:
    """(datasets checked, findings): every check on every chosen dataset."""
    with session_scope() as session:
        rows = [
            (d.id, d.org, d.name, d.table_identifier, d.retention)
            for d in repository.datasets(session, org, dataset)
        ]
    catalog = get_catalog()
    found: list[Finding] = []
    for dataset_id, dataset_org, name, identifier, own_policy in rows:
        try:
            table = catalog.load_table(identifier)
        except Exception as exc:
            found.append(
                Finding(
                    dataset_id,
                    f"{dataset_org}/{name}",
                    "catalog",
                    f"the Iceberg catalog has no readable table {identifier} for this dataset "
                    f"({type(exc).__name__}: {exc})",
                    "restore the table's entry in the catalog (iceberg_tables) or its metadata "
                    "file from a backup",
                )
            )
            continue
        subject = Subject(
            dataset_id, dataset_org, name, identifier, table, effective_policy(own_policy)
        )
        for check_name, check in CHECKS:
            try:
                found += check(subject)
            except Exception as exc:
                log.exception("doctor: the %s check failed on %s", check_name, subject.label)
                found.append(
                    Finding(
                        dataset_id,
                        subject.label,
                        check_name,
                        f"the {check_name} check could not run ({type(exc).__name__}: {exc})",
                        "fix what the error names (a file or row the check could not read), "
                        "then run the doctor again",
                    )
                )
    return len(rows), _unique(found)


def repair(findings: list[Finding]) -> None:
    """Run each finding's repair, in check order, recording what it did or why it failed."""
    for finding in findings:
        if finding.repair is None:
            continue
        try:
            finding.repaired = finding.repair()
        except Exception as exc:
            log.warning("doctor: repair failed: %s", finding.problem, exc_info=True)
            finding.repair_error = str(exc) or type(exc).__name__


def run(*, org: str | None = None, dataset: str | None = None, fix: bool = False) -> Report:
    """Examine; with `fix`, repair and examine again (what remains is what needs a human)."""
    checked, findings = examine(org, dataset)
    report = Report(checked, findings, repaired=fix)
    if fix and findings:
        repair(findings)
        _, report.remaining = examine(org, dataset)
    return report


def _unique(findings: list[Finding]) -> list[Finding]:
    """A problem seen from several datasets (a privacy job spans them) is reported once."""
    seen: set[tuple[str, str]] = set()
    out = []
    for finding in findings:
        key = (finding.check, finding.problem)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out
