"""Maintenance jobs: vacuum and compaction (one rewrite job) and the materializer."""

from __future__ import annotations

from app.jobs.kinds import JobKind, TaskName
from workers import runtime
from workers.celery_app import job_task
from workers.maintenance.materialize import run as materialize
from workers.maintenance.rewrite import rewrite

rewrite_task = job_task(TaskName.REWRITE, rewrite)
materialize_task = job_task(TaskName.MATERIALIZE, materialize)
runtime.inline(JobKind.MATERIALIZE, materialize)  # under a restatement committer's lease
