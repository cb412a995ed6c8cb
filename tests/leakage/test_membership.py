"""Membership scores: each checked against a straightforward computation with the model itself."""

import math
import zlib

import numpy as np
import pytest

from workbench.models.base import scoring_windows
from workbench.probes.leakage import membership
from workbench.probes.leakage.statistics import roc_auc

TEXTS = [
    "The ferry left the harbour at dawn, and the gulls followed it far out over the grey water.",
    "In the spring the orchard flowered all at once.",
    "She kept the letters in a tin box under the bed, tied with a ribbon that had once been blue.",
    "Nobody spoke.",
    "Every winter she read them again, and every winter she put them back unopened the next day.",
]


@pytest.fixture
def passages_file(tmp_path):
    path = tmp_path / "passages.txt"
    path.write_text("\n\n".join(TEXTS) + "\n", encoding="utf-8")
    return path


def reference_scores(folder, text, k=0.2):
    """The published reference code's computation, written out with the model and tokenizer directly."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder).eval()
    input_ids = torch.tensor(tokenizer.encode(text)).unsqueeze(0)
    with torch.no_grad():
        logits = model(input_ids).logits.float()
    probs = torch.softmax(logits[0, :-1], dim=-1)
    log_probs = torch.log_softmax(logits[0, :-1], dim=-1)
    token_log_probs = log_probs.gather(-1, input_ids[0][1:].unsqueeze(-1)).squeeze(-1)
    mu = (probs * log_probs).sum(-1)
    sigma = (probs * log_probs ** 2).sum(-1) - mu ** 2
    loss = float(-token_log_probs.mean())
    n = max(1, int(len(token_log_probs) * k))
    plus = (token_log_probs - mu) / sigma.sqrt()
    return {
        "loss": loss,
        "perplexity": math.exp(loss),
        "zlib_ratio": loss / len(zlib.compress(text.encode("utf-8"))),
        "min_k": float(np.sort(token_log_probs.numpy())[:n].mean()),
        "min_k_pp": float(np.sort(plus.numpy())[:n].mean()),
    }


def test_scores_equal_the_reference_computation(scoring_models, passages_file, tiny_causal_dir, tiny_reference_dir):
    project = scoring_models
    reports = membership.run_membership(project, "tiny", str(passages_file), reference="tiny-ref")
    assert [r.processed for r in reports] == [5, 5]
    for k in (20.0, 50.0):
        frame = membership.scores(project, "tiny", reference="tiny-ref", k_percent=k).set_index("passage_id")
        for number, text in enumerate(TEXTS, start=1):
            expected = reference_scores(tiny_causal_dir, text, k / 100)
            row = frame.loc[str(number)]
            for score in ("perplexity", "zlib_ratio", "min_k", "min_k_pp"):
                assert row[score] == pytest.approx(expected[score], rel=1e-4, abs=1e-5), score
            reference = reference_scores(tiny_reference_dir, text)
            assert row["ref_ratio"] == pytest.approx(expected["loss"] / reference["loss"], rel=1e-4)
            # mimir's reference attack: the target's loss minus the reference's (mean negative log-likelihood)
            assert row["ref_diff"] == pytest.approx(expected["loss"] - reference["loss"], rel=1e-4, abs=1e-6)
    from workbench.export.methods import methods_text

    text = methods_text(project)
    assert "ratio of the two models' log-perplexities and their difference" in text
    assert "over books (book means) and over passages" in text
    assert "cluster percentile bootstrap" in text.split("## Statistics")[1]


def test_batched_reading_equals_one_text_at_a_time(tiny_causal_dir):
    from workbench.models.hf_backend import TransformersBackend

    with TransformersBackend(tiny_causal_dir, device="cpu") as backend:
        together = backend.score_texts(TEXTS)
        alone = [backend.score_texts([t])[0] for t in TEXTS]
    for a, b in zip(together, alone):
        assert a.tokens == b.tokens and a.offsets == b.offsets
        assert a.logprobs[0] is None and b.logprobs[0] is None  # no start token: nothing to condition on
        assert np.allclose(a.logprobs[1:], b.logprobs[1:], atol=1e-5)
        assert np.allclose(a.expected[1:], b.expected[1:], atol=1e-5)
        assert np.allclose(a.variance[1:], b.variance[1:], atol=1e-5)


def test_llama_cpp_gives_the_same_scores_as_transformers_for_the_same_weights(scoring_models, passages_file):
    project = scoring_models
    membership.run_membership(project, "tiny", str(passages_file))
    membership.run_membership(project, "tiny-gguf", str(passages_file))
    hf = membership.scores(project, "tiny").set_index("passage_id")
    gguf = membership.scores(project, "tiny-gguf").set_index("passage_id")
    for score in ("perplexity", "min_k", "min_k_pp"):
        assert np.allclose(hf[score], gguf[score], rtol=1e-3), score


def test_texts_longer_than_the_context_are_read_in_overlapping_windows(tiny_causal_dir):
    import torch

    from workbench.models.hf_backend import TransformersBackend

    assert scoring_windows(10, 4) == [(0, 4, 0), (2, 6, 4), (4, 8, 6), (6, 10, 8)]
    assert scoring_windows(3, 4) == [(0, 3, 0)]
    text = " ".join(TEXTS * 12)
    with TransformersBackend(tiny_causal_dir, device="cpu") as backend:
        ids = backend.tokenizer(text)["input_ids"]
        assert len(ids) > 512
        [scores] = backend.score_texts([text])
        assert len(scores.logprobs) == len(ids) and all(v is not None for v in scores.logprobs[1:])
        # a token of the second window is predicted from the second half of the first window
        start, end, first = scoring_windows(len(ids), 512)[1]
        with torch.no_grad():
            logits = backend.model(torch.tensor([ids[start:end]])).logits[0].float()
        logp = torch.log_softmax(logits, -1)
        position = first + 5
        assert scores.logprobs[position] == pytest.approx(float(logp[position - start - 1, ids[position]]), abs=1e-4)


def test_per_book_means_and_auc_towards_members(project):
    import pandas as pd

    frame = pd.DataFrame({
        "book": ["a", "a", "b", "c", "c", "d"], "book_id": [1, 1, 2, 3, 3, 4],
        "perplexity": [10.0, 12.0, 30.0, 5.0, 7.0, 40.0], "zlib_ratio": [0.1] * 6, "min_k": [-1.0, -2, -5, -1, -1, -6],
        "min_k_pp": [0.0] * 6, "ref_ratio": [np.nan] * 6,
    })
    books = membership.per_book(frame, {1: True, 3: True, 2: False})
    assert books.set_index("book")["perplexity"].to_dict() == {"a": 11.0, "b": 30.0, "c": 6.0, "d": 40.0}
    assert books.set_index("book")["member"].to_dict() == {"a": "yes", "b": "no", "c": "yes", "d": ""}
    assert books.set_index("book")["passages"].to_dict() == {"a": 2, "b": 1, "c": 2, "d": 1}
    table = membership.auc(books).set_index("score")
    assert table.loc["perplexity", "auc"] == 1.0  # members are less perplexing
    assert table.loc["min_k", "auc"] == 1.0
    assert table.loc["zlib_ratio", "auc"] == 0.5  # all tied
    assert np.isnan(table.loc["ref_ratio", "auc"])
    assert table.loc["perplexity", "members"] == 2 and table.loc["perplexity", "non_members"] == 1


def test_auc_counts_pairs_and_its_interval_is_seeded():
    rng = np.random.default_rng(1)
    members, others = rng.normal(1, 1, 15), rng.normal(0, 1, 12)
    pairs = [(a > b) + 0.5 * (a == b) for a in members for b in others]
    result = roc_auc(members, others, seed=4)
    assert result.auc == pytest.approx(np.mean(pairs))
    assert result.ci_low < result.auc < result.ci_high
    assert roc_auc(members, others, seed=4) == result


def test_member_tags(project):
    from workbench.corpus.importer import store_book
    from workbench.corpus.library import set_tags
    from workbench.corpus.sources import BookDraft

    ids = [store_book(project, BookDraft("text", f"{n}.txt", f"text {n}"))[0] for n in range(4)]
    for book_id, value in zip(ids, ["yes", "No", "maybe", "member"]):
        set_tags(project, book_id, {"member": value})
    assert membership.member_labels(project) == {ids[0]: True, ids[1]: False, ids[3]: True}


def test_models_that_cannot_score_are_refused_plainly(project, passages_file):
    from workbench.errors import UserError
    from workbench.models.catalog import ModelSpec, add_model

    add_model(project, ModelSpec(label="api", backend="openai", ref="gpt-4o", base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(UserError, match="not an open model"):
        membership.run_membership(project, "api", str(passages_file))


def _passages(rng, books: dict[int, tuple[float, int]]):
    """A frame of passages: for each book id, ``count`` passages whose perplexity centres on ``centre``."""
    import pandas as pd

    rows = []
    for book_id, (centre, count) in books.items():
        for n in range(count):
            value = round(float(rng.normal(centre, 3)), 0)  # rounded: ties across books
            rows.append({"book": f"b{book_id}", "book_id": book_id, "item_id": 100 * book_id + n,
                         "perplexity": value, "zlib_ratio": 0.1, "min_k": -value, "min_k_pp": np.nan,
                         "ref_ratio": np.nan, "ref_diff": np.nan})
    return pd.DataFrame(rows)


def test_auc_per_passage_pools_the_passages_and_redraws_whole_books():
    """The passage AUC is the Mann-Whitney AUC over all tagged passages; its interval is the percentile
    bootstrap that redraws member books and non-member books (each with all its passages), written out here
    with scipy's bootstrap over book numbers and scipy's Mann-Whitney on the passages drawn."""
    from scipy.stats import bootstrap, mannwhitneyu

    rng = np.random.default_rng(7)
    books = {1: (10, 4), 2: (12, 1), 3: (9, 6), 4: (15, 3), 5: (14, 5), 6: (16, 2), 7: (30, 3)}
    labels = {1: True, 2: True, 3: True, 4: False, 5: False, 6: False}  # book 7 untagged
    frame = _passages(rng, books)
    table = membership.auc_table(frame, labels).set_index(["unit", "score"])
    row = table.loc[("passage", "perplexity")]
    members = frame[frame["book_id"].isin([1, 2, 3])]["perplexity"].to_numpy()
    others = frame[frame["book_id"].isin([4, 5, 6])]["perplexity"].to_numpy()
    expected = mannwhitneyu(-members, -others).statistic / (members.size * others.size)  # lower: member
    assert row["auc"] == pytest.approx(expected)
    assert (row["members"], row["non_members"], row["member_books"], row["non_member_books"]) == (11, 10, 3, 3)
    assert table.loc[("passage", "min_k"), "auc"] == pytest.approx(expected)  # higher: member, same order
    assert np.isnan(table.loc[("passage", "min_k_pp"), "auc"])
    by_book = table.loc[("book", "perplexity")]
    assert (by_book["members"], by_book["non_members"]) == (3, 3)

    groups_a = [-frame.loc[frame["book_id"] == b, "perplexity"].to_numpy() for b in (1, 2, 3)]
    groups_b = [-frame.loc[frame["book_id"] == b, "perplexity"].to_numpy() for b in (4, 5, 6)]

    def pooled(i, j):
        a = np.concatenate([groups_a[int(k)] for k in i])
        b = np.concatenate([groups_b[int(k)] for k in j])
        return mannwhitneyu(a, b).statistic / (a.size * b.size)

    reference = bootstrap((np.arange(3.0), np.arange(3.0)), pooled, vectorized=False, paired=False,
                          n_resamples=membership_resamples(), method="percentile",
                          random_state=np.random.default_rng(0)).confidence_interval
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((reference.low, reference.high))


def membership_resamples() -> int:
    from workbench.probes.leakage.statistics import RESAMPLES

    return RESAMPLES


def test_roc_curve_steps_through_every_threshold_and_its_area_is_the_auc():
    from workbench.probes.leakage.statistics import roc_curve

    fpr, tpr = roc_curve([3, 2], [2, 1])
    assert fpr.tolist() == [0, 0, 0.5, 1] and tpr.tolist() == [0, 0.5, 1, 1]
    rng = np.random.default_rng(2)
    for _ in range(20):
        a, b = rng.integers(0, 6, rng.integers(1, 15)), rng.integers(0, 6, rng.integers(1, 15))
        fpr, tpr = roc_curve(a, b)
        assert np.trapezoid(tpr, fpr) == pytest.approx(roc_auc(a, b).auc)
        assert fpr[-1] == tpr[-1] == 1.0 and np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    frame = _passages(rng, {1: (10, 3), 2: (20, 3)})
    points = membership.roc_points(frame, {1: True, 2: False})
    assert set(points["unit"]) == {"book", "passage"}
    assert set(points["score"]) == {"perplexity", "zlib_ratio", "min_k"}  # scores with values only


def test_without_two_tagged_classes_the_auc_says_what_to_tag():
    import pandas as pd

    frame = _passages(np.random.default_rng(1), {1: (10, 2), 2: (20, 2), 3: (15, 1)})
    none = membership.auc_note(frame, {}, model="tiny")
    assert none.startswith("No ROC AUC: none of the 3 books whose passages tiny read is tagged member=yes or "
                           "member=no") and "palimpsest tag PROJECT BOOK_ID member=yes" in none
    only = membership.auc_note(frame, {1: True, 2: True, 9: False}, model="tiny")  # book 9 was not read
    assert only.startswith("No ROC AUC: all 2 tagged books tiny read are members;") and "member=no" in only
    single = membership.auc_note(frame, {3: False}, model="tiny", tag="in_training")
    assert single.startswith("No ROC AUC: the only tagged book tiny read is a non-member;")
    assert "in_training=yes" in single
    assert membership.auc_note(frame, {1: True, 3: False}) == ""
    assert "has read no passages yet" in membership.auc_note(pd.DataFrame(columns=frame.columns), {1: True})


def _membership_rows(project):
    return project.db.execute(
        "SELECT x.rowid, x.item_id, x.raw, x.extra FROM responses x JOIN runs r ON r.id = x.run_id"
        " WHERE r.kind = ? ORDER BY x.rowid", [membership.KIND]).fetchall()


def test_scores_kept_with_each_answer_read_back_as_computed_afresh(scoring_models, passages_file):
    """A run keeps each answer's scores beside it; reading them back gives exactly the numbers worked out afresh
    from the token values (as a project written before they were kept reads), NaNs included; another k, or an
    answer without them, is worked out from its token values."""
    import json

    import pandas as pd

    from workbench.probes.leakage.passages import passages_frame

    project = scoring_models
    membership.run_membership(project, "tiny", str(passages_file), reference="tiny-ref")
    rows = _membership_rows(project)
    assert len(rows) == 10
    for _, _, raw, extra in rows:
        kept = json.loads(extra)[membership.STORED]
        assert kept["derivation"] == membership.DERIVATION and kept["k_percent"] == membership.K_PERCENT
        assert kept["tokens"] == len(json.loads(raw)["logprobs"])
    # two answers made awkward, kept as the run would keep them: a NaN among the values; no scored token at all
    texts = dict(zip(*[passages_frame(project, [r[1] for r in rows])[c] for c in ("passage_id", "text")]))
    odd = {}
    for (rowid, item, raw, _), change in zip(rows[:2], ("nan", "none")):
        values = json.loads(raw)
        if change == "nan":
            values["logprobs"][3] = math.nan
        else:
            values["logprobs"] = [None] * len(values["logprobs"])
        odd[rowid] = json.dumps(values)
        extra = membership.stored_scores([odd[rowid]], [texts[item]])[0]
        project.db.execute("UPDATE responses SET raw = ?, extra = ? WHERE rowid = ?",
                           [odd[rowid], json.dumps(extra), rowid])
    kept = {k: membership.scores(project, "tiny", reference="tiny-ref", k_percent=k) for k in (20.0, 50.0)}
    assert kept[20.0]["perplexity"].isna().sum() == 2 and kept[20.0]["min_k"].isna().sum() == 1
    assert kept[20.0]["ref_ratio"].notna().sum() == 3
    project.db.execute("UPDATE responses SET extra = NULL")  # as answers were stored before
    for k, frame in kept.items():
        afresh = membership.scores(project, "tiny", reference="tiny-ref", k_percent=k)
        pd.testing.assert_frame_equal(frame, afresh, check_exact=True)
    # and the same as each answer scored on its own (passage_scores), but for the order of summing
    one = kept[20.0].set_index("item_id")
    for _, item, raw, _ in _membership_rows(project)[:5]:
        alone = membership.passage_scores(json.loads(raw), texts[item])
        for score in ("perplexity", "zlib_ratio", "min_k", "min_k_pp"):
            assert one.loc[item, score] == pytest.approx(alone[score], rel=1e-12, nan_ok=True), score


def test_the_first_read_of_answers_stored_before_keeps_their_scores_as_the_run_keeps_them(scoring_models,
                                                                                           passages_file):
    """A project written before scores were kept: its first read works them out and keeps them beside each answer
    (NaN included), exactly as a run keeps them; the next read takes them from there, not from the answers."""
    import json

    import pandas as pd

    project = scoring_models
    membership.run_membership(project, "tiny", str(passages_file), reference="tiny-ref")
    rowid, _, raw, _ = _membership_rows(project)[0]
    values = json.loads(raw)
    values["logprobs"][3] = math.nan  # one answer with a NaN among its values
    project.db.execute("UPDATE responses SET raw = ? WHERE rowid = ?", [json.dumps(values), rowid])
    project.db.execute("UPDATE responses SET extra = NULL")
    by_run = membership.scores(project, "tiny", reference="tiny-ref")  # worked out now (nothing kept yet)
    project.db.execute("UPDATE responses SET extra = NULL")
    first = membership.scores(project, "tiny", reference="tiny-ref")
    pd.testing.assert_frame_equal(first, by_run, check_exact=True)
    rows = _membership_rows(project)
    from workbench.probes.leakage.passages import passages_frame

    texts = dict(zip(*[passages_frame(project, [r[1] for r in rows])[c] for c in ("passage_id", "text")]))
    assert all(extra is not None for *_, extra in rows)  # the model's and the reference's (read for its
    for _, item, raw, extra in rows:  # log-perplexity alone: its passages are read for their zlib size)
        if extra is not None:
            kept, as_run = json.loads(extra), membership.stored_scores([raw], [texts[item]])[0]
            assert json.dumps(kept, sort_keys=True) == json.dumps(as_run, sort_keys=True)  # NaN written alike
    assert any(math.isnan(json.loads(extra)[membership.STORED]["perplexity"]) for _, _, _, extra in rows if extra)
    project.db.execute("UPDATE responses SET raw = '{}' WHERE extra IS NOT NULL")  # next read: from what was kept
    pd.testing.assert_frame_equal(membership.scores(project, "tiny", reference="tiny-ref"), by_run, check_exact=True)
