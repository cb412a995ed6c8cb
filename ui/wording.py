"""How the window names things: run kinds, statuses, times, parameters and run settings in plain words.

The words live in the core (``workbench.wording``), so that the tables a core query builds for a page and the
page's own labels say the same; this module is where the pages take them from.
"""

from __future__ import annotations

from workbench.wording import (  # noqa: F401 (the pages' names for them)
    LEXICAL,
    PARAMETERS,
    STATUSES,
    classifier,
    missing,
    number,
    parameters,
    role_key,
    run_about,
    run_kind,
    status,
    when,
)
