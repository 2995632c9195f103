"""The study's three stages as model-call steps, plus their local baselines and controls.

Stage 1 extracts, merges and verifies attributes; stage 2 asks models whether an attribute
should change the answer to a prompt and runs the retrieval baselines; stage 3 generates generic
and personalized responses, has judges compare them, detects explicit mentions and runs the
controls. Every model call goes through :mod:`analysis.llm` and every output is parsed strictly
(:mod:`analysis.stages.parsing`). Submodules import heavy libraries (torch) only where needed.
"""
