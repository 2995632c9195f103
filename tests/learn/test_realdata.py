"""The relevance classifier on the authors' real round-2 classifier set, with its own split.

Reads ../shared/data/annotation-tool through the project's adapter (skipped with a reason
where the folder is absent) and embeds the set's attributes and prompts with the offline
MiniLM model in the test, so it needs no workflow outputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.learn.features import Embeddings
from analysis.learn.records import relevance_records
from analysis.learn.relevance_classifier import train_relevance_rounds
from tests.settings_defaults import default_settings, stats_settings

pytestmark = pytest.mark.realdata


def test_pilot2_classifier_with_its_own_split(real_data_root: Path) -> None:
    from analysis.data.annotation_tool import read_annotation_tool
    from analysis.stages.embeddings import embedding_table

    tables = read_annotation_tool(real_data_root).tables
    cset = tables["relevance_classifier_set"]
    assert len(cset) == 631  # the data card's count
    attrs = tables["attributes"]
    attrs = attrs[attrs["attribute_id"].isin(cset["attribute_id"])].drop_duplicates("attribute_id")
    prompts = tables["prompts"][tables["prompts"]["prompt_id"].isin(cset["prompt_id"])]
    attr_emb = Embeddings.from_frame(
        embedding_table(attrs["attribute_id"], attrs["text"]), "attributes"
    )
    prompt_emb = Embeddings.from_frame(
        embedding_table(prompts["prompt_id"], prompts["text"]), "prompts"
    )

    learn = default_settings().learn
    learn.relevance.rounds = ["pilot2"]
    results = train_relevance_rounds(
        tables["relevance_votes"], None, prompts, attrs, prompt_emb, attr_emb, cset, learn, 7
    )
    assert [r.round for r in results] == ["pilot2"]
    res = results[0]
    assert res.mode == "given_split"
    test_items = set(cset.loc[cset["split"] == "test", "item_id"])
    assert set(res.evaluated["item_id"]) == test_items
    train_prompts = set(cset.loc[cset["split"] != "test", "prompt_id"])
    assert not train_prompts & set(res.evaluated["prompt_id"])  # test prompts unseen

    recs = {
        r.key: r
        for r in relevance_records(
            results,
            stats_settings(n_boot=300, seed=7),
            "logistic",
            ["prompt", "user", "item"],
            8,
            20,
        )
    }
    f1 = recs["stage2.classifier.pilot2.f1"]
    assert f1.n == len(test_items) and f1.ci_low is not None and f1.ci_high is not None
    # better than marking everything relevant, and ranks clearly above chance
    rate = recs["stage2.classifier.pilot2.human_rate"].value
    assert f1.value > 2 * rate / (1 + rate)
    assert recs["stage2.classifier.pilot2.auroc"].value > 0.65
