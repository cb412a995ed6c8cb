"""Answers' JSON texts are parsed a chunk at a time (the window's thread gets the interpreter lock between
chunks); a damaged text spoils only itself."""

from workbench.runs import parse_json_texts, store


def test_texts_are_parsed_across_chunks_and_a_damaged_one_gives_none(monkeypatch):
    monkeypatch.setattr(store, "PARSE_CHUNK", 3)
    texts = ['{"a": 1}', None, "", "[1, 2]", '{"broken": ', '"x"', "2.5"]
    assert parse_json_texts(texts) == [{"a": 1}, None, None, [1, 2], None, "x", 2.5]
    assert parse_json_texts([]) == []
