"""The build: a spec's sources read, encoded, split, ordered and written as a dataset.

`run.py` orchestrates a build (`tb.build`); `plan.py` divides the sources into read tasks and
gathers statistics; `encode_batch.py` turns a batch of rows into records (and finds the bad
rows); `encoding.py` spreads that over worker processes; `runners/` holds the engines that execute
the plan (this machine's processes, Apache Beam), behind one contract (`runners/contract.py`);
`metadata.py` writes the dataset's files besides its shards; `dry_run.py` runs a sample through
the same stages without writing a dataset.
"""
