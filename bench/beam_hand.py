"""The hand-written Beam pipeline bench/beam.py compares with: TFX's and tfrecorder's way.

    python bench/beam_hand.py table|images SOURCE OUTPUT_PREFIX WORKERS

A `tf.train.Example` per row (csv module, the 16 columns of bench/tabular.py) or per image (Pillow
decode, resize to 64x64, JPEG encode; the label from the class folder), then `WriteToTFRecord`
with 4 shards, on the DirectRunner in multi-processing mode with WORKERS processes. Runs in an
environment with Apache Beam and TensorFlow (`.venv-beam-bench`).
"""
from __future__ import annotations

import csv
import io
import os
import sys

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.options.pipeline_options import PipelineOptions

INT_COLUMNS = ["id", "age", "count", "category", "big", "delta"]
FLOAT_COLUMNS = ["price", "score", "ratio", "lat", "lon", "noise"]
STRING_COLUMNS = ["city", "color", "code"]
HEADER = INT_COLUMNS + FLOAT_COLUMNS + STRING_COLUMNS + ["tokens"]


def row_example(line: str) -> bytes:
    import tensorflow as tf

    cells = dict(zip(HEADER, next(csv.reader([line]))))
    feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=[int(cells[name])])) for name in INT_COLUMNS}
    feature.update({name: tf.train.Feature(float_list=tf.train.FloatList(value=[float(cells[name])]))
                    for name in FLOAT_COLUMNS})
    feature.update({name: tf.train.Feature(bytes_list=tf.train.BytesList(value=[cells[name].encode()]))
                    for name in STRING_COLUMNS})
    feature["tokens"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in cells["tokens"].split()]))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def image_example(readable) -> bytes:
    import tensorflow as tf
    from PIL import Image

    path = readable.metadata.path
    with Image.open(io.BytesIO(readable.read())) as image:
        small = image.convert("RGB").resize((64, 64), Image.BILINEAR)
    encoded = io.BytesIO()
    small.save(encoded, format="JPEG", quality=90)
    label = os.path.basename(os.path.dirname(path))
    feature = {"image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[encoded.getvalue()])),
               "label": tf.train.Feature(bytes_list=tf.train.BytesList(value=[label.encode()]))}
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def main() -> None:
    kind, source, output, workers = sys.argv[1:5]
    options = PipelineOptions(["--runner=DirectRunner", "--direct_running_mode=multi_processing",
                               f"--direct_num_workers={workers}"])
    with beam.Pipeline(options=options) as pipeline:
        if kind == "table":
            examples = (pipeline | beam.io.ReadFromText(source, skip_header_lines=1) | beam.Map(row_example))
        else:
            examples = (pipeline | fileio.MatchFiles(os.path.join(source, "*", "*.jpg")) | fileio.ReadMatches()
                        | beam.Map(image_example))
        examples | beam.io.WriteToTFRecord(output, num_shards=4)


if __name__ == "__main__":
    main()
