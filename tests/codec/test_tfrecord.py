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


def _reference(data: bytes) -> tuple[list[bytes], str | None]:
    """(records, error) as a plain record-at-a-time reader reads `data`: the framing's definition."""
    from tfrecord_builder.codec.tfrecord import (DATA_MISMATCH, LENGTH_MISMATCH, data_intact, frame_length,
                                                 truncated_data, truncated_header)

    records, position, index = [], 0, 0
    while position < len(data):
        header = data[position : position + 12]
        if len(header) < 12:
            return records, truncated_header("s", index, len(header))
        length, length_ok = frame_length(header)
        if not length_ok:
            return records, f"s: record {index}: {LENGTH_MISMATCH}"
        record, footer = data[position + 12 : position + 12 + length], data[position + 12 + length : position + 16 + length]
        if len(record) < length or len(footer) < 4:
            return records, truncated_data("s", index, length)
        if not data_intact(record, footer):
            return records, f"s: record {index}: {DATA_MISMATCH}"
        records.append(record)
        position, index = position + 16 + length, index + 1
    return records, None


def _read_both(data: bytes, block_bytes: int) -> tuple[tuple[list[bytes], str | None], tuple[list[bytes], str | None]]:
    """(records, error) as the stream reader and verify's block stream (frames.py) read `data`,
    both through the one framing loop, `record_blocks`, in blocks of `block_bytes`."""
    import hashlib
    import tempfile

    from tfrecord_builder.codec.frames import ShardStream, record_blocks

    stream_records: list[bytes] = []
    stream_error = None
    try:
        for record in read_records(io.BytesIO(data), "s", block_bytes):
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
def test_the_framing_loop_reads_damaged_streams_as_a_record_at_a_time_reader_does(records, data):
    """The one framing loop, over a stream (`read_records`) or verify's block stream, in blocks
    that cut records anywhere: on the same bytes, whole or damaged, the same records and the same
    fault as a plain record-at-a-time reader."""
    framed = bytearray(frame(ByteColumn.from_rows(records)))
    for _ in range(data.draw(st.integers(0, 3))):
        where = data.draw(st.integers(0, len(framed)))
        if data.draw(st.booleans()) and where < len(framed):
            framed[where] ^= data.draw(st.integers(1, 255))
        else:
            del framed[where:]
    block_bytes = data.draw(st.sampled_from([7, 64, 1 << 20]))  # blocks that cut records, and one that doesn't
    stream, blocks = _read_both(bytes(framed), block_bytes)
    assert stream == blocks == _reference(bytes(framed))


def test_read_records_frames_a_block_at_a_time():
    """`read_records` is the framing loop's record-at-a-time view: a stream of a thousand records
    is read in a few blocks, not three reads a record."""
    class Counted(io.BytesIO):
        reads = 0

        def read(self, size: int = -1) -> bytes:
            Counted.reads += 1
            return super().read(size)

    records = [bytes([index % 251]) * (index % 7) for index in range(1000)]
    assert list(read_records(Counted(frame(ByteColumn.from_rows(records))), "s")) == records
    assert Counted.reads <= 2
