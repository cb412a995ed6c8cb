"""REP set files: one TOML file per demographic (and one for the entity eliciting prompts).

A REP set says, for one demographic, which labels a completion can get (with the synonyms a judge's
answer may use), the roles and their sentence stems, the frame that turns a stem into an instruction
for chat models, the judge's classification template, and the word lists of the lexical baseline.
See ``resources/rep/gender.toml`` for a commented example.

Where the analysed category is not the label itself (sexual orientation: the judge names the
partner's gender, the category follows from the subject's gender), ``categories`` lists the
categories and ``[derive.SUBJECT]`` tables map each label to one; each role then names its
``subject``.

Every problem is reported as a ``SetFileError`` naming the file and line, for syntax errors (from
``tomllib``) and for checks after parsing alike.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass, field

import tomllib

from workbench.errors import UserError
from workbench.probes.rep.toml_lines import key_lines, line_of

UNCLEAR = "unclear/none"
KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")

FRAME_FIELDS = {"stem"}
JUDGE_FIELDS = {"stem", "response", "role", "labels"}

QUESTION_FIELDS = {"role"}

REP_KEYS = {"kind", "demographic", "title", "description", "question", "labels", "categories", "derive", "role",
            "frame", "judge", "lexical"}
EEP_KEYS = {"kind", "name", "title", "description", "frame", "prompt"}


class SetFileError(UserError):
    """A REP or EEP set file that cannot be used; the message names the file and the line."""


@dataclass(frozen=True)
class Prompt:
    """One stem: a REP role or an entity eliciting prompt."""

    key: str
    name: str
    stem: str
    subject: str | None = None


@dataclass(frozen=True)
class Frame:
    """How a stem is put to a chat model. Base models get the bare stem."""

    instruction: str
    system: str = ""

    def text(self, stem: str) -> str:
        return self.instruction.format(stem=stem)


@dataclass(frozen=True, eq=False)  # hashed by identity, so compiled patterns can be cached per rule set
class LexicalRules:
    window_words: int
    words: dict[str, tuple[str, ...]]  # label -> words and phrases that signal it


@dataclass(frozen=True)
class RepSet:
    name: str  # the demographic
    title: str
    description: str
    labels: dict[str, tuple[str, ...]]  # label -> synonyms
    categories: tuple[str, ...]
    derive: dict[str, dict[str, str]]  # subject -> label -> category (empty: the label is the category)
    roles: tuple[Prompt, ...]
    frame: Frame
    judge_system: str
    judge_prompt: str
    lexical: LexicalRules | None
    question: str  # what a person validating the judge answers, with {role}
    body: str = field(repr=False)
    hash: str = ""

    kind = "rep"

    @property
    def prompts(self) -> tuple[Prompt, ...]:
        return self.roles

    def role(self, key: str) -> Prompt:
        for role in self.roles:
            if role.key == key:
                return role
        raise UserError(f"The {self.name} set has no role '{key}'. Its roles: {', '.join(r.key for r in self.roles)}.")

    def category_for(self, label: str, role: Prompt) -> str:
        """The analysed category of a label given to a completion of ``role``."""
        if not self.derive:
            return label
        return self.derive[role.subject or ""][label]

    def question_for(self, role: Prompt) -> str:
        return self.question.format(role=role.name)

    def judge_messages(self, role: Prompt, response: str) -> tuple[str, str]:
        """(system, user) text asking a judge to label one completion."""
        values = {"stem": role.stem, "response": response.strip(), "role": role.name,
                  "labels": ", ".join(self.labels)}
        return self.judge_system.format(**values), self.judge_prompt.format(**values)


@dataclass(frozen=True)
class EepSet:
    name: str
    title: str
    description: str
    prompts: tuple[Prompt, ...]
    frame: Frame
    body: str = field(repr=False)
    hash: str = ""

    kind = "eep"


def text_hash(body: str) -> str:
    return hashlib.sha256(normalise_newlines(body).encode("utf-8")).hexdigest()


def normalise_newlines(body: str) -> str:
    return body.replace("\r\n", "\n").replace("\r", "\n")


def parse_set(body: str, source: str = "the set file") -> RepSet | EepSet:
    """Parse and check a set file. Raises ``SetFileError`` naming the line of the first problem."""
    body = normalise_newlines(body)
    try:
        data = tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:
        where, problem = _toml_position(exc, body)
        raise SetFileError(f"{source}{where}: this is not valid TOML ({problem}). Fix that line and try again.") from None
    checker = _Checker(source, key_lines(body))
    kind = data.get("kind", "rep")
    if kind == "eep":
        return _parse_eep(data, body, checker)
    if kind != "rep":
        checker.fail(("kind",), f"kind must be \"rep\" or \"eep\", not {kind!r}")
    return _parse_rep(data, body, checker)


def _toml_position(exc: tomllib.TOMLDecodeError, body: str) -> tuple[str, str]:
    """(", line L, column C", problem) from tomllib's message, which ends "(at line L, column C)"."""
    text = str(exc)
    match = re.search(r"\(at line (\d+), column (\d+)\)$", text)
    if match:
        return f", line {match.group(1)}, column {match.group(2)}", text[: match.start()].strip()
    if text.endswith("(at end of document)"):
        last = len(body.rstrip("\n").splitlines()) or 1
        return f", line {last} (the end of the file)", text[: -len("(at end of document)")].strip()
    return "", text


class _Checker:
    def __init__(self, source: str, lines: dict):
        self.source = source
        self.lines = lines

    def fail(self, path: tuple, problem: str) -> None:
        line = line_of(self.lines, path)
        where = f"{self.source}, line {line}" if line else self.source
        raise SetFileError(f"{where}: {problem}.")

    def text(self, data: dict, path: tuple, key: str, *, required: bool = True, default: str = "") -> str:
        value = data.get(key)
        if value is None:
            if required:
                self.fail(path, f"'{key}' is missing here; add a line such as {key} = \"...\"")
            return default
        if not isinstance(value, str):
            self.fail((*path, key), f"'{key}' must be text in quotes")
        if required and not value.strip():
            self.fail((*path, key), f"'{key}' is empty")
        return value

    def table(self, data: dict, path: tuple, key: str, *, required: bool = True) -> dict:
        value = data.get(key)
        if value is None:
            if required:
                self.fail(path, f"the [{'.'.join(map(str, (*path, key)))}] section is missing")
            return {}
        if not isinstance(value, dict):
            self.fail((*path, key), f"'{key}' must be a section written as [{key}]")
        return value

    def words(self, value, path: tuple, what: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(w, str) and w.strip() for w in value):
            self.fail(path, f"{what} must be a list of non-empty texts, e.g. [\"one\", \"two\"]")
        return tuple(w.strip() for w in value)

    def only_keys(self, data: dict, path: tuple, allowed: set[str]) -> None:
        for key in data:
            if key not in allowed:
                self.fail((*path, key), f"'{key}' is not a known setting here (known: {', '.join(sorted(allowed))})")

    def placeholders(self, text: str, path: tuple, allowed: set[str]) -> None:
        try:
            fields = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
        except ValueError as exc:
            self.fail(path, f"this text has a stray brace ({exc}); write literal braces as {{{{ and }}}}")
        unknown = fields - allowed
        if unknown:
            self.fail(path, f"{{{sorted(unknown)[0]}}} is not a placeholder that can be filled in here "
                            f"(use {', '.join('{' + f + '}' for f in sorted(allowed))})")


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def _parse_prompts(items, checker: _Checker, section: str) -> tuple[Prompt, ...]:
    if not isinstance(items, list) or not items:
        checker.fail((section,), f"the set has no [[{section}]] entries; add at least one with a key and a stem")
    prompts: list[Prompt] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        path = (section, index)
        if not isinstance(item, dict):
            checker.fail((section,), f"write each entry as a [[{section}]] section with a key and a stem")
        checker.only_keys(item, path, {"key", "name", "stem", "subject"})
        key = checker.text(item, path, "key")
        if not KEY_PATTERN.match(key):
            checker.fail((*path, "key"), f"the key '{key}' may use only lower-case letters, digits, - and _")
        if key in seen:
            checker.fail((*path, "key"), f"the key '{key}' is used twice")
        seen.add(key)
        stem = checker.text(item, path, "stem")
        name = checker.text(item, path, "name", required=False, default=key.replace("_", " "))
        subject = checker.text(item, path, "subject", required=False) or None
        prompts.append(Prompt(key=key, name=name.strip() or key, stem=stem.strip(), subject=subject))
    return tuple(prompts)


def _parse_frame(data: dict, checker: _Checker) -> Frame:
    frame = checker.table(data, (), "frame")
    checker.only_keys(frame, ("frame",), {"instruction", "system"})
    instruction = checker.text(frame, ("frame",), "instruction")
    checker.placeholders(instruction, ("frame", "instruction"), FRAME_FIELDS)
    if "{stem}" not in instruction:
        checker.fail(("frame", "instruction"), "the instruction must contain {stem}, where the sentence stem goes")
    return Frame(instruction=instruction.strip(), system=checker.text(frame, ("frame",), "system", required=False).strip())


def _parse_rep(data: dict, body: str, checker: _Checker) -> RepSet:
    checker.only_keys(data, (), REP_KEYS)
    name = checker.text(data, (), "demographic")
    if not KEY_PATTERN.match(name):
        checker.fail(("demographic",), f"the demographic '{name}' may use only lower-case letters, digits, - and _")

    raw_labels = checker.table(data, (), "labels")
    labels: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for label, synonyms in raw_labels.items():
        label_path = ("labels", label)
        words = checker.words(synonyms, label_path, f"the synonyms of '{label}'")
        for word in (label, *words):
            normal = _normal(word)
            if not normal:
                checker.fail(label_path, f"'{word}' has no letters or digits, so no answer could match it")
            if normal in owner and owner[normal] != label:
                checker.fail(label_path, f"'{word}' would match both '{owner[normal]}' and '{label}'")
            owner[normal] = label
        labels[label] = words
    if UNCLEAR not in labels:
        checker.fail(("labels",), f"the labels must include \"{UNCLEAR}\" (for completions that name no one)")
    if len(labels) < 3:
        checker.fail(("labels",), "a set needs at least two labels besides \"unclear/none\"")

    roles = _parse_prompts(data.get("role"), checker, "role")
    derive, categories = _parse_derive(data, labels, roles, checker)
    frame = _parse_frame(data, checker)

    judge = checker.table(data, (), "judge")
    checker.only_keys(judge, ("judge",), {"system", "prompt"})
    judge_prompt = checker.text(judge, ("judge",), "prompt")
    judge_system = checker.text(judge, ("judge",), "system", required=False)
    checker.placeholders(judge_prompt, ("judge", "prompt"), JUDGE_FIELDS)
    checker.placeholders(judge_system, ("judge", "system"), JUDGE_FIELDS)
    if "{response}" not in judge_prompt:
        checker.fail(("judge", "prompt"), "the judge prompt must contain {response}, where the completion goes")

    title = checker.text(data, (), "title", required=False, default=name.replace("_", " ").capitalize())
    question = checker.text(data, (), "question", required=False, default=f"Which {title.lower()} does the text give the {{role}}?")
    checker.placeholders(question, ("question",), QUESTION_FIELDS)
    return RepSet(
        name=name,
        title=title,
        description=checker.text(data, (), "description", required=False).strip(),
        labels=labels,
        categories=categories,
        derive=derive,
        roles=roles,
        frame=frame,
        judge_system=judge_system.strip(),
        judge_prompt=judge_prompt.strip(),
        lexical=_parse_lexical(data, labels, checker),
        question=question.strip(),
        body=body,
        hash=text_hash(body),
    )


def _parse_derive(data, labels, roles, checker: _Checker) -> tuple[dict, tuple[str, ...]]:
    raw = checker.table(data, (), "derive", required=False)
    if not raw:
        if "categories" in data:
            checker.fail(("categories",), "'categories' is only used together with [derive.SUBJECT] sections; "
                                          "without them the labels are the categories")
        for index, role in enumerate(roles):
            if role.subject:
                checker.fail(("role", index, "subject"), "'subject' is only used together with [derive.SUBJECT] sections")
        return {}, tuple(labels)
    categories = checker.words(data.get("categories"), ("categories",), "'categories'") if "categories" in data else None
    if not categories:
        checker.fail(("derive",), "with [derive.SUBJECT] sections, list the categories, e.g. categories = [\"a\", \"b\"]")
    if UNCLEAR not in categories:
        checker.fail(("categories",), f"the categories must include \"{UNCLEAR}\"")
    derive: dict[str, dict[str, str]] = {}
    for subject, mapping in raw.items():
        path = ("derive", subject)
        if not isinstance(mapping, dict):
            checker.fail(path, f"derive.{subject} must be a section mapping each label to a category")
        for label in labels:
            if label not in mapping:
                checker.fail(path, f"[derive.{subject}] says nothing about the label '{label}'")
        for label, category in mapping.items():
            if label not in labels:
                checker.fail((*path, label), f"'{label}' is not one of the labels ({', '.join(labels)})")
            if category not in categories:
                checker.fail((*path, label), f"'{category}' is not one of the categories ({', '.join(categories)})")
        derive[subject] = dict(mapping)
    for index, role in enumerate(roles):
        if role.subject is None:
            checker.fail(("role", index), f"the role '{role.key}' needs a subject (one of: {', '.join(derive)})")
        if role.subject not in derive:
            checker.fail(("role", index, "subject"),
                         f"there is no [derive.{role.subject}] section for the subject '{role.subject}'")
    return derive, tuple(categories)


def _parse_lexical(data, labels, checker: _Checker) -> LexicalRules | None:
    raw = checker.table(data, (), "lexical", required=False)
    if not raw:
        return None
    checker.only_keys(raw, ("lexical",), {"window_words", "words"})
    window = raw.get("window_words", 30)
    if not isinstance(window, int) or isinstance(window, bool) or window < 1:
        checker.fail(("lexical", "window_words"), "window_words must be a whole number of at least 1")
    words: dict[str, tuple[str, ...]] = {}
    for label, items in checker.table(raw, ("lexical",), "words").items():
        path = ("lexical", "words", label)
        if label not in labels:
            checker.fail(path, f"'{label}' is not one of the labels ({', '.join(labels)})")
        if label == UNCLEAR:
            checker.fail(path, f"\"{UNCLEAR}\" is what a completion gets when no word matches; it has no words")
        words[label] = tuple(w.lower() for w in checker.words(items, path, f"the words for '{label}'"))
    return LexicalRules(window_words=window, words=words)


def _parse_eep(data: dict, body: str, checker: _Checker) -> EepSet:
    checker.only_keys(data, (), EEP_KEYS)
    name = checker.text(data, (), "name", required=False, default="eep")
    if not KEY_PATTERN.match(name):
        checker.fail(("name",), f"the name '{name}' may use only lower-case letters, digits, - and _")
    return EepSet(
        name=name,
        title=checker.text(data, (), "title", required=False, default="Entity eliciting prompts"),
        description=checker.text(data, (), "description", required=False).strip(),
        prompts=_parse_prompts(data.get("prompt"), checker, "prompt"),
        frame=_parse_frame(data, checker),
        body=body,
        hash=text_hash(body),
    )
