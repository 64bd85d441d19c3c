from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.batch_out import BatchOut
    from ..models.job_out import JobOut


T = TypeVar("T", bound="BatchActionOut")


@_attrs_define
class BatchActionOut:
    """
    Attributes:
        batch (BatchOut):
        job (JobOut | None):
    """

    batch: BatchOut
    job: JobOut | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_out import JobOut  # noqa: PLC0415

        batch = self.batch.to_dict()

        job: dict[str, Any] | None
        if isinstance(self.job, JobOut):
            job = self.job.to_dict()
        else:
            job = self.job

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "batch": batch,
                "job": job,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.batch_out import BatchOut  # noqa: PLC0415
        from ..models.job_out import JobOut  # noqa: PLC0415

        d = dict(src_dict)
        batch = BatchOut.from_dict(d.pop("batch"))

        def _parse_job(data: object) -> JobOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                job_type_0 = JobOut.from_dict(data)

                return job_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobOut | None, data)

        job = _parse_job(d.pop("job"))

        batch_action_out = cls(
            batch=batch,
            job=job,
        )

        batch_action_out.additional_properties = d
        return batch_action_out

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
