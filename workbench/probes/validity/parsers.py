"""What a model's answer commits to: a year of first publication, or a span of narrative time.

Both parsers are pure functions of the raw answer, applied whenever answers are read (re-parsing never
calls a model). An answer that does not commit to one value is *missing*, with the reason; missing
answers are counted by the analyses, never dropped.

**Years** (``parse_year``). The answer's first four-digit number inside the plausible range
(``YEAR_RANGE`` unless given) that is

- not part of a decade ("the 1850s", "1850's") or a century ("1800s" is a decade too, so it is missing);
- not the first end of a range or a choice ("1850-1860", "1850 to 1860", "between 1850 and 1860",
  "1850 or 1851", "1813/14"): those name no single year, so such an answer is missing.

Numbers outside the range (page numbers, "5000 copies") are passed over. No such number, or an answer
that only declines ("I cannot tell"), is missing. A line starting ``Answer:`` is read on its own when
the model wrote one after its reasoning.

**Narrative time** (``parse_minutes``). The first stated duration: a number, or a number word ("two",
"a", "half an", "a couple of", "a few" = 3, "several" = 3), and a unit; consecutive parts joined by
"and", "," or nothing are added ("two days and a night", "1 hour 30 minutes", "an hour and a half").
A range ("2-3 hours", "two to three days", "between 10 and 20 minutes", "30 minutes to an hour") is
read as the midpoint of its two ends. Units are those of the annotation sessions' duration parser
(``workbench.annotation.durations``), which does the arithmetic; a few more are translated for it:
a night = 12 hours, a fortnight = 2 weeks, a decade = 10 years, a century = 100 years. A bare number
with no unit, or a refusal, is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.errors import UserError

YEAR_RANGE = (1000, 2100)

REFUSAL = re.compile(
    r"\b(cannot|can ?not|can't|unable|impossible|not possible|unclear|uncertain|unknown|not sure|no way to|"
    r"do not know|don't know|not enough|insufficient|n/a)\b", re.IGNORECASE)
ANSWER_LINE = re.compile(r"^\s*(?:final\s+)?answer\s*[:\-]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2012": "-", "\u2212": "-", "\u00a0": " "})


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: ``value`` (a year, or minutes) or None with ``reason`` saying why it is missing."""

    value: float | None
    reason: str = ""
    text: str = ""  # the words the value was read from

    @property
    def missing(self) -> bool:
        return self.value is None


def _focus(raw: str) -> str:
    """The part of the answer to read: what follows the last 'Answer:' line when there is one."""
    text = (raw or "").translate(DASHES)
    found = ANSWER_LINE.findall(text)
    return found[-1] if found else text


# ---------------------------------------------------------------------------------------------- years
_YEAR = re.compile(r"(?<!\d)(?<!\d[.,])(\d{4})(?!\d)(?:\s*'?s\b)?")
_RANGE_AFTER = re.compile(r"^\s*(?:-|/|to|or|until|till)\s*(?:the\s+)?(?:\d{2,4})(?!\d)", re.IGNORECASE)
_RANGE_BEFORE = re.compile(r"(?:between|from)\s+(?:the\s+)?$", re.IGNORECASE)


def parse_year(raw: str | None, year_range: tuple[int, int] = YEAR_RANGE) -> Parsed:
    """The year the answer commits to (see the module docstring)."""
    text = _focus(raw or "")
    if not text.strip():
        return Parsed(None, "empty answer")
    low, high = year_range
    passed_over = ""
    for match in _YEAR.finditer(text):
        year = int(match.group(1))
        if not low <= year <= high:
            passed_over = passed_over or f"{year} is outside {low}-{high}"
            continue
        if match.group(0) != match.group(1):  # 1850s, 1850's
            return Parsed(None, "a decade, not a year", match.group(0).strip())
        if _RANGE_AFTER.match(text[match.end():]) or _RANGE_BEFORE.search(text[: match.start()]):
            return Parsed(None, "a range, not one year", text[match.start(): match.end() + 12].strip())
        return Parsed(float(year), "", match.group(1))
    if REFUSAL.search(text):
        return Parsed(None, "declined to answer")
    return Parsed(None, passed_over or "no four-digit year")


# ---------------------------------------------------------------------------------------------- durations
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "a hundred": 100,
}
_VAGUE = [("a couple of", 2), ("a couple", 2), ("a few", 3), ("several", 3), ("half an", 0.5), ("half a", 0.5),
          ("a half", 0.5), ("an", 1), ("a", 1)]
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_ONES = "one|two|three|four|five|six|seven|eight|nine"
#: units the annotation parser does not know -> (amount, unit it knows)
_EXTRA_UNITS = {"night": (12, "hours"), "nights": (12, "hours"), "fortnight": (2, "weeks"), "fortnights": (2, "weeks"),
                "decade": (10, "years"), "decades": (10, "years"), "century": (100, "years"), "centuries": (100, "years")}


def _units() -> dict[str, tuple[float, str]]:
    from workbench.annotation.durations import UNIT_OF

    words = {alias: (1.0, unit) for alias, unit in UNIT_OF.items() if len(alias) > 1 and alias != "'"}
    words.update({"m": (1.0, "minutes"), "h": (1.0, "hours"), "d": (1.0, "days")})
    words.update({alias: (float(n), unit) for alias, (n, unit) in _EXTRA_UNITS.items()})
    return words


_UNIT_WORDS = None


def _unit_pattern() -> tuple[re.Pattern, dict[str, tuple[float, str]]]:
    """The pattern of one duration: digits and any unit ('3d', '90 min'), or a number word and a unit
    written out ('two days': a word needs a space, so 'and' is never 'an' + 'd')."""
    global _UNIT_WORDS
    if _UNIT_WORDS is None:
        units = _units()

        def alternatives(words):
            return "|".join(sorted((re.escape(u) for u in words), key=len, reverse=True))

        words = alternatives(sorted(_NUMBER_WORDS) + [v for v, _ in _VAGUE])
        pattern = re.compile(
            rf"(?<![\w.,])(?:(?P<num>\d{{1,3}}(?:,\d{{3}})+|\d+(?:[.,]\d+)?)\s*-?\s*(?P<unit>{alternatives(units)})"
            rf"|(?P<wnum>(?:{_TENS})[\s-](?:{_ONES})|{words})[\s-]+(?P<wunit>{alternatives(u for u in units if len(u) > 2)}))"
            rf"\b(?P<half>\s+and\s+a\s+half)?", re.IGNORECASE)
        _UNIT_WORDS = (pattern, units)
    return _UNIT_WORDS


def _number(word: str) -> float:
    word = " ".join(word.lower().replace("-", " ").split())
    if word[0].isdigit():
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+", word):  # 1,000
            return float(word.replace(",", ""))
        return float(word.replace(",", "."))
    for vague, value in _VAGUE:
        if word == vague:
            return value
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    tens, _, ones = word.partition(" ")
    return _NUMBER_WORDS[tens] + _NUMBER_WORDS.get(ones, 0)


_JOIN = re.compile(r"^\s*(?:,\s*|and\s+|plus\s+|,\s*and\s+)?$", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"^\s*(?:-|to|or)\s*$", re.IGNORECASE)
_RANGE_START = re.compile(r"(?:between\s+(?P<a>\S+)\s+and|(?P<b>\d+(?:[.,]\d+)?|[a-z]+)\s*(?:-|to|or))\s*$",
                          re.IGNORECASE)


def _minutes_of(amount: float, unit_word: str, units: dict[str, tuple[float, str]]) -> float:
    from workbench.annotation.durations import parse_duration

    factor, unit = units[unit_word.lower()]
    return parse_duration(f"{amount * factor:g} {unit}").minutes  # UserError for no time at all


def _unit(match: re.Match) -> str:
    return match.group("unit") or match.group("wunit")


def _part_minutes(match: re.Match, units: dict[str, tuple[float, str]]) -> float:
    amount = _number(match.group("num") or match.group("wnum")) + (0.5 if match.group("half") else 0.0)
    return _minutes_of(amount, _unit(match), units)


def _range_start(before: str, first: re.Match, units: dict[str, tuple[float, str]]) -> tuple[float, int] | None:
    """For '2-3 hours', 'two to three days', 'between 10 and 20 minutes': the first end in minutes, and
    where it starts."""
    found = _RANGE_START.search(before)
    if found is None:
        return None
    try:
        amount = _number(found.group("a") or found.group("b"))
    except (KeyError, ValueError, IndexError):
        return None  # 'up to 3 hours': not a range
    return _minutes_of(amount, _unit(first), units), found.start()


def parse_minutes(raw: str | None) -> Parsed:
    """The narrative time the answer commits to, in minutes (see the module docstring)."""
    text = _focus(raw or "")
    if not text.strip():
        return Parsed(None, "empty answer")
    pattern, units = _unit_pattern()
    parts = list(pattern.finditer(text))
    if not parts:
        if REFUSAL.search(text):
            return Parsed(None, "declined to answer")
        if re.search(r"\d", text):
            return Parsed(None, "a number without a unit")
        return Parsed(None, "no duration")
    try:
        return _first_duration(text, parts, units)
    except UserError:
        return Parsed(None, "no time passes", parts[0].group(0))


def _first_duration(text: str, parts: list[re.Match], units: dict[str, tuple[float, str]]) -> Parsed:
    first = parts[0]
    start, end = first.start(), first.end()
    value = _part_minutes(first, units)
    ranged = _range_start(text[:start], first, units)
    if ranged is not None:
        low, start = ranged
        return Parsed((low + value) / 2, "", text[start:end])
    for part in parts[1:]:
        between = text[end : part.start()]
        if _RANGE_JOIN.match(between) and end == first.end():  # '30 minutes to an hour'
            return Parsed((value + _part_minutes(part, units)) / 2, "", text[start : part.end()])
        if not _JOIN.match(between):
            break
        value += _part_minutes(part, units)
        end = part.end()
    return Parsed(value, "", text[start:end])


def parse(task: str, raw: str | None, year_range: tuple[int, int] = YEAR_RANGE) -> Parsed:
    """The parser of ``task`` ('year' or 'narrative-time') applied to ``raw``."""
    from workbench.probes.validity import YEAR

    return parse_year(raw, year_range) if task == YEAR else parse_minutes(raw)
