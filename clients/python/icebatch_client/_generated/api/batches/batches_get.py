from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_out import BatchOut
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    batch_id: str,
    *,
    if_none_match: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_none_match, Unset):
        headers["If-None-Match"] = if_none_match

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/batches/{batch_id}".format(
            batch_id=quote(str(batch_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | BatchOut | Problem | None:
    if response.status_code == 200:
        response_200 = BatchOut.from_dict(response.json())

        return response_200

    if response.status_code == 304:
        response_304 = cast(Any, None)
        return response_304

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
) -> Response[Any | BatchOut | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    batch_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Response[Any | BatchOut | Problem]:
    """Status, counts, errors, snapshot id and progress of a batch.

     Poll it while the batch is 'staged' or 'processing'; a 'failed' batch lists its row-level
    errors (`errors`: file, row, field, value, reason). Poll it cheaply: send the `ETag` of the
    last answer as `If-None-Match`; while nothing
    changed the answer is `304 Not Modified`, without a body.

    Args:
        batch_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | BatchOut | Problem]
    """

    kwargs = _get_kwargs(
        batch_id=batch_id,
        if_none_match=if_none_match,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    batch_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Any | BatchOut | Problem | None:
    """Status, counts, errors, snapshot id and progress of a batch.

     Poll it while the batch is 'staged' or 'processing'; a 'failed' batch lists its row-level
    errors (`errors`: file, row, field, value, reason). Poll it cheaply: send the `ETag` of the
    last answer as `If-None-Match`; while nothing
    changed the answer is `304 Not Modified`, without a body.

    Args:
        batch_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | BatchOut | Problem
    """

    return sync_detailed(
        batch_id=batch_id,
        client=client,
        if_none_match=if_none_match,
    ).parsed


async def asyncio_detailed(
    batch_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Response[Any | BatchOut | Problem]:
    """Status, counts, errors, snapshot id and progress of a batch.

     Poll it while the batch is 'staged' or 'processing'; a 'failed' batch lists its row-level
    errors (`errors`: file, row, field, value, reason). Poll it cheaply: send the `ETag` of the
    last answer as `If-None-Match`; while nothing
    changed the answer is `304 Not Modified`, without a body.

    Args:
        batch_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | BatchOut | Problem]
    """

    kwargs = _get_kwargs(
        batch_id=batch_id,
        if_none_match=if_none_match,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    batch_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Any | BatchOut | Problem | None:
    """Status, counts, errors, snapshot id and progress of a batch.

     Poll it while the batch is 'staged' or 'processing'; a 'failed' batch lists its row-level
    errors (`errors`: file, row, field, value, reason). Poll it cheaply: send the `ETag` of the
    last answer as `If-None-Match`; while nothing
    changed the answer is `304 Not Modified`, without a body.

    Args:
        batch_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | BatchOut | Problem
    """

    return (
        await asyncio_detailed(
            batch_id=batch_id,
            client=client,
            if_none_match=if_none_match,
        )
    ).parsed
