"""TFRecord framing: readable by TensorFlow, and every corruption is caught by our reader."""
from __future__ import annotations

import io
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _read_both(data: bytes, block_bytes: int) -> tuple[tuple[list[bytes], str | None], tuple[list[bytes], str | None]]:
    """(records, error) as the stream reader and verify's block reader (frames.py) read `data`."""
    import hashlib
    import tempfile

    from tfrecord_builder.codec.frames import ShardStream, record_blocks

    stream_records: list[bytes] = []
    stream_error = None
    try:
        for record in read_records(io.BytesIO(data), "s"):
            stream_records.append(record)
    except DatasetError as error:
        stream_error = str(error)
    with tempfile.NamedTemporaryFile() as file:
        file.write(data)
        file.flush()
        block_records: list[bytes] = []
        block_error = None
        with ShardStream(file.name, "none", hashlib.sha256(), block_bytes) as shard:
            try:
                for block in record_blocks(shard, "s"):
                    block_records.extend(block.record(index) for index in range(len(block)))
            except DatasetError as error:
                block_error = str(error)
    return (stream_records, stream_error), (block_records, block_error)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=6), st.data())
def test_the_block_reader_reads_damaged_streams_as_the_stream_reader_does(records, data):
    """verify's NumPy block framer and the per-record reader share `frame_length` and the fault
    words; on the same bytes, whole or damaged, they give the same records and the same fault."""
    framed = bytearray(frame(ByteColumn.from_rows(records)))
    for _ in range(data.draw(st.integers(0, 3))):
        where = data.draw(st.integers(0, len(framed)))
        if data.draw(st.booleans()) and where < len(framed):
            framed[where] ^= data.draw(st.integers(1, 255))
        else:
            del framed[where:]
    block_bytes = data.draw(st.sampled_from([7, 64, 1 << 20]))  # blocks that cut records, and one that doesn't
    stream, blocks = _read_both(bytes(framed), block_bytes)
    assert blocks == stream
