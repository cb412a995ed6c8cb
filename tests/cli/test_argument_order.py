"""Every command takes its options and its positional arguments (project, paths, ids) in any order."""

import argparse

from workbench.cli import build_parser
from workbench.cli.common import CommandParser


def _commands(parser: argparse.ArgumentParser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                yield from _commands(command, (*path, name))
    if path:
        yield " ".join(path), parser


def test_every_command_parses_options_and_positionals_intermixed():
    commands = dict(_commands(build_parser()))
    assert {"import", "tag", "cloze import", "annotate"} <= set(commands)
    for name, parser in commands.items():
        assert isinstance(parser, CommandParser), name
        groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        assert parser.intermixable() != bool(groups), name  # only a group of commands parses as usual


def test_options_before_a_list_of_positionals_are_read_the_same_as_after():
    parser = build_parser()
    before = parser.parse_args(["tag", "p.palimpsest", "3", "--remove", "decade", "genre=gothic", "era=late"])
    after = parser.parse_args(["tag", "p.palimpsest", "3", "genre=gothic", "era=late", "--remove", "decade"])
    assert vars(before) == vars(after)
    assert (before.book_id, before.tags, before.remove) == (3, ["genre=gothic", "era=late"], ["decade"])


def test_a_command_inside_a_group_intermixes_too():
    args = build_parser().parse_args(
        ["cloze", "import", "p.palimpsest", "a.tsv", "--model-label", "gpt-4", "b.tsv"])
    assert [str(f) for f in args.paths] == ["a.tsv", "b.tsv"] and args.model_label == "gpt-4"
