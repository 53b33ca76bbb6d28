# Two entry points for a fresh machine: `make demo` and `make test` (each installs what it needs first).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed-stamp
export HF_HUB_OFFLINE := 1

.PHONY: demo test install

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/lineup app

test: $(STAMP)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/pytest -q
