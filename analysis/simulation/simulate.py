"""The seeded generative model of the bundled world: users to ratings, in the tool's layout.

``simulate_world(params)`` builds every record of every file of the annotation-tool layout
in memory (``World.files``: relative path -> list of JSON objects, in write order) plus the
latent truth behind them (``World.truth``) for calibration notes and tests. Nothing reads
the clock or the environment: the same parameters give the same world, record for record.

The order of events follows the study:
1. users with a few life domains each; their attributes (merged, with pre-merge originals)
   and the conversations that are the attributes' evidence;
2. stage 1: three people label each attribute accepted / uncertain / rejected;
3. stage 2: real-like users are paired with prompts; three people and five models vote on
   whether each profile attribute should change the response;
4. stage 3: each model writes a generic, a full-profile and a personalized response (on the
   human-majority relevant attributes); people and model judges rate personalized vs generic
   per relevant attribute.

Randomness comes from one PCG64 stream per part (users, text, stage 1, 2, 3, the reasons of
stage-1 flags, then the random effects of prompts and users, and those of raters; each added
later with its own stream so that every earlier draw kept its value), so changing a rater
parameter of one stage changes that stage's judgments and nothing else.

Random effects (the factors the study's intervals generalize over) are drawn per world:
prompts (how often their attributes matter, how misleading they are to models, how well
responses to them personalize), users (the same for their profiles, and a shift of their
attributes' stage-1 support) and raters (people's leniency, yes-bias and severity in each
stage; the models' yes-bias). Their sizes are parameters (``parameters.py``; which come from
the real exports is in ``effect_sizes``) and the draws are in ``World.truth``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from analysis.data.vocabulary import (
    ACCEPTED,
    FLAG_REASONS,
    OTHER_REASON,
    OVERGENERALIZATION,
    TASK_CONTEXT_CONFUSION,
)
from analysis.simulation import text as T
from analysis.simulation.parameters import WorldParameters
from analysis.simulation.raters import (
    ITEM_TYPES,
    QUALITY_CLASSES,
    STAGE1_LABELS,
    TOOL_JUDGMENT,
    draw_attribute_labels,
    rating_from_latent,
)

Record = dict[str, Any]
SUPPORTED, SPECULATIVE, OVERGENERALIZED, CONFUSED = range(4)
MODES = ("no_context", "attributes", "gt_attributes")
#: one stream per part; a part added later gets the next index, so earlier parts keep their draws
_STREAMS = ("users", "text", "stage1", "stage2", "stage3", "stage1_flags", "effects")
#: the stream of the raters' effects: drawn once per world (a scaled world's blocks share
#: one crowd, so its raters' effects are drawn once for the whole pool)
RATER_STREAM = len(_STREAMS)
_NAMES = ("Dana", "Sam", "Alex", "Priya", "Marco", "Lena", "Kofi", "Mei", "Ines", "Tomas")
_NOTES = {
    SUPPORTED: ("Not sure this is about the user.", "Can't tell from the chats."),
    SPECULATIVE: ("Too speculative.", "Weak evidence for this.", "A guess, not a fact."),
    OVERGENERALIZED: (
        "Overgeneralized from a single request.",
        "One question is not enough to say this.",
    ),
    CONFUSED: (
        "Task context: this was written for someone else, not about the user.",
        "Confuses a writing task with the user's own life.",
    ),
}
#: the reason a note names: a person who writes a note picks the reason the note states
_NOTE_REASON = {
    SUPPORTED: OTHER_REASON,
    SPECULATIVE: OTHER_REASON,
    OVERGENERALIZED: OVERGENERALIZATION,
    CONFUSED: TASK_CONTEXT_CONFUSION,
}


@dataclass
class Attribute:
    """One merged attribute and what the templates and rater models need to know about it."""

    quality: int
    domain: str
    text: str
    second: str
    noun: str
    reason: str
    confidence: float
    originals: list[tuple[str, str, float]]

    def record(self) -> Record:
        """The attribute as the tool stores it (``merged_attributes`` / ``profile_attributes``)."""
        return {
            "attribute": self.text,
            "original_attributes": [o[0] for o in self.originals],
            "reason": self.reason,
            "original_reasons": [o[1] for o in self.originals],
            "confidence": self.confidence,
            "original_confidences": [o[2] for o in self.originals],
        }


@dataclass
class User:
    user_id: str
    source: str
    real: bool
    domains: tuple[str, ...]
    attributes: list[Attribute] = field(default_factory=list)
    conversations: list[Record] = field(default_factory=list)


@dataclass
class World:
    """Every record of the layout plus the latent truth that generated them.

    ``truth`` holds numpy arrays in file order: ``stage1_*`` per stage-1 attribute (user,
    quality class, real-like or not, labels and raters per slot), ``stage2_*`` per stage-2
    item (pair, item type, truth ``z``, hardness, LLM view ``w``, people's and models'
    votes, majority), ``stage3_*`` per rated item and attribute slot (named explicitly,
    latent quality, people's and judges' ratings), ``stage3_all_*`` per relevant slot of every
    personalized response (pair, generator, attribute position, named explicitly).
    """

    params: WorldParameters
    files: dict[str, list[Record]]
    truth: dict[str, np.ndarray]


@dataclass(frozen=True)
class RaterEffects:
    """One world's raters: each annotator's and model's offset, drawn from its population."""

    stage1_leniency: np.ndarray  # per stage-1 annotator (logit)
    stage2_human: np.ndarray  # per stage-2 annotator: yes-bias (logit)
    stage3_severity: np.ndarray  # per stage-3 annotator: rating offset (latent scale)
    llm: np.ndarray  # per model: stage-2 yes-bias (logit); the truth is conditional on it


def draw_rater_effects(p: WorldParameters, rng: np.random.Generator) -> RaterEffects:
    """Every rater's offset, in a fixed order (stage 1, stage 2 people, stage 3, models)."""
    return RaterEffects(
        stage1_leniency=rng.normal(0.0, p.stage1_leniency_sd, p.n_stage1_humans),
        stage2_human=rng.normal(0.0, p.stage2_human_offset_sd, p.n_stage2_humans),
        stage3_severity=rng.normal(0.0, p.stage3_severity_sd, p.n_stage3_humans),
        llm=rng.normal(0.0, p.llm_offset_sd, len(p.llm_names)),
    )


@dataclass(frozen=True)
class UnitEffects:
    """One block's prompts and users: their random effects (per prompt, per user)."""

    prompt_relevance: np.ndarray  # logit shift of P(attribute matters), stage 2
    prompt_difficulty: np.ndarray  # logit shift of the LLM view on irrelevant items
    prompt_quality: np.ndarray  # shift of every stage-3 response's quality
    user_relevance: np.ndarray  # logit shift of P(attribute matters), stage 2
    user_support: np.ndarray  # shift of the stage-1 latent support of the user's attributes
    user_quality: np.ndarray  # shift of the quality of responses personalized for the user


def draw_unit_effects(p: WorldParameters, rng: np.random.Generator, n_users: int) -> UnitEffects:
    """Every prompt's and user's effects, in a fixed order."""
    return UnitEffects(
        prompt_relevance=rng.normal(0.0, p.prompt_relevance_sd, p.n_prompts),
        prompt_difficulty=rng.normal(0.0, p.prompt_difficulty_sd, p.n_prompts),
        prompt_quality=rng.normal(0.0, p.prompt_quality_sd, p.n_prompts),
        user_relevance=rng.normal(0.0, p.user_relevance_sd, n_users),
        user_support=rng.normal(0.0, p.stage1_user_sd, n_users),
        user_quality=rng.normal(0.0, p.user_quality_sd, n_users),
    )


# --------------------------------------------------------------------------- counts


def _adjust_counts(
    counts: np.ndarray,
    weights: np.ndarray,
    target: int,
    bounds: tuple[int, int],
    rng: np.random.Generator,
    what: str,
) -> np.ndarray:
    """Nudge ``counts`` by +-1 steps so ``sum(weights * counts) == target`` within bounds.

    Weights take at most two distinct values (users are in 3 or 4 pairs; or all 1), so an
    exact solution is ``x`` steps on the lighter and ``y`` on the heavier group.
    """
    counts = counts.copy()
    values = sorted(set(int(w) for w in weights))
    gap = target - int((weights * counts).sum())
    if len(values) == 1:
        a = values[0]
        if gap % a:
            raise ValueError(f"{what}: {target} is not a multiple of {a}")
        steps = {a: gap // a}
    elif len(values) == 2:
        a, b = values
        best = None
        for y in range(-a, a + 1):
            if (gap - b * y) % a == 0:
                x = (gap - b * y) // a
                if best is None or abs(x) + abs(y) < abs(best[0]) + abs(best[1]):
                    best = (x, y)
        assert best is not None  # gcd(a, a + k) divides any gap when a and b are coprime
        steps = {a: best[0], b: best[1]}
    else:
        raise ValueError(f"{what}: weights take more than two values {values}")
    for value, n in steps.items():
        members = rng.permutation(np.flatnonzero(weights == value))
        sign = 1 if n > 0 else -1
        left = abs(n)
        while left:
            moved = False
            for i in members:
                if left == 0:
                    break
                if bounds[0] <= counts[i] + sign <= bounds[1]:
                    counts[i] += sign
                    left -= 1
                    moved = True
            if not moved:
                raise ValueError(f"{what}: cannot reach {target} within bounds {bounds}")
    return counts


def _draw_counts(
    rng: np.random.Generator,
    n: int,
    weights: np.ndarray,
    target: int,
    bounds: tuple[int, int],
    what: str,
) -> np.ndarray:
    """Per-unit counts around the mean the target implies, adjusted to hit it exactly."""
    mean = target / max(float(weights.sum()), 1.0)
    raw = np.rint(mean * np.exp(rng.normal(0.0, 0.25, n)))
    return _adjust_counts(
        np.clip(raw, *bounds).astype(np.int64), weights, target, bounds, rng, what
    )


def _balanced_raters(
    rng: np.random.Generator, n_units: int, pool: int, per_unit: int, load: np.ndarray | None = None
) -> np.ndarray:
    """Assign ``per_unit`` distinct raters to each unit, always the least-loaded ones."""
    load = np.zeros(pool) if load is None else load.astype(float)
    out = np.empty((n_units, per_unit), dtype=np.int64)
    for u in range(n_units):
        order = np.lexsort((rng.random(pool), load))
        chosen = np.sort(order[:per_unit])
        out[u] = chosen
        load[chosen] += 1
    return out


# --------------------------------------------------------------------------- users & text


def _make_users(p: WorldParameters, rng: np.random.Generator, block: int = 0) -> list[User]:
    """The users of one block (a scaled world's block ``b`` numbers on from block ``b - 1``)."""
    first_wc, first_bench = block * p.n_wildchat_users, block * p.n_users_per_benchmark
    users = [
        User(f"sim-wc-{first_wc + i:03d}", "sim-wildchat", True, ())
        for i in range(1, p.n_wildchat_users + 1)
    ]
    for bench in p.synthetic_benchmarks:
        users += [
            User(f"sim-{bench}-{first_bench + j:02d}", f"sim-{bench}", False, ())
            for j in range(1, p.n_users_per_benchmark + 1)
        ]
    lo, hi = p.interest_domains_per_user
    for u in users:
        k = int(rng.integers(lo, hi + 1))
        picked = np.sort(rng.choice(len(T.DOMAIN_NAMES), size=k, replace=False))
        u.domains = tuple(T.DOMAIN_NAMES[i] for i in picked)
    return users


def _confidence(rng: np.random.Generator, p: WorldParameters, quality: int) -> float:
    mean, sd = p.confidence_by_class[quality]
    return round(float(np.clip(rng.normal(mean, sd), 0.1, 1.0)), 1)


class _AttributeWriter:
    """Writes one user's attributes and their evidence snippets from the text banks."""

    def __init__(self, p: WorldParameters, rng: np.random.Generator, user: User):
        self.p, self.rng, self.user = p, rng, user
        self.used: set[str] = set()
        self.snippets: list[list[Record]] = []

    def _turns(self, user_text: str, assistant_text: str) -> None:
        self.snippets.append(
            [
                {"role": "user", "content": user_text},
                {"role": "assistant", "content": assistant_text},
            ]
        )

    def _tips(self, domain: str, k: int) -> str:
        tips = T.DOMAIN_BY_NAME[domain].tips
        idx = self.rng.choice(len(tips), size=k, replace=False)
        return " ".join(tips[i] for i in idx)

    def _personal_snippet(self, domain: str, claim: T.Claim) -> None:
        opener = T.pick(self.rng, T.PERSONAL_OPENERS).format(first=T.first_person(claim.second))
        self._turns(opener, f"{T.pick(self.rng, T.ASSISTANT_OPENERS)} {self._tips(domain, 1)}")

    def _finish(
        self,
        quality: int,
        domain: str,
        claim_text: str,
        second: str,
        noun: str,
        variants: list[tuple[str, str]],
        n_originals: int,
    ) -> Attribute:
        """Merged attribute = first original; originals are distinct paraphrases."""
        n = min(n_originals, len(variants))
        originals = [(t, r, _confidence(self.rng, self.p, quality)) for t, r in variants[:n]]
        conf = float(np.mean([o[2] for o in originals])) + self.p.merge_confidence_bonus * (n - 1)
        self.used.add(claim_text)
        return Attribute(
            quality,
            domain,
            claim_text,
            second,
            noun,
            originals[0][1],
            round(min(conf, 1.0), 4),
            originals,
        )

    def _n_originals(self, quality: int) -> int:
        lo, hi = self.p.originals_by_class[quality]
        return int(self.rng.integers(lo, hi + 1))

    def supported(self) -> Attribute | None:
        rng, p = self.rng, self.p
        if rng.random() < p.style_share:
            claim, cue = T.STYLE_CLAIMS[int(rng.integers(len(T.STYLE_CLAIMS)))]
            text = f"The user {claim.third}."
            if text in self.used:
                return None
            n = self._n_originals(SUPPORTED)
            reason = T.pick(rng, T.STYLE_REASONS).format(cue=cue, n=n + 1)
            paraphrases = (
                text,
                f"The user tends to ask for {claim.noun}.",
                f"The user cares about {claim.noun} in replies.",
            )
            variants = [(t, reason) for t in paraphrases]
            for _ in range(n):
                home = T.pick(rng, list(self.user.domains))
                request = T.DOMAIN_BY_NAME[home].one_offs[int(rng.integers(3))].text
                self._turns(
                    f"{request} {cue}", f"{T.pick(rng, T.ASSISTANT_OPENERS)} {self._tips(home, 1)}"
                )
            return self._finish(SUPPORTED, T.STYLE, text, claim.second, claim.noun, variants, n)
        domain = T.pick(rng, list(self.user.domains))
        claim = T.DOMAIN_BY_NAME[domain].interests[int(rng.integers(4))]
        if rng.random() < p.interest_phrasing_share:
            third, second = (s.format(noun=claim.noun) for s in T.INTEREST_TEMPLATE)
        else:
            third, second = claim.third, claim.second
        text = f"The user {third}."
        if text in self.used:
            return None
        n = self._n_originals(SUPPORTED)
        phrasings = [
            text,
            f"The user {claim.third}.",
            f"The user is interested in {claim.noun}.",
            f"The user often talks about {claim.noun}.",
            f"The user has mentioned {claim.noun} several times.",
        ]
        phrasings = list(dict.fromkeys(phrasings))
        variants = []
        for t in phrasings[:n]:
            template = T.SUPPORTED_REASONS if n > 1 else T.SINGLE_SUPPORTED_REASONS
            variants.append((t, T.pick(rng, template).format(noun=claim.noun, n=n)))
        for _ in range(min(n, len(phrasings))):
            self._personal_snippet(domain, claim)
        return self._finish(SUPPORTED, domain, text, second, claim.noun, variants, n)

    def speculative(self) -> Attribute | None:
        rng = self.rng
        base_domain = T.pick(rng, list(self.user.domains))
        base = T.DOMAIN_BY_NAME[base_domain].interests[int(rng.integers(4))]
        domain = T.pick(rng, list(T.neighbours(base_domain)))
        noun = T.DOMAIN_BY_NAME[domain].interests[int(rng.integers(4))].noun
        order = rng.permutation(len(T.SPECULATIVE_TEMPLATES))
        third, second = (s.format(noun=noun) for s in T.SPECULATIVE_TEMPLATES[order[0]])
        text = f"The user {third}."
        if text in self.used:
            return None
        n = self._n_originals(SPECULATIVE)
        variants = [
            (
                f"The user {T.SPECULATIVE_TEMPLATES[i][0].format(noun=noun)}.",
                T.pick(rng, T.SPECULATIVE_REASONS).format(base=base.noun, noun=noun),
            )
            for i in order[:n]
        ]
        for _ in range(n):
            self._personal_snippet(base_domain, base)
        return self._finish(SPECULATIVE, domain, text, second, noun, variants, n)

    def _request_attribute(self, quality: int) -> Attribute | None:
        rng = self.rng
        if quality == OVERGENERALIZED and rng.random() < 0.5:
            domain = T.pick(rng, list(self.user.domains))
        else:
            domain = T.pick(rng, T.DOMAIN_NAMES)
        bank = T.DOMAIN_BY_NAME[domain]
        requests = bank.one_offs if quality == OVERGENERALIZED else bank.role_tasks
        request = requests[int(rng.integers(len(requests)))]
        text = f"The user {request.claim.third}."
        if text in self.used:
            return None
        reasons = T.OVERGENERALIZED_REASONS if quality == OVERGENERALIZED else T.CONFUSED_REASONS
        reason = T.pick(rng, reasons).format(request=request.text)
        if quality == OVERGENERALIZED:
            answer = f"{T.pick(rng, T.ASSISTANT_OPENERS)} {self._tips(domain, 1)}"
        else:
            name = T.pick(rng, _NAMES)
            answer = (
                f'{T.pick(rng, T.DRAFT_OPENERS)} "Meet {name}, who {request.claim.third}. '
                f'{name} brings care and skill to every project."'
            )
        self._turns(request.text, answer)
        return self._finish(
            quality, domain, text, request.claim.second, request.claim.noun, [(text, reason)], 1
        )

    def attribute(self, quality: int) -> Attribute:
        for _ in range(200):
            if quality == SUPPORTED:
                made = self.supported()
            elif quality == SPECULATIVE:
                made = self.speculative()
            else:
                made = self._request_attribute(quality)
            if made is not None:
                return made
        raise ValueError(
            f"user {self.user.user_id}: ran out of distinct {QUALITY_CLASSES[quality]} "
            "attributes; lower attributes_per_user or widen interest_domains_per_user"
        )


def _conversations(
    rng: np.random.Generator, user: User, snippets: list[list[Record]], n: int
) -> None:
    """Split the user's evidence snippets, shuffled, into ``n`` non-empty conversations."""
    order = rng.permutation(len(snippets))
    cuts = np.sort(rng.choice(np.arange(1, len(snippets)), size=n - 1, replace=False))
    for j, part in enumerate(np.split(order, cuts)):
        turns = [turn for k in part for turn in snippets[k]]
        user.conversations.append(
            {
                "hashed_ip": user.user_id,
                "conversation_hash": f"{user.user_id}-c{j:02d}",
                "conversation": turns,
            }
        )


# --------------------------------------------------------------------------- stage 2 pairs


def _pair_users_with_prompts(
    p: WorldParameters,
    rng: np.random.Generator,
    users: list[User],
    prompt_domains: list[str],
    pairs_per_user: np.ndarray,
) -> list[tuple[int, int]]:
    """(user, prompt) pairs: each prompt gets ``users_per_prompt`` distinct users."""
    for _attempt in range(100):
        capacity = np.full(len(prompt_domains), p.users_per_prompt)
        taken: set[tuple[int, int]] = set()
        slots = rng.permutation(np.repeat(np.arange(len(users)), pairs_per_user))
        ok = True
        for u in slots:
            free = [q for q in range(len(prompt_domains)) if capacity[q] and (u, q) not in taken]
            if not free:
                ok = False
                break
            own = [q for q in free if prompt_domains[q] in users[u].domains]
            pool = own if own and rng.random() < p.prompt_in_user_domain else free
            most = max(capacity[q] for q in pool)
            pool = [q for q in pool if capacity[q] == most]
            q = pool[int(rng.integers(len(pool)))]
            capacity[q] -= 1
            taken.add((int(u), q))
        if ok:
            return [(int(a), int(b)) for a, b in rng.permutation(sorted(taken))]
    raise ValueError("could not pair users with prompts; check n_prompts and users_per_prompt")


def _item_type(attribute_domain: str, prompt_domain: str) -> int:
    if attribute_domain == T.STYLE:
        return ITEM_TYPES.index("style")
    if attribute_domain == prompt_domain:
        return ITEM_TYPES.index("same_domain")
    if T.adjacent(attribute_domain, prompt_domain):
        return ITEM_TYPES.index("adjacent")
    return ITEM_TYPES.index("unrelated")


# --------------------------------------------------------------------------- stage 3 text


def _adaptations(slots: list[tuple[Attribute, bool]], rng: np.random.Generator) -> list[str]:
    """One sentence per (attribute, explicit) slot; explicit ones repeat its words.

    The wording does not depend on the slot's latent quality: a sentence is drawn from the
    attribute's domain bridges and the generic asides alike, so no reader of the text (a
    reward model, a judge) can see the quality that people's ratings respond to; only
    whether the attribute is named is visible. Within one response no phrase is used twice
    while unused ones remain.
    """
    used: set[str] = set()

    def fresh(options: tuple[str, ...]) -> str:
        left = tuple(o for o in options if o not in used) or options
        choice = T.pick(rng, left)
        used.add(choice)
        return choice

    out = []
    for attr, explicit in slots:
        if attr.domain == T.STYLE:
            bridges: tuple[str, ...] = (T.STYLE_BRIDGES[attr.noun],)
        else:
            bridges = T.DOMAIN_BY_NAME[attr.domain].bridges
        if explicit:
            asides = tuple(a.format(noun=attr.noun) for a in T.POOR_EXPLICIT)
            out.append(f"{fresh(T.EXPLICIT_CUES)} {attr.second}, {fresh(bridges + asides)}.")
        else:
            out.append(fresh(tuple(T.capitalize(b) + "." for b in bridges) + T.POOR_IMPLICIT))
    return out


def _response(rng: np.random.Generator, style: str, domain: str, adaptations: list[str]) -> str:
    tips = T.DOMAIN_BY_NAME[domain].tips
    chosen = [tips[i] for i in np.sort(rng.choice(len(tips), size=3, replace=False))]
    parts = [T.pick(rng, T.INTROS), T.format_list(style, chosen)]
    if adaptations:
        parts.append(" ".join(adaptations))
    parts.append(T.pick(rng, T.CLOSINGS))
    return "\n\n".join(parts)


# --------------------------------------------------------------------------- the world


@dataclass
class _Draft:
    """The world while it is being built: what each step hands to the next."""

    p: WorldParameters
    streams: dict[str, np.random.Generator]
    humans: _HumanNames
    rater_effects: RaterEffects
    #: where this block's numbering starts (all zero for the study-sized world)
    at: BlockStart = field(default_factory=lambda: BlockStart())
    #: per stage, how many units each annotator of the pool has rated in earlier blocks
    #: (None: a single block, whose raters are balanced on their own)
    loads: dict[str, np.ndarray] | None = None
    files: dict[str, list[Record]] = field(default_factory=dict)
    truth: dict[str, np.ndarray] = field(default_factory=dict)
    users: list[User] = field(default_factory=list)
    n_attr: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    stage2_users: list[int] = field(default_factory=list)
    pairs_per_user: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    prompts: list[tuple[str, str]] = field(default_factory=list)
    #: (user index, prompt index) per line of task5_items
    pairs: list[tuple[int, int]] = field(default_factory=list)
    #: first item of each pair (items are the pairs' profile attributes, flattened)
    pair_start: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    #: (mode, pair, model) -> response text
    responses: dict[tuple[str, int, int], str] = field(default_factory=dict)
    #: (pair, model) -> (relevant attribute positions, named explicitly, slot quality)
    slots: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict
    )
    #: this block's prompts' and users' random effects (drawn after the users exist)
    units: UnitEffects | None = None

    def pair_items(self, s: int) -> slice:
        """The items (profile attributes) of pair ``s``."""
        return slice(self.pair_start[s], self.pair_start[s + 1])

    def raters(self, stage: str, n_units: int, pool: int, per_unit: int) -> np.ndarray:
        """Balanced raters of this stage's units, continuing earlier blocks' loads."""
        rng = self.streams[stage]
        if self.loads is None:
            return _balanced_raters(rng, n_units, pool, per_unit)
        load = self.loads.setdefault(stage, np.zeros(pool, dtype=np.int64))
        out = _balanced_raters(rng, n_units, pool, per_unit, load)
        np.add.at(load, out.ravel(), 1)
        return out


@dataclass(frozen=True)
class BlockStart:
    """First numbers of a block of a scaled world: users' block, item lines, prompts."""

    block: int = 0
    user_line: int = 0  # line of task4_items
    pair_line: int = 0  # line of task5_items (a stage-2 pair)
    prompt: int = 0  # prompt_index
    stage3_line: int = 0  # line of task6_items


def simulate_world(p: WorldParameters) -> World:
    """Generate the whole bundled world from ``p`` (deterministic; a few seconds)."""
    streams = {name: np.random.default_rng([p.seed, k]) for k, name in enumerate(_STREAMS)}
    raters = draw_rater_effects(p, np.random.default_rng([p.seed, RATER_STREAM]))
    return simulate_block(p, streams, BlockStart(), None, raters)


def simulate_block(
    p: WorldParameters,
    streams: dict[str, np.random.Generator],
    at: BlockStart,
    loads: dict[str, np.ndarray] | None,
    raters: RaterEffects,
) -> World:
    """One study-sized world numbered from ``at``, its raters drawn from ``p``'s pools.

    ``simulate_world`` is the single block at zero; a scaled world
    (:mod:`analysis.simulation.scale`) is blocks on their own streams whose annotators come
    from one shared pool, balanced over blocks through ``loads``.
    """
    d = _Draft(p, streams, _HumanNames(p.human_prefix), raters, at=at, loads=loads)
    _people(d)
    d.units = draw_unit_effects(p, streams["effects"], len(d.users))
    d.truth.update(
        stage1_leniency=raters.stage1_leniency,
        stage2_human_offsets=raters.stage2_human,
        stage3_severity=raters.stage3_severity,
        llm_offsets=raters.llm,
        user_support=d.units.user_support,
    )
    _stage1(d)
    _stage2(d)
    _stage3_responses(d)
    _stage3_ratings(d)
    return World(params=p, files=dict(sorted(d.files.items())), truth=d.truth)


def _people(d: _Draft) -> None:
    """Users, their attribute counts, attributes and conversations (task4_items)."""
    p, r_users, r_text = d.p, d.streams["users"], d.streams["text"]
    users = d.users = _make_users(p, r_users, d.at.block)
    wildchat = [i for i, u in enumerate(users) if u.real]
    d.stage2_users = sorted(
        int(i) for i in r_users.choice(wildchat, size=p.n_stage2_users, replace=False)
    )
    base, extra = divmod(p.n_pairs, p.n_stage2_users)
    d.pairs_per_user = np.full(p.n_stage2_users, base)
    d.pairs_per_user[r_users.choice(p.n_stage2_users, size=extra, replace=False)] += 1
    n_attr = d.n_attr = np.zeros(len(users), dtype=np.int64)
    n_attr[d.stage2_users] = _draw_counts(
        r_users,
        p.n_stage2_users,
        d.pairs_per_user,
        p.n_stage2_items,
        p.attributes_per_user,
        "n_stage2_items",
    )
    in_stage2 = set(d.stage2_users)
    others = [i for i in range(len(users)) if i not in in_stage2]
    n_attr[others] = _draw_counts(
        r_users,
        len(others),
        np.ones(len(others), dtype=np.int64),
        p.n_stage1_attributes - int(n_attr[d.stage2_users].sum()),
        p.attributes_per_user,
        "n_stage1_attributes",
    )
    for i, u in enumerate(users):
        # a user with many attributes talks about more domains (each supplies ~6 distinct
        # supported sentences), so the text banks never run dry
        need = int(np.ceil(n_attr[i] * 0.8 / 6))
        if len(u.domains) < need:
            rest = [name for name in T.DOMAIN_NAMES if name not in u.domains]
            added = {
                rest[j]
                for j in r_users.choice(len(rest), size=need - len(u.domains), replace=False)
            }
            u.domains = tuple(n for n in T.DOMAIN_NAMES if n in u.domains or n in added)
    snippets: list[list[list[Record]]] = []
    for i, u in enumerate(users):
        mix = p.quality_mix_real if u.real else p.quality_mix_synthetic
        qualities = r_users.choice(4, size=int(n_attr[i]), p=np.asarray(mix))
        writer = _AttributeWriter(p, r_text, u)
        u.attributes = [writer.attribute(int(q)) for q in qualities]
        snippets.append(writer.snippets)
    n_snip = np.array([len(s) for s in snippets])
    conv_counts = np.zeros(len(users), dtype=np.int64)
    conv_counts[wildchat] = _draw_counts(
        r_users,
        len(wildchat),
        np.ones(len(wildchat), dtype=np.int64),
        p.n_wildchat_conversations,
        (2, int(n_snip[wildchat].min())),
        "n_wildchat_conversations",
    )
    lo, hi = p.synthetic_conversations_per_user
    for i, u in enumerate(users):
        if not u.real:
            conv_counts[i] = min(int(r_users.integers(lo, hi + 1)), int(n_snip[i]))
        _conversations(r_text, u, snippets[i], int(conv_counts[i]))

    d.files["extracted/task4_items.jsonl"] = [
        {
            "user_id": u.user_id,
            "source": u.source,
            "merged_attributes": [a.record() for a in u.attributes],
            "conversations": u.conversations,
            "item_index": d.at.user_line + i,
        }
        for i, u in enumerate(users)
    ]


def _stage1(d: _Draft) -> None:
    """Three people per user label every attribute (annotations/*_task4.jsonl)."""
    p, r1, users = d.p, d.streams["stage1"], d.users
    att_user = np.repeat(np.arange(len(users)), d.n_attr)
    att_quality = np.array([a.quality for u in users for a in u.attributes])
    user_raters = d.raters("stage1", len(users), p.n_stage1_humans, p.stage1_raters_per_attribute)
    assert d.units is not None
    labels = draw_attribute_labels(
        att_quality,
        user_raters[att_user],
        np.asarray(p.stage1_class_means),
        p.stage1_item_sd,
        d.rater_effects.stage1_leniency,
        p.stage1_cutpoints,
        r1,
        shift=d.units.user_support[att_user],
    )
    write_note = r1.random(labels.shape) < p.stage1_note_rate
    note_pick = r1.integers(0, 1 << 30, size=labels.shape)
    flagged = r1.random((len(users), p.stage1_raters_per_attribute)) < 0.05
    reasons = _flag_reasons(d.streams["stage1_flags"], att_quality, labels.shape, p)
    starts = np.concatenate([[0], np.cumsum(d.n_attr)])
    per_annotator: dict[int, list[Record]] = {h: [] for h in range(p.n_stage1_humans)}
    for i, u in enumerate(users):
        for slot, h in enumerate(user_raters[i]):
            judgments = []
            for a in range(starts[i], starts[i + 1]):
                label = STAGE1_LABELS[labels[a, slot]]
                note = ""
                if label != ACCEPTED and write_note[a, slot]:
                    options = _NOTES[int(att_quality[a])]
                    note = options[note_pick[a, slot] % len(options)]
                judgment = {"judgment": TOOL_JUDGMENT[label], "note": note}
                if label != ACCEPTED:
                    quality = int(att_quality[a])
                    judgment["flag_reason"] = _NOTE_REASON[quality] if note else reasons[a, slot]
                judgments.append(judgment)
            per_annotator[int(h)].append(
                {
                    "task": "4",
                    "index": d.at.user_line + i,
                    "user_id": u.user_id,
                    "attr_judgments": judgments,
                    "missing_attrs": "",
                    "overall_note": "",
                    "flagged": bool(flagged[i, slot]),
                    "annotator": d.humans.name(int(h)),
                }
            )
    for h, records in per_annotator.items():
        d.files[f"annotations/{d.humans.name(h)}_task4.jsonl"] = records
    d.truth.update(
        stage1_user=att_user,
        stage1_quality=att_quality,
        stage1_real=np.array([users[i].real for i in att_user]),
        stage1_source=np.array([users[i].source for i in att_user]),
        stage1_labels=labels,
        stage1_raters=user_raters[att_user],
    )
    d.humans.advance(p.n_stage1_humans)


def _flag_reasons(
    rng: np.random.Generator, quality: np.ndarray, shape: tuple[int, ...], p: WorldParameters
) -> np.ndarray:
    """A reason for every (attribute, rater slot), drawn from the class's reason mix.

    Only non-accepted judgments use theirs (and those with a note use the note's reason), but
    one draw per slot keeps the stream independent of the labels, so a change to the label
    model does not reshuffle the reasons of the other judgments.
    """
    mix = np.cumsum(np.asarray(p.stage1_flag_reason_mix, dtype=np.float64), axis=1)
    u = rng.random(shape)
    picked = (u[..., None] >= mix[quality][:, None, :]).sum(axis=-1)
    return np.asarray(FLAG_REASONS, dtype=object)[np.minimum(picked, len(FLAG_REASONS) - 1)]


def _stage2(d: _Draft) -> None:
    """Pairs, items, and people's and models' votes (task5 items, annotations, votes)."""
    p, r_users, r2, users = d.p, d.streams["users"], d.streams["stage2"], d.users
    all_prompts = [(dom.name, q) for dom in T.DOMAINS for q in dom.prompts]
    if p.n_prompts > len(all_prompts):
        raise ValueError(f"n_prompts: at most {len(all_prompts)} prompts are written")
    prompt_pick = r_users.choice(len(all_prompts), size=p.n_prompts, replace=False)
    prompts = d.prompts = [all_prompts[i] for i in prompt_pick]
    local = _pair_users_with_prompts(
        p,
        r_users,
        [users[i] for i in d.stage2_users],
        [dom for dom, _ in prompts],
        d.pairs_per_user,
    )
    pairs = d.pairs = [(d.stage2_users[u], q) for u, q in local]
    item_pair = np.repeat(np.arange(len(pairs)), [len(users[u].attributes) for u, _ in pairs])
    item_type = np.array(
        [
            _item_type(users[u].attributes[k].domain, prompts[q][0])
            for (u, q) in pairs
            for k in range(len(users[u].attributes))
        ]
    )
    model = p.relevance_model(tuple(d.rater_effects.stage2_human), tuple(d.rater_effects.llm))
    assert d.units is not None
    item_user = np.array([u for u, _ in pairs])[item_pair]
    item_prompt = np.array([q for _, q in pairs])[item_pair]
    prevalence_shift = d.units.prompt_relevance[item_prompt] + d.units.user_relevance[item_user]
    plausibility_shift = d.units.prompt_difficulty[item_prompt]
    z, hard, w = model.draw_items(item_type, r2, prevalence_shift, plausibility_shift)
    pair_raters = d.raters("stage2", len(pairs), p.n_stage2_humans, p.stage2_raters_per_item)
    item_raters = pair_raters[item_pair]
    human_votes = np.stack(
        [
            r2.random(len(z))
            < model.human_yes_probability(z, hard, w, item_type, item_raters[:, s])
            for s in range(p.stage2_raters_per_item)
        ],
        axis=1,
    )
    llm_votes = np.stack(
        [r2.random(len(z)) < model.llm_yes_probability(w, m) for m in range(len(p.llm_names))],
        axis=1,
    )
    majority = human_votes.sum(axis=1) * 2 > p.stage2_raters_per_item
    d.truth.update(
        stage2_pair=item_pair,
        stage2_user=item_user,
        stage2_prompt=item_prompt,
        stage2_prevalence_shift=prevalence_shift,
        stage2_plausibility_shift=plausibility_shift,
        stage2_type=item_type,
        stage2_z=z,
        stage2_hard=hard,
        stage2_w=w,
        stage2_raters=item_raters,
        stage2_human_votes=human_votes,
        stage2_llm_votes=llm_votes,
        stage2_majority=majority,
    )
    d.pair_start = np.concatenate([[0], np.cumsum(np.bincount(item_pair, minlength=len(pairs)))])

    d.files["extracted/task5_items.jsonl"] = [
        {
            "prompt_index": d.at.prompt + q,
            "user_id": users[u].user_id,
            "profile_attributes": [a.record() for a in users[u].attributes],
            "prompt_text": prompts[q][1],
            "item_index": d.at.pair_line + s,
        }
        for s, (u, q) in enumerate(pairs)
    ]
    stage2_files: dict[int, list[Record]] = {h: [] for h in range(p.n_stage2_humans)}
    for s, (u, q) in enumerate(pairs):
        sl = d.pair_items(s)
        for slot, h in enumerate(pair_raters[s]):
            stage2_files[int(h)].append(
                {
                    "task": "5",
                    "index": d.at.pair_line + s,
                    "user_id": users[u].user_id,
                    "prompt_index": d.at.prompt + q,
                    "relevance_judgments": [
                        {"attribute": a.text, "relevant": bool(v)}
                        for a, v in zip(users[u].attributes, human_votes[sl, slot], strict=True)
                    ],
                    "note": "",
                    "flagged": False,
                    "annotator": d.humans.name(int(h)),
                }
            )
    for h, records in stage2_files.items():
        d.files[f"annotations/{d.humans.name(h)}_task5.jsonl"] = records
    d.humans.advance(p.n_stage2_humans)
    for m, name in enumerate(p.llm_names):
        d.files[f"relevance_task5/{name}.jsonl"] = [
            {
                "model": name,
                "sample_index": d.at.pair_line + s,
                "prompt_index": d.at.prompt + q,
                "user_id": users[u].user_id,
                "items": [
                    {"attribute": a.text, "relevant": bool(v), "raw_answer": "YES" if v else "NO"}
                    for a, v in zip(users[u].attributes, llm_votes[d.pair_items(s), m], strict=True)
                ],
            }
            for s, (u, q) in enumerate(pairs)
        ]


def _stage3_responses(d: _Draft) -> None:
    """Every model's generic, full-profile and personalized response to every pair."""
    p, r3, r_text, users = d.p, d.streams["stage3"], d.streams["text"], d.users
    assert d.units is not None
    n_models = len(p.llm_names)
    styles = [T.LIST_STYLES[m % len(T.LIST_STYLES)] for m in range(n_models)]
    majority, llm_votes = (d.truth[k] for k in ("stage2_majority", "stage2_llm_votes"))
    for s, (u, q) in enumerate(d.pairs):
        attrs = users[u].attributes
        relevant = np.flatnonzero(majority[d.pair_items(s)])
        domain = d.prompts[q][0]
        for m in range(n_models):
            explicit = r3.random() < p.generator_mention_rate[m]
            named = explicit & (r3.random(len(relevant)) < p.mention_slot_rate)
            if explicit and len(relevant) and not named.any():
                named[int(r3.integers(len(relevant)))] = True
            quality = (
                p.generator_quality[m]
                + d.units.prompt_quality[q]
                + d.units.user_quality[u]
                + r3.normal(0.0, p.response_quality_sd)
                + r3.normal(0.0, p.slot_quality_sd, len(relevant))
            )
            d.slots[(s, m)] = (relevant, named, quality)
            adapt = _adaptations(
                [(attrs[k], bool(e)) for k, e in zip(relevant, named, strict=True)], r_text
            )
            own = np.flatnonzero(llm_votes[d.pair_items(s), m])
            own = np.sort(r3.permutation(own)[: p.full_profile_max_attributes])
            full = _adaptations(
                [(attrs[k], bool(r3.random() < p.generator_mention_rate[m])) for k in own],
                r_text,
            )
            d.responses[("no_context", s, m)] = _response(r_text, styles[m], domain, [])
            d.responses[("attributes", s, m)] = _response(r_text, styles[m], domain, full)
            d.responses[("gt_attributes", s, m)] = _response(r_text, styles[m], domain, adapt)
    # every personalized response's relevant slots (pair, generator, attribute position,
    # named explicitly): what a generator's mention rate is measured on
    keys = sorted(d.slots)
    d.truth.update(
        stage3_all_pair=np.concatenate([np.full(len(d.slots[k][0]), k[0]) for k in keys]),
        stage3_all_generator=np.concatenate([np.full(len(d.slots[k][0]), k[1]) for k in keys]),
        stage3_all_attribute=np.concatenate([d.slots[k][0] for k in keys]),
        stage3_all_named=np.concatenate([d.slots[k][1] for k in keys]).astype(bool),
    )
    for mode in MODES:
        for m, name in enumerate(p.llm_names):
            records = []
            for s, (u, q) in enumerate(d.pairs):
                # Only the gt_attributes files need the profile (for the human-majority label);
                # the full attribute records are in task5_items, so the other modes carry an
                # empty list to keep the committed files small.
                profile = (
                    [
                        {"attribute": a.text, "ground_truth": bool(gt)}
                        for a, gt in zip(
                            users[u].attributes, majority[d.pair_items(s)], strict=True
                        )
                    ]
                    if mode == "gt_attributes"
                    else []
                )
                records.append(
                    {
                        "user_id": users[u].user_id,
                        "prompt_id": str(d.at.prompt + q),
                        "prompt_text": d.prompts[q][1],
                        "profile_attributes": profile,
                        "mode": mode,
                        "model": name,
                        "response": d.responses[(mode, s, m)],
                    }
                )
            d.files[f"task6/eval_results_task5_{mode}_{name}.jsonl"] = records


def _stage3_ratings(d: _Draft) -> None:
    """Which (pair, generator) items people rate; people's and judges' ratings."""
    p, r3, users = d.p, d.streams["stage3"], d.users
    n_models = len(p.llm_names)
    majority = d.truth["stage2_majority"]
    slots = d.slots
    chosen = _choose_stage3_items(p, r3, slots, len(d.pairs), n_models)
    item_rater = d.raters("stage3", len(chosen), p.n_stage3_humans, 1)[:, 0]
    slot_item = np.repeat(np.arange(len(chosen)), [len(slots[c][0]) for c in chosen])
    slot_named = np.concatenate([slots[c][1] for c in chosen]).astype(bool)
    slot_quality = np.concatenate([slots[c][2] for c in chosen])
    slot_severity = d.rater_effects.stage3_severity[item_rater[slot_item]]
    human_ratings = rating_from_latent(
        p.human_rating_offset
        + slot_severity
        + slot_quality
        + p.human_mention_effect * slot_named
        + r3.normal(0.0, p.human_rating_noise, len(slot_item))
    )
    judge_ratings = np.stack(
        [
            rating_from_latent(
                p.judge_offset[j]
                + p.judge_quality_weight * slot_quality
                + p.judge_mention_effect[j] * slot_named
                + r3.normal(0.0, p.judge_rating_noise, len(slot_item))
            )
            for j in range(n_models)
        ],
        axis=1,
    )
    d.truth.update(
        stage3_item_rater=item_rater,
        stage3_item_prompt=np.array([d.pairs[c[0]][1] for c in chosen]),
        stage3_item_user=np.array([d.pairs[c[0]][0] for c in chosen]),
        stage3_item_pair=np.array([c[0] for c in chosen]),
        stage3_item_generator=np.array([c[1] for c in chosen]),
        stage3_slot_item=slot_item,
        stage3_slot_named=slot_named,
        stage3_slot_quality=slot_quality,
        stage3_human_ratings=human_ratings,
        stage3_judge_ratings=judge_ratings,
    )
    slot_start = np.concatenate([[0], np.cumsum(np.bincount(slot_item, minlength=len(chosen)))])
    task6_items: list[Record] = []
    stage3_files: dict[int, list[Record]] = {h: [] for h in range(p.n_stage3_humans)}
    judge_files: dict[int, list[Record]] = {j: [] for j in range(n_models)}
    for i, (s, m) in enumerate(chosen):
        u, q = d.pairs[s]
        attrs = users[u].attributes
        relevant = slots[(s, m)][0]
        sl = slice(slot_start[i], slot_start[i + 1])
        prompt_id = str(d.at.prompt + q)
        head = {"user_id": users[u].user_id, "prompt_id": prompt_id, "model_tag": p.llm_names[m]}
        task6_items.append(
            {
                "model_tag": p.llm_names[m],
                "user_id": users[u].user_id,
                "prompt_id": prompt_id,
                "prompt_text": d.prompts[q][1],
                "attributes": [
                    {"attribute": a.text, "is_relevant": bool(gt)}
                    for a, gt in zip(attrs, majority[d.pair_items(s)], strict=True)
                ],
                "response_no_context": d.responses[("no_context", s, m)],
                "response_personalized": d.responses[("gt_attributes", s, m)],
                "item_index": d.at.stage3_line + i,
            }
        )
        h = int(item_rater[i])
        stage3_files[h].append(
            {
                "task": "6",
                "index": d.at.stage3_line + i,
                **head,
                "ratings": {
                    attrs[k].text: int(r) for k, r in zip(relevant, human_ratings[sl], strict=True)
                },
                "note": "",
                "annotator": d.humans.name(h),
            }
        )
        for j in range(n_models):
            judge_files[j].append(
                {
                    "model": p.llm_names[j],
                    "sample_index": d.at.stage3_line + i,
                    **head,
                    "ratings": {
                        attrs[k].text: int(r)
                        for k, r in zip(relevant, judge_ratings[sl, j], strict=True)
                    },
                }
            )
    d.files["extracted/task6_items.jsonl"] = task6_items
    for h, records in stage3_files.items():
        d.files[f"annotations/{d.humans.name(h)}_task6.jsonl"] = records
    for j, records in judge_files.items():
        d.files[f"judge_task6/{p.llm_names[j]}.jsonl"] = records


def _choose_stage3_items(
    p: WorldParameters,
    rng: np.random.Generator,
    slots: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]],
    n_pairs: int,
    n_models: int,
) -> list[tuple[int, int]]:
    """(pair, generator) items whose relevant slots add up to exactly ``n_stage3_ratings``.

    Generators take turns (so each is rated about equally often), each walking its own
    shuffled list of pairs that have at least one human-relevant attribute.
    """
    queues = [
        [int(s) for s in rng.permutation(n_pairs) if len(slots[(int(s), m)][0])]
        for m in range(n_models)
    ]
    pointer = [0] * n_models
    left = p.n_stage3_ratings
    chosen: list[tuple[int, int]] = []
    while left > 0:
        progressed = False
        for m in range(n_models):
            queue = queues[m]
            while pointer[m] < len(queue) and len(slots[(queue[pointer[m]], m)][0]) > left:
                pointer[m] += 1
            if pointer[m] < len(queue) and left > 0:
                s = queue[pointer[m]]
                pointer[m] += 1
                chosen.append((s, m))
                left -= len(slots[(s, m)][0])
                progressed = True
        if not progressed:
            raise ValueError(
                f"n_stage3_ratings: only {p.n_stage3_ratings - left} rating slots available"
            )
    order = rng.permutation(len(chosen))
    return [chosen[i] for i in order]


class _HumanNames:
    """sim-human-01, 02, ...: each stage's pool continues the numbering of the one before."""

    def __init__(self, prefix: str):
        self.prefix, self.offset = prefix, 0

    def name(self, local: int) -> str:
        return f"{self.prefix}{self.offset + local + 1:02d}"

    def advance(self, n: int) -> None:
        self.offset += n
