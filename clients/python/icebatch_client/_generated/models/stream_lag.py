from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="StreamLag")


@_attrs_define
class StreamLag:
    """A Debezium Redis stream as the tenant's consumer group sees it.

    Attributes:
        dead_letters (int): Entries set aside as unreadable, in `<stream>:icebatch-dead` with the reason
        length (int): Entries in the stream (XLEN)
        oldest_pending_age_seconds (float): Age of the oldest delivered, unacknowledged entry (by its stream id)
        oldest_undelivered_age_seconds (float): Age of the oldest entry not yet delivered (by its stream id)
        pending (int): Delivered to a consumer, not yet acknowledged
        stream (str):
        undelivered (int | None): Entries not yet delivered to the group (null: Redis cannot tell)
        error (None | str | Unset): Why the stream could not be read
    """

    dead_letters: int
    length: int
    oldest_pending_age_seconds: float
    oldest_undelivered_age_seconds: float
    pending: int
    stream: str
    undelivered: int | None
    error: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dead_letters = self.dead_letters

        length = self.length

        oldest_pending_age_seconds = self.oldest_pending_age_seconds

        oldest_undelivered_age_seconds = self.oldest_undelivered_age_seconds

        pending = self.pending

        stream = self.stream

        undelivered: int | None
        undelivered = self.undelivered

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dead_letters": dead_letters,
                "length": length,
                "oldest_pending_age_seconds": oldest_pending_age_seconds,
                "oldest_undelivered_age_seconds": oldest_undelivered_age_seconds,
                "pending": pending,
                "stream": stream,
                "undelivered": undelivered,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dead_letters = d.pop("dead_letters")

        length = d.pop("length")

        oldest_pending_age_seconds = d.pop("oldest_pending_age_seconds")

        oldest_undelivered_age_seconds = d.pop("oldest_undelivered_age_seconds")

        pending = d.pop("pending")

        stream = d.pop("stream")

        def _parse_undelivered(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        undelivered = _parse_undelivered(d.pop("undelivered"))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        stream_lag = cls(
            dead_letters=dead_letters,
            length=length,
            oldest_pending_age_seconds=oldest_pending_age_seconds,
            oldest_undelivered_age_seconds=oldest_undelivered_age_seconds,
            pending=pending,
            stream=stream,
            undelivered=undelivered,
            error=error,
        )

        stream_lag.additional_properties = d
        return stream_lag

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
