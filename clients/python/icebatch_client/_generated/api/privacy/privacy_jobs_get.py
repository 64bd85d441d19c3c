from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.privacy_job_out import PrivacyJobOut
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    job_id: str,
    *,
    if_none_match: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_none_match, Unset):
        headers["If-None-Match"] = if_none_match

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/privacy/jobs/{job_id}".format(
            job_id=quote(str(job_id), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | PrivacyJobOut | Problem | None:
    if response.status_code == 200:
        response_200 = PrivacyJobOut.from_dict(response.json())

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
) -> Response[Any | PrivacyJobOut | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Response[Any | PrivacyJobOut | Problem]:
    """Status per dataset, tombstones written and rows hidden.

     `submitted → processing → complete` (logically deleted) `→ erased` (physically gone), or
    `failed`; the receipt says what the erasure rewrote and expired. Carries an `ETag`: with
    `If-None-Match` an unchanged job answers `304 Not Modified`.

    Args:
        job_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | PrivacyJobOut | Problem]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        if_none_match=if_none_match,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    job_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Any | PrivacyJobOut | Problem | None:
    """Status per dataset, tombstones written and rows hidden.

     `submitted → processing → complete` (logically deleted) `→ erased` (physically gone), or
    `failed`; the receipt says what the erasure rewrote and expired. Carries an `ETag`: with
    `If-None-Match` an unchanged job answers `304 Not Modified`.

    Args:
        job_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | PrivacyJobOut | Problem
    """

    return sync_detailed(
        job_id=job_id,
        client=client,
        if_none_match=if_none_match,
    ).parsed


async def asyncio_detailed(
    job_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Response[Any | PrivacyJobOut | Problem]:
    """Status per dataset, tombstones written and rows hidden.

     `submitted → processing → complete` (logically deleted) `→ erased` (physically gone), or
    `failed`; the receipt says what the erasure rewrote and expired. Carries an `ETag`: with
    `If-None-Match` an unchanged job answers `304 Not Modified`.

    Args:
        job_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | PrivacyJobOut | Problem]
    """

    kwargs = _get_kwargs(
        job_id=job_id,
        if_none_match=if_none_match,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    job_id: str,
    *,
    client: AuthenticatedClient,
    if_none_match: str | Unset = UNSET,
) -> Any | PrivacyJobOut | Problem | None:
    """Status per dataset, tombstones written and rows hidden.

     `submitted → processing → complete` (logically deleted) `→ erased` (physically gone), or
    `failed`; the receipt says what the erasure rewrote and expired. Carries an `ETag`: with
    `If-None-Match` an unchanged job answers `304 Not Modified`.

    Args:
        job_id (str):
        if_none_match (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | PrivacyJobOut | Problem
    """

    return (
        await asyncio_detailed(
            job_id=job_id,
            client=client,
            if_none_match=if_none_match,
        )
    ).parsed
