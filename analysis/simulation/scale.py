"""A world K times the study: K study-sized blocks, one crowd of annotators, more models.

Follow-up studies have many more users, prompts and raters; this builds such a world in the
same annotation-tool layout so the whole workflow can be timed on it
(``recenter simulate --scale K``). The design:

* **Blocks.** Block ``b`` is a study-sized world (the committed world's generative model and
  sizes: users, conversations, attributes, prompts, pairs, ratings) drawn from its own
  streams, seeded ``(seed, part, K, b)``: the committed world's streams are ``(seed, part)``,
  so no scaled draw takes a value from them and ``--scale 1`` (one block, no extra model)
  is the committed world itself. Blocks are numbered on (users ``sim-wc-061..``, item lines,
  prompt indices), so the K blocks read as one world.
* **A crowd.** Each stage's annotator pool is K times the study's (stage 2: 6K), and every
  unit goes to the least-loaded annotators of the *whole* pool (loads carried over blocks),
  as on a crowdsourcing platform: 3 votes per stage-2 item from 6K people, so most pairs of
  annotators share a handful of items (what ``stats.min_shared_items`` is for).
* **Models.** ``n_models`` >= 5: the study's five plus ``sim-llm-f``, ``-g``, ... whose
  parameters repeat the five's in turn (model ``m`` behaves like model ``m mod 5``).

The world is written block by block (appending to each file), so memory stays at one block.
Its ``truth.json`` is the truth of one block's generative model (the per-item truths do not
depend on the number of blocks), conditional on the models' and the crowd's yes-bias.
The raters' effects (people's and models' offsets) are drawn once for the whole pool from
the stream ``(seed, RATER_STREAM, K)``; each block draws its prompts' and users' effects.
"""

from __future__ import annotations

import dataclasses
import string
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from analysis.simulation.parameters import WorldParameters
from analysis.simulation.simulate import (
    _STREAMS,
    RATER_STREAM,
    BlockStart,
    RaterEffects,
    World,
    draw_rater_effects,
    simulate_block,
)
from analysis.simulation.truth import FixedFactors, truth_json
from analysis.simulation.write import CARD_MARKER, TRUTH_FILE, _clear_previous, _dump

#: the model parameters that hold one value per model
_PER_MODEL = (
    "generator_quality",
    "generator_mention_rate",
    "judge_offset",
    "judge_mention_effect",
)
_MAX_MODELS = len(string.ascii_lowercase)  # sim-llm-a .. sim-llm-z


def scaled_parameters(p: WorldParameters, scale: int, n_models: int) -> WorldParameters:
    """One block's parameters: the study's sizes, pools ``scale`` times, ``n_models`` models."""
    if isinstance(scale, bool) or not isinstance(scale, int) or scale < 1:
        raise ValueError(f"--scale must be an int >= 1, got {scale!r}")
    base = len(p.llm_names)
    if not base <= n_models <= _MAX_MODELS:
        raise ValueError(f"--models must lie in [{base}, {_MAX_MODELS}], got {n_models}")
    extra = {
        name: tuple(getattr(p, name)[m % base] for m in range(n_models)) for name in _PER_MODEL
    }
    names = tuple(f"sim-llm-{string.ascii_lowercase[m]}" for m in range(n_models))
    return dataclasses.replace(
        p,
        llm_names=names,
        n_stage1_humans=p.n_stage1_humans * scale,
        n_stage2_humans=p.n_stage2_humans * scale,
        n_stage3_humans=p.n_stage3_humans * scale,
        **extra,
    )


def is_scaled(p: WorldParameters, scale: int, n_models: int) -> bool:
    """Whether these options ask for anything but the committed (study-sized) world."""
    return scale != 1 or n_models != len(p.llm_names)


def crowd(p: WorldParameters, scale: int, n_models: int) -> RaterEffects:
    """The scaled world's raters' effects, drawn once for the whole pool (every block's)."""
    block_params = scaled_parameters(p, scale, n_models)
    return draw_rater_effects(block_params, np.random.default_rng([p.seed, RATER_STREAM, scale]))


def _fixed(raters: RaterEffects) -> FixedFactors:
    return FixedFactors(
        tuple(float(x) for x in raters.llm), tuple(float(x) for x in raters.stage2_human)
    )


def simulate_blocks(p: WorldParameters, scale: int, n_models: int) -> Iterator[World]:
    """The blocks of the scaled world, in order (each numbered on from the one before)."""
    block_params = scaled_parameters(p, scale, n_models)
    raters = crowd(p, scale, n_models)
    loads: dict[str, np.ndarray] = {}
    at = BlockStart()
    for b in range(scale):
        streams = {
            name: np.random.default_rng([p.seed, k, scale, b]) for k, name in enumerate(_STREAMS)
        }
        world = simulate_block(block_params, streams, at, loads, raters)
        yield world
        files = world.files
        at = BlockStart(
            block=b + 1,
            user_line=at.user_line + len(files["extracted/task4_items.jsonl"]),
            pair_line=at.pair_line + len(files["extracted/task5_items.jsonl"]),
            prompt=at.prompt + block_params.n_prompts,
            stage3_line=at.stage3_line + len(files["extracted/task6_items.jsonl"]),
        )


def write_scaled_world(p: WorldParameters, scale: int, n_models: int, out: Path) -> list[Path]:
    """Write the scaled world under ``out`` (block by block), its data card and truth."""
    out = Path(out)
    _clear_previous(out)
    counts: dict[str, int] = {}
    for b, world in enumerate(simulate_blocks(p, scale, n_models)):
        for rel, records in world.files.items():
            if not records:
                continue
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w" if b == 0 else "a", encoding="utf-8", newline="\n") as handle:
                handle.writelines(_dump(r) + "\n" for r in records)
            counts[rel] = counts.get(rel, 0) + len(records)
    block_params = scaled_parameters(p, scale, n_models)
    written = [out / rel for rel in sorted(counts)]
    card = out / "README.md"
    card.write_text(_card(p, scale, block_params, counts), encoding="utf-8", newline="\n")
    truth = out / TRUTH_FILE
    truth.write_text(
        truth_json(block_params, _fixed(crowd(p, scale, n_models))), encoding="utf-8", newline="\n"
    )
    return [*written, card, truth]


def _card(p: WorldParameters, scale: int, block: WorldParameters, counts: dict[str, int]) -> str:
    """A short data card: what was scaled, and the line counts of the written files."""

    def lines(prefix: str) -> int:
        return sum(n for rel, n in counts.items() if rel.startswith(prefix))

    return "\n".join(
        [
            CARD_MARKER,
            "",
            f"A scaled world: {scale} study-sized blocks of the bundled world's generative model",
            f"(seed {p.seed}; block b draws from streams (seed, part, {scale}, b)), written by",
            f"`recenter simulate --scale {scale} --models {len(block.llm_names)}`."
            " Everything here is SIMULATED.",
            "",
            f"- users: {lines('extracted/task4_items')}",
            f"- stage-2 (user, prompt) pairs: {lines('extracted/task5_items')}",
            f"- stage-3 rated items: {lines('extracted/task6_items')}",
            f"- annotator pools: stage 1 {block.n_stage1_humans}, stage 2"
            f" {block.n_stage2_humans} ({block.stage2_raters_per_item} votes per item),"
            f" stage 3 {block.n_stage3_humans}",
            f"- models: {', '.join(block.llm_names)}",
            "",
            f"`{TRUTH_FILE}` is the truth of one block's generative model (with the scaled pools,"
            " conditional on the models' and the crowd's drawn yes-bias); see"
            " `analysis/simulation/scale.py`.",
            "",
        ]
    )
