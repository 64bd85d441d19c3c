"""SQLAlchemy models, one module per aggregate."""

from app.models.api_key import ApiKey, Scope
from app.models.audit import AuditArchive, AuditEvent
from app.models.batch import Batch, BatchFile, BatchStatus
from app.models.cdc import (
    CdcChunk,
    CdcDeletion,
    CdcIdentity,
    CdcLagSample,
    CdcSourceKey,
    CdcTenant,
)
from app.models.dataset import Dataset
from app.models.idempotency import IdempotencyKey
from app.models.job import Job, JobState, OutboxMessage
from app.models.maintenance import Consumer, ExpiredSnapshot, ForgottenSnapshots
from app.models.restatement import (
    CommitLease,
    PrivacyJob,
    Restatement,
    RestatementKind,
    RestatementState,
)

__all__ = [
    "ApiKey",
    "AuditArchive",
    "AuditEvent",
    "Batch",
    "BatchFile",
    "BatchStatus",
    "CdcChunk",
    "CdcDeletion",
    "CdcIdentity",
    "CdcLagSample",
    "CdcSourceKey",
    "CdcTenant",
    "CommitLease",
    "Consumer",
    "Dataset",
    "ExpiredSnapshot",
    "ForgottenSnapshots",
    "IdempotencyKey",
    "Job",
    "JobState",
    "OutboxMessage",
    "PrivacyJob",
    "Restatement",
    "RestatementKind",
    "RestatementState",
    "Scope",
]
