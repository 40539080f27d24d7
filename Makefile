# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
VENV ?= .venv

$(VENV)/.skillgrad-installed: pyproject.toml scripts/install.sh
	bash scripts/install.sh

# The demo needs no extra: the package, its core dependencies and the bundled model.
$(VENV)/.skillgrad-demo: pyproject.toml scripts/install.sh
	bash scripts/install.sh demo

install: $(VENV)/.skillgrad-installed

install-demo: $(VENV)/.skillgrad-demo

demo: install-demo
	$(VENV)/bin/skillgrad demo

test: install
	$(VENV)/bin/python -m pytest -q -n 2 --dist loadfile --durations=30

bench: install
	$(VENV)/bin/python benchmarks/demo.py
	$(VENV)/bin/python benchmarks/models.py

# `make demo`'s outcome (held-out scores, accepts/rejects, calls, tokens) against the one recorded for the README
demo-check: install-demo
	$(VENV)/bin/python benchmarks/demo.py --as-make-demo --seeds 42 --check benchmarks/expected/demo.json

.PHONY: install install-demo demo test bench demo-check
