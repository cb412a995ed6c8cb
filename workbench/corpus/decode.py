"""Bytes from a file to clean text: the right encoding, one kind of line ending, no binary data.

Encodings are tried in a fixed order: a byte-order mark decides when there is one; otherwise strict
UTF-8, then Windows-1252 (curly quotes and dashes from Word), then Latin-1, which accepts any byte.
Windows-1252 and Latin-1 agree on every printable character Latin-1 has, so trying Windows-1252 first
loses nothing. Because Latin-1 accepts anything, a separate check refuses data that is not text.
A file whose byte-order mark promises an encoding it does not keep (a UTF-8 mark, then bytes from
another encoding pasted in) is refused: guessing would garble one part or the other.
"""

from __future__ import annotations

import codecs
import re

from workbench.errors import UserError

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16: its BOM starts with UTF-16's
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_FALLBACKS = ("utf-8", "cp1252", "latin-1")
# Unicode's control characters (category Cc: U+0000-U+001F and U+007F-U+009F) other than \t \n \v \f \r
_CONTROLS = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# Real books have next to no control characters; random or binary data has about one byte in eight.
MAX_CONTROL_FRACTION = 0.001


def detect_encoding(data: bytes) -> str:
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding
    for encoding in _FALLBACKS:
        try:
            data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return encoding
    return "latin-1"  # not reached: Latin-1 decodes any byte


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def looks_like_text(text: str) -> bool:
    if not text:
        return True
    sample = text[:200_000]
    controls = len(_CONTROLS.findall(sample))
    return controls / len(sample) <= MAX_CONTROL_FRACTION


def _refuse_broken_bom(name: str, encoding: str, error: UnicodeDecodeError) -> UserError:
    before = error.object[: error.start].decode(encoding)  # the codec stopped at the first bad byte
    line = normalize_newlines(before).count("\n") + 1
    label = encoding.removesuffix("-sig").upper()
    return UserError(
        f"{name} starts with a {label} byte-order mark but is not all {label}: line {line:,} has bytes "
        f"that are not {label} (text from another encoding was probably pasted in). Open it in a text editor, "
        "check that line, save it again as UTF-8, and import it again."
    )


def decode_text(data: bytes, name: str) -> str:
    """Decode a text file's bytes, normalise line endings to LF, refuse binary data (naming the file)."""
    encoding = detect_encoding(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:  # only a byte-order mark's encoding can fail; the fallbacks cannot
        raise _refuse_broken_bom(name, encoding, exc) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not looks_like_text(text):
        raise UserError(
            f"{name} does not look like a text file (it contains binary data). "
            "Import plain-text (.txt) or EPUB (.epub) files."
        )
    return normalize_newlines(text)


def remove_nul_characters(text: str, name: str) -> tuple[str, str | None]:
    """The text without NUL characters, and a note for the scholar when there were any."""
    count = text.count("\0")
    if not count:
        return text, None
    what = "1 NUL character" if count == 1 else f"{count:,} NUL characters"
    return text.replace("\0", ""), (
        f"{name} had {what} (invisible zero bytes, left by a damaged copy or a conversion program); "
        "they were removed from the text."
    )
