from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ProcessStarted")


@_attrs_define
class ProcessStarted:
    """
    Attributes:
        process_job_id (str): The processor job
        stage_job_id (None | str): The dumper job (null: nothing to stage)
    """

    process_job_id: str
    stage_job_id: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        process_job_id = self.process_job_id

        stage_job_id: None | str
        stage_job_id = self.stage_job_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "process_job_id": process_job_id,
                "stage_job_id": stage_job_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        process_job_id = d.pop("process_job_id")

        def _parse_stage_job_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        stage_job_id = _parse_stage_job_id(d.pop("stage_job_id"))

        process_started = cls(
            process_job_id=process_job_id,
            stage_job_id=stage_job_id,
        )

        process_started.additional_properties = d
        return process_started

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
