# The two commands of the README: `make serve` (build and serve the manual) and `make test`.
# Both set up everything they need on a fresh machine.
VENV ?= .venv
BIN := $(VENV)/bin
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve build test bench wheel system-packages release-name publish versions

# The first run installs quietly for a minute or two: say so first, and how to use the result after.
$(VENV)/.installed: pyproject.toml constraints.txt
	@echo "setting up $(VENV)/: installing the manual's Python packages (once, and again when pyproject.toml or constraints.txt change; about 2 minutes)"
	python3 -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[test]'
	@echo "$(VENV)/ is ready; to run metrics-manual anywhere: export PATH=\"$(abspath $(BIN)):\$$PATH\""
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

# Bytecode is written (into the ignored __pycache__/) even where the machine says not to: each worker and
# each command a test runs would otherwise compile the package and rewrite the tests anew (~3 s a worker).
test: $(VENV)/.installed system-packages
	$(BIN)/ruff check tools tests
	$(BIN)/ruff format --check tools tests
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python tools/bench.py

# The command as a wheel, for another repository's CI (docs/judging.md, "Judge in another repository").
wheel: $(VENV)/.installed
	rm -rf dist
	$(BIN)/pip wheel --quiet --disable-pip-version-check --no-deps -w dist .

# Publishing with mike: one version per Miles commit the catalog documents (miles-<8 digits>), `latest`
# aliased to the newest, Material's version selector from mkdocs.publish.yml. Commits to the local
# gh-pages branch; PUSH=1 also pushes it (the publish workflow does). PAGES_URL is where the versions
# are served; each version is built with SITE_URL=$(PAGES_URL)<version>/ so its exports link to it.
PAGES_URL ?= http://127.0.0.1:8000/
MIKE_PUSH := $(if $(filter 1,$(PUSH)),--push,)

release-name: $(VENV)/.installed
	@$(BIN)/python -m metrics_manual.site.release

publish: $(VENV)/.installed
	$(eval VERSION := $(shell $(BIN)/python -m metrics_manual.site.release))
	@test -n "$(VERSION)" || { echo "no release name: does ranges/ load?"; exit 2; }
	SITE_URL=$(PAGES_URL)$(VERSION)/ PATH=$(abspath $(BIN)):$$PATH $(BIN)/mike deploy -F mkdocs.publish.yml $(MIKE_PUSH) --update-aliases $(VERSION) latest
	$(BIN)/mike set-default -F mkdocs.publish.yml $(MIKE_PUSH) latest

# The published versions, and a local server of the gh-pages branch with its version selector.
versions: $(VENV)/.installed
	$(BIN)/mike list -F mkdocs.publish.yml
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/mike serve -F mkdocs.publish.yml
