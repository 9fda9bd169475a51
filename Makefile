# `make demo` and `make test` set up .venv on a fresh machine, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
EXTRAS ?= cpu,parquet,test

.PHONY: setup demo test bench schema clean

setup: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	touch $(STAMP)

demo: setup
	$(PY) demo/run.py

test: setup
	$(PY) -m pytest -q -n 2 --dist loadgroup

bench: setup
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS),bench]'
	$(PY) bench/tabular.py
	$(PY) bench/images.py
	$(PY) bench/sequences.py
	$(PY) bench/memory.py

schema: setup
	$(PY) -m tfrecord_builder schema > schema/spec.schema.json

clean:
	rm -rf build bench/out
