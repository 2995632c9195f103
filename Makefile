# recenter: the two commands of the README.
#   make paper   install everything the workflow needs, then reproduce the paper (paper/build/bundled/paper.pdf)
#   make test    install everything the tests need, then run the test suite
# Both work on a fresh Debian machine with Python 3.11 (as root, or with sudo available).

PYTHON ?= python3
CORES ?= 8
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended texlive-latex-extra \
	texlive-fonts-recommended texlive-science lmodern latexmk
# Python packages come from the hashed lock (requirements.lock, made by `make lock`). Two are
# installed outside it, pinned by version, because their files differ per machine: the CPU build
# of torch (PyPI's file of the same version pulls CUDA), and llama-cpp-python (a source build, or
# the portable wheel shipped beside the repository, which saves a ~6 min build).
TORCH_PIN := torch==2.13.0
LLAMA_PIN := llama-cpp-python==0.3.36
LLAMA_WHEEL := $(firstword $(wildcard ../shared/wheels/llama_cpp_python-0.3.36-*.whl))
# Where `make lock` finds the CPU torch wheel and the llama wheel to resolve their dependencies.
LOCK_FIND_LINKS ?= $(wildcard /opt/wheels ../shared/wheels)

.PHONY: paper test install install-tex install-python install-test lint clean bench lock

paper: install
	snakemake --cores $(CORES)

# The tests run in parallel, one pytest-xdist worker per core; --dist loadgroup keeps the tests
# of one xdist_group (those reading the shared bundled build, tests/conftest.py) on one worker,
# in the order tests/conftest.py sets (the longest first).
test: install-test
	$(MAKE) lint
	$(PYTHON) -m pytest -n auto --dist loadgroup --no-loadscope-reorder

install-tex:
	@if command -v latexmk >/dev/null 2>&1 && kpsewhich booktabs.sty siunitx.sty >/dev/null 2>&1; then \
		echo "TeX Live already installed"; \
	else \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES) poppler-utils; \
	fi

# Where pip finds the CPU build of torch (e.g. TORCH_INDEX="--index-url https://download.pytorch.org/whl/cpu";
# the default takes it from pip's own configuration).
TORCH_INDEX ?=

install-python:
	$(PYTHON) -m pip install -q --require-hashes --no-deps -r requirements.lock
	$(PYTHON) -m pip install -q --no-deps $(TORCH_INDEX) "$(TORCH_PIN)"
	$(PYTHON) -m pip install -q --no-deps "$(if $(LLAMA_WHEEL),$(LLAMA_WHEEL),$(LLAMA_PIN))"
	$(PYTHON) -m pip install -q --no-deps -e .

install: install-tex install-python

install-test: install

# Re-pin requirements.lock from pyproject.toml (keeps existing pins unless pyproject needs others;
# add --upgrade to move everything to the newest versions). Linux x86-64, Python 3.11.
lock:
	uv pip compile pyproject.toml --extra test --extra cluster --extra local-llm \
		--python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes \
		--no-emit-package torch --no-emit-package llama-cpp-python \
		$(foreach d,$(LOCK_FIND_LINKS),--find-links $(d)) \
		--no-header --annotation-style line -o requirements.lock

bench: install
	$(PYTHON) benchmarks/run.py
	$(PYTHON) benchmarks/rule_table.py

lint:
	ruff check . && ruff format --check . && snakefmt --check workflow/Snakefile workflow/rules
	snakemake --lint 2>&1 | $(PYTHON) tests/snakemake_lint.py
	lint-imports

clean:
	rm -rf results logs figures/*/ paper/build paper/generated .snakemake
