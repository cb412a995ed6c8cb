"""EPUB: reading order, clean paragraphs, metadata; DRM and damaged files refused with the file's name."""

import struct
import tracemalloc
import zipfile

import pytest

from tests.fixtures.books import EpubSpec, add_encryption, build_epub
from workbench.corpus.epub import html_to_text, read_epub
from workbench.errors import UserError


def test_text_follows_the_spine_not_the_file_order(tmp_path):
    book = read_epub(build_epub(tmp_path / "b.epub", spine_order=[1, 0]))
    assert book.text.index("Chapter Two") < book.text.index("Chapter One")


def test_the_navigation_document_is_not_part_of_the_text(tmp_path):
    book = read_epub(build_epub(tmp_path / "b.epub"))
    assert book.text.startswith("Chapter One\n\nEliza opened the first letter.")
    assert book.text.count("Chapter One") == 1


def test_title_author_and_clean_paragraphs(tmp_path):
    book = read_epub(build_epub(tmp_path / "b.epub"))
    assert (book.title, book.author, book.language) == ("The Orchard Letters", "Honora Vale", "en")
    assert "Eliza opened the first letter.\n\nIt spoke of the orchard in winter." in book.text
    assert "Tobias read the second\nby candle light." in book.text
    assert "tracking" not in book.text and "color" not in book.text


def test_html_whitespace_collapses_inside_paragraphs():
    html = "<html><head><title>x</title></head><body><p>One\n   two</p>\n<div>three</div></body></html>"
    assert html_to_text(html) == "One two\n\nthree"


def test_an_encrypted_epub_is_refused_as_drm(tmp_path):
    path = add_encryption(build_epub(tmp_path / "locked.epub"))
    with pytest.raises(UserError) as info:
        read_epub(path)
    assert "locked.epub" in str(info.value) and "DRM" in str(info.value)


def test_rights_xml_means_drm(tmp_path):
    path = build_epub(tmp_path / "adobe.epub")
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("META-INF/rights.xml", "<rights/>")
    with pytest.raises(UserError, match="adobe.epub is protected by DRM"):
        read_epub(path)


def test_only_obfuscated_fonts_is_not_drm(tmp_path):
    path = add_encryption(build_epub(tmp_path / "fonts.epub", EpubSpec(title="Fonts")),
                          uri="EPUB/fonts/serif.otf", algorithm="http://www.idpf.org/2008/embedding")
    assert read_epub(path).title == "Fonts"


def test_a_damaged_epub_is_refused_naming_the_file(tmp_path):
    good = build_epub(tmp_path / "good.epub").read_bytes()
    broken = tmp_path / "broken.epub"
    broken.write_bytes(good[: len(good) // 2])
    with pytest.raises(UserError) as info:
        read_epub(broken)
    assert "broken.epub could not be read as an EPUB" in str(info.value)


# ---------------------------------------------------------------------------------------------- hostile EPUBs
def _add_entries(path, entries: dict[str, int]):
    """Add files of the given unpacked sizes (spaces: they compress to almost nothing) to an EPUB, in
    place of the files of the same names."""
    with zipfile.ZipFile(path) as archive:
        kept = [(info, archive.read(info)) for info in archive.infolist() if info.filename not in entries]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for info, data in kept:
            archive.writestr(info, data)
        for name, size in entries.items():
            with archive.open(name, "w", force_zip64=size >= 1 << 32) as out:
                chunk = b" " * (1 << 20)
                for start in range(0, size, len(chunk)):
                    out.write(chunk[: size - start])
    return path


@pytest.mark.timeout(60)  # the quadratic extraction took about eight minutes on this chapter
def test_an_epub_chapter_of_sixty_thousand_paragraphs_is_read_whole_in_linear_time(tmp_path):
    count = 60_000
    paragraphs = "".join(f"<p>Paragraph {i} of the <i>long</i> chapter.</p>" for i in range(count))
    book = read_epub(build_epub(tmp_path / "long.epub", EpubSpec(chapters=[("The Long Chapter", paragraphs)])))
    lines = book.text.rstrip("\n").split("\n\n")
    assert lines[0] == "The Long Chapter"
    assert lines[1:] == [f"Paragraph {i} of the long chapter." for i in range(count)]


def test_an_epub_that_unpacks_to_more_than_100_mb_is_refused_before_it_is_unpacked(tmp_path):
    path = _add_entries(build_epub(tmp_path / "bomb.epub"), {"EPUB/filler.xhtml": 101 * 1024 * 1024})
    assert path.stat().st_size < 1024 * 1024  # a small file that unpacks to a hundred times its size
    with pytest.raises(UserError) as info:
        read_epub(path)
    message = str(info.value)
    assert "bomb.epub" in message and "101 MB" in message and "100 MB" in message


def _understate_size(path, name: str, size: int):
    """Rewrite the archive's record of ``name`` to claim it unpacks to ``size`` bytes (both copies of it:
    the local header before the data, and the central directory at the end)."""
    data = bytearray(path.read_bytes())
    end = data.rindex(b"PK\x05\x06")  # end of central directory record
    offset = struct.unpack_from("<I", data, end + 16)[0]
    while data[offset : offset + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, offset + 28)
        if data[offset + 46 : offset + 46 + name_length] == name.encode():
            struct.pack_into("<I", data, offset + 24, size)
            local = struct.unpack_from("<I", data, offset + 42)[0]
            struct.pack_into("<I", data, local + 22, size)
            path.write_bytes(bytes(data))
            return path
        offset += 46 + name_length + extra_length + comment_length
    raise AssertionError(f"{name} is not in {path}")


def test_an_epub_that_understates_its_unpacked_size_is_refused_without_unpacking_it_into_memory(tmp_path):
    path = _add_entries(build_epub(tmp_path / "liar.epub"), {"EPUB/chap_1.xhtml": 300 * 1024 * 1024})
    _understate_size(path, "EPUB/chap_1.xhtml", 1000)  # a chapter, so that ebooklib reads it
    tracemalloc.start()
    try:
        with pytest.raises(UserError) as info:
            read_epub(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "liar.epub could not be read as an EPUB" in str(info.value)
    assert peak < 20 * 1024 * 1024  # not the 300 MB it really holds


def test_an_epub_of_more_than_ten_thousand_files_is_refused(tmp_path):
    path = build_epub(tmp_path / "crowded.epub")
    with zipfile.ZipFile(path, "a") as archive:
        for i in range(10_001):
            archive.writestr(f"EPUB/images/{i}.png", b"")
    with pytest.raises(UserError) as info:
        read_epub(path)
    message = str(info.value)
    assert "crowded.epub" in message and "10,0" in message and "10,000 files" in message


def test_an_epub_within_the_limits_keeps_its_large_pictures(tmp_path):
    path = _add_entries(build_epub(tmp_path / "illustrated.epub"), {"EPUB/images/plate.png": 20 * 1024 * 1024})
    assert read_epub(path).text.startswith("Chapter One")


def _replace_in_archive(path, old: bytes, new: bytes) -> None:
    """Put markup into a chapter as written (ebooklib's own writer rebuilds chapters and drops deep ones)."""
    with zipfile.ZipFile(path) as archive:
        entries = [(info, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w") as archive:
        for info, data in entries:
            archive.writestr(info, data.replace(old, new))


@pytest.mark.parametrize("depth", [300, 5_000, 40_000])
def test_a_deeply_nested_chapter_is_read_whole(tmp_path, depth):
    """libxml2 stops building a tree 256 elements deep and keeps nothing below: such a book was said to have
    no text at all."""
    spec = EpubSpec(chapters=[("Chapter One", "<p>PLACE</p><p>The end<br/>of the book.</p><style>p {}</style>")])
    path = build_epub(tmp_path / "deep.epub", spec)
    nested = "<div>" * depth + "<p>Eliza read on, <i>deep</i> in the letters.</p>" + "</div>" * depth
    _replace_in_archive(path, b"<p>PLACE</p>", nested.encode())
    book = read_epub(path)
    assert book.text == "Chapter One\n\nEliza read on, deep in the letters.\n\nThe end\nof the book.\n"
