from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.changes_read_format import ChangesReadFormat
from ...models.changes_read_kind import ChangesReadKind
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    dataset_id: str,
    *,
    kind: ChangesReadKind,
    from_snapshot: int | None | Unset = UNSET,
    to_snapshot: int | None | Unset = UNSET,
    since: None | str | Unset = UNSET,
    until: None | str | Unset = UNSET,
    format_: ChangesReadFormat | Unset = ChangesReadFormat.JSONL,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_kind = kind.value
    params["kind"] = json_kind

    json_from_snapshot: int | None | Unset
    if isinstance(from_snapshot, Unset):
        json_from_snapshot = UNSET
    else:
        json_from_snapshot = from_snapshot
    params["from_snapshot"] = json_from_snapshot

    json_to_snapshot: int | None | Unset
    if isinstance(to_snapshot, Unset):
        json_to_snapshot = UNSET
    else:
        json_to_snapshot = to_snapshot
    params["to_snapshot"] = json_to_snapshot

    json_since: None | str | Unset
    if isinstance(since, Unset):
        json_since = UNSET
    else:
        json_since = since
    params["since"] = json_since

    json_until: None | str | Unset
    if isinstance(until, Unset):
        json_until = UNSET
    else:
        json_until = until
    params["until"] = json_until

    json_format_: str | Unset = UNSET
    if not isinstance(format_, Unset):
        json_format_ = format_.value

    params["format"] = json_format_

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/datasets/{dataset_id}/changes".format(
            dataset_id=quote(str(dataset_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | None:
    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 410:
        response_410 = Problem.from_dict(response.json())

        return response_410

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    kind: ChangesReadKind,
    from_snapshot: int | None | Unset = UNSET,
    to_snapshot: int | None | Unset = UNSET,
    since: None | str | Unset = UNSET,
    until: None | str | Unset = UNSET,
    format_: ChangesReadFormat | Unset = ChangesReadFormat.JSONL,
) -> Response[Problem]:
    """Stream the rows appended or deleted between two snapshots (from excluded, to included).

     No start means the empty table before the first snapshot; no end means the current
    snapshot. The resolved range is in `X-Icebatch-From-Snapshot` / `X-Icebatch-To-Snapshot`:
    the next increment starts from the `To` of this one.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        kind (ChangesReadKind):
        from_snapshot (int | None | Unset): Start after this snapshot
        to_snapshot (int | None | Unset): End at this snapshot
        since (None | str | Unset): ISO 8601: start after the snapshot then
        until (None | str | Unset): ISO 8601: end at the snapshot then
        format_ (ChangesReadFormat | Unset):  Default: ChangesReadFormat.JSONL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        kind=kind,
        from_snapshot=from_snapshot,
        to_snapshot=to_snapshot,
        since=since,
        until=until,
        format_=format_,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    kind: ChangesReadKind,
    from_snapshot: int | None | Unset = UNSET,
    to_snapshot: int | None | Unset = UNSET,
    since: None | str | Unset = UNSET,
    until: None | str | Unset = UNSET,
    format_: ChangesReadFormat | Unset = ChangesReadFormat.JSONL,
) -> Problem | None:
    """Stream the rows appended or deleted between two snapshots (from excluded, to included).

     No start means the empty table before the first snapshot; no end means the current
    snapshot. The resolved range is in `X-Icebatch-From-Snapshot` / `X-Icebatch-To-Snapshot`:
    the next increment starts from the `To` of this one.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        kind (ChangesReadKind):
        from_snapshot (int | None | Unset): Start after this snapshot
        to_snapshot (int | None | Unset): End at this snapshot
        since (None | str | Unset): ISO 8601: start after the snapshot then
        until (None | str | Unset): ISO 8601: end at the snapshot then
        format_ (ChangesReadFormat | Unset):  Default: ChangesReadFormat.JSONL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem
    """

    return sync_detailed(
        dataset_id=dataset_id,
        client=client,
        kind=kind,
        from_snapshot=from_snapshot,
        to_snapshot=to_snapshot,
        since=since,
        until=until,
        format_=format_,
    ).parsed


async def asyncio_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    kind: ChangesReadKind,
    from_snapshot: int | None | Unset = UNSET,
    to_snapshot: int | None | Unset = UNSET,
    since: None | str | Unset = UNSET,
    until: None | str | Unset = UNSET,
    format_: ChangesReadFormat | Unset = ChangesReadFormat.JSONL,
) -> Response[Problem]:
    """Stream the rows appended or deleted between two snapshots (from excluded, to included).

     No start means the empty table before the first snapshot; no end means the current
    snapshot. The resolved range is in `X-Icebatch-From-Snapshot` / `X-Icebatch-To-Snapshot`:
    the next increment starts from the `To` of this one.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        kind (ChangesReadKind):
        from_snapshot (int | None | Unset): Start after this snapshot
        to_snapshot (int | None | Unset): End at this snapshot
        since (None | str | Unset): ISO 8601: start after the snapshot then
        until (None | str | Unset): ISO 8601: end at the snapshot then
        format_ (ChangesReadFormat | Unset):  Default: ChangesReadFormat.JSONL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        kind=kind,
        from_snapshot=from_snapshot,
        to_snapshot=to_snapshot,
        since=since,
        until=until,
        format_=format_,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    kind: ChangesReadKind,
    from_snapshot: int | None | Unset = UNSET,
    to_snapshot: int | None | Unset = UNSET,
    since: None | str | Unset = UNSET,
    until: None | str | Unset = UNSET,
    format_: ChangesReadFormat | Unset = ChangesReadFormat.JSONL,
) -> Problem | None:
    """Stream the rows appended or deleted between two snapshots (from excluded, to included).

     No start means the empty table before the first snapshot; no end means the current
    snapshot. The resolved range is in `X-Icebatch-From-Snapshot` / `X-Icebatch-To-Snapshot`:
    the next increment starts from the `To` of this one.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        kind (ChangesReadKind):
        from_snapshot (int | None | Unset): Start after this snapshot
        to_snapshot (int | None | Unset): End at this snapshot
        since (None | str | Unset): ISO 8601: start after the snapshot then
        until (None | str | Unset): ISO 8601: end at the snapshot then
        format_ (ChangesReadFormat | Unset):  Default: ChangesReadFormat.JSONL.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem
    """

    return (
        await asyncio_detailed(
            dataset_id=dataset_id,
            client=client,
            kind=kind,
            from_snapshot=from_snapshot,
            to_snapshot=to_snapshot,
            since=since,
            until=until,
            format_=format_,
        )
    ).parsed
