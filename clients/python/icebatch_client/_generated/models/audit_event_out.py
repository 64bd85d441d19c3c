from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.audit_event_out_target import AuditEventOutTarget


T = TypeVar("T", bound="AuditEventOut")


@_attrs_define
class AuditEventOut:
    """
    Attributes:
        action (str): A stable name, e.g. `datasets.create`, `batches.act.REVERT`
        at (datetime.datetime):
        key_id (None | str): The id of the key that called (never the key)
        method (str):
        org (str):
        outcome (str): ok | error | denied
        path (str):
        request_id (None | str):
        seq (int): Position in the trail (larger is newer)
        status_code (int):
        target (AuditEventOutTarget): The ids of the path, and `result_id`: the id the response returned
    """

    action: str
    at: datetime.datetime
    key_id: None | str
    method: str
    org: str
    outcome: str
    path: str
    request_id: None | str
    seq: int
    status_code: int
    target: AuditEventOutTarget
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        at = self.at.isoformat()

        key_id: None | str
        key_id = self.key_id

        method = self.method

        org = self.org

        outcome = self.outcome

        path = self.path

        request_id: None | str
        request_id = self.request_id

        seq = self.seq

        status_code = self.status_code

        target = self.target.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "at": at,
                "key_id": key_id,
                "method": method,
                "org": org,
                "outcome": outcome,
                "path": path,
                "request_id": request_id,
                "seq": seq,
                "status_code": status_code,
                "target": target,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.audit_event_out_target import AuditEventOutTarget  # noqa: PLC0415

        d = dict(src_dict)
        action = d.pop("action")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        def _parse_key_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        key_id = _parse_key_id(d.pop("key_id"))

        method = d.pop("method")

        org = d.pop("org")

        outcome = d.pop("outcome")

        path = d.pop("path")

        def _parse_request_id(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        request_id = _parse_request_id(d.pop("request_id"))

        seq = d.pop("seq")

        status_code = d.pop("status_code")

        target = AuditEventOutTarget.from_dict(d.pop("target"))

        audit_event_out = cls(
            action=action,
            at=at,
            key_id=key_id,
            method=method,
            org=org,
            outcome=outcome,
            path=path,
            request_id=request_id,
            seq=seq,
            status_code=status_code,
            target=target,
        )

        audit_event_out.additional_properties = d
        return audit_event_out

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
