"""TFRecord framing: readable by TensorFlow, and every corruption is caught by our reader."""
from __future__ import annotations

import io
import os

import pytest

from tfrecord_builder.codec.bytecolumn import ByteColumn
from tfrecord_builder.codec.tfrecord import Compressor, frame, open_records, read_records
from tfrecord_builder.errors import DatasetError

RECORDS = [b"", b"a", os.urandom(300), b"x" * 70000]


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_tensorflow_reads_our_frames(tf, tmp_path, compression):
    path = tmp_path / "records"
    compressor = Compressor(compression)
    path.write_bytes(compressor.compress(frame(ByteColumn.from_rows(RECORDS))) + compressor.flush())
    read = [record.numpy() for record in
            tf.data.TFRecordDataset(str(path), compression_type={"none": None}.get(compression, compression.upper()))]
    assert read == RECORDS
    with open_records(str(path), compression) as stream:
        assert list(read_records(stream, "records")) == RECORDS


def test_we_read_tensorflows_frames(tf, tmp_path):
    path = str(tmp_path / "tf.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for record in RECORDS:
            writer.write(record)
    with open(path, "rb") as stream:
        assert list(read_records(stream, "tf.tfrecord")) == RECORDS


def test_every_flipped_byte_is_caught():
    data = frame(ByteColumn.from_rows([b"hello", b"world!"]))
    for position in range(len(data)):
        corrupt = bytearray(data)
        corrupt[position] ^= 0x01
        with pytest.raises(DatasetError, match=r"record \d"):
            list(read_records(io.BytesIO(bytes(corrupt)), "shard"))


def test_truncation_is_caught():
    data = frame(ByteColumn.from_rows([b"hello"]))
    for cut in range(1, len(data)):
        with pytest.raises(DatasetError, match="truncated|mismatch"):
            list(read_records(io.BytesIO(data[:cut]), "shard"))
