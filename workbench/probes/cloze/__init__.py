"""The name-cloze memorization probe (after *Speak, Memory*, Chang et al. 2023).

A passage of 40-60 tokens of whole sentences holds exactly one proper name, a character's, hidden as
``[MASK]``; nothing else in it is a name. A model that fills in many names of a book has most likely
read the book.

Modules, in the order of the work:

- ``rules``      the extraction settings and word lists (kinship/deity words, titles);
- ``candidates`` one spaCy ``Doc`` -> the name mentions that qualify, with the reason for the others;
- ``extract``    books -> a seeded sample of passages, stored in ``cloze_passages`` (several books in
                 several processes; a fast mode that stops once it has enough);
- ``passages``   reading, selecting and deleting stored passages;
- ``prompting``  the prompt around a passage and the answer format;
- ``kinds``      its kinds of run, declared once (config, how each is continued, its words);
- ``run``        probe runs on any model through the job runner (kinds ``cloze``, ``cloze-logprob``);
- ``mlm``        the masked-LM baseline (kind ``cloze-mlm``);
- ``score``      pure scoring functions and confidence intervals;
- ``gpt4books``  importing published results (the gpt4-books TSV files);
- ``analysis``   the tables behind every chart (pandas DataFrames);
- ``errors``     the error analysis: do wrong answers lean towards names of memorized books? (its chart
                 and tables: ``error_charts``);
- ``charts``     publication figures and CSV tables registered in the export registry;
- ``models_table`` several models side by side per book (the paper's tables); ``baselines`` the
                 most-frequent-name baseline; ``tables`` registers both as exports;
- ``human``      people doing the name cloze (a blinded annotation task of the same passages, scored by
                 ``score``); ``human_charts`` people beside the models and the baseline.
- ``evidence``   its evidence of exposure per book, for the exposure report.
"""

from workbench.parts import PageSpec, Part

MASK = "[MASK]"

PART = Part(
    "name-cloze",
    commands=("workbench.probes.cloze.commands",),
    exports=("workbench.probes.cloze.charts", "workbench.probes.cloze.error_charts", "workbench.probes.cloze.tables",
             "workbench.probes.cloze.human_charts"),
    run_kinds=("workbench.probes.cloze.kinds",),
    methods=("workbench.probes.cloze.methods",),
    evidence=("workbench.probes.cloze.evidence",),
    answer_marks=("workbench.probes.cloze.human",),
    migrations="workbench.probes.cloze.migrations",
    pages=(
        PageSpec("cloze", "Name cloze", "ui.cloze.page:ClozePage"),
        PageSpec("charts", "Charts", "ui.cloze.charts_page:ChartsPage"),
    ),
)
