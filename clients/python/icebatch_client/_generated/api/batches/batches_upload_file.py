from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.batch_file_out import BatchFileOut
from ...models.problem import Problem
from ...types import File, Response


def _get_kwargs(
    batch_id: str,
    name: str,
    *,
    body: File,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/batches/{batch_id}/files/{name}".format(
            batch_id=quote(str(batch_id), safe=""),
            name=quote(str(name), safe=""),
        ),
    }

    _kwargs["content"] = body.payload
    headers["Content-Type"] = "application/octet-stream"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> BatchFileOut | Problem | None:
    if response.status_code == 201:
        response_201 = BatchFileOut.from_dict(response.json())

        return response_201

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if response.status_code == 507:
        response_507 = Problem.from_dict(response.json())

        return response_507

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[BatchFileOut | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
    body: File,
) -> Response[BatchFileOut | Problem]:
    """Upload one file of the batch (the raw file as the request body).

     The body is streamed to staging, in the batch's format (CSV with a header line, JSON lines
    or Parquet). A second upload of a name replaces the first. 422 for an empty file or a bad
    name (letters, digits, '.', '_', '-').

    Args:
        batch_id (str):
        name (str):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchFileOut | Problem]
    """

    kwargs = _get_kwargs(
        batch_id=batch_id,
        name=name,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
    body: File,
) -> BatchFileOut | Problem | None:
    """Upload one file of the batch (the raw file as the request body).

     The body is streamed to staging, in the batch's format (CSV with a header line, JSON lines
    or Parquet). A second upload of a name replaces the first. 422 for an empty file or a bad
    name (letters, digits, '.', '_', '-').

    Args:
        batch_id (str):
        name (str):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchFileOut | Problem
    """

    return sync_detailed(
        batch_id=batch_id,
        name=name,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
    body: File,
) -> Response[BatchFileOut | Problem]:
    """Upload one file of the batch (the raw file as the request body).

     The body is streamed to staging, in the batch's format (CSV with a header line, JSON lines
    or Parquet). A second upload of a name replaces the first. 422 for an empty file or a bad
    name (letters, digits, '.', '_', '-').

    Args:
        batch_id (str):
        name (str):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BatchFileOut | Problem]
    """

    kwargs = _get_kwargs(
        batch_id=batch_id,
        name=name,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    batch_id: str,
    name: str,
    *,
    client: AuthenticatedClient,
    body: File,
) -> BatchFileOut | Problem | None:
    """Upload one file of the batch (the raw file as the request body).

     The body is streamed to staging, in the batch's format (CSV with a header line, JSON lines
    or Parquet). A second upload of a name replaces the first. 422 for an empty file or a bad
    name (letters, digits, '.', '_', '-').

    Args:
        batch_id (str):
        name (str):
        body (File):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BatchFileOut | Problem
    """

    return (
        await asyncio_detailed(
            batch_id=batch_id,
            name=name,
            client=client,
            body=body,
        )
    ).parsed
