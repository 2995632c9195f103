# recenter: the two commands of the README.
#   make paper   install everything the workflow needs, then reproduce the paper (paper/build/bundled/paper.pdf)
#   make test    install everything the tests need, then run the test suite
# Both work on a fresh Debian machine with Python 3.11 (as root, or with sudo available).

PYTHON ?= python3
CORES ?= 8
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended texlive-latex-extra \
	texlive-fonts-recommended texlive-science lmodern latexmk
# A portable llama-cpp-python wheel shipped beside the repository (saves a ~6 min source build).
LLAMA_WHEEL := $(firstword $(wildcard ../shared/wheels/llama_cpp_python-*.whl))

.PHONY: paper test install install-tex install-test lint clean bench

paper: install
	snakemake --cores $(CORES)

test: install-test
	$(PYTHON) -m pytest

install-tex:
	@if command -v latexmk >/dev/null 2>&1 && kpsewhich booktabs.sty siunitx.sty >/dev/null 2>&1; then \
		echo "TeX Live already installed"; \
	else \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(TEX_PACKAGES) poppler-utils; \
	fi

install: install-tex
	$(PYTHON) -m pip install -q -e .

install-test: install-tex
	$(if $(LLAMA_WHEEL),$(PYTHON) -m pip install -q "$(LLAMA_WHEEL)[server]",)
	$(PYTHON) -m pip install -q -e ".[test,local-llm,cluster]"

bench: install
	$(PYTHON) benchmarks/run.py

lint:
	ruff check . && ruff format --check . && snakemake --lint && lint-imports

clean:
	rm -rf results logs figures/*/ paper/build paper/generated .snakemake
