from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_out_result_type_0 import JobOutResultType0
    from ..models.job_stage_out import JobStageOut
    from ..models.stuck_out import StuckOut


T = TypeVar("T", bound="JobOut")


@_attrs_define
class JobOut:
    """
    Attributes:
        attempt (int): Attempts so far; a failed attempt is retried. A replay whose staged rows were handed to another
            job's group commit and that was claimed again to commit them spends one without running again, and
            `max_attempts` grows by one with it: `stages` tells a retry (`retrying`, `requeued`)
        created_at (datetime.datetime):
        duration_seconds (float | None):
        error (None | str): Why a failed job (or its last attempt) failed
        finished_at (datetime.datetime | None):
        heartbeat_at (datetime.datetime | None):
        id (str):
        kind (str): ingest, revert, replay, gdpr, vacuum, compact, expire or export
        max_attempts (int):
        progress (float): 0..1
        request_id (str): The X-Request-Id of the request that created it
        result (JobOutResultType0 | None): What a succeeded job did (per kind)
        stage (str): The step it is at while running (its kind's own names)
        started_at (datetime.datetime | None):
        state (str): queued → running → succeeded | failed
        subject_id (None | str): What the job works on: a batch (ingest), a restatement (revert, replay, gdpr) or a
            dataset (vacuum, compact, expire, export)
        updated_at (datetime.datetime): Last write to the job (state, progress, heartbeat)
        batch_id (None | str | Unset): The batch it serves (ingest; the reverted or replay batch)
        dataset_id (None | str | Unset): The dataset it works on (of its batch or restatement)
        key_id (None | str | Unset): The API key whose request created it (None: the scheduler or the system started it,
            or it predates this field)
        privacy_job_id (None | str | Unset): The privacy job (GDPR delete) its restatement belongs to
        restatement_id (None | str | Unset): The restatement it serves (revert, replay, gdpr)
        stages (list[JobStageOut] | Unset): Each stage it went through, with its timings
        stuck (None | StuckOut | Unset): Set while it is running with a stale heartbeat (no beat for
            ICEBATCH_STALE_AFTER_SECONDS): why, and what resolves it
        worker (None | str | Unset): host:pid of the worker that ran it
    """

    attempt: int
    created_at: datetime.datetime
    duration_seconds: float | None
    error: None | str
    finished_at: datetime.datetime | None
    heartbeat_at: datetime.datetime | None
    id: str
    kind: str
    max_attempts: int
    progress: float
    request_id: str
    result: JobOutResultType0 | None
    stage: str
    started_at: datetime.datetime | None
    state: str
    subject_id: None | str
    updated_at: datetime.datetime
    batch_id: None | str | Unset = UNSET
    dataset_id: None | str | Unset = UNSET
    key_id: None | str | Unset = UNSET
    privacy_job_id: None | str | Unset = UNSET
    restatement_id: None | str | Unset = UNSET
    stages: list[JobStageOut] | Unset = UNSET
    stuck: None | StuckOut | Unset = UNSET
    worker: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_out_result_type_0 import JobOutResultType0  # noqa: PLC0415
        from ..models.stuck_out import StuckOut  # noqa: PLC0415

        attempt = self.attempt

        created_at = self.created_at.isoformat()

        duration_seconds: float | None
        duration_seconds = self.duration_seconds

        error: None | str
        error = self.error

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        heartbeat_at: None | str
        if isinstance(self.heartbeat_at, datetime.datetime):
            heartbeat_at = self.heartbeat_at.isoformat()
        else:
            heartbeat_at = self.heartbeat_at

        id = self.id

        kind = self.kind

        max_attempts = self.max_attempts

        progress = self.progress

        request_id = self.request_id

        result: dict[str, Any] | None
        if isinstance(self.result, JobOutResultType0):
            result = self.result.to_dict()
        else:
            result = self.result

        stage = self.stage

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        state = self.state

        subject_id: None | str
        subject_id = self.subject_id

        updated_at = self.updated_at.isoformat()

        batch_id: None | str | Unset
        if isinstance(self.batch_id, Unset):
            batch_id = UNSET
        else:
            batch_id = self.batch_id

        dataset_id: None | str | Unset
        if isinstance(self.dataset_id, Unset):
            dataset_id = UNSET
        else:
            dataset_id = self.dataset_id

        key_id: None | str | Unset
        if isinstance(self.key_id, Unset):
            key_id = UNSET
        else:
            key_id = self.key_id

        privacy_job_id: None | str | Unset
        if isinstance(self.privacy_job_id, Unset):
            privacy_job_id = UNSET
        else:
            privacy_job_id = self.privacy_job_id

        restatement_id: None | str | Unset
        if isinstance(self.restatement_id, Unset):
            restatement_id = UNSET
        else:
            restatement_id = self.restatement_id

        stages: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.stages, Unset):
            stages = []
            for stages_item_data in self.stages:
                stages_item = stages_item_data.to_dict()
                stages.append(stages_item)

        stuck: dict[str, Any] | None | Unset
        if isinstance(self.stuck, Unset):
            stuck = UNSET
        elif isinstance(self.stuck, StuckOut):
            stuck = self.stuck.to_dict()
        else:
            stuck = self.stuck

        worker: None | str | Unset
        if isinstance(self.worker, Unset):
            worker = UNSET
        else:
            worker = self.worker

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "created_at": created_at,
                "duration_seconds": duration_seconds,
                "error": error,
                "finished_at": finished_at,
                "heartbeat_at": heartbeat_at,
                "id": id,
                "kind": kind,
                "max_attempts": max_attempts,
                "progress": progress,
                "request_id": request_id,
                "result": result,
                "stage": stage,
                "started_at": started_at,
                "state": state,
                "subject_id": subject_id,
                "updated_at": updated_at,
            }
        )
        if batch_id is not UNSET:
            field_dict["batch_id"] = batch_id
        if dataset_id is not UNSET:
            field_dict["dataset_id"] = dataset_id
        if key_id is not UNSET:
            field_dict["key_id"] = key_id
        if privacy_job_id is not UNSET:
            field_dict["privacy_job_id"] = privacy_job_id
        if restatement_id is not UNSET:
            field_dict["restatement_id"] = restatement_id
        if stages is not UNSET:
            field_dict["stages"] = stages
        if stuck is not UNSET:
            field_dict["stuck"] = stuck
        if worker is not UNSET:
            field_dict["worker"] = worker

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_out_result_type_0 import JobOutResultType0  # noqa: PLC0415
        from ..models.job_stage_out import JobStageOut  # noqa: PLC0415
        from ..models.stuck_out import StuckOut  # noqa: PLC0415

        d = dict(src_dict)
        attempt = d.pop("attempt")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_duration_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        duration_seconds = _parse_duration_seconds(d.pop("duration_seconds"))

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)

                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        def _parse_heartbeat_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                heartbeat_at_type_0 = datetime.datetime.fromisoformat(data)

                return heartbeat_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        heartbeat_at = _parse_heartbeat_at(d.pop("heartbeat_at"))

        id = d.pop("id")

        kind = d.pop("kind")

        max_attempts = d.pop("max_attempts")

        progress = d.pop("progress")

        request_id = d.pop("request_id")

        def _parse_result(data: object) -> JobOutResultType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_0 = JobOutResultType0.from_dict(data)

                return result_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobOutResultType0 | None, data)

        result = _parse_result(d.pop("result"))

        stage = d.pop("stage")

        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))

        state = d.pop("state")

        def _parse_subject_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        subject_id = _parse_subject_id(d.pop("subject_id"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_batch_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        batch_id = _parse_batch_id(d.pop("batch_id", UNSET))

        def _parse_dataset_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        dataset_id = _parse_dataset_id(d.pop("dataset_id", UNSET))

        def _parse_key_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key_id = _parse_key_id(d.pop("key_id", UNSET))

        def _parse_privacy_job_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        privacy_job_id = _parse_privacy_job_id(d.pop("privacy_job_id", UNSET))

        def _parse_restatement_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        restatement_id = _parse_restatement_id(d.pop("restatement_id", UNSET))

        _stages = d.pop("stages", UNSET)
        stages: list[JobStageOut] | Unset = UNSET
        if _stages is not UNSET:
            stages = []
            for stages_item_data in _stages:
                stages_item = JobStageOut.from_dict(stages_item_data)

                stages.append(stages_item)

        def _parse_stuck(data: object) -> None | StuckOut | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                stuck_type_0 = StuckOut.from_dict(data)

                return stuck_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | StuckOut | Unset, data)

        stuck = _parse_stuck(d.pop("stuck", UNSET))

        def _parse_worker(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        worker = _parse_worker(d.pop("worker", UNSET))

        job_out = cls(
            attempt=attempt,
            created_at=created_at,
            duration_seconds=duration_seconds,
            error=error,
            finished_at=finished_at,
            heartbeat_at=heartbeat_at,
            id=id,
            kind=kind,
            max_attempts=max_attempts,
            progress=progress,
            request_id=request_id,
            result=result,
            stage=stage,
            started_at=started_at,
            state=state,
            subject_id=subject_id,
            updated_at=updated_at,
            batch_id=batch_id,
            dataset_id=dataset_id,
            key_id=key_id,
            privacy_job_id=privacy_job_id,
            restatement_id=restatement_id,
            stages=stages,
            stuck=stuck,
            worker=worker,
        )

        job_out.additional_properties = d
        return job_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
