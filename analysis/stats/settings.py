"""The statistics settings of a rule, typed once: the ``stats`` group, the seed, the caveats.

Every statistic takes one :class:`StatsSettings` (the record maker,
:mod:`analysis.stats.records`, reads the interval settings and the families; the designs'
resampling, :mod:`analysis.stats.resampling`, the designs, the seed and ``B``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from analysis.settings import CiMethod, DesignSpec, StatsConfig, from_params

__all__ = ["StatsSettings"]


@dataclass(frozen=True)
class StatsSettings:
    """The statistics settings of a rule: the typed ``stats`` group, ``run.seed``, caveats.

    Built once per rule by :meth:`from_rule_params` and handed to every statistic (there is no
    other form of them: no defaults here, the YAML holds them, and the range checks are those
    of :class:`analysis.settings.StatsConfig`).
    """

    config: StatsConfig
    seed: int
    #: model -> caveat (config ``stages.caveats``): attached to the model's records, and the
    #: model is left out of aggregates over models (group means, means over models, the
    #: across-model correlation), since a caveat says its numbers mean nothing for the study
    caveats: tuple[tuple[str, str], ...] = ()
    #: what a method sentence calls the human raters: the dataset's noun (``data.nouns.people``:
    #: "simulated raters" in the bundled world, "people" in the authors' exports) where the
    #: rule's params carry it, else the neutral "human raters"
    people: str = "human raters"

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"the seed must be an int, got {self.seed!r}")

    @classmethod
    def from_rule_params(cls, params: Mapping[str, Any]) -> StatsSettings:
        """From a rule's ``subtree(CFG, "stats", "run.seed", ...)`` params.

        Reads ``stats`` and ``run.seed`` (required), ``stages.caveats`` and ``data.nouns``
        (optional); the subtree's other keys belong to the rule's other settings (``learn``,
        ``stages.*``).
        """
        missing = [k for k in ("stats", "run.seed") if k not in params]
        if missing:
            raise ValueError(
                f"a statistics rule's params lack {missing} (expected the rule's subtree "
                "'stats', 'run.seed' and optionally 'stages.caveats')"
            )
        config = from_params(StatsConfig, params["stats"], "stats")
        caveats = params.get("stages.caveats") or {}
        nouns = params.get("data.nouns") or {}
        return cls(
            config=config,
            seed=int(params["run.seed"]),
            caveats=tuple(sorted((str(k), str(v)) for k, v in dict(caveats).items())),
            **({"people": str(nouns["people"])} if "people" in nouns else {}),
        )

    @property
    def n_boot(self) -> int:
        return self.config.n_boot

    @property
    def ci_level(self) -> float:
        return self.config.ci_level

    @property
    def ci_method(self) -> str:
        return str(self.config.ci_method)

    @property
    def bca(self) -> bool:
        return self.config.ci_method == CiMethod.bca

    @property
    def cluster(self) -> str:
        return str(self.config.cluster)

    @property
    def design(self) -> str:
        return str(self.config.design)

    @property
    def min_shared_items(self) -> int:
        return self.config.min_shared_items

    @property
    def multiple_comparisons(self) -> str:
        return str(self.config.multiple_comparisons)

    def design_spec(self, name: str) -> DesignSpec:
        """The declared design ``name`` (``stats.designs``)."""
        try:
            return self.config.designs[name]
        except KeyError:
            raise ValueError(
                f"no design {name!r} in stats.designs (has {sorted(self.config.designs)})"
            ) from None

    def family(self, name: str) -> str:
        """The declared description of test family ``name`` (``stats.families``)."""
        try:
            return self.config.families[name]
        except KeyError:
            raise ValueError(
                f"no test family {name!r} in stats.families (has {sorted(self.config.families)})"
            ) from None

    def caveat(self, rater: str) -> str | None:
        """The configured caveat of a model, or None."""
        return dict(self.caveats).get(rater)

    def in_aggregates(self, rater: str) -> bool:
        """Whether a model enters means and correlations over models (no caveat)."""
        return self.caveat(rater) is None

    def with_caveat(self, rater: str, extra: Mapping[str, Any]) -> dict[str, Any]:
        """``extra`` plus the rater's caveat where it has one (papers must say it)."""
        note = self.caveat(rater)
        return {**extra, "caveat": note} if note else dict(extra)
