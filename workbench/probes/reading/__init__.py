"""NarrativeXL reading questions (after Moskvichev and Mai, 2023): how much of a long book does a model
keep while it reads, and does it answer from the text or from what it already knew about the book?

Modules, in the order of the work:

- ``scenes``        a book cut, whole and in order, into scenes of about N words, with offsets and word
                    positions (the retention demand of every question comes from them);
- ``summaries``     a summary and a false summary of every scene (and, optionally, summaries of summaries)
                    through the summary runs of ``workbench.summaries``; summaries made elsewhere
                    imported from CSV;
- ``names``         the book's character names (spaCy) and a seeded replacement for each;
- ``substitution``  the book and its summaries with the names replaced, kept with the book;
- ``questions``     read-along multiple-choice questions at checkpoints and reconstruction questions,
                    seeded, stored as question sets (on the original or the substituted text);
- ``asking``        the prompts and the parsing of answers (pure);
- ``run``           asking any model through the job runner (kind ``reading-answer``);
- ``results``       forgetting curves with Wilson intervals, the logistic slope, ROUGE reconstruction scores;
- ``exchange``      question sets as JSON Lines, out and in;
- ``overview``      where a book stands, and one question with a model's reply (for the Reading page);
- ``charts``        figures and tables in the export registry;
- ``methods``       the probe's part of the methods text;
- ``commands``      ``palimpsest reading ...``.
"""

from workbench.parts import PageSpec, Part

PART = Part(
    "reading",
    commands=("workbench.probes.reading.commands",),
    exports=("workbench.probes.reading.charts",),
    run_kinds=("workbench.probes.reading.summaries", "workbench.probes.reading.run"),
    methods=("workbench.probes.reading.methods",),
    migrations="workbench.probes.reading.migrations",
    pages=(PageSpec("reading", "Reading", "ui.reading.page:ReadingPage"),),
)
