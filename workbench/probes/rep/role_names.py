"""The names of REP roles as tables and charts show them: the set's own name, told apart where two roles of
one demographic share it ('partner (of a man)', 'partner (of a woman)')."""

from __future__ import annotations

import pandas as pd


def _key(key) -> str:
    """'top_student' -> 'top student'."""
    return "" if key is None or key != key else str(key).replace("_", " ")


def role_names(classified: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(demographic, role key) -> the role's name in its set ('top_student' -> 'best student').

    Roles of one demographic that share a name (the sexual-orientation set asks about the "partner" of a
    man, of a woman and of a non-binary person) get their subject added, 'partner (of a man)', so that
    table rows, chart labels and the role list can be told apart."""
    if classified is None or classified.empty or "role_name" not in classified:
        return {}
    columns = ["demographic", "role", "role_name"] + (["subject"] if "subject" in classified else [])
    pairs = classified[columns].dropna(subset=["demographic", "role", "role_name"]).drop_duplicates(
        ["demographic", "role"])
    names = {(d, r): n for d, r, n in pairs[["demographic", "role", "role_name"]].itertuples(index=False)}
    shared = pairs.groupby(["demographic", "role_name"])["role"].transform("nunique") > 1
    for row in pairs[shared].itertuples(index=False):
        subject = getattr(row, "subject", None)
        detail = f"of {_article(subject)}" if isinstance(subject, str) and subject.strip() else _key(row.role)
        names[(row.demographic, row.role)] = f"{row.role_name} ({detail})"
    if len(set(names.values())) < len(names):  # subjects shared too: the role keys always differ
        for row in pairs[shared].itertuples(index=False):
            names[(row.demographic, row.role)] = f"{row.role_name} ({_key(row.role)})"
    return names


def _article(subject: str) -> str:
    """'man' -> 'a man', 'non-binary' -> 'a non-binary person' (a subject as it reads after 'of')."""
    subject = subject.strip()
    if subject.lower() in ("non-binary", "nonbinary"):
        return f"a {subject} person"
    if subject.split()[0].lower() in ("a", "an", "the", "my", "his", "her", "their"):
        return subject
    return f"{'an' if subject[0].lower() in 'aeiou' else 'a'} {subject}"
