"""Project Gutenberg plain-text files: the header fields, and the text without header and licence.

Three marker forms occur and are all accepted, with the matching END line:
``*** START OF THIS PROJECT GUTENBERG EBOOK X ***`` (2000s), ``***START OF THE PROJECT GUTENBERG
EBOOK X***`` (older) and ``*** START OF THE PROJECT GUTENBERG EBOOK X ***`` (current). Besides the
marked header and footer, volunteers' credits ("Produced by …") just after the START line and the
"End of the Project Gutenberg EBook of …" line just before the END line are boilerplate too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_MARKER = r"^[ \t]*\*\*\*[ \t]*{kind}[ \t]+OF[ \t]+(?:THIS|THE)[ \t]+PROJECT[ \t]+GUTENBERG[ \t]+E-?BOOK\b.*$"
START_RE = re.compile(_MARKER.format(kind="START"), re.IGNORECASE | re.MULTILINE)
END_RE = re.compile(_MARKER.format(kind="END"), re.IGNORECASE | re.MULTILINE)
# Files from the 1990s: the licence ("small print") comes first and ends with this line.
SMALL_PRINT_END_RE = re.compile(r"^.*\*END\*THE SMALL PRINT!.*$", re.IGNORECASE | re.MULTILINE)
END_OF_EBOOK_RE = re.compile(
    r"^[ \t]*End of (?:the )?Project Gutenberg(?:'s|’s)?(?:[ \t]+E-?Book| E-?text)?\b", re.IGNORECASE | re.MULTILINE
)
CREDIT_RE = re.compile(
    r"^(?:produced by|e-?text prepared by|e-?book prepared by|transcribed (?:from|by)|"
    r"this (?:e-?book|e-?text|file) was (?:produced|prepared)|(?:note:\s*)?(?:project gutenberg|images of the original))",
    re.IGNORECASE,
)
CREDIT_WORDS_RE = re.compile(r"project\s+gutenberg|distributed\s+proofread|pgdp\.net", re.IGNORECASE)
EBOOK_NUMBER_RE = re.compile(r"\bE-?Book\s*#\s*(\d+)", re.IGNORECASE)
FILE_NUMBER_RE = re.compile(r"^(?:pg)?(\d+)(?:-\d+)?(?:\.txt|\.epub)?$", re.IGNORECASE)
MAX_CREDIT_PARAGRAPHS = 4


@dataclass
class GutenbergHeader:
    title: str = ""
    author: str = ""
    language: str = ""
    ebook_number: str | None = None


def looks_like_gutenberg(text: str) -> bool:
    return bool(START_RE.search(text)) or "project gutenberg" in text[:3000].lower()


def has_markers(text: str) -> bool:
    return bool(START_RE.search(text) or SMALL_PRINT_END_RE.search(text))


def _header_region(text: str) -> str:
    start = START_RE.search(text)
    return text[: start.start()] if start else text[:5000]


def _field(header: str, name: str) -> str:
    """A header field, with its indented continuation lines ('Title: Jane Eyre\\n       an Autobiography')."""
    match = re.search(rf"^{name}:[ \t]*(.*)$", header, re.IGNORECASE | re.MULTILINE)
    if not match:
        return ""
    parts = [match.group(1).strip()]
    for line in header[match.end() + 1 :].split("\n"):
        if not line.strip() or not line[0].isspace():
            break
        parts.append(line.strip())
    return _join_title_lines([p for p in parts if p]) if name == "Title" else " ".join(p for p in parts if p)


def _join_title_lines(parts: list[str]) -> str:
    """Header titles wrap their subtitle onto the next line: 'Frankenstein / or The Modern Prometheus'."""
    if not parts:
        return ""
    title = parts[0]
    for part in parts[1:]:
        if re.match(r"or\b", part, re.IGNORECASE) and not title.endswith((",", ";", ":")):
            title += "; " + part
        elif title.endswith((",", ";", ":")):
            title += " " + part
        else:
            title += ": " + part
    return title


def clean_title(title: str) -> str:
    # "Adventures of Huckleberry Finn, Complete": Gutenberg's note that all parts are in one file.
    title = re.sub(r",\s*Complete$", "", title.strip())
    # "A Crooked Path: A Novel": a generic subtitle that catalogues leave out.
    return re.sub(r"(?<=\w)[:;,.]?\s+A Novel\.?$", "", title, flags=re.IGNORECASE)


def parse_header(text: str) -> GutenbergHeader:
    header = _header_region(text)
    number = EBOOK_NUMBER_RE.search(header)
    return GutenbergHeader(
        title=clean_title(_field(header, "Title")),
        author=_field(header, "Author"),
        language=_field(header, "Language"),
        ebook_number=number.group(1) if number else None,
    )


def number_from_file_name(name: str) -> str | None:
    """'pg1342.txt', '1342-0.txt', '1342.txt' -> '1342'."""
    match = FILE_NUMBER_RE.match(name)
    return match.group(1) if match else None


def _drop_credit_paragraphs(body: str) -> str:
    paragraphs = re.split(r"\n[ \t]*\n", body.lstrip("\n"), maxsplit=MAX_CREDIT_PARAGRAPHS)
    dropped = 0
    while dropped < min(MAX_CREDIT_PARAGRAPHS, len(paragraphs) - 1):
        paragraph = paragraphs[dropped].strip()
        if not paragraph:
            dropped += 1
            continue
        if CREDIT_RE.match(paragraph) or CREDIT_WORDS_RE.search(paragraph):
            dropped += 1
            continue
        break
    return "\n\n".join(paragraphs[dropped:])


def strip_boilerplate(text: str) -> str:
    """The book's own text: after the START line (or the old 'small print'), before the END line."""
    start = START_RE.search(text) or SMALL_PRINT_END_RE.search(text)
    body = text[start.end() :] if start else text
    if start is not None and not start.group(0).rstrip().endswith("***"):
        # A long title wrapped the marker onto a second line ending in '***'.
        first_line, _, rest = body.lstrip("\n").partition("\n")
        if first_line.rstrip().endswith("***"):
            body = rest
    end = END_RE.search(body)
    if end:
        body = body[: end.start()]
    end_of_ebook = None
    for end_of_ebook in END_OF_EBOOK_RE.finditer(body):  # noqa: B007 -- the last match is wanted
        pass
    if end_of_ebook is not None and len(body) - end_of_ebook.start() < 2000:
        body = body[: end_of_ebook.start()]
    if start is not None:
        body = _drop_credit_paragraphs(body)
    return body.strip("\n").rstrip() + "\n"
