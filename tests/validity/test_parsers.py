"""The year and narrative-time parsers on every answer shape we could think of."""

import math

import pytest

from workbench.annotation.durations import MINUTES_PER_UNIT
from workbench.probes.validity.parsers import parse, parse_minutes, parse_year

HOUR, DAY, WEEK, YEAR_MIN = (MINUTES_PER_UNIT[u] for u in ("hours", "days", "weeks", "years"))


@pytest.mark.parametrize("answer, year", [
    ("1813", 1813),
    ("1813.", 1813),
    ("It was first published in 1813.", 1813),
    ("Answer: 1925", 1925),
    ("I would guess around 1925, give or take a few years.", 1925),
    ("Year: **1899**", 1899),
    ("c. 1850", 1850),
    ("ca.1850", 1850),
    ("1850?", 1850),
    ("'1871'", 1871),
    ("I'm not certain, but my best guess is 1902.", 1902),  # declining words, then a commitment
    ("Published in 1813, though written in 1797.", 1813),  # the first year counts
    ("The novel (page 3021 of the collected works) appeared in 1871", 1871),  # outside the range: passed over
    ("The novel (1,850 pages) appeared in 1851", 1851),  # 1,850 is not a year
    ("Based on the style, I'd say it is Victorian.\nAnswer: 1899", 1899),  # the answer line wins
])
def test_years_the_answer_commits_to(answer, year):
    parsed = parse_year(answer)
    assert parsed.value == year and not parsed.missing and parsed.reason == ""


@pytest.mark.parametrize("answer, reason", [
    ("The 1850s", "a decade, not a year"),
    ("1850's", "a decade, not a year"),
    ("Probably the 1850s, perhaps 1855", "a decade, not a year"),
    ("1850-1860", "a range, not one year"),
    ("1850\u20131860", "a range, not one year"),
    ("1850 to 1860", "a range, not one year"),
    ("between 1850 and 1860", "a range, not one year"),
    ("from 1850 until 1860", "a range, not one year"),
    ("1850 or 1851", "a range, not one year"),
    ("1813/14", "a range, not one year"),
    ("I cannot determine the year from this passage.", "declined to answer"),
    ("Unknown", "declined to answer"),
    ("the eighteenth century", "no four-digit year"),
    ("18th century", "no four-digit year"),
    ("", "empty answer"),
    (None, "empty answer"),
    ("9999", "9999 is outside 1000-2100"),
])
def test_answers_without_one_year_are_missing_with_a_reason(answer, reason):
    parsed = parse_year(answer)
    assert parsed.missing and math.isnan(float("nan") if parsed.value is None else parsed.value)
    assert parsed.reason == reason


def test_the_plausible_range_is_configurable():
    assert parse_year("1450, or so").value == 1450
    assert parse_year("1450, or so", (1500, 2030)).missing
    assert parse_year("copy 1450, printed 1702", (1500, 2030)).value == 1702


@pytest.mark.parametrize("answer, minutes", [
    ("2 hours", 2 * HOUR),
    ("About two hours.", 2 * HOUR),
    ("Roughly 45 minutes", 45),
    ("90 min", 90),
    ("3d", 3 * DAY),
    ("1.5 weeks", 1.5 * WEEK),
    ("1,5 hours", 1.5 * HOUR),
    ("a few hours", 3 * HOUR),
    ("several days", 3 * DAY),
    ("a couple of weeks", 2 * WEEK),
    ("half an hour", 30),
    ("an hour and a half", 90),
    ("1 hour 30 minutes", 90),
    ("two days and a night", 2 * DAY + 12 * HOUR),
    ("a day, and two hours", DAY + 2 * HOUR),
    ("twenty-four hours", 24 * HOUR),
    ("a few seconds", 3 / 60),
    ("roughly a fortnight", 2 * WEEK),
    ("two decades", 20 * YEAR_MIN),
    ("It takes a day.", DAY),
    ("The scene lasts about 5 minutes, then 2 days pass.", 5),  # the first duration stated
    ("Time: 3 hours", 3 * HOUR),
    ("Let me think. The walk is long.\nAnswer: 3 hours", 3 * HOUR),
    ("up to 3 hours", 3 * HOUR),  # 'up to' is not a range
])
def test_durations_in_minutes(answer, minutes):
    parsed = parse_minutes(answer)
    assert parsed.value == pytest.approx(minutes) and parsed.reason == ""


@pytest.mark.parametrize("answer, minutes", [
    ("2-3 hours", 2.5 * HOUR),
    ("2 \u2013 3 hours", 2.5 * HOUR),
    ("two to three days", 2.5 * DAY),
    ("between 10 and 20 minutes", 15),
    ("5 or 6 hours", 5.5 * HOUR),
    ("30 minutes to an hour", 45),
])
def test_a_range_is_read_as_its_midpoint(answer, minutes):
    assert parse_minutes(answer).value == pytest.approx(minutes)


@pytest.mark.parametrize("answer, reason", [
    ("I can't tell from this passage.", "declined to answer"),
    ("120", "a number without a unit"),
    ("a moment", "no duration"),
    ("", "empty answer"),
    ("0 minutes", "no time passes"),
    ("and then", "no duration"),  # 'and' is never 'an' + 'd' (days)
])
def test_durations_that_are_missing(answer, reason):
    parsed = parse_minutes(answer)
    assert parsed.missing and parsed.reason == reason


def test_parse_picks_the_parser_of_the_task():
    assert parse("year", "1813").value == 1813
    assert parse("narrative-time", "2 hours").value == 120
