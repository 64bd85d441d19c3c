"""The doctor's report: plain words for a person, or JSON for a script."""

from __future__ import annotations

import json

from app.doctor.findings import Finding
from app.doctor.service import Report


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def text(report: Report) -> str:
    lines = [
        f"icebatch doctor: {_count(report.datasets_checked, 'dataset')} checked, "
        f"{_count(len(report.findings), 'problem')} found."
    ]
    dataset = None
    for finding in report.findings:
        if finding.dataset != dataset:
            dataset = finding.dataset
            lines += ["", f"{finding.dataset} (dataset {finding.dataset_id})"]
        lines += _finding(finding, report.repaired)
    if report.repaired and report.findings:
        lines.append("")
        if report.remaining:
            left = len(report.remaining)
            lines.append(f"After repair, {_count(left, 'problem')} remain{'s' * (left == 1)}:")
            lines += [f"  - {f.dataset} [{f.check}] {f.problem}" for f in report.remaining]
        else:
            lines.append("After repair: no problems left.")
    elif report.findings:
        fixable = sum(f.repairable for f in report.findings)
        lines += ["", f"{fixable} of {len(report.findings)} can be repaired with --repair."]
    return "\n".join(lines)


def _finding(finding: Finding, repaired: bool) -> list[str]:
    lines = [f"  [{finding.check}] {finding.problem}", f"      what to do: {finding.action}"]
    if not repaired:
        return lines
    if finding.repaired is not None:
        lines.append(f"      repaired: {finding.repaired}")
    elif finding.repair_error is not None:
        lines.append(f"      repair failed: {finding.repair_error}")
    else:
        lines.append("      needs a human")
    return lines


def as_json(report: Report) -> str:
    body = {
        "datasets_checked": report.datasets_checked,
        "healthy": report.healthy,
        "findings": [f.to_json() for f in report.findings],
    }
    if report.repaired:
        body["remaining"] = [f.to_json() for f in report.remaining]
    return json.dumps(body, indent=2)
