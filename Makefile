# recenter: the two commands of the README.
#   make paper   install what the reproduction needs, then reproduce the paper (paper/build/bundled/paper.pdf)
#   make test    install what the tests need (the local model included), then run the test suite
# Both work on a machine that has only Python 3.11, pip and this repository (Debian 12 or this
# project's image; as root, or as a user with sudo): the system packages come from apt, the Python
# packages go into the project's own virtual environment .venv/ (git-ignored), whose bin/ is first
# on PATH for everything below (the tests call `snakemake` by name). Nothing is read from outside
# the repository and the package registries.

PYTHON ?= python3
VENV ?= .venv
CORES ?= 8
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends

VENV_DIR := $(abspath $(VENV))
PY := $(VENV_DIR)/bin/python
export VIRTUAL_ENV := $(VENV_DIR)
export PATH := $(VENV_DIR)/bin:$(PATH)

TEX_PACKAGES := texlive-latex-base texlive-latex-recommended texlive-latex-extra \
	texlive-fonts-recommended texlive-science lmodern latexmk poppler-utils
# The tests' browser (the HTML report and the audit site): Debian's, never a downloaded one.
BROWSER_PACKAGES := chromium chromium-driver

# Python packages come from hashed locks made by `make lock`: requirements-paper.lock (what the
# reproduction imports) and requirements.lock (everything: the tests, the cluster plugins and the
# local model's server too; the same pins). Two packages are installed outside them, pinned by
# version, because their files differ per machine: torch (the CPU build) and llama-cpp-python
# (a portable source build, below).
TORCH_PIN := torch==2.13.0
LLAMA_PIN := llama-cpp-python==0.3.36
# Where pip finds the CPU build of torch. Empty: PyTorch's CPU index where it answers, else your
# pip configuration's index (on plain PyPI that is the CUDA build, much larger; set TORCH_INDEX).
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=

# llama.cpp compiled for any x86-64 CPU of the last ten years, never for this one: a build with
# native CPU detection (the default) uses instructions such as AVX-512 or AMX that other machines,
# and sometimes the same one under another hypervisor, lack, and the server dies with SIGILL.
# Built once per machine into a cache whose name carries the flags (pip's own wheel cache ignores
# CMAKE_ARGS and would hand back a native build); LLAMA_WHEEL=path installs a wheel you already have.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF $(if $(filter x86_64,$(shell uname -m)),-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)
LLAMA_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/recenter/wheels/$(subst ==,-,$(LLAMA_PIN))-$(shell printf '%s' "$(LLAMA_CMAKE_ARGS)" | sha256sum | cut -c1-12)
LLAMA_WHEEL ?=

# pip, retried: a registry that drops a download midway (CI saw a 93 MB wheel cut at 4 MB on all
# six of pip's own resume attempts) fails the whole install, while a second try a little later
# goes through; what pip already fetched stays in its cache, so a retry costs only what was lost.
# Recipes print a short line of what they install rather than the retry loop.
PIP_TRIES ?= 3
PIP := retry() { n=1; until "$$@"; do [ $$n -ge $(PIP_TRIES) ] \
	&& { echo "pip failed $$n times: giving up (its error above)" >&2; return 1; }; \
	echo "pip failed (attempt $$n of $(PIP_TRIES), its error above): retrying in 20 s" >&2; \
	n=$$((n + 1)); sleep 20; done; }; retry $(PY) -m pip

# Stamps: an install step reruns only when what it installs from changed.
STAMP := $(VENV_DIR)/.recenter
# Where `make lock` finds the CPU torch wheel to resolve its dependencies.
LOCK_FIND_LINKS ?= $(wildcard /opt/wheels)

.PHONY: paper test install install-test local-llm system-paper system-test lint clean bench lock

paper: install
	snakemake --cores $(CORES)

# The tests run in parallel, one pytest-xdist worker per core; --dist loadgroup keeps the tests
# of one xdist_group (those reading the shared bundled build, tests/conftest.py) on one worker,
# in the order tests/conftest.py sets (the longest first). --durations: the slowest tests, so a
# run shows where the suite's time goes (README, "Test suite time").
test: install-test
	$(MAKE) lint
	$(PY) -m pytest -n auto --dist loadgroup --no-loadscope-reorder --durations=20

install: system-paper $(STAMP)-paper

install-test: system-test $(STAMP)-test $(STAMP)-local-llm

# The local model (SmolLM2-135M served by llama.cpp): only recording new calls and the tests need
# it; replay never starts it (docs/models.md).
local-llm: system-test $(STAMP)-test $(STAMP)-local-llm

# System packages, each installed only where missing: TeX Live for the paper; the venv module and a
# compiler for the rest; Chromium for the tests.
system-paper:
	@missing=""; \
	if ! command -v latexmk >/dev/null 2>&1 || ! kpsewhich booktabs.sty siunitx.sty >/dev/null 2>&1 \
		|| ! command -v pdfinfo >/dev/null 2>&1; then missing="$(TEX_PACKAGES)"; fi; \
	if ! $(PYTHON) -c "import ensurepip, venv" >/dev/null 2>&1; then \
		missing="$$missing python3-venv python$$($(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv"; fi; \
	if [ -n "$$missing" ]; then \
		echo "apt-get install:$$missing"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) $$missing; \
	fi

system-test: system-paper
	@missing=""; \
	command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 || missing="$(BROWSER_PACKAGES)"; \
	command -v c++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1 || missing="$$missing build-essential"; \
	command -v cmake >/dev/null 2>&1 || missing="$$missing cmake"; \
	command -v git >/dev/null 2>&1 || missing="$$missing git"; \
	if [ -n "$$missing" ]; then \
		echo "apt-get install:$$missing"; \
		$(SUDO) apt-get update -qq && $(APT_INSTALL) $$missing; \
	fi

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "recenter needs Python 3.11; got " + sys.version.split()[0] + " (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV_DIR)
	@echo "pip install --upgrade pip"; $(PIP) install -q --upgrade "pip>=23"

# torch's CPU build from PyTorch's CPU index where it answers (a few seconds to find out), else
# from your pip configuration's index. The CPU build needs nothing beyond the lock (--no-deps);
# from the configured index pip may get the CUDA build (plain PyPI), which does not even import
# without the CUDA libraries it depends on, so there pip installs its dependencies too.
define install_torch
	@deps=--no-deps; \
	if [ -n '$(TORCH_INDEX)' ]; then index='$(TORCH_INDEX)'; \
	elif $(PY) -c "import urllib.request; urllib.request.urlopen('$(TORCH_CPU_INDEX)/torch/', timeout=5)" >/dev/null 2>&1; then \
		index="--index-url $(TORCH_CPU_INDEX)"; \
	else index=""; deps=""; echo "PyTorch's CPU index is not reachable: $(TORCH_PIN) and what it depends on from pip's configured index (on plain PyPI, the CUDA build and its CUDA libraries, several GB; see README)"; fi; \
	echo "pip install $$deps $(TORCH_PIN) $$index"; \
	$(PIP) install -q $$deps $$index "$(TORCH_PIN)"
endef

$(STAMP)-paper: requirements-paper.lock pyproject.toml | $(PY)
	@echo "pip install -r requirements-paper.lock"; \
		$(PIP) install -q --require-hashes --no-deps -r requirements-paper.lock
	$(install_torch)
	@echo "pip install -e ."; $(PIP) install -q --no-deps -e .
	@touch $@

$(STAMP)-test: requirements.lock pyproject.toml $(STAMP)-paper
	@echo "pip install -r requirements.lock"; \
		$(PIP) install -q --require-hashes --no-deps -r requirements.lock
	@touch $@

$(STAMP)-local-llm: $(STAMP)-test
	@if [ -n '$(LLAMA_WHEEL)' ]; then \
		echo "pip install $(LLAMA_WHEEL)"; $(PIP) install -q --no-deps '$(LLAMA_WHEEL)'; \
	else \
		if ! ls $(LLAMA_CACHE)/*.whl >/dev/null 2>&1; then \
			echo "building $(LLAMA_PIN) for any x86-64 CPU (CMAKE_ARGS=$(LLAMA_CMAKE_ARGS)): about 5 minutes on 2 cores, once per machine"; \
			rm -rf $(LLAMA_CACHE).tmp && \
			CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PY) -m pip wheel -q --no-cache-dir \
				--no-deps --no-binary llama-cpp-python -w $(LLAMA_CACHE).tmp "$(LLAMA_PIN)" && \
			mv $(LLAMA_CACHE).tmp $(LLAMA_CACHE) \
			|| { echo "building $(LLAMA_PIN) failed (pip's error above): the local model is not installed" >&2; exit 1; }; \
		fi; \
		$(PIP) install -q --no-deps $(LLAMA_CACHE)/*.whl; \
	fi
	@touch $@

# Re-pin both locks from pyproject.toml (existing pins are kept unless pyproject needs others; add
# --upgrade to move everything to the newest versions). Linux x86-64, Python 3.11. The paper's lock
# is resolved within the full one, so the two never pin a package differently.
UV_COMPILE = uv pip compile pyproject.toml --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
	--generate-hashes --no-emit-package torch --no-emit-package llama-cpp-python \
	$(foreach d,$(LOCK_FIND_LINKS),--find-links $(d)) --no-header --annotation-style line
lock:
	$(UV_COMPILE) --extra test --extra cluster --extra local-llm --extra bench -o requirements.lock
	$(UV_COMPILE) --constraint requirements.lock -o requirements-paper.lock

bench: install-test
	$(PY) benchmarks/run.py
	$(PY) benchmarks/rule_table.py

lint:
	ruff check . && ruff format --check . && snakefmt --check workflow/Snakefile workflow/rules
	snakemake --lint 2>&1 | $(PY) tests/snakemake_lint.py
	lint-imports

clean:
	rm -rf results logs figures/*/ paper/build paper/generated .snakemake
