"""The year and narrative-time parsers against tables of answers written the way models write them.

Each row: an answer, and what it must give: a value read as stated, a value with the flag saying how it
was made (a span's midpoint, a vague word, a bound), or missing with (part of) the reason. The phrasings
come from the prompts and examples of *Speak, Memory* (``<year>1996</year>``; Underwood's numbered steps
with the minutes in step 4) and from the ways chat and base models answer such prompts: hedges, Markdown,
labels, tags, a title or a setting named beside the year, few-shot continuations, refusals, words.
"""

import pytest

from workbench.annotation.durations import MINUTES_PER_UNIT
from workbench.errors import UserError
from workbench.probes.validity.parsers import SPAN_RULES, parse, parse_minutes, parse_year

HOUR, DAY, WEEK, MONTH, YEAR_MIN = (MINUTES_PER_UNIT[u] for u in ("hours", "days", "weeks", "months", "years"))


class Missing(str):
    """An answer that must be missing; the text is a part of the reason it must give."""


def flagged(value, flag):
    return (value, flag)


# ---------------------------------------------------------------------------------------------- years
#: answer -> what the default rule (spans 'decade') must read
YEAR_PHRASINGS = [
    # a year as asked
    ("1813", 1813),
    ("1813.", 1813),
    (" 1813\n", 1813),
    ("It was first published in 1813.", 1813),
    ("1850?", 1850),  # a trailing question mark
    ("'1871'", 1871),
    ("1850 AD", 1850),
    # 'from': a single year, never an open range
    ("From 1996.", 1996),
    ("It dates from 1996.", 1996),
    ("This passage is from 1996.", 1996),
    ("The novel is probably from around 1996.", 1996),
    ("from the year 1905", 1905),
    # hedges
    ("c. 1850", 1850),
    ("c.1850", 1850),
    ("ca. 1850", 1850),
    ("ca.1850", 1850),
    ("circa 1850", 1850),
    ("around 1850", 1850),
    ("about 1850", 1850),
    ("approximately 1850", 1850),
    ("~1850", 1850),
    ("probably 1850", 1850),
    ("Probably 1850, but I'm not sure.", 1850),
    ("I'd guess 1850.", 1850),
    ("I would guess around 1925, give or take a few years.", 1925),
    ("I'm not certain, but my best guess is 1902.", 1902),  # declining words, then a commitment
    ("1850-ish", 1850),
    ("1450, or so", 1450),  # 'or so' is no choice
    # Markdown, labels, tags
    ("**1850**", 1850),
    ("*1850*", 1850),
    ("`1850`", 1850),
    ("Year: **1899**", 1899),
    ("**Answer:** 1899", 1899),
    ("### 1899", 1899),
    ("Answer: 1925", 1925),
    ("Final answer: 1925", 1925),
    ("Based on the style, I'd say it is Victorian.\nAnswer: 1899", 1899),  # the answer line wins
    ("Reasoning: the airplanes suggest a date after 1903.\nYear: 1925", 1925),
    ("<year>1996</year>", 1996),  # the form Speak, Memory asks for
    ("Output: <year>1905</year>", 1905),
    ("The cathode-ray set and the airplanes point to the 1990s.\n<year>1996</year>", 1996),
    ("<answer>1905</answer>", 1905),
    # a base model going on with the few-shot pattern: the answer ends where a new example begins
    ("1911\n\nPassage: The coach was late.\nYear: 1923", 1911),
    ("1911\nInput: The coach was late.\nOutput: <year>1923</year>", 1911),
    # two years named: the one said to be the (first) publication, else the first
    ("First published in 1847, revised 1850.", 1847),
    ("Written in 1797 and first published in 1813.", 1813),
    ("Published in 1813, though written in 1797.", 1813),
    ("It was serialised in 1850 and first published in book form in 1852.", 1852),
    ("The story is set in 1815, but the novel was published in 1847.", 1847),
    ("This is from George Orwell's Nineteen Eighty-Four, published in 1949.", 1949),
    ("This passage is from Pride and Prejudice by Jane Austen, which was written between 1796 and 1797 and first "
     "published in 1813.", 1813),
    ("1850 or 1860? I'll say 1850, though 1860 is possible.", 1850),
    ("As an AI with a knowledge cutoff in 2021, I'd still guess 1950.", 1950),
    ("Dickens (born 1812) wrote it in the 1850s; I'd say 1853.", 1853),
    # a single year beats a span
    ("Probably the 1850s, perhaps 1855", 1855),
    ("The late 19th century, probably around 1890.", 1890),
    ("Sometime between 1850 and 1860, most likely 1857.", 1857),
    # numbers that are not years
    ("The novel (page 3021 of the collected works) appeared in 1871", 1871),  # outside the range: passed over
    ("The novel (1,850 pages) appeared in 1851", 1851),
    ("5000 copies were printed in 1851", 1851),
    ("It ran to 1850 pages and came out in 1851.", 1851),
    # years in words
    ("eighteen fifty-three", 1853),
    ("Eighteen hundred and fifty", 1850),
    ("nineteen oh five", 1905),
    ("nineteen hundred", 1900),
    ("two thousand and three", 2003),
    ("twenty twelve", 2012),
    # ranges: the midpoint, flagged (spans up to 20 years)
    ("1850-1860", flagged(1855, "range")),
    ("1850\u20131860", flagged(1855, "range")),
    ("1850 - 60", flagged(1855, "range")),
    ("1850 to 1860", flagged(1855, "range")),
    ("between 1850 and 1860", flagged(1855, "range")),
    ("from 1850 until 1860", flagged(1855, "range")),
    ("from 1850 to 1860.", flagged(1855, "range")),
    ("1850 or 1851", flagged(1850.5, "range")),
    ("1813/14", flagged(1813.5, "range")),
    ("the 1850s or 1860s", flagged(1860, "range")),
    ("1850-1880", Missing("a span of 30 years, wider than 20 years")),
    ("between 1800 and 1900", Missing("wider than 20 years")),
    # decades: the midpoint of [1850, 1860), flagged
    ("The 1850s", flagged(1855, "decade")),
    ("1850's", flagged(1855, "decade")),
    ("the 1850\u2019s", flagged(1855, "decade")),
    ("**the 1920s**", flagged(1925, "decade")),
    ("the mid-1850s", flagged(1855, "decade")),
    ("the early 1850s", flagged(1850 + 10 / 6, "decade")),
    ("the late 1850s", flagged(1860 - 10 / 6, "decade")),
    ("in the eighteen-fifties", flagged(1855, "decade")),
    ("the 2000s", flagged(2005, "decade")),  # the decade: 'the 21st century' names the century
    ("Around the turn of the 20th century.", flagged(1900, "decade")),
    ("the fifties", Missing("a decade without its century")),
    ("the '50s", Missing("a decade without its century")),
    # centuries: missing by default
    ("the 19th century", Missing("a century (or part of one), wider than 20 years")),
    ("the eighteenth century", Missing("a century")),
    ("18th century", Missing("a century")),
    ("18th-century England", Missing("a century")),
    ("the late eighteenth century", Missing("a century")),
    ("the first half of the 19th century", Missing("a century")),
    ("the 1800s", Missing("a century")),
    ("the 18th or 19th century", Missing("a century")),
    # open bounds, settings
    ("before 1850", Missing("an open bound")),
    ("after 1900", Missing("an open bound")),
    ("pre-1850", Missing("an open bound")),
    ("1850 or later", Missing("an open bound")),
    ("The story is set in 1815.", Missing("only the year the story is set in")),
    # refusals and nothing
    ("I cannot determine the year from this passage.", Missing("declined to answer")),
    ("Unknown", Missing("declined to answer")),
    ("I'm sorry, but I can't identify when this was written.", Missing("declined to answer")),
    ("The year is uncertain.", Missing("declined to answer")),
    ("N/A", Missing("declined to answer")),
    ("Victorian", Missing("no year")),
    ("", Missing("empty answer")),
    (None, Missing("empty answer")),
    ("9999", Missing("9999 is outside 1000-2100")),
]


def check(parsed, expected):
    if isinstance(expected, Missing):
        assert parsed.missing, parsed
        assert expected in parsed.reason, parsed
    elif isinstance(expected, tuple):
        value, flag = expected
        assert parsed.value == pytest.approx(value) and parsed.flag == flag and parsed.reason == "", parsed
    else:
        assert parsed.value == pytest.approx(expected) and parsed.flag == "" and parsed.reason == "", parsed


def test_the_year_table_is_long_enough():
    assert len(YEAR_PHRASINGS) >= 60
    assert sum(isinstance(e, Missing) for _, e in YEAR_PHRASINGS) >= 15


@pytest.mark.parametrize("answer, expected", YEAR_PHRASINGS)
def test_years_as_models_write_them(answer, expected):
    check(parse_year(answer), expected)


@pytest.mark.parametrize("answer, missing, decade, century", [
    ("1850", 1850, 1850, 1850),
    ("1850-1860", None, flagged(1855, "range"), flagged(1855, "range")),
    ("the 1850s", None, flagged(1855, "decade"), flagged(1855, "decade")),
    ("1850-1880", None, None, flagged(1865, "range")),
    ("the 19th century", None, None, flagged(1850, "century")),
    ("the nineteenth century", None, None, flagged(1850, "century")),
    ("the 1800s", None, None, flagged(1850, "century")),
    ("the late eighteenth century", None, None, flagged(1800 - 100 / 6, "century")),
    ("mid-19th century", None, None, flagged(1850, "century")),
    ("the first half of the 19th century", None, None, flagged(1825, "century")),
    ("the 18th or 19th century", None, None, None),  # 200 years: too wide even for 'century'
])
def test_the_span_rule_decides_what_a_span_gives(answer, missing, decade, century):
    for spans, expected in (("missing", missing), ("decade", decade), ("century", century)):
        parsed = parse_year(answer, spans=spans)
        if expected is None:
            assert parsed.missing and parsed.reason, (spans, parsed)
            assert f"'{spans}'" in parsed.reason
        else:
            check(parsed, expected)
    assert SPAN_RULES == {"missing": None, "decade": 20, "century": 100}


def test_an_unknown_span_rule_is_refused_plainly():
    with pytest.raises(UserError, match="choose one of missing, decade, century"):
        parse_year("1850", spans="halves")


def test_the_plausible_range_is_configurable():
    assert parse_year("1450, or so").value == 1450
    assert parse_year("1450, or so", (1500, 2030)).missing
    assert parse_year("copy 1450, printed 1702", (1500, 2030)).value == 1702


# ---------------------------------------------------------------------------------------------- durations
UNDERWOOD = ("1: A detective wakes up the next morning, makes coffee, showers and dresses.\n"
             "2: Making coffee, showering and dressing take at least an hour; so, an hour to 90 minutes.\n"
             "3: 1.25 hours have elapsed. Multiplying by 60 minutes an hour that's 75 minutes.\n"
             "4: 75 minutes.\n"
             "5: Low confidence.")

TIME_PHRASINGS = [
    # a number and a unit
    ("2 hours", 2 * HOUR),
    ("2 hours.", 2 * HOUR),
    ("About two hours.", 2 * HOUR),
    ("Roughly 45 minutes", 45),
    ("approximately 3 days", 3 * DAY),
    ("~10 minutes", 10),
    ("90 min", 90),
    ("3d", 3 * DAY),
    ("2 hrs", 2 * HOUR),
    ("1.5 weeks", 1.5 * WEEK),
    ("1,5 hours", 1.5 * HOUR),
    ("1\u00bd hours", 1.5 * HOUR),
    ("1 1/2 hours", 1.5 * HOUR),
    ("1,440 minutes", DAY),
    ("3 months", 3 * MONTH),
    ("It takes a day.", DAY),
    ("The scene covers roughly 10 minutes.", 10),
    ("The scene lasts about 5 minutes, then 2 days pass.", 5),  # the first duration stated
    # words
    ("half an hour", 30),
    ("an hour and a half", 90),
    ("twenty-four hours", DAY),
    ("forty-five minutes", 45),
    ("a couple of weeks", 2 * WEEK),
    ("a single day", DAY),
    ("a dozen years", 12 * YEAR_MIN),
    ("two hundred years", 200 * YEAR_MIN),
    ("roughly a fortnight", 2 * WEEK),
    ("two decades", 20 * YEAR_MIN),
    ("a night", 12 * HOUR),
    # parts added
    ("1 hour 30 minutes", 90),
    ("two days and a night", 2 * DAY + 12 * HOUR),
    ("a day, and two hours", DAY + 2 * HOUR),
    # vague words: 3 by convention, flagged
    ("a few minutes", flagged(3, "vague")),
    ("a few hours", flagged(3 * HOUR, "vague")),
    ("several days", flagged(3 * DAY, "vague")),
    ("a few seconds", flagged(3 / 60, "vague")),
    ("several hundred years", flagged(300 * YEAR_MIN, "vague")),
    # ranges: the midpoint (Underwood's convention), flagged
    ("2-3 hours", flagged(2.5 * HOUR, "range")),
    ("2 \u2013 3 hours", flagged(2.5 * HOUR, "range")),
    ("two to three days", flagged(2.5 * DAY, "range")),
    ("between 10 and 20 minutes", flagged(15, "range")),
    ("5 or 6 hours", flagged(5.5 * HOUR, "range")),
    ("30 minutes to an hour", flagged(45, "range")),
    ("a day or two", flagged(1.5 * DAY, "range")),
    ("an hour or two", flagged(1.5 * HOUR, "range")),
    # bounds: the bound, flagged
    ("less than a minute", flagged(1, "bound")),
    ("over two hours", flagged(2 * HOUR, "bound")),
    ("at least a week", flagged(WEEK, "bound")),
    ("up to 3 hours", flagged(3 * HOUR, "bound")),
    ("an hour or so", HOUR),  # 'or so' is no range
    # Markdown, labels, tags, steps
    ("**3 hours**", 3 * HOUR),
    ("Time: 3 hours", 3 * HOUR),
    ("**Answer:** 3 hours", 3 * HOUR),
    ("Time elapsed: 2 days", 2 * DAY),
    ("Let me think. The walk is long, maybe 2 days.\nAnswer: 3 hours", 3 * HOUR),
    ("<time>75 minutes</time>", 75),
    (UNDERWOOD, 75),  # step 4 of Underwood's numbered answer, not the hour of step 2
    (UNDERWOOD.replace("\n", "\n- ").replace("1:", "- 1:", 1), 75),
    (UNDERWOOD.replace("4: 75 minutes.", "4: 75"), 75),  # step 4 asks for minutes: a bare number is minutes
    ("3 hours\n\nPassage: She slept.\nTime: 8 hours", 3 * HOUR),  # a base model's next example is not read
    # missing
    ("I can't tell from this passage.", Missing("declined to answer")),
    ("It is impossible to say.", Missing("declined to answer")),
    ("N/A", Missing("declined to answer")),
    ("120", Missing("a number without a unit")),
    ("a moment", Missing("no duration")),
    ("a while", Missing("no duration")),
    ("", Missing("empty answer")),
    ("0 minutes", Missing("no time passes")),
    ("and then", Missing("no duration")),  # 'and' is never 'an' + 'd' (days)
]


def test_the_narrative_time_table_is_long_enough():
    assert len(TIME_PHRASINGS) >= 60


@pytest.mark.parametrize("answer, expected", TIME_PHRASINGS)
def test_narrative_times_as_models_write_them(answer, expected):
    check(parse_minutes(answer), expected)


def test_parse_picks_the_parser_of_the_task():
    assert parse("year", "1813").value == 1813
    assert parse("year", "the 19th century", spans="century").value == 1850
    assert parse("narrative-time", "2 hours").value == 120


def test_a_numbered_list_that_is_not_underwoods_is_read_whole():
    answer = ("1. She opens the letter.\n2. She reads it twice.\n3. She calls for the carriage.\n"
              "4. She waits at the window.\nAll this takes about 20 minutes.")
    assert parse_minutes(answer).value == 20
