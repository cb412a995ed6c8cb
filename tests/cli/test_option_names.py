"""One meaning per option name, in every subcommand of ``palimpsest``: the parser is walked whole, so a new
command is checked without being listed here."""

from __future__ import annotations

import argparse
import ast
import re
from collections import defaultdict
from pathlib import Path

from workbench.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
#: what a scholar means by these, and the one option name each has
ONE_NAME = {"book_set": "--book-set", "judge": "--judge", "grouped_by": "--grouped-by", "by": "--grouped-by"}


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


def _arguments():
    for path, parser in _commands(build_parser()):
        for action in parser._actions:
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction, argparse._VersionAction)):
                yield " ".join(path) or "palimpsest", action


def _shape(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "a switch"
    return f"a {getattr(action.type, '__name__', 'str')} value" + (f" x{action.nargs}" if action.nargs else "")


def test_every_option_and_argument_says_what_it_is():
    missing = [f"{command}: {action.option_strings or action.dest}" for command, action in _arguments()
               if not (action.help or "").strip()]
    assert missing == []


def test_an_option_name_has_one_shape_everywhere():
    shapes: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for command, action in _arguments():
        for option in action.option_strings:
            shapes[option][_shape(action)].append(command)
    mixed = {option: dict(found) for option, found in shapes.items() if len(found) > 1}
    assert mixed == {}


def test_format_is_always_the_output_format():
    for command, action in _arguments():
        if "--format" in action.option_strings:
            assert set(action.choices or ()) <= {"table", "csv", "json"} and action.choices, command


def test_a_book_set_a_judge_and_a_grouping_model_have_one_name_each():
    wrong = [f"{command}: {action.option_strings} for {action.dest}" for command, action in _arguments()
             if action.dest in ONE_NAME and action.option_strings
             and action.option_strings != [ONE_NAME[action.dest]]]
    assert wrong == []


def _command_tree(parser: argparse.ArgumentParser) -> dict:
    return {name: _command_tree(sub) for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) for name, sub in action.choices.items()}


def test_no_text_names_a_command_that_does_not_exist():
    """Help texts, messages and page texts that tell a scholar to run 'palimpsest X Y' name a real command."""
    tree = _command_tree(build_parser())
    mention = re.compile(r"(?<![.\w])palimpsest ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")
    wrong = set()
    for path in [*ROOT.joinpath("workbench").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for found in mention.finditer(node.value):
                    top, second = found.groups()
                    if top not in tree or (tree[top] and second and second not in tree[top]):
                        wrong.add(f"{path.relative_to(ROOT)}: {found.group(0)}")
    assert sorted(wrong) == []
