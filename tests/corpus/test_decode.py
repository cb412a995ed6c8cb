"""Text files in the encodings scholars have: the right characters, LF line endings, binary refused."""

import random

import pytest

from tests.fixtures.books import LATIN1_SENTENCE, SAMPLE_SENTENCE
from workbench.corpus.decode import decode_text, detect_encoding, remove_nul_characters
from workbench.errors import UserError


@pytest.mark.parametrize("variant", ["utf8", "bom", "crlf", "cp1252"])
def test_curly_quotes_and_accents_survive_every_encoding(text_variants, variant):
    path = text_variants[variant]
    text = decode_text(path.read_bytes(), path.name)
    assert text.startswith(SAMPLE_SENTENCE)
    assert "\r" not in text and "\ufeff" not in text


def test_latin1_is_read_as_latin1(text_variants):
    path = text_variants["latin1"]
    assert decode_text(path.read_bytes(), path.name).startswith(LATIN1_SENTENCE)


def test_the_encoding_chosen_for_each_kind():
    assert detect_encoding(b"\xef\xbb\xbfplain") == "utf-8-sig"
    assert detect_encoding("caf\u00e9".encode("utf-8")) == "utf-8"
    assert detect_encoding("\u201cquoted\u201d".encode("cp1252")) == "cp1252"
    assert detect_encoding(b"\x81\xe9") == "latin-1"  # 0x81 is undefined in Windows-1252


def test_utf16_with_a_byte_order_mark():
    data = "Line one\r\nLine two\r\n".encode("utf-16")
    assert decode_text(data, "utf16.txt") == "Line one\nLine two\n"


def test_old_mac_line_endings_become_lf():
    assert decode_text(b"one\rtwo\r\nthree\n", "mac.txt") == "one\ntwo\nthree\n"


def test_random_bytes_are_refused_naming_the_file():
    data = random.Random(3).randbytes(5000)
    with pytest.raises(UserError) as info:
        decode_text(data, "scan.bin")
    assert "scan.bin" in str(info.value) and "not look like a text file" in str(info.value)


BOM_THEN_BAD_BYTES = b"\xef\xbb\xbfThe first line is fine.\nThe second has a stray \xff\xfe byte pair.\n"


def test_a_utf8_bom_followed_by_invalid_bytes_is_refused_naming_the_file_and_line():
    with pytest.raises(UserError) as info:
        decode_text(BOM_THEN_BAD_BYTES, "mixed.txt")
    message = str(info.value)
    assert message.startswith("mixed.txt starts with a UTF-8 byte-order mark but is not all UTF-8")
    assert "line 2" in message and "save it again as UTF-8" in message


def test_a_utf16_bom_with_a_missing_last_byte_is_refused_plainly():
    with pytest.raises(UserError, match="cut.txt starts with a UTF-16 byte-order mark but is not all UTF-16"):
        decode_text("Line one\n".encode("utf-16")[:-1], "cut.txt")


def test_nul_characters_are_removed_and_counted():
    text, note = remove_nul_characters("Eli\x00za wrote.\n\x00\x00", "padded.txt")
    assert text == "Eliza wrote.\n"
    assert note.startswith("padded.txt had 3 NUL characters")


def test_text_without_nul_characters_has_no_note():
    assert remove_nul_characters("Eliza wrote.\n", "clean.txt") == ("Eliza wrote.\n", None)
