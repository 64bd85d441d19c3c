from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PrivacyDatasetStatus")


@_attrs_define
class PrivacyDatasetStatus:
    """
    Attributes:
        dataset_id (str):
        error (None | str):
        job_id (None | str):
        rows_hidden (int | None): Rows visible before the commit that it hides
        snapshot_id (int | None):
        status (str): submitted | processing | complete | erased | failed
        tombstones_written (int | None):
    """

    dataset_id: str
    error: None | str
    job_id: None | str
    rows_hidden: int | None
    snapshot_id: int | None
    status: str
    tombstones_written: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dataset_id = self.dataset_id

        error: None | str
        error = self.error

        job_id: None | str
        job_id = self.job_id

        rows_hidden: int | None
        rows_hidden = self.rows_hidden

        snapshot_id: int | None
        snapshot_id = self.snapshot_id

        status = self.status

        tombstones_written: int | None
        tombstones_written = self.tombstones_written

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dataset_id": dataset_id,
                "error": error,
                "job_id": job_id,
                "rows_hidden": rows_hidden,
                "snapshot_id": snapshot_id,
                "status": status,
                "tombstones_written": tombstones_written,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dataset_id = d.pop("dataset_id")

        def _parse_error(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        error = _parse_error(d.pop("error"))

        def _parse_job_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        job_id = _parse_job_id(d.pop("job_id"))

        def _parse_rows_hidden(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        rows_hidden = _parse_rows_hidden(d.pop("rows_hidden"))

        def _parse_snapshot_id(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        snapshot_id = _parse_snapshot_id(d.pop("snapshot_id"))

        status = d.pop("status")

        def _parse_tombstones_written(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        tombstones_written = _parse_tombstones_written(d.pop("tombstones_written"))

        privacy_dataset_status = cls(
            dataset_id=dataset_id,
            error=error,
            job_id=job_id,
            rows_hidden=rows_hidden,
            snapshot_id=snapshot_id,
            status=status,
            tombstones_written=tombstones_written,
        )

        privacy_dataset_status.additional_properties = d
        return privacy_dataset_status

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
