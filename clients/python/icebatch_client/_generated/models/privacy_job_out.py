from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.privacy_dataset_status import PrivacyDatasetStatus
    from ..models.privacy_job_out_receipt_type_0 import PrivacyJobOutReceiptType0


T = TypeVar("T", bound="PrivacyJobOut")


@_attrs_define
class PrivacyJobOut:
    """
    Attributes:
        column (str):
        completed_at (datetime.datetime | None):
        created_at (datetime.datetime):
        datasets (list[PrivacyDatasetStatus]):
        id (str):
        rows_hidden (int):
        status (str): submitted → processing → complete (logically deleted) → erased (physically gone from every
            retained file), or failed
        tombstones_written (int):
        value_count (int):
        erased_at (datetime.datetime | None | Unset):
        receipt (None | PrivacyJobOutReceiptType0 | Unset): Once erased: {files_rewritten, snapshots_expired,
            last_physical_removal_at, datasets: {id: {...}}}
    """

    column: str
    completed_at: datetime.datetime | None
    created_at: datetime.datetime
    datasets: list[PrivacyDatasetStatus]
    id: str
    rows_hidden: int
    status: str
    tombstones_written: int
    value_count: int
    erased_at: datetime.datetime | None | Unset = UNSET
    receipt: None | PrivacyJobOutReceiptType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.privacy_job_out_receipt_type_0 import (
            PrivacyJobOutReceiptType0,  # noqa: PLC0415
        )

        column = self.column

        completed_at: None | str
        if isinstance(self.completed_at, datetime.datetime):
            completed_at = self.completed_at.isoformat()
        else:
            completed_at = self.completed_at

        created_at = self.created_at.isoformat()

        datasets = []
        for datasets_item_data in self.datasets:
            datasets_item = datasets_item_data.to_dict()
            datasets.append(datasets_item)

        id = self.id

        rows_hidden = self.rows_hidden

        status = self.status

        tombstones_written = self.tombstones_written

        value_count = self.value_count

        erased_at: None | str | Unset
        if isinstance(self.erased_at, Unset):
            erased_at = UNSET
        elif isinstance(self.erased_at, datetime.datetime):
            erased_at = self.erased_at.isoformat()
        else:
            erased_at = self.erased_at

        receipt: dict[str, Any] | None | Unset
        if isinstance(self.receipt, Unset):
            receipt = UNSET
        elif isinstance(self.receipt, PrivacyJobOutReceiptType0):
            receipt = self.receipt.to_dict()
        else:
            receipt = self.receipt

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "column": column,
                "completed_at": completed_at,
                "created_at": created_at,
                "datasets": datasets,
                "id": id,
                "rows_hidden": rows_hidden,
                "status": status,
                "tombstones_written": tombstones_written,
                "value_count": value_count,
            }
        )
        if erased_at is not UNSET:
            field_dict["erased_at"] = erased_at
        if receipt is not UNSET:
            field_dict["receipt"] = receipt

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.privacy_dataset_status import (
            PrivacyDatasetStatus,  # noqa: PLC0415
        )
        from ..models.privacy_job_out_receipt_type_0 import (
            PrivacyJobOutReceiptType0,  # noqa: PLC0415
        )

        d = dict(src_dict)
        column = d.pop("column")

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

        datasets = []
        _datasets = d.pop("datasets")
        for datasets_item_data in _datasets:
            datasets_item = PrivacyDatasetStatus.from_dict(datasets_item_data)

            datasets.append(datasets_item)

        id = d.pop("id")

        rows_hidden = d.pop("rows_hidden")

        status = d.pop("status")

        tombstones_written = d.pop("tombstones_written")

        value_count = d.pop("value_count")

        def _parse_erased_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                erased_at_type_0 = datetime.datetime.fromisoformat(data)

                return erased_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        erased_at = _parse_erased_at(d.pop("erased_at", UNSET))

        def _parse_receipt(data: object) -> None | PrivacyJobOutReceiptType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                receipt_type_0 = PrivacyJobOutReceiptType0.from_dict(data)

                return receipt_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | PrivacyJobOutReceiptType0 | Unset, data)

        receipt = _parse_receipt(d.pop("receipt", UNSET))

        privacy_job_out = cls(
            column=column,
            completed_at=completed_at,
            created_at=created_at,
            datasets=datasets,
            id=id,
            rows_hidden=rows_hidden,
            status=status,
            tombstones_written=tombstones_written,
            value_count=value_count,
            erased_at=erased_at,
            receipt=receipt,
        )

        privacy_job_out.additional_properties = d
        return privacy_job_out

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
