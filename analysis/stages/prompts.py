"""Deterministic rendering of the versioned prompt templates (Hydra group ``prompts``).

The same inputs must give byte-identical messages, because a call's key is a hash of its
messages: any drift (whitespace, ordering, a timestamp) would turn every replay into a miss.
Templates use ``string.Template`` placeholders (``$name``) so that JSON braces in a template
need no escaping; a missing or an unused field is an error rather than a silent blank.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from string import Template
from typing import Any

import pandas as pd

from analysis.settings import PromptsConfig

Message = dict[str, str]

#: the templates every prompt version must define (each a system + user pair)
TEMPLATE_NAMES = (
    "extraction",
    "verification",
    "relevance",
    "generic_response",
    "personalized_response",
    "preference_judge",
    "no_context_judge",
)

#: the repair requests every prompt version must define
REPAIR_KINDS = ("yes_no", "supported", "rating", "attributes_json", "text")

#: labels asked for in one of two forms (``stages.label_format``): one word, or JSON
LABEL_KINDS = ("yes_no", "supported", "rating")
LABEL_FORMATS = ("word", "json")

#: marks text cut to a length budget, so a reader (and a model) can see it was cut
CUT_MARK = " [...]"


class PromptError(ValueError):
    """A template is missing, or rendering got missing or unexpected fields."""


def _normalize(text: str) -> str:
    return str(text).replace("\r\n", "\n").replace("\r", "\n")


def _fields_of(template: str) -> set[str]:
    return {name for name in Template(template).get_identifiers()}


def _substitute(where: str, template: str, fields: Mapping[str, Any]) -> str:
    needed = _fields_of(template)
    missing = sorted(needed - set(fields))
    if missing:
        raise PromptError(f"prompt '{where}': missing field(s) {missing}")
    return Template(template).substitute({k: _normalize(fields[k]) for k in needed})


@dataclass(frozen=True)
class PromptSet:
    """One version of every template, as composed from ``config/prompts/<version>.yaml``."""

    version: str
    templates: Mapping[str, Mapping[str, str]]
    repairs: Mapping[str, str]
    answer_formats: Mapping[str, Mapping[str, str]]

    @classmethod
    def from_config(cls, cfg: PromptsConfig) -> PromptSet:
        """Build from the typed ``prompts`` settings; every template must be non-empty (the
        version, part of every call key and of output file names, is checked by the settings
        type: ``settings.check_path_component``)."""
        version = cfg.version
        templates: dict[str, dict[str, str]] = {}
        for name in TEMPLATE_NAMES:
            template = getattr(cfg, name)
            if not str(template.user or "").strip():
                raise PromptError(f"prompts {version}: template '{name}.user' is empty")
            templates[name] = {
                "system": _normalize(template.system or ""),
                "user": _normalize(template.user),
            }
        repairs = {}
        for kind in REPAIR_KINDS:
            text = str(getattr(cfg.repair, kind) or "")
            if not text.strip():
                raise PromptError(f"prompts {version}: repair template '{kind}' is empty")
            repairs[kind] = _normalize(text)
        formats: dict[str, dict[str, str]] = {}
        for kind in LABEL_KINDS:
            node = getattr(cfg.answer_formats, kind)
            formats[kind] = {}
            for fmt in LABEL_FORMATS:
                text = str(getattr(node, fmt) or "")
                if not text.strip():
                    raise PromptError(f"prompts {version}: answer_formats.{kind}.{fmt} is empty")
                formats[kind][fmt] = _normalize(text)
        return cls(version=version, templates=templates, repairs=repairs, answer_formats=formats)

    def render(self, name: str, **fields: Any) -> tuple[Message, ...]:
        """System (when non-empty) and user messages of template ``name`` with ``fields``.

        Every field given must be used by the template and every placeholder must be given:
        a field silently ignored is how two prompt versions come to mean the same thing.
        """
        if name not in self.templates:
            raise PromptError(f"prompts {self.version}: no template '{name}'")
        tpl = self.templates[name]
        used = _fields_of(tpl["system"]) | _fields_of(tpl["user"])
        extra = sorted(set(fields) - used)
        if extra:
            raise PromptError(f"prompt '{name}' ({self.version}): unused field(s) {extra}")
        messages: list[Message] = []
        system = _substitute(f"{name}.system", tpl["system"], fields)
        if system.strip():
            messages.append({"role": "system", "content": system})
        messages.append(
            {"role": "user", "content": _substitute(f"{name}.user", tpl["user"], fields)}
        )
        return tuple(messages)

    def repair(self, kind: str, error: str, **fields: Any) -> str:
        """The repair instruction of ``kind`` naming what was wrong with the output."""
        if kind not in self.repairs:
            raise PromptError(f"prompts {self.version}: no repair template '{kind}'")
        extra = sorted(set(fields) - _fields_of(self.repairs[kind]))
        if extra:
            raise PromptError(f"repair '{kind}' ({self.version}): unused field(s) {extra}")
        return _substitute(f"repair.{kind}", self.repairs[kind], {"error": error, **fields})

    def answer_format(self, kind: str, fmt: str) -> str:
        """How a label of ``kind`` is asked for in format ``fmt`` (word | json)."""
        if kind not in self.answer_formats or fmt not in LABEL_FORMATS:
            raise PromptError(f"prompts {self.version}: no answer format {kind}/{fmt}")
        return self.answer_formats[kind][fmt]


def truncate(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters (plus a visible cut mark when it was cut)."""
    text = _normalize(text).strip()
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    return text[:max_chars].rstrip() + CUT_MARK


def format_conversation(turns: pd.DataFrame, max_chars: int) -> str:
    """One conversation as ``User: ...`` / ``Assistant: ...`` lines in turn order, cut to length.

    ``turns`` has columns turn, role, text (rows of the canonical ``conversations`` table).
    """
    ordered = turns.sort_values("turn", kind="stable")
    labels = {"user": "User", "assistant": "Assistant"}
    lines = [
        f"{labels.get(str(role), str(role).title())}: {_normalize(text).strip()}"
        for role, text in zip(ordered["role"], ordered["text"], strict=True)
    ]
    return truncate("\n".join(lines), max_chars)


def format_profile(attribute_texts: Iterable[str]) -> str:
    """A profile as one ``- attribute`` line per attribute, in the order given."""
    return "\n".join(f"- {_normalize(t).strip()}" for t in attribute_texts)
