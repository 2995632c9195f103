"""Calls recorded by jobs whose files move through a storage provider outlive the job.

On Kubernetes each job runs in a pod with the sources unpacked into an emptyDir, and inputs
and outputs move through the ``fs`` storage provider onto a shared claim. Here the claim is a
temporary folder holding a copy of the repository (the clone on the claim, as docs/cluster.md
sets it up), and the workflow runs from another copy (standing in for a pod's sources) with
``--default-storage-provider fs --default-storage-prefix <claim>``: the same path resolution,
storage moves and job scripts as in a pod, without a cluster. A model served by the fake
OpenAI-compatible server is recorded; its calls must land in the claim's call store, and a
replay run from a fresh "pod" must answer them from there without the server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.llm.store import iter_shard
from analysis.workflow_config import ConfigError, call_store_root, compose_config
from tests.cluster.local_slurm import ensure_packages
from tests.conftest import build_paths, fake_models_group, make_workflow_copy, run_snakemake
from tests.fake_server import FakeOpenAI

#: the job's table, under the folder of this variant of the model calls (analysis/variants.py)
TABLE = "stage2/votes/shards/fake-store.v1.0-of-1.parquet"
SHARD = Path("data/calls/stage2_relevance/fake-store/0.jsonl")
OVERRIDES = "stages.repair_attempts=0 stages.stage2.max_items_per_model=80"


def _target(pod: Path, overrides: str) -> str:
    paths = build_paths(*f"{overrides} {OVERRIDES}".split(), tier="calls", root=pod)
    return paths.result(TABLE)


def _run_in_pod(pod: Path, claim: Path, overrides: str) -> None:
    run_snakemake(
        pod,
        "--cores",
        "1",
        "--default-storage-provider",
        "fs",
        "--default-storage-prefix",
        str(claim),
        _target(pod, overrides),
        "--config",
        f"overrides={overrides} {OVERRIDES}",
        timeout=900,
    )


def test_the_call_store_of_jobs_is_on_the_claim_only_when_files_move_through_one() -> None:
    record = compose_config(["llm=record"])
    replay = compose_config([])
    assert call_store_root(record, None, None) is None  # local and SLURM: beside the sources
    assert call_store_root(record, "fs", "/storage/recenter") == "/storage/recenter/data/calls"
    assert call_store_root(replay, "fs", "/storage/recenter") == "/storage/recenter/data/calls"
    absolute = compose_config(["llm=record", "llm.store=/shared/calls"])
    assert call_store_root(absolute, "fs", "/storage/recenter") is None
    assert call_store_root(replay, "s3", "s3://bucket/recenter") is None  # sources' store
    with pytest.raises(ConfigError, match=r"'s3' storage provider: recorded calls would stay"):
        call_store_root(record, "s3", "s3://bucket/recenter")


@pytest.mark.slow
def test_calls_recorded_through_the_fs_storage_provider_land_on_the_claim(
    tmp_path: Path,
) -> None:
    """Issue 16: the call store was reached through the package's repository root, so in a pod
    ``llm=record`` wrote paid calls into the pod, and they vanished with it."""
    ensure_packages(("rsync",), ("rsync",))  # the fs provider moves files with rsync
    claim = make_workflow_copy(tmp_path / "claim" / "recenter")
    pod = make_workflow_copy(tmp_path / "pod" / "repo")
    with FakeOpenAI() as server:
        models = fake_models_group(pod, "fake-store", server.base_url)
        _run_in_pod(pod, claim, f"{models} llm=record")
        assert sum(server.served.values()) > 0
    target = claim / _target(pod, f"{models} llm=record")
    assert target.is_file(), "the job's table did not reach the claim"
    records = [record for _, record in iter_shard(claim / SHARD)]
    assert records and {r["executor"] for r in records} == {"direct"}
    assert not (pod / SHARD).parent.exists(), "calls were recorded into the pod's sources"
    recorded = (claim / SHARD).read_bytes()

    # another pod, the server gone: replay answers every call from the claim's store and
    # leaves it as it was
    target.unlink()
    second = make_workflow_copy(tmp_path / "pod2" / "repo")
    fake_models_group(second, "fake-store", "http://127.0.0.1:9/v1")
    _run_in_pod(second, claim, f"{models} llm=replay")
    assert target.is_file()
    assert (claim / SHARD).read_bytes() == recorded
    assert not (second / SHARD).parent.exists()
