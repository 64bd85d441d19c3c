"""Icebatch's own Python code, as the one zip a Spark session ships to its executors.

Python functions that run inside Spark tasks (rewrites, change exports, the CDC fold) import
`app` and `workers`. On a cluster, an executor host has a Python with Icebatch's third-party
packages (deploy/executor-requirements.txt) but no Icebatch: the session adds this zip with
`SparkContext.addPyFile`, and every Python worker on every executor imports from it, ahead of
anything installed there. The file is named by a hash of its content, so an executor never
imports another version's code under the same name.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import tempfile
import zipfile
from pathlib import Path

PACKAGES = ("app", "workers")
ROOT = Path(__file__).resolve().parent.parent.parent
# the files a task may import: Python sources (no caches, templates or static assets)
SUFFIXES = frozenset({".py"})


def sources(root: Path = ROOT) -> list[Path]:
    """Every Python source of the shipped packages, relative to `root`, in a stable order."""
    found = [
        path.relative_to(root)
        for package in PACKAGES
        for path in (root / package).rglob("*")
        if path.suffix in SUFFIXES and "__pycache__" not in path.parts
    ]
    return sorted(found)


def build(out_dir: Path | None = None, root: Path = ROOT) -> Path:
    """The zip of `app` and `workers` (built once per content: an existing one is reused)."""
    files = sources(root)
    digest = hashlib.sha256()
    for relative in files:
        digest.update(str(relative).encode() + b"\0" + (root / relative).read_bytes() + b"\0")
    out_dir = out_dir or Path(tempfile.gettempdir()) / "icebatch-pyfiles"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"icebatch-{digest.hexdigest()[:16]}.zip"
    if target.exists():
        return target
    partial = target.with_suffix(f".{os.getpid()}.partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative in files:
            # a fixed timestamp: the same sources give the same bytes
            info = zipfile.ZipInfo(str(relative), date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, (root / relative).read_bytes())
    partial.replace(target)  # atomic: a concurrent builder of the same content is harmless
    return target


def origin(module: str) -> str:
    """Where `module` was imported from in this process (an executor's log names it)."""
    return os.path.abspath(importlib.import_module(module).__file__ or "?")
