from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.job_out_result_type_0 import JobOutResultType0


T = TypeVar("T", bound="JobOut")


@_attrs_define
class JobOut:
    """
    Attributes:
        attempt (int): Attempts so far; a failed attempt is retried
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
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_out_result_type_0 import JobOutResultType0  # noqa: PLC0415

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

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_out_result_type_0 import JobOutResultType0  # noqa: PLC0415

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
