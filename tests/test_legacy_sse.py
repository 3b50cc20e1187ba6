"""The per-event limit of SSE streams, fed as a network splits a stream: events pass whole and unchanged in meaning
wherever the chunks break, and an event over the limit becomes an error for its request (the servers' side of this is
in test_large_results)."""

from __future__ import annotations

import json

import httpx2
import pytest

from knime_mcp.mcp.legacy_sse import EventLimit

LIMIT = 200


def _events(chunks: list[str]) -> list[str]:
    """The data of each event an SSE parser dispatches from what the limit passes on for ``chunks``."""
    limit = EventLimit(lambda: LIMIT)
    passed = "".join(limit.feed(chunk) for chunk in chunks) + limit.end()
    assert passed.endswith("\n\n"), "the limit passes on complete events only"
    events, data = [], []
    for line in passed.split("\n"):
        if line.startswith("data:"):
            data.append(line.removeprefix("data:").removeprefix(" "))
        elif not line and data:
            events.append("\n".join(data))
            data = []
    return events


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 1000])
def test_events_pass_whole_wherever_the_stream_is_cut_and_whatever_line_ends_it_uses(size: int) -> None:
    # Given a stream of two events with CRLF, CR and LF line ends and an empty line between them
    stream = 'event: message\r\ndata: {"id": 1}\r\n\r\n\n: ping\rdata: a\ndata: b\r\r'
    # When it arrives in chunks of any size
    chunks = [stream[i : i + size] for i in range(0, len(stream), size)]
    # Then both events arrive with their data
    assert _events(chunks) == ['{"id": 1}', "a\nb"]


@pytest.mark.parametrize(
    ("reply", "request_id"),
    [
        ('{"jsonrpc":"2.0","id":7,"result":{"text":"%s"}}', 7),
        ('{"result":{"content":[{"id":3,"text":"%s"}]},"jsonrpc":"2.0","id":"call-9"}', "call-9"),
    ],
)
def test_an_event_over_the_limit_becomes_an_error_for_its_request_and_the_next_event_passes(
    reply: str, request_id: object
) -> None:
    # Given a reply over the limit, its id first (Python servers) or last (TypeScript servers), then a small event
    big = "event: message\ndata: " + reply % ("x" * LIMIT) + "\n\n"
    # When it arrives in small chunks
    chunks = [big[i : i + 16] for i in range(0, len(big), 16)] + ["data: next\n\n"]
    first, second = _events(chunks)
    # Then the reply is a JSON-RPC error for that request naming the limit, and the next event is intact
    error = json.loads(first)
    assert error["id"] == request_id
    assert error["error"]["message"] == f"Server-sent event exceeded the {LIMIT} byte limit."
    assert second == "next"


def test_an_event_over_the_limit_answering_no_request_ends_the_stream() -> None:
    # Given an event over the limit with no request id (a notification)
    limit = EventLimit(lambda: LIMIT)
    # When it ends, then the stream ends as httpx2 ends it, since no call could be told
    with pytest.raises(httpx2.SSEError, match="exceeded the 200 byte limit"):
        limit.feed('data: {"jsonrpc":"2.0","method":"notifications/message","params":"' + "x" * LIMIT + '"}\n\n')


def test_the_limit_counts_utf8_bytes() -> None:
    # Given an event of 150 characters that are 300 bytes in UTF-8
    limit = EventLimit(lambda: LIMIT)
    # When it arrives, then it is over the limit
    assert "exceeded" in limit.feed('data: {"id":1,"r":"' + "é" * 150 + '"}\n\n')
