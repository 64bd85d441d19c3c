from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.tombstone_page import TombstonePage
from ...types import UNSET, Response, Unset


def _get_kwargs(
    dataset_id: str,
    *,
    namespace: None | str | Unset = UNSET,
    as_of: None | str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: None | str | Unset = UNSET,
) -> dict[str, Any]:
    params: dict[str, Any] = {}

    json_namespace: None | str | Unset
    if isinstance(namespace, Unset):
        json_namespace = UNSET
    else:
        json_namespace = namespace
    params["namespace"] = json_namespace

    json_as_of: None | str | Unset
    if isinstance(as_of, Unset):
        json_as_of = UNSET
    else:
        json_as_of = as_of
    params["as_of"] = json_as_of

    params["limit"] = limit

    json_cursor: None | str | Unset
    if isinstance(cursor, Unset):
        json_cursor = UNSET
    else:
        json_cursor = cursor
    params["cursor"] = json_cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/datasets/{dataset_id}/tombstones".format(
            dataset_id=quote(str(dataset_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | TombstonePage | None:
    if response.status_code == 200:
        response_200 = TombstonePage.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

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
) -> Response[Problem | TombstonePage]:
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
    namespace: None | str | Unset = UNSET,
    as_of: None | str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: None | str | Unset = UNSET,
) -> Response[Problem | TombstonePage]:
    """The tombstones active now (or at `as_of`), oldest first.

     A tombstone hides the rows whose `namespace` column holds its `id` (a batch id for a
    revert, an identity for a GDPR delete) until a vacuum purges them.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        namespace (None | str | Unset): Only tombstones on this column
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        limit (int | Unset): Items per page Default: 1000.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TombstonePage]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        namespace=namespace,
        as_of=as_of,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    namespace: None | str | Unset = UNSET,
    as_of: None | str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: None | str | Unset = UNSET,
) -> Problem | TombstonePage | None:
    """The tombstones active now (or at `as_of`), oldest first.

     A tombstone hides the rows whose `namespace` column holds its `id` (a batch id for a
    revert, an identity for a GDPR delete) until a vacuum purges them.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        namespace (None | str | Unset): Only tombstones on this column
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        limit (int | Unset): Items per page Default: 1000.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TombstonePage
    """

    return sync_detailed(
        dataset_id=dataset_id,
        client=client,
        namespace=namespace,
        as_of=as_of,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    namespace: None | str | Unset = UNSET,
    as_of: None | str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: None | str | Unset = UNSET,
) -> Response[Problem | TombstonePage]:
    """The tombstones active now (or at `as_of`), oldest first.

     A tombstone hides the rows whose `namespace` column holds its `id` (a batch id for a
    revert, an identity for a GDPR delete) until a vacuum purges them.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        namespace (None | str | Unset): Only tombstones on this column
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        limit (int | Unset): Items per page Default: 1000.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TombstonePage]
    """

    kwargs = _get_kwargs(
        dataset_id=dataset_id,
        namespace=namespace,
        as_of=as_of,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    dataset_id: str,
    *,
    client: AuthenticatedClient,
    namespace: None | str | Unset = UNSET,
    as_of: None | str | Unset = UNSET,
    limit: int | Unset = 1000,
    cursor: None | str | Unset = UNSET,
) -> Problem | TombstonePage | None:
    """The tombstones active now (or at `as_of`), oldest first.

     A tombstone hides the rows whose `namespace` column holds its `id` (a batch id for a
    revert, an identity for a GDPR delete) until a vacuum purges them.

    Args:
        dataset_id (str): The dataset's id, or its name (names are unique in your organization; an
            exact id is tried first)
        namespace (None | str | Unset): Only tombstones on this column
        as_of (None | str | Unset): A snapshot id or an ISO 8601 time
        limit (int | Unset): Items per page Default: 1000.
        cursor (None | str | Unset): The `next` of the page before

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TombstonePage
    """

    return (
        await asyncio_detailed(
            dataset_id=dataset_id,
            client=client,
            namespace=namespace,
            as_of=as_of,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
