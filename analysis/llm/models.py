"""Models are config: one ``ModelSpec`` per entry of the Hydra group ``models/``.

A spec says where a model is served (any OpenAI-compatible ``base_url``, or a llama.cpp server
the workflow starts itself), which environment variable holds its key (the name only: a key
never enters config, the call store or a log), how it generates, and what a token costs.
``identity()`` is the part of the spec that enters every call key: what the model *is*, not
where it happens to run today or how it is paid for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlsplit

from analysis.settings import MODEL_NAME, ConfigError, check_base_url, check_env_var_name

#: normalized model ids and stage names become folder names of the call store (the same rule
#: composition applies to model names: ``settings.check_model_name``)
SAFE_NAME = MODEL_NAME

#: hosts whose port is incidental: a local server is the same endpoint on any port
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "[::1]"})

#: server kinds ``local_server`` knows how to start
SERVER_KINDS = frozenset({"llama_cpp"})

#: server keys that change what the model computes (enter the identity); the rest are runtime
SERVER_IDENTITY_KEYS = ("kind", "file", "n_ctx", "chat_format")
#: server keys that change only how fast it answers: no part of a call key, no output, no variant
SERVER_RUNTIME_KEYS = ("n_threads",)


#: the api_key given to endpoints that need none (a local server); not a secret
NO_KEY = "no-key-needed"


class ModelConfigError(ValueError):
    """A ``models/`` entry is invalid; the message names the model and the field."""


class MissingApiKey(RuntimeError):
    """The environment variable named by ``api_key_env`` is unset."""


@dataclass(frozen=True)
class ModelSpec:
    """One model of the study, as configured in ``config/models/<group>.yaml``."""

    name: str  # normalized id, e.g. "smollm2-135m"; also the call-store folder
    base_url: str | None  # OpenAI-compatible endpoint; None for a managed local server
    api_key_env: str | None  # NAME of the env var holding the key (never the key)
    params: dict  # default generation params: temperature, max_tokens, seed, top_p, ...
    price_input_per_mtok: float = 0.0  # USD per million prompt tokens
    price_output_per_mtok: float = 0.0  # USD per million completion tokens
    price_batch_discount: float = 0.0  # fraction taken off both prices for Batch API calls
    max_concurrency: int = 4  # concurrent requests to this endpoint
    server: dict | None = None  # how to start a local server, e.g. {"kind": "llama_cpp", ...}
    api_model: str | None = None  # the id the endpoint expects, when it differs from ``name``
    description: str = ""  # one line for docs and reports ("a real model, not a good annotator")

    def __post_init__(self) -> None:
        if not SAFE_NAME.match(self.name):
            raise ModelConfigError(
                f"model '{self.name}': name must be a lowercase id ([a-z0-9._-]), it names "
                "a folder of the call store"
            )
        if self.base_url is None and self.server is None:
            raise ModelConfigError(
                f"model '{self.name}': set base_url (an OpenAI-compatible endpoint) or server "
                "(a local server the workflow starts)"
            )
        if self.server is not None:
            kind = self.server.get("kind")
            if kind not in SERVER_KINDS:
                raise ModelConfigError(
                    f"model '{self.name}': server.kind '{kind}' unknown; "
                    f"known: {sorted(SERVER_KINDS)}"
                )
            if not (self.server.get("file") or self.server.get("path")):
                raise ModelConfigError(f"model '{self.name}': server needs 'file' or 'path'")
        try:  # the checks composition makes, again for a spec built in code
            if self.api_key_env is not None:
                check_env_var_name(f"model '{self.name}': api_key_env", self.api_key_env)
            if self.base_url is not None:
                check_base_url(f"model '{self.name}': base_url", self.base_url)
        except ConfigError as err:
            raise ModelConfigError(str(err)) from None
        if self.max_concurrency < 1:
            raise ModelConfigError(f"model '{self.name}': max_concurrency must be >= 1")
        if not 0.0 <= self.price_batch_discount <= 1.0:
            raise ModelConfigError(
                f"model '{self.name}': price_batch_discount is the fraction taken off for batch "
                f"calls (0 to 1, e.g. 0.5), not {self.price_batch_discount}"
            )
        if self.params.get("stream"):
            raise ModelConfigError(f"model '{self.name}': params.stream is not supported")

    @property
    def request_model(self) -> str:
        """The ``model`` field sent to the endpoint."""
        return self.api_model or self.name

    def identity(self) -> dict[str, Any]:
        """What enters the call key: the model's name, the id sent, and what the endpoint means.

        A loopback endpoint's port is incidental (a local vLLM on 8000 or 8001 serves the same
        model), so it is reduced to ``local``; a hosted endpoint keeps host and path, because
        the same model name at two providers is not guaranteed to be the same model. A managed
        server is identified by the weights file it loads (its name, not its folder or
        package). Prices, concurrency and keys stay out.
        """
        ident: dict[str, Any] = {"name": self.name, "model": self.request_model}
        if self.base_url is not None:
            ident["endpoint"] = normalize_base_url(self.base_url)
        if self.server is not None:
            server = dict(self.server)
            if server.get("path"):  # where the weights live is machine-specific; their name is not
                server["file"] = str(server["path"]).rsplit("/", 1)[-1]
            ident["server"] = {
                k: server[k] for k in SERVER_IDENTITY_KEYS if server.get(k) is not None
            }
        return ident


def normalize_base_url(url: str) -> str:
    """Reduce a base URL to its meaning: ``local/<path>`` or ``<host>[:port]/<path>``.

    Scheme, case, default ports and a trailing slash do not change which service answers.
    """
    parts = urlsplit(url.strip())
    if not parts.scheme or not parts.hostname:
        raise ModelConfigError(f"base_url '{url}' is not an absolute http(s) URL")
    host = parts.hostname.lower()
    path = parts.path.rstrip("/")
    if host in LOOPBACK_HOSTS:
        return f"local{path}"
    port = parts.port
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    netloc = host if port in (None, default) else f"{host}:{port}"
    return f"{netloc}{path}"


_SPEC_FIELDS = {f.name for f in fields(ModelSpec)}


def model_from_config(name: str, cfg: dict) -> ModelSpec:
    """Build a ``ModelSpec`` from one entry of the ``models`` group; unknown keys are errors."""
    if not isinstance(cfg, dict):
        raise ModelConfigError(f"model '{name}': expected a mapping, got {type(cfg).__name__}")
    unknown = sorted(set(cfg) - _SPEC_FIELDS)
    if unknown:
        raise ModelConfigError(
            f"model '{name}': unknown key(s) {unknown}; allowed: {sorted(_SPEC_FIELDS)}"
        )
    if "name" in cfg and cfg["name"] != name:
        raise ModelConfigError(f"model '{name}': name field '{cfg['name']}' differs from its key")
    params = cfg.get("params") or {}
    if not isinstance(params, dict):
        raise ModelConfigError(f"model '{name}': params must be a mapping")
    server = cfg.get("server")
    if server is not None and not isinstance(server, dict):
        raise ModelConfigError(f"model '{name}': server must be a mapping")
    # the composed config lists every key of a model entry; None means the file left it out
    given = {k: v for k, v in cfg.items() if v is not None}
    try:
        return ModelSpec(
            name=name,
            base_url=given.get("base_url"),
            api_key_env=given.get("api_key_env"),
            params=dict(params),
            price_input_per_mtok=float(given.get("price_input_per_mtok", 0.0)),
            price_output_per_mtok=float(given.get("price_output_per_mtok", 0.0)),
            price_batch_discount=float(given.get("price_batch_discount") or 0.0),
            max_concurrency=int(given.get("max_concurrency", 4)),
            server=dict(server) if server is not None else None,
            api_model=given.get("api_model"),
            description=str(given.get("description", "")),
        )
    except (TypeError, ValueError) as err:
        if isinstance(err, ModelConfigError):
            raise
        raise ModelConfigError(f"model '{name}': {err}") from err


def models_from_config(models_cfg: dict | None) -> dict[str, ModelSpec]:
    """All specs of the composed ``models`` group, keyed by name (sorted)."""
    return {
        name: model_from_config(name, spec) for name, spec in sorted((models_cfg or {}).items())
    }


def resolve_api_key(model: ModelSpec) -> str:
    """Read the key from the environment variable the spec names (only when a call is made)."""
    if model.api_key_env is None:
        return NO_KEY
    value = os.environ.get(model.api_key_env)
    if not value:
        raise MissingApiKey(
            f"model {model.name}: environment variable {model.api_key_env} is not set; export "
            "it (the key itself never goes into the config) or run in replay mode"
        )
    return value
