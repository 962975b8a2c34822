# The two commands of the README: `make serve` (build and serve the manual) and `make test`.
# Both set up everything they need on a fresh machine.
VENV ?= .venv
BIN := $(VENV)/bin
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve build test bench system-packages

$(VENV)/.installed: pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	touch $@

# Debian packages the tests drive: Chromium (browser test) and promtool (alerting rules).
system-packages:
	@if ! command -v chromium >/dev/null || ! command -v promtool >/dev/null; then \
	  echo "installing Debian packages: chromium prometheus"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium prometheus >/dev/null; \
	fi

serve: $(VENV)/.installed
	$(BIN)/metrics-manual build
	$(BIN)/mkdocs serve

build: $(VENV)/.installed
	$(BIN)/metrics-manual build
	$(BIN)/mkdocs build --strict

test: $(VENV)/.installed system-packages
	$(BIN)/ruff check tools tests
	$(BIN)/ruff format --check tools tests
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python tools/bench.py
