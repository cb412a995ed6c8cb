"""What a model's answer commits to: a year of first publication, or a span of narrative time.

Both parsers are pure functions of the raw answer, applied whenever answers are read (re-parsing never
calls a model). An answer that does not commit to one value is *missing*, with the reason; missing
answers are counted by the analyses, never dropped. A value read from a span (the midpoint of a range,
a decade, a century) or from a vague word ("a few hours") carries a ``flag`` naming it, so that the
analyses can count such values per group.

**Where the answer is.** Before reading, dashes and non-breaking spaces are made plain, Markdown
emphasis and code marks are removed, and the answer is cut where the model starts a new example of the
prompt ("Passage:", "Input:" on a new line). Then, in this order, the first ``<year>``/``<answer>`` tag
(the form the *Speak, Memory* prompt asks for) or the last line labelled as the answer ("Answer:",
"Final answer:", "Year:", "Time:", "Estimate:" ...) is read on its own, when there is one; for narrative
time, an answer in numbered steps whose step 4 reports the minutes (Underwood's prompt, adapted by
*Speak, Memory*) is read from step 4, where a bare number means minutes.

**Years** (``parse_year``). Every mention of a year is found: a four-digit year inside the plausible
range (``YEAR_RANGE`` unless given; other numbers such as page numbers or "1,850 pages" are passed
over), a year in words ("eighteen fifty-three", "nineteen oh five", "two thousand and three"), a range
or choice of years ("1850-1860", "1850-60", "1813/14", "between 1850 and 1860", "from 1850 to 1860",
"1850 or 1851", "the 1850s or 1860s"), a decade ("the 1850s", "1850's", "the early 1850s", "the
eighteen-fifties"), a century or part of one ("the 19th century", "the late eighteenth century",
"the first half of the 19th century", "the 1800s"), and an open bound ("before 1850", "1850 or later").
"From 1996" is the single year 1996: only "from ... to/until ..." makes a range.

- Spans are half-open for decades and centuries ("the 1850s" is [1850, 1860), midpoint 1855; "the 19th
  century" and "the 1800s" are [1800, 1900), midpoint 1850; "the 2000s" is the decade) and closed for
  ranges ("1850-1860" is [1850, 1860], midpoint 1855). "Early", "mid" and "late" take the first,
  middle and last third of a decade or century; "first half" and "second half" its halves; "the turn of
  the 20th century" is [1895, 1905).
- Years the answer says are not the publication are passed over: the year a story is set in ("set in
  1815", "takes place in"), a knowledge cutoff, a birth or death ("born 1812").
- The answer's most specific commitment is read: a single year before any span, and among spans the
  narrowest; among equals, a year the answer says is the first publication ("first published in
  1847"), then one it ties to publishing ("published", "appeared", "printed"), then the first written.
  So "first published in 1847, revised 1850" is 1847, "written in 1797 and published in 1813" is 1813,
  "probably the 1850s, perhaps 1855" is 1855, and "the late 19th century, around 1890" is 1890.
- **The span rule** (``spans``, one of ``SPAN_RULES``) decides what a span gives when it is the
  commitment: ``"decade"`` (the default) takes the midpoint of a span at most ``SPAN_RULES["decade"]``
  (20) years wide (a decade, "1850-1860", "the early 1850s", "the 1850s or 1860s"), flagged with its
  kind, and counts a wider one (a century, "the late 18th century", "1800-1850") as missing;
  ``"century"`` takes the midpoint of spans up to 100 years wide too; ``"missing"`` counts every span as
  missing (only a single year is a prediction). An open bound, and a decade without its century ("the
  fifties", "the '50s"), are always missing.
- Hedges do not make a year missing: "c. 1850", "ca. 1850", "circa", "around", "about", "~1850",
  "probably", "I'd guess", "1850?" all give 1850. No year at all is missing, as "declined to answer"
  when the answer declines ("I cannot tell", "unknown", "I'm sorry").

**Narrative time** (``parse_minutes``). The first stated duration (in step 4 when it holds one): a number (digits, "1½", "1 1/2"), or
a number word ("two", "forty-five", "two hundred", "a", "half an", "a couple of", "a dozen", and, by
convention, "a few" = "several" = 3, flagged ``vague``), and a unit; consecutive parts joined by "and",
"," or nothing are added ("two days and a night", "1 hour 30 minutes", "an hour and a half"). A range
("2-3 hours", "two to three days", "between 10 and 20 minutes", "30 minutes to an hour", "a day or
two") is read as the midpoint of its two ends (Underwood's convention), flagged ``range``; a bound
("less than a minute", "over two hours") as the bound, flagged ``bound``. Units are those of the
annotation sessions' duration parser (``workbench.annotation.durations``), which does the arithmetic;
a few more are translated for it: a night = 12 hours, a fortnight = 2 weeks, a decade = 10 years, a
century = 100 years. A bare number with no unit (outside step 4 of a numbered answer), a duration of
zero, words without a unit ("a moment", "a while"), or a refusal, is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.errors import UserError

YEAR_RANGE = (1000, 2100)
#: the span rule -> the widest span (in years) whose midpoint counts as the prediction; None: none does
SPAN_RULES = {"missing": None, "decade": 20, "century": 100}
DEFAULT_SPANS = "decade"
SPAN_RULE_TEXT = {
    "missing": "only a single year counts: a range, a decade or a century is missing",
    "decade": "a range or decade up to 20 years wide counts as its midpoint (flagged); a wider span, such as a "
              "century, is missing",
    "century": "a range, decade or century up to 100 years wide counts as its midpoint (flagged)",
}

REFUSAL = re.compile(
    r"\b(cannot|can ?not|can't|unable|impossible|not possible|unclear|uncertain|unknown|not sure|no way to|"
    r"do not know|don't know|not enough|insufficient|n/a|i'm sorry|i am sorry|no idea|not determinable)\b",
    re.IGNORECASE)
DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2012": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
                        "\u00a0": " ", "\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
_NEW_EXAMPLE = re.compile(r"\n\s*(?:passage|input|text|excerpt)\s*:", re.IGNORECASE)
_TAG = re.compile(r"<\s*(year|answer|time|minutes|duration)\s*>(.*?)<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_YEAR_LABELS = (r"(?:final\s+|my\s+)?answer|(?:predicted|estimated|publication|final)\s+year|year(?:\s+of\s+(?:first\s+)?"
                r"publication)?|(?:my\s+|best\s+)?(?:best\s+)?guess|prediction|output")
_TIME_LABELS = (r"(?:final\s+|my\s+)?answer|(?:narrative\s+|elapsed\s+)?time(?:\s+elapsed|\s+passed)?|duration|"
                r"(?:my\s+|best\s+)?estimate|prediction|output")


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: ``value`` (a year, or minutes) or None with ``reason`` saying why it is missing.

    ``flag`` is empty for a value read as stated; otherwise it names how the value was made: ``range``,
    ``decade`` or ``century`` (a span's midpoint), ``vague`` ("a few" = 3), ``bound`` ("over two hours")."""

    value: float | None
    reason: str = ""
    text: str = ""  # the words the value was read from
    flag: str = ""

    @property
    def missing(self) -> bool:
        return self.value is None


def check_spans(spans: str) -> str:
    if spans not in SPAN_RULES:
        raise UserError(f"'{spans}' is not a rule for spans of years: choose one of {', '.join(SPAN_RULES)}.")
    return spans


def _clean(raw: str) -> str:
    """Plain dashes, quotes and spaces, no Markdown emphasis, and nothing after a new example begins."""
    text = (raw or "").translate(DASHES)
    text = re.sub(r"[*`]+|^\s*#+\s*|^\s*>\s*", "", text, flags=re.MULTILINE)
    text = re.sub(r"(?<![A-Za-z0-9])_{1,2}|_{1,2}(?![A-Za-z0-9])", "", text)
    found = _NEW_EXAMPLE.search(text)
    if found and text[: found.start()].strip():
        text = text[: found.start()]
    return text


def _focus(text: str, labels: str) -> str:
    """The part of the answer to read: a tag's contents, or what follows the last line labelled as the
    answer, when there is one."""
    tag = _TAG.search(text)
    if tag and tag.group(2).strip():
        return tag.group(2)
    found = re.findall(rf"^\s*(?:-\s*)?(?:{labels})\s*(?:[:=]|-\s)\s*(.+)$", text, re.IGNORECASE | re.MULTILINE)
    return found[-1] if found else text


# ---------------------------------------------------------------------------------------------- years
_ONES_W = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS_W = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
            "nineteen"]
_TENS_W = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUE = {w: i + 1 for i, w in enumerate(_ONES_W)} | {w: i + 10 for i, w in enumerate(_TEENS_W)} | {
    w: 20 + 10 * i for i, w in enumerate(_TENS_W)}
_DECADE_W = {w[:-1] + "ies": 20 + 10 * i for i, w in enumerate(_TENS_W)}  # twenties ... nineties
_ORDINALS = {"eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15, "sixteenth": 16,
             "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "twenty-first": 21,
             "twenty first": 21}


def _alt(words) -> str:
    return "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))


_TWO_DIGITS = rf"(?:(?:{_alt(_TENS_W)})(?:[\s-](?:{_alt(_ONES_W)}))?|{_alt(_TEENS_W)})"
_CENTURY_W = rf"(?:{_alt(_TEENS_W[1:])}|twenty)"  # eleven ... twenty, the first half of a year said aloud
_Q_DECADE = r"(?:(?P<{}>early|mid|middle|late)[\s-]+(?:in\s+the\s+)?)?"
_ORDINAL = rf"(?:\d{{1,2}}(?:st|nd|rd|th)|{_alt(_ORDINALS)})"
_CENTURY_Q = (r"(?:(?P<cq>early|mid|middle|late|first\s+half|second\s+half|latter\s+half|latter\s+part|end|"
              r"beginning|start|turn|dawn|close)[\s-]+(?:(?:in|of)\s+)?(?:the\s+)?)?")

#: one pattern, alternatives in order of precedence at a position; each names its kind by its groups
_MENTION = re.compile(
    # a century: 'the late 19th century', '18th or 19th century', 'the nineteenth century'
    rf"(?:the\s+)?{_CENTURY_Q}(?P<c1>{_ORDINAL})(?:\s*(?:-|or|to|and)\s*(?P<c2>{_ORDINAL}))?[\s-]+centur(?:y|ies)\b"
    # a decade (or, for X00s, a century): 'the early 1850s', "1850's", 'mid-1850s'
    rf"|(?:the\s+)?{_Q_DECADE.format('dq')}(?P<d>\d{{3}}0)\s*'?s\b"
    # a decade in words: 'the eighteen-fifties', 'the nineteen hundreds'
    rf"|(?:the\s+)?{_Q_DECADE.format('wq')}(?P<wdc>{_CENTURY_W})[\s-]+(?P<wdd>{_alt(_DECADE_W)}|hundreds)\b"
    # a decade without its century: 'the fifties', "the '50s", 'the 50s'
    rf"|(?:the\s+)?(?:(?:early|mid|late)[\s-]+)?(?:'?(?<![\d.,])(?P<dd>\d0)\s*'?s|(?P<wd>{_alt(_DECADE_W)}))\b"
    # a year with a two-digit end: '1850-60', '1813/14'
    r"|(?<!\d[.,])(?<!\d)(?P<ra>\d{4})\s*[-/]\s*(?P<rb>\d{2})(?!\d|[.,]\d|\s*'?s\b)"
    # a year: '1850', '1850 AD'
    r"|(?<!\d[.,])(?<![\d$\u00a3])(?P<y>\d{4})(?!\d|[.,]\d)"
    # a year in words: 'eighteen fifty-three', 'nineteen oh five', 'nineteen hundred', 'two thousand and three'
    rf"|\b(?P<wc>{_CENTURY_W})[\s-]+(?:(?P<wh>hundred)(?:[\s-]+(?:and[\s-]+)?(?P<wr1>{_TWO_DIGITS}|{_alt(_ONES_W)}))?"
    rf"|(?:oh|o)[\s-]+(?P<wo>{_alt(_ONES_W)})|(?P<wr2>{_TWO_DIGITS}))\b"
    rf"|\btwo[\s-]+thousand(?:[\s-]+(?:and[\s-]+)?(?P<wt>{_TWO_DIGITS}|{_alt(_ONES_W)}))?\b",
    re.IGNORECASE)
_NOT_A_YEAR_AFTER = re.compile(r"^\s*(?:pages?|copies|words|miles|feet|foot|people|men|women|soldiers|dollars|pounds|"
                               r"francs|acres|metres|meters|km|kilometres|lines|volumes)\b", re.IGNORECASE)
_JOIN = re.compile(r"^\s*(?:-|/|to|until|till|through|thru|or|and)\s*(?:(?:the|about|around|circa|c\.|ca\.)\s+)?$",
                   re.IGNORECASE)
_BETWEEN = re.compile(r"\b(?:between|from)\s+(?:(?:the|about|around|circa|c\.|ca\.)\s+)?$", re.IGNORECASE)
_BOUND_BEFORE = re.compile(r"\b(?:before|after|prior\s+to|earlier\s+than|later\s+than|no\s+earlier\s+than|"
                           r"no\s+later\s+than|not\s+before|not\s+after|until|till|up\s+to|pre|post)[\s-]*(?:the\s+)?$",
                           re.IGNORECASE)
_BOUND_AFTER = re.compile(r"^\s*(?:or|and)\s+(?:earlier|later|before|after|beyond)\b", re.IGNORECASE)
_NOT_PUBLICATION = re.compile(
    r"(?:\b(?:set\s+(?:in|during|around|about|at)|takes?\s+place|taking\s+place|cut-?off|training\s+data|"
    r"trained\s+(?:on|until|up\s+to)|knowledge\s+(?:cut|extends|until|up\s+to)|born|died|birth|death)\b|"
    r"\b[bd]\.)[^.;\n]{0,24}$", re.IGNORECASE)
_FIRST_PUBLISHED = re.compile(
    r"\b(?:(?:first|originally|initially)\s+(?:published|appeared|printed|issued|released|came\s+out)|"
    r"first\s+(?:edition|publication|appearance)|original\s+publication)\b[^.;\n]{0,40}$", re.IGNORECASE)
_PUBLISHED = re.compile(r"\b(?:published|publication|appeared|printed|issued|released|came\s+out|edition)\b"
                        r"[^.;\n]{0,40}$", re.IGNORECASE)
_KIND_ORDER = {"year": 0, "range": 1, "decade": 1, "century": 1, "bound": 2, "undated decade": 3}


@dataclass
class _Mention:
    kind: str  # year, range, decade, century, bound, undated decade
    low: float | None
    high: float | None
    start: int
    end: int
    excluded: str = ""  # why it is not a publication year
    tier: int = 2  # 0: said to be the first publication, 1: tied to publishing, 2: neither

    @property
    def width(self) -> float:
        return 0.0 if self.low is None or self.high is None else self.high - self.low


def _words_number(text: str) -> int:
    words = text.lower().replace("-", " ").split()
    return sum(_WORD_VALUE[w] for w in words)


def _third(low: float, length: float, qualifier: str | None) -> tuple[float, float]:
    """The part of a decade or century a qualifier names ('early', 'late', 'first half' ...)."""
    q = " ".join((qualifier or "").lower().split())
    if q in ("early", "beginning", "start", "dawn"):
        return low, low + length / 3
    if q in ("mid", "middle"):
        return low + length / 3, low + 2 * length / 3
    if q in ("late", "end", "close"):
        return low + 2 * length / 3, low + length
    if q == "first half":
        return low, low + length / 2
    if q in ("second half", "latter half", "latter part"):
        return low + length / 2, low + length
    return low, low + length


def _ordinal(text: str) -> int:
    text = " ".join(text.lower().replace("-", " ").split())
    return int(re.match(r"\d+", text).group()) if text[0].isdigit() else _ORDINALS[text]


def _mention(match: re.Match) -> _Mention | None:
    g = match.groupdict()
    start, end = match.start(), match.end()
    if g["c1"]:
        first = _ordinal(g["c1"])
        last = _ordinal(g["c2"]) if g["c2"] else first
        low, high = (first - 1) * 100.0, last * 100.0
        q = " ".join((g["cq"] or "").lower().split())
        if q == "turn":  # the turn of the 20th century: about 1900
            return _Mention("decade", low - 5, low + 5, start, end)
        low, high = _third(low, high - low, q) if first == last else (low, high)
        return _Mention("century", low, high, start, end)
    if g["d"] or g["wdc"]:
        if g["d"]:
            decade = int(g["d"])
        else:
            century = _WORD_VALUE[g["wdc"].lower()] * 100
            decade = century + (0 if g["wdd"].lower() == "hundreds" else _DECADE_W[g["wdd"].lower()])
        if decade % 100 == 0 and decade != 2000:  # the 1800s: the century (the 2000s: the decade)
            return _Mention("century", *_third(decade, 100, g["dq"] or g["wq"]), start, end)
        return _Mention("decade", *_third(decade, 10, g["dq"] or g["wq"]), start, end)
    if g["dd"] or g["wd"]:
        return _Mention("undated decade", None, None, start, end)
    if g["ra"]:
        low = int(g["ra"])
        high = low - low % 100 + int(g["rb"])
        if high <= low:
            return _Mention("year", low, low, start, start + 4)
        return _Mention("range", low, high, start, end)
    if g["y"]:
        year = int(g["y"])
        return _Mention("year", year, year, start, end)
    if g["wc"]:
        century = _WORD_VALUE[g["wc"].lower()] * 100
        rest = g["wr1"] or g["wr2"] or g["wo"]
        if g["wh"] is None and rest is None:
            return None
        year = century + (_words_number(rest) if rest else 0)
        return _Mention("year", year, year, start, end)
    if match.group(0).lower().startswith("two"):
        year = 2000 + (_words_number(g["wt"]) if g["wt"] else 0)
        return _Mention("year", year, year, start, end)
    return None


def _mentions(text: str, low: int, high: int) -> tuple[list[_Mention], str]:
    """Every mention of a year or span in ``text``, ranges joined, each with its cue; and the first number
    passed over for being outside ``low``-``high``."""
    found: list[_Mention] = []
    passed_over = ""
    for match in _MENTION.finditer(text):
        mention = _mention(match)
        if mention is None:
            continue
        if mention.kind in ("year", "range"):
            if _NOT_A_YEAR_AFTER.match(text[mention.end:]):
                continue
            if not (low <= mention.low <= high and low <= mention.high <= high):
                passed_over = passed_over or f"{int(mention.low)} is outside {low}-{high}"
                continue
        found.append(mention)
    joined: list[_Mention] = []
    for mention in found:  # '1850 to 1860', 'between 1850 and 1860', 'the 1850s or 1860s', '1850 or 1851'
        previous = joined[-1] if joined else None
        if (previous is not None and previous.kind in ("year", "range", "decade") and mention.kind in
                ("year", "range", "decade") and _JOIN.match(text[previous.end: mention.start])):
            between = text[previous.end: mention.start]
            both_decades = previous.kind == mention.kind == "decade"
            if (re.search(r"\band\b", between, re.IGNORECASE) and not both_decades
                    and not _BETWEEN.search(text[: previous.start])):
                joined.append(mention)  # '1850 and 1860' without 'between': two years
                continue
            joined[-1] = _Mention("range", min(previous.low, mention.low), max(previous.high, mention.high),
                                  previous.start, mention.end)
            continue
        joined.append(mention)
    previous_end = 0
    for mention in joined:
        before = text[max(previous_end, mention.start - 80): mention.start]
        previous_end = mention.end
        if mention.kind in ("year", "decade") and (_BOUND_BEFORE.search(before) or
                                                   _BOUND_AFTER.match(text[mention.end:])):
            mention.kind = "bound"
        if _NOT_PUBLICATION.search(before):
            mention.excluded = _why_not_publication(_NOT_PUBLICATION.search(before).group(0))
        elif _FIRST_PUBLISHED.search(before):
            mention.tier = 0
        elif _PUBLISHED.search(before):
            mention.tier = 1
    return joined, passed_over


def _why_not_publication(cue: str) -> str:
    cue = cue.lower()
    if re.search(r"cut|knowledge|train", cue):
        return "a knowledge cutoff"
    if re.search(r"born|died|birth|death|\bb\.|\bd\.", cue):
        return "a birth or death"
    return "the year the story is set in"


_KIND_NAMES = {"range": "a range", "decade": "a decade", "century": "a century (or part of one)"}


def parse_year(raw: str | None, year_range: tuple[int, int] = YEAR_RANGE, spans: str = DEFAULT_SPANS) -> Parsed:
    """The year the answer commits to (see the module docstring)."""
    widest = SPAN_RULES[check_spans(spans)]
    text = _focus(_clean(raw or ""), _YEAR_LABELS)
    if not text.strip():
        return Parsed(None, "empty answer")
    low, high = year_range
    mentions, passed_over = _mentions(text, low, high)
    candidates = [m for m in mentions if not m.excluded]
    if not candidates:
        if mentions:
            first = mentions[0]
            return Parsed(None, f"only {first.excluded}, not the publication", text[first.start: first.end].strip())
        if REFUSAL.search(text):
            return Parsed(None, "declined to answer")
        return Parsed(None, passed_over or "no year")
    chosen = min(candidates, key=lambda m: (_KIND_ORDER[m.kind], m.width, m.tier, m.start))
    words = text[chosen.start: chosen.end].strip()
    if chosen.kind == "year":
        return Parsed(float(chosen.low), "", words)
    if chosen.kind == "bound":
        return Parsed(None, "an open bound (before or after a year), not a year", words)
    if chosen.kind == "undated decade":
        return Parsed(None, "a decade without its century", words)
    width = chosen.width
    if widest is None:
        return Parsed(None, f"{_KIND_NAMES[chosen.kind]}, not one year (spans rule 'missing')", words)
    if width > widest:
        span = "a century (or part of one)" if chosen.kind == "century" else f"a span of {width:g} years"
        return Parsed(None, f"{span}, wider than {widest} years (spans rule '{spans}')", words)
    return Parsed((chosen.low + chosen.high) / 2, "", words, chosen.kind)


# ---------------------------------------------------------------------------------------------- durations
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "a hundred": 100, "a dozen": 12,
    "dozen": 12, "a single": 1, "single": 1,
}
#: vague words -> (value, flagged as vague)
_VAGUE = [("a couple of", 2, False), ("a couple", 2, False), ("a few", 3, True), ("several", 3, True),
          ("half an", 0.5, False), ("half a", 0.5, False), ("a half", 0.5, False), ("an", 1, False), ("a", 1, False)]
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_ONES = "one|two|three|four|five|six|seven|eight|nine"
#: units the annotation parser does not know -> (amount, unit it knows)
_EXTRA_UNITS = {"night": (12, "hours"), "nights": (12, "hours"), "fortnight": (2, "weeks"), "fortnights": (2, "weeks"),
                "decade": (10, "years"), "decades": (10, "years"), "century": (100, "years"), "centuries": (100, "years")}
_FRACTIONS = [(re.compile(r"(\d+)\s*\u00bd"), r"\1.5"), (re.compile(r"(\d+)\s*\u00bc"), r"\1.25"),
              (re.compile(r"(\d+)\s*\u00be"), r"\1.75"), (re.compile(r"(\d+)\s+1/2\b"), r"\1.5"),
              (re.compile(r"\u00bd"), "0.5"), (re.compile(r"\u00bc"), "0.25"), (re.compile(r"\u00be"), "0.75"),
              (re.compile(r"(?<![\d/])1/2\b"), "0.5")]
_BOUND = re.compile(r"\b(?:less\s+than|more\s+than|under|over|at\s+least|at\s+most|no\s+more\s+than|up\s+to|within|"
                    r"fewer\s+than|upwards\s+of|well\s+over|just\s+over|just\s+under)\s*$", re.IGNORECASE)


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

        words = alternatives(sorted(_NUMBER_WORDS) + [v for v, _, _ in _VAGUE])
        simple = rf"(?:{_TENS})[\s-](?:{_ONES})|{words}"
        pattern = re.compile(
            rf"(?<![\w.,])(?:(?P<num>\d{{1,3}}(?:,\d{{3}})+|\d+(?:[.,]\d+)?|[.]\d+)\s*-?\s*(?P<unit>{alternatives(units)})"
            rf"|(?P<wnum>(?:{simple})\s+(?:hundred|thousand)|{simple})[\s-]+(?P<wunit>{alternatives(u for u in units if len(u) > 2)}))"
            rf"\b(?P<half>\s+and\s+a\s+half)?", re.IGNORECASE)
        _UNIT_WORDS = (pattern, units)
    return _UNIT_WORDS


def _number(word: str) -> tuple[float, bool]:
    """The value of a number (digits or words) and whether it is a vague word."""
    word = " ".join(word.lower().replace("-", " ").split())
    if word[0].isdigit() or word[0] == ".":
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+", word):  # 1,000
            return float(word.replace(",", "")), False
        return float(word.replace(",", ".")), False
    for multiplier, size in ((" hundred", 100), (" thousand", 1000)):
        if word.endswith(multiplier) and word != "a hundred":
            value, vague = _number(word[: -len(multiplier)])
            return value * size, vague
    for vague, value, flagged in _VAGUE:
        if word == vague:
            return value, flagged
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word], False
    tens, _, ones = word.partition(" ")
    return _NUMBER_WORDS[tens] + _NUMBER_WORDS.get(ones, 0), False


_JOIN_PARTS = re.compile(r"^\s*(?:,\s*|and\s+|plus\s+|,\s*and\s+)?$", re.IGNORECASE)
_RANGE_JOIN = re.compile(r"^\s*(?:-|to|or)\s*$", re.IGNORECASE)
_RANGE_START = re.compile(r"(?:between\s+(?P<a>\S+)\s+and|(?P<b>\d+(?:[.,]\d+)?|[a-z]+)\s*(?:-|to|or))\s*$",
                          re.IGNORECASE)
_RANGE_END = re.compile(rf"^\s*(?:-|to|or)\s*(?P<n>\d+(?:[.,]\d+)?|{_ONES}|two|three|four|five|six|ten)\b(?!\s*[a-z])",
                        re.IGNORECASE)


def _minutes_of(amount: float, unit_word: str, units: dict[str, tuple[float, str]]) -> float:
    from workbench.annotation.durations import parse_duration

    factor, unit = units[unit_word.lower()]
    return parse_duration(f"{amount * factor:g} {unit}").minutes  # UserError for no time at all


def _unit(match: re.Match) -> str:
    return match.group("unit") or match.group("wunit")


def _part_minutes(match: re.Match, units: dict[str, tuple[float, str]]) -> tuple[float, bool]:
    amount, vague = _number(match.group("num") or match.group("wnum"))
    amount += 0.5 if match.group("half") else 0.0
    return _minutes_of(amount, _unit(match), units), vague


def _range_start(before: str, first: re.Match, units: dict[str, tuple[float, str]]) -> tuple[float, int] | None:
    """For '2-3 hours', 'two to three days', 'between 10 and 20 minutes': the first end in minutes, and
    where it starts."""
    found = _RANGE_START.search(before)
    if found is None:
        return None
    try:
        amount, _ = _number(found.group("a") or found.group("b"))
    except (KeyError, ValueError, IndexError):
        return None  # 'up to 3 hours': not a range
    return _minutes_of(amount, _unit(first), units), found.start()


_STEP = re.compile(r"^\s*(?:[-*]\s*)?(?:step\s*)?(?P<n>\d)\s*[:.)]\s*(?P<text>.*)$", re.IGNORECASE | re.MULTILINE)


def _step_four(text: str) -> str | None:
    """Step 4 of an answer in numbered steps (three or more, step 4 among them), where Underwood's prompt
    asks for the minutes; None for any other answer."""
    steps = {int(m.group("n")): m.group("text") for m in _STEP.finditer(text)}
    if 4 in steps and len(steps) >= 3:
        return steps[4]
    return None


def parse_minutes(raw: str | None) -> Parsed:
    """The narrative time the answer commits to, in minutes (see the module docstring)."""
    text = _clean(raw or "")
    for pattern, replacement in _FRACTIONS:
        text = pattern.sub(replacement, text)
    focused = _focus(text, _TIME_LABELS)
    step = _step_four(text) if focused is text else None
    if step is not None:
        bare = re.fullmatch(r"\s*(?:about\s+|approximately\s+|roughly\s+|~\s*)?(\d+(?:\.\d+)?)\s*[.!]?\s*", step)
        if bare:
            minutes = float(bare.group(1))
            return Parsed(minutes, "", bare.group(1)) if minutes > 0 else Parsed(None, "no time passes", step.strip())
        read = _read_minutes(step)
        if not read.missing:
            return read  # otherwise a numbered list that is not Underwood's: the whole answer is read
    return _read_minutes(focused)


def _read_minutes(text: str) -> Parsed:
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
    value, vague = _part_minutes(first, units)
    flag = "vague" if vague else ""
    ranged = _range_start(text[:start], first, units)
    if ranged is not None:
        low, start = ranged
        return Parsed((low + value) / 2, "", text[start:end], "range")
    if _BOUND.search(text[:start]):
        flag = "bound"
    ending = _RANGE_END.match(text[end:])
    if ending is not None:  # 'a day or two', 'an hour or 2'
        amount, _ = _number(ending.group("n"))
        other = _minutes_of(amount, _unit(first), units)
        return Parsed((value + other) / 2, "", text[start: end + ending.end()], "range")
    for part in parts[1:]:
        between = text[end: part.start()]
        if _RANGE_JOIN.match(between) and end == first.end():  # '30 minutes to an hour'
            other, _ = _part_minutes(part, units)
            return Parsed((value + other) / 2, "", text[start: part.end()], "range")
        if not _JOIN_PARTS.match(between):
            break
        more, more_vague = _part_minutes(part, units)
        value += more
        flag = flag or ("vague" if more_vague else "")
        end = part.end()
    return Parsed(value, "", text[start:end], flag)


def parse(task: str, raw: str | None, year_range: tuple[int, int] = YEAR_RANGE, spans: str = DEFAULT_SPANS) -> Parsed:
    """The parser of ``task`` ('year' or 'narrative-time') applied to ``raw``."""
    from workbench.probes.validity import YEAR

    return parse_year(raw, year_range, spans) if task == YEAR else parse_minutes(raw)
