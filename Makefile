PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install serve test worker demo bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

serve: $(STAMP)
	$(BIN)/speculation serve

test: $(STAMP)
	$(BIN)/python -m pytest

worker: $(STAMP)
	$(BIN)/speculation worker

demo: $(STAMP)
	$(BIN)/speculation demo

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache
