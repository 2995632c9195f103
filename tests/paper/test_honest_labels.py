"""A simulated build names nothing real: checked on the session's bundled build's generated
sources and PDF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.paper.honest_labels import (
    method_problems,
    pdf_caption_problems,
    real_labels,
    table_problems,
)


def test_the_check_tells_simulated_from_real_wording() -> None:
    assert real_labels("rates for real and synthetic users") == [
        "rates for real and synthetic users"
    ]
    assert not real_labels("real-like (simulated) users; no real people; a real but tiny model")
    assert method_problems({"k": {"method": "users from real chats"}}) == [
        "k: users from real chats"
    ]
    assert (
        method_problems(
            {"k": {"method": "of stage1.acceptance_rate.real, kind real (chat-history users"}}
        )
        == []
    )


@pytest.mark.slow
def test_the_bundled_builds_tables_and_captions_are_labelled_simulated(
    bundled_build: Path,
) -> None:
    assert table_problems(bundled_build / "paper" / "generated" / "bundled") == []
    assert pdf_caption_problems(bundled_build / "paper" / "build" / "bundled" / "paper.pdf") == []
    # the provenance appendix prints every record's method text
    numbers = json.loads((bundled_build / "results" / "bundled" / "numbers.json").read_text())
    assert method_problems(numbers) == []
