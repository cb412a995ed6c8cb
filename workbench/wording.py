"""How Palimpsest names things for people: run kinds, statuses, times, parameters and run settings in plain words.

The project stores short machine names ("cloze-logprob", "rep-judge", ISO timestamps, JSON parameters);
every page (through ``ui.wording``) and every view a core query builds for a page shows them through these
functions, so a scholar reads the same words everywhere. Qt-free and pandas-free: the display frames of the
probes' ``views`` modules use it, and the window imports it without pandas.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

STATUSES = {"pending": "not started"}  # done, running, cancelled, interrupted read well as they are

#: generation parameters (as stored) -> plain names
PARAMETERS = {
    "temperature": "temperature",
    "max_tokens": "longest answer (tokens)",
    "seed": "seed",
    "top_p": "top-p",
    "top_k": "candidates kept",
    "min_tokens": "shortest answer (tokens)",
    "samples": "samples per prompt",
}

#: how the REP results are labelled, by classifier key prefix
LEXICAL = "lexical"


def missing(value: Any) -> bool:
    """None, NaN, pandas' NA or NaT (a list or other container is never 'missing')."""
    if value is None:
        return True
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas' NA and NaT, without importing pandas
        return True
    try:
        return bool(value != value)  # NaN (a float or numpy's) is the one value unequal to itself
    except (TypeError, ValueError):
        return False


def run_kind(kind: Any) -> str:
    """'cloze-logprob' -> 'Name cloze, log-probability of the true name': the words of the probe that declared
    the kind (``workbench.runs.RunKind``); unknown kinds are shown as they are."""
    if missing(kind):
        return ""
    from workbench.runs import kind_name

    return kind_name(str(kind))


def status(value: Any) -> str:
    if missing(value):
        return ""
    return STATUSES.get(str(value), str(value))


def when(value: Any) -> str:
    """An ISO timestamp as 'YYYY-MM-DD HH:MM' in the computer's own time zone (blank when missing)."""
    if missing(value) or not str(value).strip():
        return ""
    text = str(value)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return text[:16].replace("T", " ")
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M")


def number(value: Any) -> str:
    """A parameter value: whole numbers without '.0', others with up to three decimals."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)


def parameters(params: dict | None) -> str:
    """Generation parameters as 'temperature 0, longest answer (tokens) 16' (nested values are flattened)."""
    if not params:
        return ""
    parts = []
    for key, value in params.items():
        if missing(value) or value == "" or value == {} or value == []:
            continue
        name = PARAMETERS.get(key, key.replace("_", " "))
        if isinstance(value, dict):
            inner = parameters(value)
            if inner:
                parts.append(f"{name}: {inner}")
        elif isinstance(value, (list, tuple)):
            parts.append(f"{name} " + ", ".join(number(v) for v in value))
        else:
            parts.append(f"{name} {number(value)}")
    return ", ".join(parts)


def run_about(kind: Any, config: dict | None) -> str:
    """What a run was about, from its stored configuration: the imported file, the REP sets, the samples."""
    config = config or {}
    parts = []
    if config.get("imported_from"):
        parts.append(f"imported from {config['imported_from']}")
    passages = config.get("passage_ids")
    count = len(passages) if isinstance(passages, list) else config.get("passages")  # an import gives the number
    if isinstance(count, int) and not isinstance(count, bool) and count:
        parts.append(f"{count:,} passage{'s' * (count != 1)}")
    sets = config.get("sets")
    if isinstance(sets, list) and sets:
        names = [str(s.get("name", "")).replace("_", " ") for s in sets if isinstance(s, dict)]
        parts.append(", ".join(n for n in names if n))
    single = config.get("set")
    if isinstance(single, dict) and single.get("name"):
        parts.append(str(single["name"]).replace("_", " "))
    if config.get("samples"):
        parts.append(f"{config['samples']} per prompt")
    return "; ".join(parts)


def classifier(key: str) -> str:
    """A REP classifier key as the Results tab offers it: 'lexical' -> 'Word lists', 'judge:M' -> 'Judge: M'."""
    if key == LEXICAL:
        return "Word lists"
    if key.startswith("judge:"):
        return f"Judge: {key.partition(':')[2]}"
    return key


def role_key(key: Any) -> str:
    """A role or demographic key for reading: 'top_student' -> 'top student'."""
    return "" if missing(key) else str(key).replace("_", " ")
