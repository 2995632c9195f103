"""Handmade record files standing in for the upstream rules, for the paper's tests.

Two datasets: ``full`` has every key the paper text and tables ask for (as the bundled world
will), ``real_like`` lacks what the authors' real exports lack (stage-3 human ratings, the
final round's individual human votes). Values are invented but plausible; they only need to
exercise the macros, tables, claims and provenance.
"""

from __future__ import annotations

from pathlib import Path

from analysis.provenance import Record, write_records

CODE = "tests.paper.fake_records:records"
MODELS = ("sim-llm-alpha", "sim-llm-beta", "smollm2-135m")
JUDGES = ("sim-judge-alpha", "sim-judge-beta")
#: the caveat the pipeline attaches to every statistic about the exercise-only model
#: (``stages.caveats``); its counts of calls and parse failures carry none
CAVEAT = "SmolLM2-135M is a near-random exercise model"
#: a test of 0 whose p-value agrees with a CI of half-width 0.05 around the values below
NULL_ZERO = {"null": 0.0, "p_value": 0.001, "p_adjusted": 0.002}


def rec(key: str, value: float | int, fmt: str = ".2f", ci: float | None = 0.05, **kw) -> Record:
    """A record with a symmetric CI of half-width ``ci`` (no CI when ``None``)."""
    low = None if ci is None else value - ci
    high = None if ci is None else value + ci
    if "smollm2-135m" in key and not key.startswith(("calls.", "parse_failures.")):
        kw["extra"] = {**kw.get("extra", {}), "caveat": CAVEAT}
    return Record(
        key=key,
        value=value,
        fmt=fmt,
        method=kw.pop("method", f"test statistic for {key}; 95% bootstrap CI"),
        code=CODE,
        ci_low=low,
        ci_high=high,
        ci_level=kw.pop("ci_level", None if ci is None else 0.95),
        **kw,
    )


def stage2_records(round_: str, individual_humans: bool) -> list[Record]:
    p = f"stage2.{round_}"
    out = [rec(f"{p}.relevance_rate.human_majority", 0.21, ".1%", 0.02, n=3973)]
    ratios = {"sim-llm-alpha": 2.4, "sim-llm-beta": 2.1, "smollm2-135m": 0.9}
    for m in MODELS:
        out += [
            rec(f"{p}.relevance_rate.{m}", 0.21 * ratios[m], ".1%", 0.02, n=3973),
            rec(
                f"{p}.over_selection.{m}",
                ratios[m],
                ".2f",
                0.2,
                extra={"p_value": 0.001, "p_adjusted": 0.003},
            ),
            rec(f"{p}.kappa_vs_majority.{m}", 0.3, ".2f", 0.04),
            rec(f"{p}.precision_vs_majority.{m}", 0.35, ".3f", 0.03),
            rec(f"{p}.recall_vs_majority.{m}", 0.8, ".3f", 0.03),
            rec(f"{p}.f1_vs_majority.{m}", 0.49, ".3f", 0.03),
        ]
    out.append(rec(f"{p}.over_selection.mean_model", 1.8, ".2f", 0.2))
    for b in ("bm25", "minilm-embedding"):
        out += [
            rec(f"{p}.precision_vs_majority.{b}", 0.2, ".3f", 0.03),
            rec(f"{p}.recall_vs_majority.{b}", 0.3, ".3f", 0.03),
            rec(f"{p}.f1_vs_majority.{b}", 0.24, ".3f", 0.03),
        ]
    out.append(rec(f"{p}.kappa.model_model", 0.6, ".2f", 0.04))
    out.append(rec(f"{p}.kappa_max.model_model", 0.9, ".2f", 0.04))
    out.append(rec(f"{p}.kappa_share_of_max.model_model", 0.7, ".2f", 0.04))
    out.append(rec(f"{p}.alpha.model", 0.58, ".2f", 0.04))
    if individual_humans:
        for group, kmax, share in (("human_human", 0.9, 0.5), ("human_model", 0.45, 0.6)):
            out += [
                rec(f"{p}.kappa_max.{group}", kmax, ".2f", 0.04),
                rec(f"{p}.kappa_share_of_max.{group}", share, ".2f", 0.04),
            ]
        out += [
            rec(f"{p}.alpha.human", 0.42, ".2f", 0.04),
            rec(f"{p}.alpha.all", 0.35, ".2f", 0.04),
        ]
        for diff, v in (
            ("model_model_minus_human_model", 0.1),
            ("human_human_minus_human_model", -0.1),
            ("model_model_minus_human_human", 0.2),
        ):
            out.append(rec(f"{p}.kappa_share_of_max_diff.{diff}", v, "+.2f", 0.05, extra=NULL_ZERO))
        out += [
            rec(f"{p}.kappa.human_human", 0.43, ".2f", 0.04, n=3973),
            rec(f"{p}.kappa.human_model", 0.3, ".2f", 0.04),
            rec(f"{p}.ceiling.kappa_human_vs_rest", 0.5, ".2f", 0.05),
            rec(f"{p}.ceiling.f1_human_vs_rest", 0.6, ".3f", 0.05),
            rec(f"{p}.relevance_rate.human", 0.2, ".1%", 0.02),
        ]
        for m in MODELS:
            out += [
                rec(f"{p}.vs_rest.kappa.{m}", 0.35, ".2f", 0.04),
                rec(f"{p}.vs_rest.f1.{m}", 0.5, ".3f", 0.04),
                rec(f"{p}.vs_rest.gap_kappa.{m}", -0.15, "+.2f", 0.05, extra=NULL_ZERO),
                rec(f"{p}.vs_rest.gap_f1.{m}", -0.1, "+.3f", 0.05, extra=NULL_ZERO),
            ]
        for diff, v in (
            ("model_model_minus_human_model", 0.3),
            ("human_human_minus_human_model", 0.13),
            ("model_model_minus_human_human", 0.17),
        ):
            out.append(rec(f"{p}.kappa_diff.{diff}", v, "+.2f", 0.05, extra=NULL_ZERO))
    return out


def stage3_records() -> list[Record]:
    out = [
        rec("stage3.no_better_share", 0.546, ".1%", 0.03, n=1101),
        rec("stage3.human_better_share", 0.454, ".1%", 0.03, n=1101),
        rec("stage3.worse_share", 0.53, ".1%", 0.02, n=1101),
        rec("stage3.equal_share", 0.016, ".1%", 0.01, n=1101),
        rec("stage3.mentions.detector_accuracy", 0.85, ".0%", None, n=40),
        rec("stage3.mentions.detector_sensitivity", 0.8, ".0%", 0.15, n=20),
        rec("stage3.mentions.detector_specificity", 0.9, ".0%", 0.1, n=20),
        rec("stage3.mention_delta_within_generator.human", 0.02, "+.2f", 0.05),
        rec("stage3.mean_rating.human", 3.1, ".2f", 0.1),
        rec("stage3.mention_delta.human", 0.03, "+.2f", 0.05),
        rec(
            "stage3.mention_habit_vs_bias.spearman",
            0.9,
            ".2f",
            0.1,
            extra={"p_value": 0.0167, "p_method": "exact permutation"},
        ),
        rec("stage3.ceiling.spearman_human_vs_rest", 0.4, ".2f", 0.05),
    ]
    for g in ("sim-gen-alpha", "sim-gen-beta"):
        out += [
            rec(f"stage3.mean_rating.{g}", 3.2, ".2f", 0.1),
            rec(f"stage3.mention_rate.{g}", 0.4, ".1%", 0.05),
        ]
    for j in JUDGES:
        out += [
            rec(f"stage3.judge_mean_rating.{j}", 3.8, ".2f", 0.1),
            rec(f"stage3.judge_better_share.{j}", 0.7, ".1%", 0.05),
            rec(f"stage3.judge_better_share_minus_human.{j}", 0.25, ".1%", 0.05),
            rec(
                f"stage3.judge_minus_human.{j}",
                0.7,
                "+.2f",
                0.1,
                extra={"p_value": 0.0001, "p_adjusted": 0.0002},
            ),
            rec(f"stage3.judge_spearman_vs_human.{j}", 0.3, ".2f", 0.05),
            rec(f"stage3.mention_delta.{j}", -0.39 if j.endswith("beta") else 0.5, "+.2f", 0.1),
            rec(f"stage3.mention_delta_within_generator.{j}", 0.3, "+.2f", 0.1),
        ]
    return out


def interventions_records(with_stage3: bool) -> list[Record]:
    out = [
        rec("stage1.verifier.auroc", 0.81, ".3f", 0.03),
        rec("stage1.verifier.acceptance_kept", 0.91, ".1%", 0.02),
        rec("stage2.classifier.final.f1", 0.52, ".3f", 0.03),
        rec("stage2.classifier.final.precision", 0.5, ".3f", 0.03),
    ]
    for m in MODELS:  # the trained models minus each zero-shot model, paired (issue 15)
        out += [
            rec(f"stage1.verifier.minus_zero_shot.{m}.kappa", 0.2, "+.2f", 0.05),
            rec(f"stage1.verifier.minus_zero_shot.{m}.auroc", 0.1, "+.3f", 0.03),
            rec(f"stage2.classifier.final.f1_minus_zero_shot.{m}", 0.08, "+.3f", 0.03),
        ]
    if with_stage3:
        out += [
            rec("stage3.reward_model.pointwise.spearman", 0.31, ".2f", 0.05),
            rec("stage3.reward_model.human_ceiling.spearman", 0.4, ".2f", 0.05),
            rec("stage3.controls.position_consistency.sim-judge-alpha", 0.8, ".1%", 0.05),
        ]
    return out


def data_records(with_stage3: bool) -> list[Record]:
    """The dataset-size keys the canonical-tables rule writes (analysis.data.summary)."""
    counts = {
        "data.n_users": 600,
        "data.n_users.real": 500,
        "data.n_users.synthetic": 100,
        "data.n_conversations": 550,
        "data.n_prompts": 41,
        "data.n_attributes.stage1": 1983,
        "data.n_relevance_items.final": 3973,
        "data.n_judgments.stage1": 5949,
        "data.n_judgments.stage2": 11919,
        "data.n_judgments.total": 18969 if with_stage3 else 17868,
        "data.n_majority_labels.final": 3973,
        "data.n_model_votes.final": 19865,
    }
    if with_stage3:
        counts["data.n_judgments.stage3"] = 1101
        counts["data.n_model_ratings.stage3"] = 1101
    else:
        del counts["data.n_judgments.stage2"]  # the real exports lack the final round's votes
    return [rec(k, v, ",d", None) for k, v in counts.items()]


def records_by_rule(kind: str = "full") -> dict[str, list[Record]]:
    """``rule -> records`` of a dataset kind (``full`` or ``real_like``)."""
    full = kind == "full"
    stage1 = [
        rec("stage1.acceptance_rate.wildchat", 0.55, ".1%", 0.03),
        rec("stage1.acceptance_rate.synthetic:cupid", 0.77, ".1%", 0.03),
        rec("stage1.acceptance_rate.overall", 0.58, ".1%", 0.02),
        rec("stage1.problematic_gap_real_vs_synthetic", 0.22, ".1%", 0.04),
        rec("stage1.kappa.human_human", 0.35, ".2f", 0.05),
        rec("stage1.alpha.human", 0.34, ".2f", 0.05),
    ]
    if full:  # only a structured flag reason gives these (the real exports have none)
        stage1 += [
            rec("stage1.flags.share.overgeneralization", 0.539, ".1%", 0.03, n=1225),
            rec("stage1.flags.share.task_context_confusion", 0.16, ".1%", 0.02, n=1225),
            rec("stage1.flags.share.other", 0.301, ".1%", 0.03, n=1225),
        ]
    out = {
        "canonical_tables": data_records(full),
        "stage1_statistics": stage1,
        "stage2_statistics": stage2_records("final", full) + stage2_records("pilot", True),
        "interventions": interventions_records(full),
        "parse_failures": [
            Record(
                key="parse_failures.stage2_relevance.smollm2-135m",
                value=12,
                fmt=",d",
                method="unparsable outputs after one repair",
                code=CODE,
                extra={"n_calls": 400, "failure_rate": 0.03},
            )
        ],
    }
    if full:
        out["stage3_statistics"] = stage3_records()
        pooled = {"ci_low": 0.941, "ci_high": 0.953, "ci_level": 0.95, "n": 120}
        out["validation"] = [
            Record("validation.coverage.n_worlds", 1000, ",d", "worlds of the run", CODE),
            Record("validation.coverage.n_boot", 2000, ",d", "resamples per interval", CODE),
            Record("validation.coverage.pooled", 0.947, ".3f", "pooled, design", CODE, **pooled),
            Record(
                "validation.coverage.pooled_user_only",
                0.91,
                ".3f",
                "pooled, users only",
                CODE,
                **{**pooled, "ci_low": 0.9, "ci_high": 0.92},
            ),
            Record("validation.coverage.p_vs_nominal", 0.31, ".2g", "test of 0.95", CODE),
            Record("validation.coverage.p_vs_nominal_user_only", 1e-9, ".2g", "test", CODE),
            Record("validation.coverage.n_user_only_under", 12, "d", "users only below", CODE),
            Record("validation.coverage.n_families_under_nominal", 0, "d", "families below", CODE),
            Record(
                "validation.coverage.n_findings",
                0,
                "d",
                "targets missed",
                CODE,
                extra={"findings": []},
            ),
        ]
    return out


def write_fake_records(dest: Path, kind: str = "full", skip: tuple[str, ...] = ()) -> list[Path]:
    """Write one record file per fake rule under ``dest`` (with real input files to hash)."""
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for rule, records in records_by_rule(kind).items():
        if rule in skip:
            continue
        inp = dest / "inputs" / f"{rule}.parquet"
        inp.parent.mkdir(parents=True, exist_ok=True)
        inp.write_bytes(f"input of {rule}".encode())
        path = dest / f"{rule}.json"
        write_records(
            records,
            path,
            rule=rule,
            inputs=[inp],
            config={"stats": {"n_boot": 200, "ci_level": 0.95}},
            calls={"data/calls/stage2_relevance/smollm2-135m/000.jsonl": 40}
            if rule == "stage2_statistics"
            else None,
        )
        paths.append(path)
    return paths
