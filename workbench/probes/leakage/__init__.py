"""Leakage and membership evidence: where a model could have seen a text, and how strongly it knows it.

Reference corpora and the n-gram engine:

- ``wordlevel``    word-level tokens and their vocabulary (no download);
- ``tokenizing``   word-level or a local model's tokenizer; token ids as the engine's 16-bit units;
- ``index_build``  a local infini-gram index from text files and folders (progress, cancel);
- ``local_index``  queries on a local index; ``remote_index``: the same through the infini-gram web API;
- ``corpora``      the project's corpora (table ``reference_corpora``), opening either kind.

Analyses (each a run kind of the job runner, declared once in ``kinds``; raw answers stored first, derived
when read):

- ``passages``     the passages analysed (name-cloze passages with the name in place, a file ...);
- ``overlap``      longest overlap of each passage with a corpus, its frequency and chance (the leakage study);
- ``frequency``    book frequency of n-grams against name-cloze accuracy (*Speak, Memory* section 6.2);
- ``membership``   perplexity, zlib ratio, Min-K%, Min-K%++ and the reference-model ratio on open models;
- ``surprisal``    word-level surprisal with the leading-white-space correction;
- ``decop``        the DE-COP multiple-choice test (paraphrases, the question naming the book, every order of the
                   options); ``decop_scores``: passage scores, the passage-level test against chance, and
                   the decision (ROC AUC, suspect against clean books);
- ``statistics``   Spearman, ROC AUC and binomial tests, each through scipy;
- ``evidence``     overlap, n-gram frequency, membership and DE-COP as evidence of exposure per book (the report);
- ``views``        what each tab of the Leakage page shows: its ``...Choices`` and the query the tab and the
                   commands print (``overlap_table``, ``frequency_table`` ...);
- ``charts``       the figures; ``methods``: the methods text; ``commands``: ``palimpsest corpus|leakage|
                   membership|surprisal|decop``.
"""

from workbench.parts import PageSpec, Part

PART = Part(
    "leakage",
    commands=("workbench.probes.leakage.commands",),
    exports=("workbench.probes.leakage.charts",),
    methods=("workbench.probes.leakage.methods",),
    evidence=("workbench.probes.leakage.evidence",),
    migrations="workbench.probes.leakage.migrations",
    pages=(PageSpec("leakage", "Leakage", "ui.leakage.page:LeakagePage"),),
    run_kinds=("workbench.probes.leakage.kinds",),
)
