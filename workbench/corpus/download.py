"""Fetching a book's plain text from Project Gutenberg (or a mirror) by its ebook number.

The mirror's base address is configurable (``--mirror``, or the ``PALIMPSEST_GUTENBERG_MIRROR``
environment variable); the usual file locations are tried in order.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from workbench.errors import UserError
from workbench.models.secrets import is_web_address, shown_address
from workbench.progress import TaskState
from workbench.version import __version__

DEFAULT_MIRROR = "https://www.gutenberg.org"
MIRROR_ENV = "PALIMPSEST_GUTENBERG_MIRROR"
FILE_PATHS = ("/cache/epub/{id}/pg{id}.txt", "/files/{id}/{id}-0.txt", "/files/{id}/{id}.txt")
TIMEOUT_S = 30.0
CHUNK = 64 * 1024


@dataclass
class Downloaded:
    gutenberg_id: int
    url: str
    data: bytes


def mirror_base(mirror: str | None = None) -> str:
    """The mirror's address, checked; it may hold a user name and password, which go with the requests only
    (messages and the books' records show the address without them: ``secrets.shown_address``)."""
    base = (mirror or os.environ.get(MIRROR_ENV) or DEFAULT_MIRROR).strip().rstrip("/")
    if not is_web_address(base):
        raise UserError(f"'{shown_address(base)}' is not a web address. Write the mirror as, e.g., {DEFAULT_MIRROR}.")
    return base


def _host(base: str) -> str:
    parts = urlsplit(base)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


def parse_gutenberg_id(value: object) -> int:
    text = str(value).strip().lower().removeprefix("pg").removeprefix("#")
    if not text.isdigit() or int(text) <= 0:
        raise UserError(f"'{value}' is not a Project Gutenberg book number. Use the number from the book's page, e.g. 1342.")
    return int(text)


def _read_limited(response: httpx.Response, max_bytes: int, book_id: int, state: TaskState | None) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_bytes(CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise UserError(
                f"Gutenberg book {book_id} is larger than {max_bytes // (1024 * 1024)} MB, too large to import. "
                "Check the book number."
            )
        chunks.append(chunk)
        if state is not None:
            state.check()
    return b"".join(chunks)


def fetch_gutenberg_text(
    book_id: int | str,
    *,
    mirror: str | None = None,
    max_bytes: int,
    state: TaskState | None = None,
    timeout_s: float = TIMEOUT_S,
) -> Downloaded:
    book_id = parse_gutenberg_id(book_id)
    base = mirror_base(mirror)
    host = _host(base)  # never the user name and password
    problems: list[str] = []
    headers = {"User-Agent": f"Palimpsest/{__version__} (literary research workbench)"}
    try:
        with httpx.Client(follow_redirects=True, timeout=timeout_s, headers=headers) as client:
            for path in FILE_PATHS:
                url = base + path.format(id=book_id)
                with client.stream("GET", url) as response:
                    if response.status_code in (404, 410):
                        continue
                    if response.status_code != 200:
                        problems.append(f"{response.status_code} {response.reason_phrase}")
                        continue
                    return Downloaded(book_id, shown_address(url), _read_limited(response, max_bytes, book_id, state))
    except httpx.TimeoutException:
        raise UserError(
            f"{host} did not answer in time while fetching Gutenberg book {book_id}. "
            "Try again later, or use another mirror."
        ) from None
    except httpx.TransportError as exc:
        raise UserError(
            f"Could not reach {host} to fetch Gutenberg book {book_id} ({exc.__class__.__name__}). "
            "Check your internet connection or the mirror address, then try again."
        ) from None
    if problems:
        raise UserError(
            f"{host} refused to send Gutenberg book {book_id} (it answered {problems[0]}). "
            "Try again later, or use another mirror."
        )
    raise UserError(
        f"{host} has no plain-text file for Gutenberg book {book_id}. Check the number on the book's page "
        "(some books exist only as audio or images)."
    )
