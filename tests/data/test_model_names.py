"""A model file whose name nearly spells a known model is an error with a did-you-mean, not a
new rater beside it; a listed or unrelated model is read; the data summary lists every rater."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis import REPO_ROOT
from analysis.data import read_dataset
from analysis.data.errors import DataError
from analysis.data.raters import near_miss
from analysis.data.vocabulary import STUDY_MODELS
from analysis.paper.dataset_info import raters_sentence
from analysis.settings import DataNouns
from analysis.workflow_config import compose_config

BUNDLED = REPO_ROOT / "data" / "raw" / "bundled"
SIM_MODELS = compose_config([])["data"]["models"]


def test_near_misses_of_known_models_and_not_of_others() -> None:
    assert near_miss("gpt5.4", STUDY_MODELS) == "gpt-5.4"
    assert near_miss("gemma-4-31b-lt", STUDY_MODELS) == "gemma-4-31b-it"
    assert near_miss("sim-llm-aa", SIM_MODELS) == "sim-llm-a"
    assert near_miss("gpt-5.4", STUDY_MODELS) is None  # known: exact
    assert near_miss("mistral-large-3", STUDY_MODELS) is None  # a new model: kept


@pytest.fixture
def world(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    shutil.copytree(BUNDLED, root)
    return root


def _model_file(root: Path, model: str) -> Path:
    (path,) = sorted((root / "relevance_task5").glob(f"{model}.jsonl"))
    return path


def test_a_misspelt_model_file_is_an_error_naming_file_and_known_model(world: Path) -> None:
    src = _model_file(world, "sim-llm-a")
    src.rename(src.with_name("sim-llm-aa.jsonl"))
    with pytest.raises(DataError) as err:
        read_dataset("annotation_tool", world, SIM_MODELS)
    msg = str(err.value)
    assert "relevance_task5/sim-llm-aa.jsonl" in msg and "field 'model'" in msg
    assert "did you mean 'sim-llm-a'" in msg and "data.models" in msg


def test_a_new_model_near_a_known_one_is_read_once_the_config_lists_it(world: Path) -> None:
    """sim-llm-f nearly spells the sim models: an error until data.models lists it."""
    src = _model_file(world, "sim-llm-a")
    text = src.read_text(encoding="utf-8").replace('"sim-llm-a"', '"sim-llm-f"')
    src.with_name("sim-llm-f.jsonl").write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match="did you mean 'sim-llm-"):
        read_dataset("annotation_tool", world, SIM_MODELS)
    result = read_dataset("annotation_tool", world, [*SIM_MODELS, "sim-llm-f"])
    votes = result.tables["relevance_votes"]
    assert {"sim-llm-a", "sim-llm-f"} <= set(votes["rater"])
    assert "sim-llm-f" in result.report()["raters"]["relevance_votes"]["model"]


def test_the_summary_and_the_paper_list_every_rater() -> None:
    result = read_dataset("annotation_tool", BUNDLED, SIM_MODELS)
    raters = result.report()["raters"]
    votes = result.tables["relevance_votes"]
    for kind, group in votes.groupby("rater_kind"):
        assert raters["relevance_votes"][kind] == group["rater"].value_counts().to_dict()
    nouns = DataNouns(**compose_config([])["data"]["nouns"])  # the bundled world's
    sentence = raters_sentence(raters, nouns)
    for model in SIM_MODELS:
        assert rf"\texttt{{{model}}}" in sentence
    humans = votes.loc[votes["rater_kind"] == "human", "rater"].nunique()
    # in the dataset's words: a simulated world has no human raters
    assert f"stage~2: {humans} simulated raters" in sentence and "human" not in sentence


@pytest.mark.realdata
def test_the_real_exports_model_files_pass(real_data_root: Path) -> None:
    result = read_dataset("annotation_tool", real_data_root, [])
    models = set(result.report()["raters"]["relevance_votes"]["model"])
    assert models and models <= set(STUDY_MODELS)
