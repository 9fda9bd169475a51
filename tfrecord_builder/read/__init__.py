"""The reading side: a built dataset back as tf.data, NumPy or torch.

`tfdata.py` holds the reading functions (parse specs, decode steps, the tf.data pipeline) that
generated modules copy verbatim; `numpy_decoding.py` is their NumPy twin, record by record;
`records.py` reads shards without TensorFlow; `dataset.py` is the public API (`tb.load`,
`tb.read`, `tb.input_fn`, `Dataset`); `torch_dataset.py` wraps it for PyTorch; `report/` is a
dataset's HTML page (`tb.report`, `Dataset.report`), from its statistics and a sample of records.
"""
