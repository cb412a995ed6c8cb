"""Downstream validity: does what a model has memorized bias a study that uses it? (*Speak, Memory*, section 7.)

Two tasks a scholar might hand to a model, each asked about a ~250-word passage of every book:

- **year**: the year the book was first published (``validity-year`` runs);
- **narrative time**: how much time passes in the passage (``validity-narrative-time`` runs).

Their errors are compared between the books a model knows best and least: the top and bottom decile (or
quintile) of books by one model's name-cloze accuracy, read through the export registry (this probe never
imports the name-cloze probe).

Modules, in the order of the work:

- ``passages``    a seeded sample of passages of whole sentences (spaCy) per book, or passages imported
                  from a table (with the year of publication and a reference narrative time);
- ``parsers``     the year and the duration an answer commits to (or why it is missing);
- ``prompting``   the prompt templates of the two tasks;
- ``kinds``       the two kinds of run (one per task), declared once with their typed config;
- ``run``         runs on any registered model through the job runner, their cost, their resumer;
- ``predictions`` answers made elsewhere, imported as an external model's run;
- ``answers``     each passage's answer from a model's runs, parsed;
- ``groups``      the memorization groups (saved as book sets);
- ``references``  reference narrative times: imported, or an annotation task's values;
- ``year``, ``narrative_time``  the analyses (pandas tables);
- ``charts``      charts and tables in the export registry; ``commands`` the CLI; ``methods`` the methods text.
"""

from workbench.parts import PageSpec, Part

YEAR, NARRATIVE_TIME = "year", "narrative-time"
TASKS = (YEAR, NARRATIVE_TIME)
TASK_NAMES = {YEAR: "year of first publication", NARRATIVE_TIME: "narrative time"}

PART = Part(
    "downstream-validity",
    commands=("workbench.probes.validity.commands",),
    exports=("workbench.probes.validity.charts",),
    run_kinds=("workbench.probes.validity.kinds",),
    methods=("workbench.probes.validity.methods",),
    migrations="workbench.probes.validity.migrations",
    pages=(PageSpec("validity", "Validity", "ui.validity.page:ValidityPage"),),
)
