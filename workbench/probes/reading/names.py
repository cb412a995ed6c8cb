"""A book's character names, found with spaCy, and a seeded replacement for each name word.

**Finding.** spaCy's entity recogniser (``tok2vec`` and ``ner`` only, through ``workbench.nlp``) reads the
book paragraph by paragraph. In each PERSON mention, titles in front ("Mrs.", "Captain"; also the word
just before the mention, which the recogniser often leaves out) are set aside, and every remaining word
shaped like a name (capitalised letters, not all capitals, not in the ``not_names`` list) is a *name
word*. The small English model tags names unevenly (an unusual name is often taken for a place or a
people), so which words to replace is decided over the whole book:

- an *ordinary* word, one the book also writes in lower case more than a tenth as often ("Grace",
  "Cook"), is a name when at least ``ORDINARY_PERSON_SHARE`` of all its uses were tagged as a person;
- any other word is a name when it was tagged as a person at least twice (once is enough for a word
  used at most twice), in at least ``PROPER_PERSON_SHARE`` of the times it was tagged as any kind of
  name, and it was tagged as some kind of name in at least ``PROPER_TAGGED_SHARE`` of its capitalised
  uses: "Queequeg" is a name, "English" and "Whale" are not;
- a word used more than once must be written capitalised in mid-sentence at least once (a word only
  ever capitalised at the start of a sentence, "Historically", is no name).

The recogniser skips a paragraph whose capitalised words it has all read at least ``ENOUGH_READINGS``
times already (or that has none): it could only add evidence about words already well known, and on
a long novel this saves a fifth to a third of the reading. The shares above count the uses in the
paragraphs read; ``mentions`` is the number of tagged uses there.

Words tagged mostly as places or organisations that pass these rules (an estate, a town the
recogniser also took for a person) are replaced as well, by a surname, which reads as a place too.

**Role** (given name, surname or place). First and middle words of a mention of two or more words vote "given name", the last word
"surname"; a single word after "Mr.", "Mrs." and the like votes "surname". A word with no votes is a
given name (characters known by one name).

**Gender** of a given name: titles in front ("Miss", "Sir") and the first personal pronoun in the 150
characters after each mention (he/him/his or she/her/hers) vote; 70% of at least two votes decide,
else it is unknown. It only chooses which list the replacement comes from.

**Scope.** A word that also occurs in lower case in the book ("Will", "Grace") is replaced only where
it was tagged as a person or stands capitalised in mid-sentence; any other name word wherever it is
written capitalised (also in capitals: "ELIZA").

A plural of another name word ("the Bennets") is replaced by the plural of that word's replacement.

**Replacements** come from a name list (``resources/reading/names.toml``, or the file named by the
project setting ``reading.names_file``): given names by gender, surnames. The words are visited in the
order the book first uses them and drawn without putting back, with a seed; no name that occurs in
the book in any case is drawn. When a list runs out, names are made up from syllables.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import tomllib

from workbench.errors import UserError
from workbench.progress import TaskState

if TYPE_CHECKING:
    from spacy.language import Language

    from workbench.project import Project

NAMES_FILE = Path(__file__).resolve().parents[3] / "resources" / "reading" / "names.toml"
NAMES_SETTING = "reading.names_file"
NER_COMPONENTS = ("tok2vec", "ner")
#: entity labels of other kinds of names (places, organisations, peoples, things)
OTHER_NAME_LABELS = frozenset({"GPE", "LOC", "FAC", "ORG", "NORP", "PRODUCT", "EVENT", "WORK_OF_ART", "LANGUAGE", "LAW"})
ORDINARY_LOWER_SHARE = 0.1
ORDINARY_PERSON_SHARE = 0.3
PROPER_PERSON_SHARE = 0.07
PROPER_TAGGED_SHARE = 0.1
PERSON_MAJORITY = 0.5
ENOUGH_READINGS = 10
GENDER_MAJORITY = 0.7
MIN_GENDER_VOTES = 2
PRONOUN_WINDOW = 150
MAX_PIECE_CHARS = 20_000

#: a word of running text; apostrophes join (O'Hara, Darcy's), hyphens do not
WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")
_NAME_SHAPE = re.compile(r"^[^\W\d_]+(?:['\u2019][^\W\d_]+)*$")
_PRONOUN = re.compile(r"\b(he|him|his|himself|she|her|hers|herself)\b", re.IGNORECASE)
_FEMALE_PRONOUNS = {"she", "her", "hers", "herself"}
_POSSESSIVE = ("'s", "\u2019s")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_OPENERS = " \t\r\n\"'\u2018\u201c(["


@dataclass(frozen=True)
class NameLists:
    female: tuple[str, ...]
    male: tuple[str, ...]
    surnames: tuple[str, ...]
    female_titles: frozenset[str]
    male_titles: frozenset[str]
    other_titles: frozenset[str]
    before_surname: frozenset[str]
    not_names: frozenset[str]

    @property
    def titles(self) -> frozenset[str]:
        return self.female_titles | self.male_titles | self.other_titles


def _norm(word: str) -> str:
    return word.strip().rstrip(".").replace("\u2019", "'").casefold()


@lru_cache(maxsize=4)
def _read_lists(path: Path) -> NameLists:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        titles, given = data["titles"], data["given"]
        return NameLists(
            female=tuple(given["female"]["names"]), male=tuple(given["male"]["names"]),
            surnames=tuple(data["surnames"]["names"]),
            female_titles=frozenset(map(_norm, titles["female"])), male_titles=frozenset(map(_norm, titles["male"])),
            other_titles=frozenset(map(_norm, titles.get("other", []))),
            before_surname=frozenset(map(_norm, titles.get("before_surname", []))),
            not_names=frozenset(map(_norm, data.get("not_names", {}).get("words", []))),
        )
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"The name list {path} could not be read ({exc}).") from exc
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise UserError(f"The name list {path} is not in the expected form ({exc}); compare it with {NAMES_FILE}.") from exc


def name_lists(project: "Project | None" = None) -> NameLists:
    """The replacement names and title words: the project's own file if it names one, else the shipped list."""
    chosen = project.get_setting(NAMES_SETTING) if project is not None else None
    return _read_lists(Path(chosen) if chosen else NAMES_FILE)


@dataclass
class _Evidence:
    first_seen: int
    mentions: int = 0
    spans: list[tuple[int, int]] = field(default_factory=list)
    given_votes: int = 0
    surname_votes: int = 0
    female_votes: int = 0
    male_votes: int = 0


@dataclass(frozen=True)
class NameWord:
    """One word of the book's character names and what was learned about it."""

    word: str
    role: str  # given or surname
    gender: str  # female, male or unknown
    mentions: int
    scope: str  # everywhere or mentions
    spans: tuple[tuple[int, int], ...] = ()  # where it was tagged as a person (offsets into the book)
    replacement: str = ""


def pieces(text: str) -> list[tuple[int, str]]:
    """(offset, paragraph) for every paragraph, long ones cut at a space, so spaCy never holds a novel."""
    found = []
    for start, end in _paragraph_bounds(text):
        while end - start > MAX_PIECE_CHARS:
            cut = text.rfind(" ", start + 1, start + MAX_PIECE_CHARS)
            cut = cut if cut > start else start + MAX_PIECE_CHARS
            found.append((start, text[start:cut]))
            start = cut
        found.append((start, text[start:end]))
    return found


def _paragraph_bounds(text: str) -> Iterable[tuple[int, int]]:
    position = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        if match.start() > position:
            yield position, match.start()
        position = match.end()
    if position < len(text):
        yield position, len(text)


def mid_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` follows a lower-case word or a comma-like mark (so its capital is a name's)."""
    i = start - 1
    while i >= 0 and text[i] in _OPENERS:
        i -= 1
    return i >= 0 and (text[i].islower() or text[i] in ",;:")


def _mid_sentence_uses(text: str, words: set[str]) -> Counter:
    """How often each of ``words`` is written capitalised in mid-sentence."""
    uses: Counter = Counter()
    for match in WORD.finditer(text):
        word = _core(match.group())
        if word in words and mid_sentence(text, match.start()):
            uses[word] += 1
    return uses


def _looks_like_name(word: str) -> bool:
    return len(word) > 1 and bool(_NAME_SHAPE.match(word)) and word[0].isupper() and not word.isupper()


@dataclass
class _Reading:
    """What the recogniser said about the paragraphs it read."""

    evidence: dict[str, _Evidence] = field(default_factory=dict)
    other: Counter = field(default_factory=Counter)  # word -> times tagged as part of a non-person name
    words: Counter = field(default_factory=Counter)  # word -> uses in the paragraphs read


def _core(word: str) -> str:
    return word[:-2] if word[-2:] in _POSSESSIVE else word


def _gather(text: str, nlp: "Language", lists: NameLists, state: TaskState) -> _Reading:
    reading = _Reading()
    parts = pieces(text)
    seen: Counter = Counter()  # capitalised words of the paragraphs read so far

    def worth_reading():
        for done, (offset, piece) in enumerate(parts):
            if done % 200 == 0:
                state.check()
                state.progress(done, len(parts), "Finding the characters' names")
            words = [_core(w) for w in WORD.findall(piece)]
            capitals = [w for w in words if w[0].isupper()]
            if all(seen[w] >= ENOUGH_READINGS for w in capitals):
                continue  # nothing the recogniser could add (no capitals, or only well-read ones)
            seen.update(capitals)
            reading.words.update(words)
            yield piece, offset

    for doc, offset in nlp.pipe(worth_reading(), as_tuples=True, batch_size=64):
        for ent in doc.ents:
            if ent.label_ == "PERSON":
                _mention(doc, ent, offset, lists, reading.evidence)
            elif ent.label_ in OTHER_NAME_LABELS:
                for token in ent:
                    reading.other[token.text] += 1
    return reading


def _mention(doc, ent, offset: int, lists: NameLists, evidence: dict[str, _Evidence]) -> None:
    tokens = [t for t in ent if not t.is_space and not t.is_punct and t.text not in _POSSESSIVE]
    before = doc[ent.start - 1] if ent.start > 0 else None
    title = _norm(before.text) if before is not None and _norm(before.text) in lists.titles else None
    while tokens and _norm(tokens[0].text) in lists.titles:
        title = _norm(tokens[0].text)
        tokens = tokens[1:]
    words = [t for t in tokens if _looks_like_name(t.text) and _norm(t.text) not in lists.not_names]
    if not words:
        return
    pronoun = _PRONOUN.search(doc.text, ent.end_char, ent.end_char + PRONOUN_WINDOW)
    for position, token in enumerate(words):
        start = offset + token.idx
        found = evidence.setdefault(token.text, _Evidence(first_seen=start))
        found.mentions += 1
        found.spans.append((start, start + len(token.text)))
        if len(words) > 1:
            if position == len(words) - 1:
                found.surname_votes += 1
            else:
                found.given_votes += 1
        elif title in lists.before_surname:
            found.surname_votes += 1
        if position == 0 and not (len(words) == 1 and title in lists.before_surname):
            if title in lists.female_titles:
                found.female_votes += 1
            elif title in lists.male_titles:
                found.male_votes += 1
            if pronoun is not None:
                if pronoun.group(1).lower() in _FEMALE_PRONOUNS:
                    found.female_votes += 1
                else:
                    found.male_votes += 1


def _capitalised(counts: Counter, word: str) -> int:
    return counts.get(word, 0) + counts.get(word + "'s", 0) + counts.get(word + "\u2019s", 0)


def _is_name(person: int, other: int, capitalised: int, lower: int, ordinary: bool) -> bool:
    """Whether a word tagged ``person`` times as (part of) a person and ``other`` times as another kind of
    name is a name to replace (see the module's description)."""
    if ordinary:
        return person >= 2 and person >= ORDINARY_PERSON_SHARE * (capitalised + lower)
    if person < 2 and capitalised > 2:
        return False
    return person >= PROPER_PERSON_SHARE * (person + other) and person + other >= PROPER_TAGGED_SHARE * capitalised


def _gender(e: _Evidence) -> str:
    votes = e.female_votes + e.male_votes
    if votes < MIN_GENDER_VOTES:
        return "unknown"
    if e.female_votes / votes >= GENDER_MAJORITY:
        return "female"
    if e.male_votes / votes >= GENDER_MAJORITY:
        return "male"
    return "unknown"


def find_names(text: str, nlp: "Language", lists: NameLists, state: TaskState | None = None,
               word_counts: Counter | None = None) -> list[NameWord]:
    """The book's name words (see the module's description), in the order the book first uses them,
    without replacements yet. ``word_counts``: ``Counter(WORD.findall(text))`` if already made."""
    state = state or TaskState()
    reading = _gather(text, nlp, lists, state)
    counts = word_counts if word_counts is not None else Counter(WORD.findall(text))
    mid = _mid_sentence_uses(text, set(reading.evidence))
    names = []
    for word, e in sorted(reading.evidence.items(), key=lambda item: item[1].first_seen):
        if mid[word] == 0 and _capitalised(counts, word) > 1:
            continue  # only ever capitalised at the start of a sentence: "Historically", "Dusk"
        lower = counts.get(word.lower(), 0)
        ordinary = lower > ORDINARY_LOWER_SHARE * _capitalised(counts, word)
        other = reading.other[word]
        # shares of the uses in the paragraphs the recogniser read
        if not _is_name(e.mentions, other, _capitalised(reading.words, word), reading.words.get(word.lower(), 0),
                        ordinary):
            continue
        if e.mentions < PERSON_MAJORITY * (e.mentions + other):
            role = "place"
        else:
            role = "surname" if e.surname_votes > e.given_votes else "given"
        names.append(NameWord(word=word, role=role, gender=_gender(e) if role == "given" else "unknown",
                              mentions=e.mentions, scope="mentions" if lower else "everywhere",
                              spans=tuple(e.spans)))
    return names


# ---------------------------------------------------------------------------------------------- replacements
_SYLLABLES = ("bar", "len", "mor", "ta", "vi", "del", "ro", "san", "ker", "lo", "wen", "fa", "dor", "mi",
              "cal", "ne", "ther", "go", "ris", "la", "bren", "to", "ma", "sel")


def _made_up(rng: random.Random, taken: set[str]) -> str:
    while True:
        name = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        if name.lower() not in taken:
            return name


def choose_replacements(names: list[NameWord], lists: NameLists, seed: int, book_words: Iterable[str]
                        ) -> list[NameWord]:
    """Each name word with a replacement drawn with ``seed``: given names from the list of their gender
    (either list when unknown), surnames from the surnames; never a name the book uses (``book_words``,
    any case) and never the same replacement twice."""
    rng = random.Random(f"reading-names:{seed}")
    taken = {w.lower() for w in book_words}
    pools = {}
    for key, values in (("female", lists.female), ("male", lists.male), ("surname", lists.surnames)):
        pool = [v for v in dict.fromkeys(values) if v.lower() not in taken]
        rng.shuffle(pool)
        pools[key] = pool
    mentions = {n.word: n.mentions for n in names}
    chosen: dict[str, NameWord] = {}
    plurals = []
    for name in names:
        if _stem(name.word, mentions) is not None:
            plurals.append(name)
            continue
        if name.role in ("surname", "place"):
            key = "surname"
        elif name.gender in ("female", "male"):
            key = name.gender
        else:
            key = rng.choice(["female", "male"])
        pool = pools[key]
        while pool and pool[-1].lower() in taken:
            pool.pop()
        replacement = pool.pop() if pool else _made_up(rng, taken)
        taken.add(replacement.lower())
        chosen[name.word] = replace(name, replacement=replacement)
    for name in plurals:  # the Bennets -> the plural of Bennet's replacement
        base = chosen[_stem(name.word, mentions)].replacement
        plural = base + ("es" if base.endswith(("s", "x", "z", "ch", "sh")) else "s")
        chosen[name.word] = replace(name, role="surname", gender="unknown", replacement=plural)
    return [chosen[n.word] for n in names]


def _stem(word: str, mentions: dict[str, int]) -> str | None:
    """The name ``word`` is the plural of (a family: "Bennets", "Collinses"), if it is one: a name word
    that the book mentions at least as often ("Phillips" is no plural of a "Phillip" tagged once)."""
    for suffix in ("es", "s"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and mentions.get(stem, 0) >= mentions[word]:
            return stem
    return None
