from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.cdc_events_post_json_body_item import CdcEventsPostJsonBodyItem
from ...models.events_accepted import EventsAccepted
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    body: list[CdcEventsPostJsonBodyItem],
    idempotency_key: None | str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/cdc/events",
    }

    _kwargs["json"] = []
    for body_item_data in body:
        body_item = body_item_data.to_dict()
        _kwargs["json"].append(body_item)

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EventsAccepted | Problem | None:
    if response.status_code == 202:
        response_202 = EventsAccepted.from_dict(response.json())

        return response_202

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

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

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[EventsAccepted | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: list[CdcEventsPostJsonBodyItem],
    idempotency_key: None | str | Unset = UNSET,
) -> Response[EventsAccepted | Problem]:
    """Accept change events; 202 once they are durable, with their sequence numbers.

     Each event gets the tenant's next sequence number (the events of one request are
    consecutive). A bad line is a 422 naming every bad line and field (`errors`), and nothing
    of the request is accepted; an event older than the staging retention window is one.
    The same `Idempotency-Key` accepts a body once; without one a retry is new events.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (list[CdcEventsPostJsonBodyItem]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventsAccepted | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: list[CdcEventsPostJsonBodyItem],
    idempotency_key: None | str | Unset = UNSET,
) -> EventsAccepted | Problem | None:
    """Accept change events; 202 once they are durable, with their sequence numbers.

     Each event gets the tenant's next sequence number (the events of one request are
    consecutive). A bad line is a 422 naming every bad line and field (`errors`), and nothing
    of the request is accepted; an event older than the staging retention window is one.
    The same `Idempotency-Key` accepts a body once; without one a retry is new events.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (list[CdcEventsPostJsonBodyItem]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventsAccepted | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: list[CdcEventsPostJsonBodyItem],
    idempotency_key: None | str | Unset = UNSET,
) -> Response[EventsAccepted | Problem]:
    """Accept change events; 202 once they are durable, with their sequence numbers.

     Each event gets the tenant's next sequence number (the events of one request are
    consecutive). A bad line is a 422 naming every bad line and field (`errors`), and nothing
    of the request is accepted; an event older than the staging retention window is one.
    The same `Idempotency-Key` accepts a body once; without one a retry is new events.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (list[CdcEventsPostJsonBodyItem]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EventsAccepted | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: list[CdcEventsPostJsonBodyItem],
    idempotency_key: None | str | Unset = UNSET,
) -> EventsAccepted | Problem | None:
    """Accept change events; 202 once they are durable, with their sequence numbers.

     Each event gets the tenant's next sequence number (the events of one request are
    consecutive). A bad line is a 422 naming every bad line and field (`errors`), and nothing
    of the request is accepted; an event older than the staging retention window is one.
    The same `Idempotency-Key` accepts a body once; without one a retry is new events.

    Args:
        idempotency_key (None | str | Unset): Any unique string; a retry with the same key gets
            the first response.
        body (list[CdcEventsPostJsonBodyItem]):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EventsAccepted | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
