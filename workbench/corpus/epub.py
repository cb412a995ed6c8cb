"""EPUB books: the chapters in reading (spine) order as clean text, and the title and author.

The archive is checked before ebooklib reads anything. DRM: Adobe and other schemes list encrypted
content in ``META-INF/encryption.xml`` (or add ``META-INF/rights.xml``). Publishers also use
encryption.xml just to obfuscate embedded fonts; such books are readable, so only encrypted non-font
files count. Size: ebooklib unpacks every file into memory, so an archive that would unpack to more
than a book can hold (a "zip bomb": a small file of highly compressed filler) is refused from the sizes
its table of contents declares. Those can lie: ``zipfile`` stops at the declared size and then finds the
checksum wrong, but only after unpacking a whole file into memory at once. So every file is also
unpacked here a piece at a time, and a lying one is refused as damaged without ever being held whole.
"""

from __future__ import annotations

import re
import warnings
import zipfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from lxml import etree

from workbench.corpus.decode import detect_encoding
from workbench.errors import UserError

_FONT_SUFFIXES = (".otf", ".ttf", ".woff", ".woff2", ".eot")
_BLOCK_TAGS = [
    "p", "div", "section", "article", "aside", "header", "footer", "blockquote", "pre", "li", "dt", "dd",
    "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "figure", "figcaption", "hr",
]  # fmt: skip
_DROPPED_TAGS = ["script", "style", "head", "title", "noscript", "svg", "math"]
_LINE_BREAK = "\ue000"  # private-use: survives whitespace collapsing, becomes a newline afterwards
# The same ceiling as a plain-text book: the text and pictures of a real book unpack to far less.
MAX_UNPACKED_BYTES = 100 * 1024 * 1024
MAX_ENTRIES = 10_000  # a long illustrated book has a few hundred files
_MB = 1024 * 1024


@dataclass
class EpubBook:
    title: str
    author: str
    language: str
    text: str


def _encrypted_content(archive: zipfile.ZipFile) -> list[str]:
    try:
        root = etree.fromstring(archive.read("META-INF/encryption.xml"))
    except (KeyError, etree.XMLSyntaxError):
        return []
    uris = [el.get("URI", "") for el in root.iter() if etree.QName(el).localname == "CipherReference"]
    return [uri for uri in uris if not uri.lower().endswith(_FONT_SUFFIXES)]


def _check_size(path: Path, archive: zipfile.ZipFile) -> None:
    entries = archive.infolist()
    if len(entries) > MAX_ENTRIES:
        raise UserError(
            f"{path.name} holds {len(entries):,} files; an EPUB may hold at most {MAX_ENTRIES:,} files "
            "(a book has a few hundred at most), so it was not opened. Check that it is really a single book."
        )
    unpacked = sum(entry.file_size for entry in entries)
    if unpacked > MAX_UNPACKED_BYTES:
        raise UserError(
            f"{path.name} would unpack to {unpacked / _MB:.0f} MB, more than the {MAX_UNPACKED_BYTES // _MB} MB "
            "an EPUB may unpack to, so it was not opened. It is damaged or not a real book; "
            "get a fresh copy from where you found it."
        )


def _check_every_file_unpacks(archive: zipfile.ZipFile) -> None:
    """Unpack each file a piece at a time: zipfile checks its size and checksum at the end."""
    for entry in archive.infolist():
        with archive.open(entry) as member:
            while member.read(1 << 20):
                pass


def check_archive(path: Path) -> None:
    """Refuse an EPUB that is not a readable zip, unpacks to too much, or is protected by DRM."""
    try:
        with zipfile.ZipFile(path) as archive:
            _check_size(path, archive)
            names = set(archive.namelist())
            if "META-INF/rights.xml" in names or _encrypted_content(archive):
                raise UserError(
                    f"{path.name} is protected by DRM (copy protection), so its text cannot be read. "
                    "Use a DRM-free edition of the book (for example from Project Gutenberg)."
                )
            _check_every_file_unpacks(archive)
    except UserError:
        raise
    except Exception as exc:  # zipfile and zlib raise many kinds of errors for damaged archives
        raise UserError(
            f"{path.name} could not be read as an EPUB ({exc}). It may be damaged or only partly downloaded; "
            "get a fresh copy and import it again."
        ) from None


def _parse_html(html: str) -> etree._Element | None:
    """The chapter's tree; None when it is nested deeper than libxml2 will build (it then stops parsing
    and keeps nothing of the text below, silently)."""
    parser = etree.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True)
    root = etree.fromstring(html.encode("utf-8"), parser)
    if any("depth" in str(error.message).lower() for error in parser.error_log):
        return None
    return root if root is not None else etree.Element("html")  # an empty document


class _FlatText(HTMLParser):
    """Text of a chapter read as a stream of tags, at any depth: block tags end a paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _DROPPED_TAGS:
            self.skipping += 1
        elif tag == "br":
            self.parts.append(_LINE_BREAK)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED_TAGS:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def _flat_text(html: str) -> str:
    reader = _FlatText()
    reader.feed(html)
    reader.close()
    return "".join(reader.parts)


def html_to_text(html: bytes | str) -> str:
    """Readable text from one XHTML chapter: paragraphs separated by a blank line, no scripts or styles.

    One pass over the tree, changing only each element's own text: inserting markers as new nodes
    costs time proportional to the number of siblings each time, which is quadratic in a long chapter.
    """
    if isinstance(html, bytes):  # EPUB chapters are UTF-8 or UTF-16; libxml2 alone would guess Latin-1
        html = html.decode(detect_encoding(html), errors="replace")
    root = _parse_html(html)
    if root is None:  # nested too deep for a tree: read it as a stream instead
        text = _flat_text(html)
    else:
        etree.strip_elements(root, *_DROPPED_TAGS, with_tail=False)
        for element in root.iter("br"):
            element.tail = _LINE_BREAK + (element.tail or "")
        for element in root.iter(*_BLOCK_TAGS):
            element.text = "\n\n" + (element.text or "")
            element.tail = "\n\n" + (element.tail or "")
        text = "".join(root.itertext())
    paragraphs = []
    for chunk in re.split(r"\n\s*\n", text):
        paragraph = " ".join(chunk.split())
        paragraph = "\n".join(line.strip() for line in paragraph.split(_LINE_BREAK)).strip()
        if paragraph:
            paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


def _first(book, name: str) -> str:
    values = book.get_metadata("DC", name)
    return " ".join(str(values[0][0]).split()) if values and values[0][0] else ""


def _authors(book) -> str:
    return "; ".join(" ".join(str(value).split()) for value, _ in book.get_metadata("DC", "creator") if value)


def read_epub(path: Path) -> EpubBook:
    from ebooklib import ITEM_DOCUMENT, epub

    path = Path(path)
    check_archive(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ebooklib warns about options it will change in future versions
            book = epub.read_epub(str(path), options={"ignore_ncx": True})
        items = {}
        for item in book.get_items():  # looked up once: ebooklib's get_item_with_id scans every item
            items.setdefault(item.get_id(), item)
        chapters = []
        for idref, *_ in book.spine:
            item = items.get(idref)
            if item is None or item.get_type() != ITEM_DOCUMENT or not item.is_chapter():
                continue  # images, styles, and the navigation document (a table of contents)
            text = html_to_text(item.content)  # the file as it is (get_content() parses and rebuilds it)
            if text:
                chapters.append(text)
    except UserError:
        raise
    except Exception as exc:  # ebooklib and lxml raise many kinds of errors for damaged files
        raise UserError(
            f"{path.name} could not be read as an EPUB ({type(exc).__name__}: {exc}). "
            "It may be damaged; get a fresh copy and import it again."
        ) from None
    return EpubBook(
        title=_first(book, "title"),
        author=_authors(book),
        language=_first(book, "language"),
        text="\n\n".join(chapters) + "\n" if chapters else "",
    )
