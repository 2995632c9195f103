"""Write a simulated world to disk in the annotation-tool layout, with its data card and truth.

Files are JSON Lines (one compact object per line, keys in the tool's order, ``\\n`` line
ends, UTF-8), so the same world is the same bytes on every machine. The data card
(``README.md``) is generated from the parameters and from statistics read back from the
written files, so it cannot drift from them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from analysis.simulation.calibration import (
    MIN_SHARED_ITEMS,
    SAMPLING_SD,
    realized_statistics,
)
from analysis.simulation.parameters import (
    RANDOM_EFFECTS,
    STUDY_TARGETS,
    WorldParameters,
    effect_source,
)
from analysis.simulation.simulate import World
from analysis.simulation.truth import FixedFactors, truth_json

#: the world's ground truth, beside the raw files (see ``analysis.simulation.truth``)
TRUTH_FILE = "truth.json"

#: first line of every data card; marks a folder this module may overwrite
CARD_MARKER = "# The bundled world (SIMULATED data)"
#: folders of the layout that the writer owns inside the output folder
LAYOUT_FOLDERS = ("annotations", "extracted", "judge_task6", "relevance_task5", "task6")


def _dump(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def _clear_previous(out: Path) -> None:
    """Remove an earlier bundled world's files so none survive a change of sizes.

    Refuses to touch a non-empty folder that is not a bundled world (no data card marker).
    """
    if not out.exists():
        return
    entries = [e for e in out.iterdir() if e.name != ".gitkeep"]
    if not entries:
        return
    card = out / "README.md"
    if not (card.is_file() and card.read_text(encoding="utf-8").startswith(CARD_MARKER)):
        raise FileExistsError(
            f"{out} is not empty and holds no bundled-world data card; "
            "choose an empty folder or the bundled world's own folder"
        )
    for folder in LAYOUT_FOLDERS:
        for path in sorted((out / folder).rglob("*.jsonl")) if (out / folder).is_dir() else []:
            path.unlink()


def write_files(world: World, out: Path) -> list[Path]:
    """Only the layout's JSON Lines files (what an adapter reads; no card, no truth)."""
    written = []
    for rel, records in world.files.items():
        path = Path(out) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            handle.writelines(_dump(r) + "\n" for r in records)
        written.append(path)
    return written


def write_world(world: World, out: Path) -> list[Path]:
    """Write every file of ``world`` and its data card under ``out``; returns the paths."""
    out = Path(out)
    _clear_previous(out)
    written = write_files(world, out)
    stats = realized_statistics(out)
    card = out / "README.md"
    card.write_text(
        data_card(world.params, world.files, stats, world.truth), encoding="utf-8", newline="\n"
    )
    written.append(card)
    truth = out / TRUTH_FILE
    truth.write_text(
        truth_json(world.params, FixedFactors.of_world(world.truth)),
        encoding="utf-8",
        newline="\n",
    )
    written.append(truth)
    return written


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ")"
    return str(value)


GENERATIVE_MODEL = """\
## How the world is generated

Everything below is drawn from one seed (`seed`), one numpy PCG64 stream per part (users,
text, stage 1, stage 2, stage 3, stage-1 flag reasons, the prompts' and users' random
effects, the raters' random effects); `recenter simulate` rewrites these files byte for
byte.
The model is calibrated in expectation; the committed seed is the most typical of seeds
0-39 (`calibration.representative_seed`), so this realization shows the study's figures up
to ordinary sampling error (see the sds in the calibration table).
All text is written by the project from templates and phrase banks
(`analysis/simulation/text.py`); no sentence comes from real conversations, from
the study's data or from the paper.

**Users and conversations.** Real-like users (source `sim-wildchat`) and synthetic-benchmark
stand-ins (`sim-cupid`, `sim-prefeval`, `sim-personalens`) each talk about a few of 16 life
domains (cooking, travel, finance, ...). Each attribute has a latent *quality class*:
*supported* (the user speaks about it in the first person, often in several chats; some are
about communication style), *speculative* (a hedged guess about a neighbouring domain),
*overgeneralized* (one request, e.g. a single recipe question, turned into a trait) or
*task-context confused* (a writing task for someone else, e.g. a bio for a chef, turned
into a fact about the user). Real-like users draw classes from `quality_mix_real`,
synthetic users from `quality_mix_synthetic` (persona chats mislead less). Each merged
attribute keeps a few pre-merge originals (`originals_by_class`: paraphrases with their own
reasons and extractor confidences; overgeneralized and confused claims are stated
confidently). Every original
leaves an evidence snippet (a user turn and an assistant turn); a user's snippets are
shuffled into conversations.

**Stage 1 (attribute quality).** Each user's attributes go to 3 of `n_stage1_humans`
annotators (least-loaded first). An ordered-logit model gives each judgment: latent support
= class mean (`stage1_class_means`) + the attribute's difficulty (normal, sd
`stage1_item_sd`, shared by its raters) + its user's effect (sd `stage1_user_sd`) + the
annotator's leniency (drawn per world, sd `stage1_leniency_sd`) + logistic noise, cut at
`stage1_cutpoints` into rejected /
uncertain / accepted (`bad` / `unsure` / `ok` in the tool's files). Non-accepted
judgments carry a note naming the problem with probability `stage1_note_rate`. Every
non-accepted judgment (a *flag*) also carries a structured `flag_reason`
(`overgeneralization`, `task_context_confusion` or `other`): the reason its note names when it
has one, else drawn from `stage1_flag_reason_mix` for the attribute's class (its own stream,
so adding it changed no other draw). The real exports have no such field.

**Stage 2 (relevance).** `n_stage2_users` real-like users are paired with `n_prompts`
project-written prompts (each prompt with `users_per_prompt` users; a pair's prompt is from
one of the user's domains with probability `prompt_in_user_domain`). Every profile
attribute of a pair is an item of one type: same domain as the prompt, style, adjacent
domain, or unrelated. A latent-class model decides the votes: the item is truly relevant
with the type's prevalence (`relevance_prevalence`) shifted on the logit scale by its
prompt's and its user's effects (`prompt_relevance_sd`, `user_relevance_sd`: some prompts
and some profiles make more attributes matter); a share (`hard_item_rate`) is hard for
people; and models see items through a shared *LLM view* that lights up on relevant items
and, more often for topically close types and for misleading prompts (the prompt's
difficulty, `prompt_difficulty_sd`), on irrelevant ones. People vote from the truth
(sensitivity; a false-positive rate on plausible items that is higher for topically close
types, `human_type_shift`; guessing on hard ones; each person's logit yes-bias, drawn per
world with sd `stage2_human_offset_sd`); models vote from the shared view (each model's
yes-bias drawn per world, sd `llm_offset_sd`). Sharing the view is
why models agree with each other more than with people, and why they select 2-3x more
attributes. The human majority of the 3 annotators is the `ground_truth` of the
`gt_attributes` files. The five free probabilities marked *[calibrated]* were solved with
`calibration.calibrate_default_relevance` so that the expected rates and kappas (over
worlds: people, models, prompts and users integrated out) equal the study's.

**Stage 3 (responses and preference).** Each simulated model writes, for every pair, a
generic response (`no_context`), a response adapted to up to `full_profile_max_attributes`
attributes it voted relevant (`attributes`), and a personalized response adapted to the
human-majority relevant attributes (`gt_attributes`). Each adaptation has a latent quality
(the generator's mean + the prompt's and the user's effects, `prompt_quality_sd` and
`user_quality_sd` + a response effect + a slot effect). Its wording does not show that
quality: each adaptation sentence is drawn from the same bank (the domain's concrete
bridges and generic asides alike) whatever its quality, so a model that reads the text (a
reward model, a judge) cannot see what people's ratings respond to; only whether the
attribute is named is visible. An adaptation is either an explicit mention (a second-person sentence
repeating the attribute, "Since you bake sourdough bread at home, ...": the generator names
attributes with probability `generator_mention_rate`) or implicit. Items for people are
(pair, generator) combinations chosen in turn per generator until their relevant attributes
add up to `n_stage3_ratings`; one annotator rates each. A rating (1-5, 3 = no difference)
is the rounded latent: quality + offset (for people, plus the annotator's severity, drawn
per world with sd `stage3_severity_sd`) + mention effect + normal noise; people barely
react to mentions (`human_mention_effect`), each model judge has its own offset
(`judge_offset`, more favourable than people) and mention bias (`judge_mention_effect`).
"""

SEED_AND_TRUTH = """\
## How the committed seed was chosen

The generative model is calibrated in expectation (its parameters, not the seed, carry the
study's figures). The seed `{seed}` was then chosen, once, as the most typical of the
worlds of seeds 0-39: `calibration.representative_seed` simulates each, computes the
calibration statistics above and keeps the seed with the smallest sum of squared
standardized misses `((statistic - study) / sampling sd)^2` (`calibration.seed_score`).
So this world was picked to look like the study: its agreement with the study's figures is
not evidence about the pipeline. What is evidence is whether the workflow recovers the
world's own ground truth (`{truth}`), and how often its intervals cover it across worlds
drawn with fresh seeds (`benchmarks/bench_coverage.py`).

## Ground truth (`{truth}`)

`{truth}` lists, for every estimand the simulator controls, its value under the parameters
below, keyed by the `numbers.json` record key of the estimate it corresponds to, with how it
was obtained (a large draw of the same model from the truth's own seeds for the design, every
random effect, vote and rating integrated out). It integrates over the random factors
(users, prompts, items, people) and is conditional on the fixed ones: the five models and,
for the statistics scored against the human majority and for stage 3 (rated on the
attributes that majority marks relevant), the stage-2 annotators whose majority it is (their
yes-bias drawn in this world: `fixed_factors`); so it changes from seed to seed only in
stages 2 and 3. It also lists every random effect's size
(`random_effects`). A bundled build prints each truth beside its estimate (records
`validation.<key>.truth`); `benchmarks/bench_coverage.py` measures how often the intervals
cover it over many fresh worlds, and the paper's validation section reports that coverage.
"""

#: (file pattern, content) of every file kind the writer produces
FILE_KINDS: tuple[tuple[str, str], ...] = (
    (
        "extracted/task4_items.jsonl",
        "one line per user: `user_id`, `source`, `merged_attributes` (with"
        " `original_attributes`, `reason`, `original_reasons`, `confidence`,"
        " `original_confidences`), `conversations` (`hashed_ip`, `conversation_hash`,"
        " `conversation`: role/content turns), `item_index`",
    ),
    (
        "annotations/<annotator>_task4.jsonl",
        'stage 1: `{task: "4", index, user_id, attr_judgments: [{judgment: ok/unsure/bad,'
        " note, flag_reason (not on ok)}], ...}`, aligned by position with `merged_attributes`"
        " of line `index`",
    ),
    (
        "extracted/task5_items.jsonl",
        "stage-2 pairs: `prompt_index`, `user_id`, `profile_attributes`, `prompt_text`,"
        " `item_index`",
    ),
    (
        "annotations/<annotator>_task5.jsonl",
        '`{task: "5", index, user_id, prompt_index, relevance_judgments: [{attribute,'
        " relevant}], ...}`, `index` = line of task5_items",
    ),
    (
        "relevance_task5/<model>.jsonl",
        "model votes `{model, sample_index, prompt_index, user_id, items: [{attribute,"
        " relevant, raw_answer}]}`",
    ),
    (
        "task6/eval_results_task5_<mode>_<model>.jsonl",
        "responses per pair and mode (`no_context` = generic, `attributes` = full profile,"
        " `gt_attributes` = personalized); in `gt_attributes` files `profile_attributes`"
        " carries `ground_truth` = the human majority (the other modes carry an empty"
        " list; the full attribute records are in task5_items)",
    ),
    (
        "extracted/task6_items.jsonl",
        "stage-3 items: `model_tag`, `user_id`, `prompt_id` (the prompt index as a string),"
        " `prompt_text`, `attributes: [{attribute, is_relevant}]`, `response_no_context`,"
        " `response_personalized`, `item_index`",
    ),
    (
        "annotations/<annotator>_task6.jsonl",
        '`{task: "6", index, user_id, prompt_id, model_tag, ratings: {attribute text:'
        " 1..5}, ...}`, `index` = line of task6_items",
    ),
    (
        "judge_task6/<model>.jsonl",
        "model-judge ratings `{model, sample_index, user_id, prompt_id, model_tag, ratings:"
        " {attribute text: 1..5}}`",
    ),
)

LAYOUT_NOTES = """\
Differences from the real snapshot: stage-2 and task-4 items omit the authors' `items`
(expected behaviours) list, the extractor-era `prompt_index`/`prompt_text` of task-4 items
and the tool's timestamps; the stage-3 `prompt_id` is the prompt index instead of the
snapshot's user id. Attribute texts are unique within a user but repeat across users, as
in the real data, so key votes by (item, attribute), never by text alone.
"""


def _pool(params: WorldParameters, start: int, n: int) -> str:
    return f"{params.human_prefix}{start + 1:02d}..{start + n:02d}"


def random_effects_section(
    params: WorldParameters, world_effects: dict[str, np.ndarray]
) -> list[str]:
    """The card's table of random effects: factor, what it shifts, sd, where the size is from."""
    lines = [
        "## Random effects",
        "",
        "The factors the study's statements generalize over vary from world to world, as in",
        "the study's data: each is a normal effect with the sd below. *data*: estimated from",
        "the authors' real exports (`analysis/simulation/effect_sizes.py`: rater offsets from",
        "the pilot rounds' raters on shared items; prompt and user effects by matching the",
        "final round's spreads across prompts and users of the majority rate and of the",
        "models' yes rate on majority-no items); *stated*: no data show it (the reason is in",
        "the parameter's meaning below).",
        "",
        "| parameter | factor | shifts | sd | size from |",
        "|---|---|---|---|---|",
    ]
    for name, (factor, what) in RANDOM_EFFECTS.items():
        lines.append(
            f"| `{name}` | {factor} | {what} | {getattr(params, name):g} |"
            f" {effect_source(params, name)} |"
        )
    lines += ["", "This world's draws of the raters' effects:", ""]
    for key, label in (
        ("stage1_leniency", "stage-1 annotators' leniency"),
        ("stage2_human_offsets", "stage-2 annotators' yes-bias"),
        ("stage3_severity", "stage-3 annotators' severity"),
        ("llm_offsets", f"models' yes-bias ({', '.join(params.llm_names)})"),
    ):
        values = ", ".join(f"{x:+.2f}" for x in world_effects[key])
        lines.append(f"- {label}: {values}")
    return [*lines, ""]


def data_card(
    params: WorldParameters,
    files: dict[str, list[Any]],
    stats: dict[str, float],
    world_effects: dict[str, np.ndarray],
) -> str:
    """The README of a written world: what it is, how it was made, every parameter."""
    lines = [
        CARD_MARKER,
        "",
        "**This dataset is SIMULATED.** No real person, conversation, annotator or model is",
        "in it. Every user, annotator (`sim-human-..`) and model (`sim-llm-..`) is made up by a",
        "seeded program (`analysis/simulation/`); its numbers are calibrated to the",
        "published figures of *Re-Centering Humans in LLM Personalization* so that the",
        "project's workflow can run end to end without the authors' data. Findings computed",
        "from it describe the simulation, not people. Do not edit these files by hand:",
        "regenerate them with",
        "",
        "```",
        "recenter simulate --out data/raw/bundled",
        "```",
        "",
        "## Sizes",
        "",
        "| what | count |",
        "|---|---|",
        f"| users (real-like / synthetic) | {params.n_wildchat_users} / "
        f"{params.n_users_per_benchmark * len(params.synthetic_benchmarks)} |",
        f"| conversations of real-like users | {int(stats['stage1.n_real_conversations'])} |",
        f"| stage-1 attributes / judgments | {int(stats['stage1.n_attributes'])} / "
        f"{int(stats['stage1.n_judgments'])} |",
        f"| stage-2 pairs / items / human judgments | {int(stats['stage2.n_pairs'])} / "
        f"{int(stats['stage2.n_items'])} / {int(stats['stage2.n_human_judgments'])} |",
        f"| stage-2 model votes | {len(params.llm_names)} x {int(stats['stage2.n_items'])} |",
        f"| stage-3 items / human ratings | {int(stats['stage3.n_items'])} / "
        f"{int(stats['stage3.n_human_ratings'])} |",
        f"| annotators (stage 1 / 2 / 3) | {_pool(params, 0, params.n_stage1_humans)} /"
        f" {_pool(params, params.n_stage1_humans, params.n_stage2_humans)} /"
        f" {_pool(params, params.n_stage1_humans + params.n_stage2_humans, params.n_stage3_humans)}"
        " |",
        f"| models (stage-2 voters, stage-3 generators, judges) | {', '.join(params.llm_names)} |",
        f"| files | {len(files)} JSON Lines files |",
        "",
        GENERATIVE_MODEL,
        *random_effects_section(params, world_effects),
        "## Files (the authors' annotation-tool layout)",
        "",
        "| file | content |",
        "|---|---|",
        *(f"| `{name}` | {content} |" for name, content in FILE_KINDS),
        "",
        LAYOUT_NOTES,
        "## Calibration: the study's figures and this world's",
        "",
        "Computed from these files by `analysis.simulation.calibration`; kappas are",
        "group means of pairwise Cohen's kappa over rater pairs sharing at least",
        f"{MIN_SHARED_ITEMS} items; the sampling sd is measured across seeds 0-39.",
        "",
        "| statistic | study | this world | sampling sd |",
        "|---|---|---|---|",
    ]
    for key, target in STUDY_TARGETS.items():
        lines.append(f"| `{key}` | {target:g} | {stats[key]:.3f} | {SAMPLING_SD[key]:g} |")
    extra = sorted(
        k for k in stats if k not in STUDY_TARGETS and not k.split(".")[1].startswith("n_")
    )
    lines += ["", "Further statistics of this world:", "", "| statistic | value |", "|---|---|"]
    lines += [f"| `{k}` | {stats[k]:.4g} |" for k in extra]
    lines += ["", SEED_AND_TRUTH.format(seed=params.seed, truth=TRUTH_FILE)]
    lines += [
        "## Parameters",
        "",
        "Every parameter of `WorldParameters` (`analysis/simulation/parameters.py`).",
        "Per-class tuples follow (supported, speculative, overgeneralized, context_confused);",
        "per-type tuples follow (same_domain, style, adjacent, unrelated); per-model tuples",
        f"follow ({', '.join(params.llm_names)}).",
        "",
        "| parameter | value | meaning |",
        "|---|---|---|",
    ]
    for name, value, doc in params.describe():
        lines.append(f"| `{name}` | {_fmt(value)} | {doc} |")
    return "\n".join(lines) + "\n"
