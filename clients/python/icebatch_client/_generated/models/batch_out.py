from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.batch_file_out import BatchFileOut
    from ..models.batch_out_errors_type_0_item import BatchOutErrorsType0Item
    from ..models.batch_out_replay_type_0 import BatchOutReplayType0
    from ..models.batch_restatement import BatchRestatement
    from ..models.stuck_out import StuckOut


T = TypeVar("T", bound="BatchOut")


@_attrs_define
class BatchOut:
    """
    Attributes:
        bytes_ (int):
        completed_at (datetime.datetime | None): When it landed (its snapshot's commit time), failed or was aborted; a
            later revert or replay never changes it
        created_at (datetime.datetime):
        dataset_id (str):
        errors (list[BatchOutErrorsType0Item] | None): A failed batch's row-level errors: {file, row, field, reason}
        file_count (int):
        files (list[BatchFileOut]):
        format_ (str):
        id (str):
        job_id (None | str): Its ingest job (once completed)
        progress (float | None): The ingest job's progress, 0..1
        replay (BatchOutReplayType0 | None): {predecessors, reason} of a replay batch
        restated_by (None | str): The id of the revert or replay restating (pending) or that restated this batch
        row_count (int | None): Rows ingested (once processed)
        snapshot_id (int | None): The Iceberg snapshot that committed its rows
        status (str): loading → staged → processing → success | failed; aborted; a 'success' batch becomes reverted or
            replaced
        updated_at (datetime.datetime):
        restated_at (datetime.datetime | None | Unset): When a revert or replay restated it (the commit time of the
            snapshot that made it reverted or replaced)
        restatement (BatchRestatement | None | Unset): That restatement: its kind, state, replay batch and job
        stuck (None | StuckOut | Unset): Set while it is 'loading' with no upload and no COMPLETE for
            ICEBATCH_BATCH_LOADING_TTL_SECONDS: why, and what resolves it (the scheduler aborts it)
    """

    bytes_: int
    completed_at: datetime.datetime | None
    created_at: datetime.datetime
    dataset_id: str
    errors: list[BatchOutErrorsType0Item] | None
    file_count: int
    files: list[BatchFileOut]
    format_: str
    id: str
    job_id: None | str
    progress: float | None
    replay: BatchOutReplayType0 | None
    restated_by: None | str
    row_count: int | None
    snapshot_id: int | None
    status: str
    updated_at: datetime.datetime
    restated_at: datetime.datetime | None | Unset = UNSET
    restatement: BatchRestatement | None | Unset = UNSET
    stuck: None | StuckOut | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.batch_out_replay_type_0 import (
            BatchOutReplayType0,  # noqa: PLC0415
        )
        from ..models.batch_restatement import BatchRestatement  # noqa: PLC0415
        from ..models.stuck_out import StuckOut  # noqa: PLC0415

        bytes_ = self.bytes_

        completed_at: None | str
        if isinstance(self.completed_at, datetime.datetime):
            completed_at = self.completed_at.isoformat()
        else:
            completed_at = self.completed_at

        created_at = self.created_at.isoformat()

        dataset_id = self.dataset_id

        errors: list[dict[str, Any]] | None
        if isinstance(self.errors, list):
            errors = []
            for errors_type_0_item_data in self.errors:
                errors_type_0_item = errors_type_0_item_data.to_dict()
                errors.append(errors_type_0_item)

        else:
            errors = self.errors

        file_count = self.file_count

        files = []
        for files_item_data in self.files:
            files_item = files_item_data.to_dict()
            files.append(files_item)

        format_ = self.format_

        id = self.id

        job_id: None | str
        job_id = self.job_id

        progress: float | None
        progress = self.progress

        replay: dict[str, Any] | None
        if isinstance(self.replay, BatchOutReplayType0):
            replay = self.replay.to_dict()
        else:
            replay = self.replay

        restated_by: None | str
        restated_by = self.restated_by

        row_count: int | None
        row_count = self.row_count

        snapshot_id: int | None
        snapshot_id = self.snapshot_id

        status = self.status

        updated_at = self.updated_at.isoformat()

        restated_at: None | str | Unset
        if isinstance(self.restated_at, Unset):
            restated_at = UNSET
        elif isinstance(self.restated_at, datetime.datetime):
            restated_at = self.restated_at.isoformat()
        else:
            restated_at = self.restated_at

        restatement: dict[str, Any] | None | Unset
        if isinstance(self.restatement, Unset):
            restatement = UNSET
        elif isinstance(self.restatement, BatchRestatement):
            restatement = self.restatement.to_dict()
        else:
            restatement = self.restatement

        stuck: dict[str, Any] | None | Unset
        if isinstance(self.stuck, Unset):
            stuck = UNSET
        elif isinstance(self.stuck, StuckOut):
            stuck = self.stuck.to_dict()
        else:
            stuck = self.stuck

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bytes": bytes_,
                "completed_at": completed_at,
                "created_at": created_at,
                "dataset_id": dataset_id,
                "errors": errors,
                "file_count": file_count,
                "files": files,
                "format": format_,
                "id": id,
                "job_id": job_id,
                "progress": progress,
                "replay": replay,
                "restated_by": restated_by,
                "row_count": row_count,
                "snapshot_id": snapshot_id,
                "status": status,
                "updated_at": updated_at,
            }
        )
        if restated_at is not UNSET:
            field_dict["restated_at"] = restated_at
        if restatement is not UNSET:
            field_dict["restatement"] = restatement
        if stuck is not UNSET:
            field_dict["stuck"] = stuck

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.batch_file_out import BatchFileOut  # noqa: PLC0415
        from ..models.batch_out_errors_type_0_item import (
            BatchOutErrorsType0Item,  # noqa: PLC0415
        )
        from ..models.batch_out_replay_type_0 import (
            BatchOutReplayType0,  # noqa: PLC0415
        )
        from ..models.batch_restatement import BatchRestatement  # noqa: PLC0415
        from ..models.stuck_out import StuckOut  # noqa: PLC0415

        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        def _parse_completed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                completed_at_type_0 = datetime.datetime.fromisoformat(data)

                return completed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        completed_at = _parse_completed_at(d.pop("completed_at"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        dataset_id = d.pop("dataset_id")

        def _parse_errors(data: object) -> list[BatchOutErrorsType0Item] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                errors_type_0 = []
                _errors_type_0 = data
                for errors_type_0_item_data in _errors_type_0:
                    errors_type_0_item = BatchOutErrorsType0Item.from_dict(
                        errors_type_0_item_data
                    )

                    errors_type_0.append(errors_type_0_item)

                return errors_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[BatchOutErrorsType0Item] | None, data)

        errors = _parse_errors(d.pop("errors"))

        file_count = d.pop("file_count")

        files = []
        _files = d.pop("files")
        for files_item_data in _files:
            files_item = BatchFileOut.from_dict(files_item_data)

            files.append(files_item)

        format_ = d.pop("format")

        id = d.pop("id")

        def _parse_job_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        job_id = _parse_job_id(d.pop("job_id"))

        def _parse_progress(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        progress = _parse_progress(d.pop("progress"))

        def _parse_replay(data: object) -> BatchOutReplayType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                replay_type_0 = BatchOutReplayType0.from_dict(data)

                return replay_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BatchOutReplayType0 | None, data)

        replay = _parse_replay(d.pop("replay"))

        def _parse_restated_by(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        restated_by = _parse_restated_by(d.pop("restated_by"))

        def _parse_row_count(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        row_count = _parse_row_count(d.pop("row_count"))

        def _parse_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        snapshot_id = _parse_snapshot_id(d.pop("snapshot_id"))

        status = d.pop("status")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_restated_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                restated_at_type_0 = datetime.datetime.fromisoformat(data)

                return restated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        restated_at = _parse_restated_at(d.pop("restated_at", UNSET))

        def _parse_restatement(data: object) -> BatchRestatement | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                restatement_type_0 = BatchRestatement.from_dict(data)

                return restatement_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BatchRestatement | None | Unset, data)

        restatement = _parse_restatement(d.pop("restatement", UNSET))

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

        batch_out = cls(
            bytes_=bytes_,
            completed_at=completed_at,
            created_at=created_at,
            dataset_id=dataset_id,
            errors=errors,
            file_count=file_count,
            files=files,
            format_=format_,
            id=id,
            job_id=job_id,
            progress=progress,
            replay=replay,
            restated_by=restated_by,
            row_count=row_count,
            snapshot_id=snapshot_id,
            status=status,
            updated_at=updated_at,
            restated_at=restated_at,
            restatement=restatement,
            stuck=stuck,
        )

        batch_out.additional_properties = d
        return batch_out

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
