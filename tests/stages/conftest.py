"""Fixtures of the stage tests: a small hand-made world in canonical tables, the project's
prompt set, a scripted in-process caller, and a scripted OpenAI-compatible HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pandas as pd
import pytest
import yaml

from analysis import REPO_ROOT
from analysis.data.ids import attribute_id, item_id, prompt_id, response_id
from analysis.data.schemas import make_table
from analysis.llm.calls import CallResult, ChatRequest
from analysis.llm.models import ModelSpec
from analysis.settings import PromptsConfig, StagesConfig, from_params
from analysis.stages.prompts import PromptSet

#: every text below was written for these tests
USERS = {
    "u1": ["The user keeps bees.", "The user is learning Italian.", "The user runs marathons."],
    "u2": ["The user is a nurse.", "The user has a toddler.", "The user likes jazz."],
    "u3": ["The user lives on a farm.", "The user writes poetry.", "The user is vegan."],
}
PROMPTS = {
    0: "How do I plan a weekend trip?",
    1: "Suggest a dinner recipe.",
    2: "How can I sleep better?",
    3: "Recommend a book to read.",
}
#: (user, prompt index) -> attribute positions the human majority marks relevant
RELEVANT = {
    ("u1", 0): [2],
    ("u1", 1): [0],
    ("u2", 2): [0, 1],
    ("u2", 3): [2],
    ("u3", 1): [2],
    ("u3", 3): [1],
}
PAIRS = sorted(RELEVANT)


def load_yaml(rel: str) -> dict[str, Any]:
    return yaml.safe_load((REPO_ROOT / rel).read_text(encoding="utf-8"))


def prompts_config() -> PromptsConfig:
    """The shipped ``prompts`` group (``config/prompts/v1.yaml``), typed as a rule receives it."""
    return from_params(PromptsConfig, load_yaml("config/prompts/v1.yaml"), "prompts")


@pytest.fixture(scope="session")
def prompts() -> PromptSet:
    return PromptSet.from_config(prompts_config())


@pytest.fixture
def stages_cfg() -> StagesConfig:
    """The shipped ``stages`` defaults, typed as the model-call rules receive them."""
    return from_params(StagesConfig, load_yaml("config/stages/default.yaml"), "stages")


def aid(user: str, pos: int) -> str:
    return attribute_id(user, USERS[user][pos])


def build_world() -> dict[str, pd.DataFrame]:
    """Canonical tables of a 3-user, 4-prompt world (two generators' responses, human ratings)."""
    users = make_table(
        "users",
        [
            {
                "user_id": u,
                "source": "sim-wildchat",
                "source_kind": "real",
                "source_inferred": False,
            }
            for u in USERS
        ],
    )
    conv_rows = []
    for u, atts in USERS.items():
        for c in range(2):
            cid = f"c-{u}-{c}"
            conv_rows += [
                {
                    "conversation_id": cid,
                    "user_id": u,
                    "conversation_index": c,
                    "turn": 0,
                    "role": "user",
                    "text": f"Hello, {atts[c].lower()} Can you help me?",
                },
                {
                    "conversation_id": cid,
                    "user_id": u,
                    "conversation_index": c,
                    "turn": 1,
                    "role": "assistant",
                    "text": "Of course, happy to help.",
                },
            ]
    conversations = make_table("conversations", conv_rows)
    att_rows = []
    for u, atts in USERS.items():
        for k, text in enumerate(atts):
            for set_ in ("stage1", "stage2"):
                att_rows.append(
                    {
                        "attribute_id": attribute_id(u, text),
                        "user_id": u,
                        "set": set_,
                        "position": k,
                        "text": text,
                        "reason": f"Said so in chat {k}.",
                        "confidence": 0.5 + 0.1 * k,
                        "n_originals": 1,
                    }
                )
    attributes = make_table("attributes", att_rows)
    prompts_table = make_table(
        "prompts",
        [{"prompt_id": prompt_id(i), "prompt_index": i, "text": t} for i, t in PROMPTS.items()],
    )
    items, votes = [], []
    for s, (u, p) in enumerate(PAIRS):
        for k in range(3):
            iid = item_id(u, prompt_id(p), aid(u, k))
            base = {
                "item_id": iid,
                "user_id": u,
                "prompt_id": prompt_id(p),
                "attribute_id": aid(u, k),
            }
            items.append({**base, "round": "final", "sample_index": s})
            votes.append(
                {
                    **base,
                    "rater": "human_majority",
                    "rater_kind": "human_majority",
                    "raw_rater": "human_majority",
                    "round": "final",
                    "vote": k in RELEVANT[(u, p)],
                    "graded_label": None,
                }
            )
            votes.append(
                {
                    **base,
                    "rater": "sim-human-01",
                    "rater_kind": "human",
                    "raw_rater": "sim-human-01",
                    "round": "final",
                    "vote": k in RELEVANT[(u, p)] or k == 0,
                    "graded_label": None,
                }
            )
    resp_rows, rating_rows = [], []
    for u, p in PAIRS:
        for gen in ("sim-gen-a", "sim-gen-b"):
            for cond in ("generic", "personalized"):
                extra = (
                    f" Since {USERS[u][RELEVANT[(u, p)][0]].lower()[9:]}, I adapted this."
                    if cond == "personalized"
                    else ""
                )
                resp_rows.append(
                    {
                        "response_id": response_id(u, prompt_id(p), gen, cond),
                        "user_id": u,
                        "prompt_id": prompt_id(p),
                        "generator": gen,
                        "raw_generator": gen,
                        "condition": cond,
                        "text": f"[{cond.upper()}] Answer to: {PROMPTS[p]}{extra}",
                    }
                )
            if gen == "sim-gen-a":
                for k in RELEVANT[(u, p)]:
                    rating_rows.append(
                        {
                            "user_id": u,
                            "prompt_id": prompt_id(p),
                            "generator": gen,
                            "attribute_id": aid(u, k),
                            "rater": "sim-human-01",
                            "rater_kind": "human",
                            "raw_rater": "sim-human-01",
                            "round": "final",
                            "rating": 4,
                        }
                    )
    judgments = make_table(
        "attribute_judgments",
        [
            {
                "attribute_id": aid(u, k),
                "user_id": u,
                "rater": "sim-human-01",
                "rater_kind": "human",
                "raw_rater": "sim-human-01",
                "round": "final",
                "label": "accepted" if k != 1 else "rejected",
                "note": None,
            }
            for u in ("u1", "u2")
            for k in range(3)
        ],
    )
    return {
        "users": users,
        "conversations": conversations,
        "attributes": attributes,
        "prompts": prompts_table,
        "relevance_items": make_table("relevance_items", items),
        "relevance_votes": make_table("relevance_votes", votes),
        "responses": make_table("responses", resp_rows),
        "preference_ratings": make_table("preference_ratings", rating_rows),
        "attribute_judgments": judgments,
    }


@pytest.fixture
def world() -> dict[str, pd.DataFrame]:
    return build_world()


def fake_spec(name: str = "fake-judge", base_url: str = "http://127.0.0.1:9/v1") -> ModelSpec:
    return ModelSpec(name=name, base_url=base_url, api_key_env=None, params={"temperature": 0})


class ScriptedCaller:
    """In-process stand-in for a ``ModelCaller``: ``answer(request) -> text`` per request."""

    def __init__(self, answer: Callable[[ChatRequest], str], name: str = "fake-judge") -> None:
        self.answer = answer
        self.model = fake_spec(name)
        self.batches: list[list[ChatRequest]] = []

    def __call__(self, requests: Sequence[ChatRequest]) -> list[CallResult]:
        self.batches.append(list(requests))
        return [
            CallResult(
                f"k{len(self.batches)}-{i}", r.custom_id, self.answer(r), {}, {}, False, None
            )
            for i, r in enumerate(requests)
        ]


class ScriptedServer:
    """A tiny OpenAI-compatible chat server on 127.0.0.1 answering ``reply(body) -> text``."""

    def __init__(self, reply: Callable[[dict[str, Any]], str]) -> None:
        self.reply = reply
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.bodies.append(body)
                text = outer.reply(body)
                payload = json.dumps(
                    {
                        "id": f"chatcmpl-{len(outer.bodies)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": text},
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted_server() -> Iterator[Callable[[Callable[[dict[str, Any]], str]], ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(reply: Callable[[dict[str, Any]], str]) -> ScriptedServer:
        srv = ScriptedServer(reply).__enter__()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.__exit__()
