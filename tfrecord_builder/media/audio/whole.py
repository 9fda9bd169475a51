"""Whether an audio file holds every sample its header promises. libsndfile reads what there is of
a cut file in silence in three cases, each caught here:

- a WAV (AIFF, ...) whose data chunk is shorter than its header says: libsndfile's log is the one
  place that shows (`check_log`);
- an Ogg (Vorbis, Opus) cut anywhere: its stream simply ends early, so its last page lacks the
  end-of-stream flag every complete Ogg stream ends with, or is itself cut short (`check_ogg`);
- a FLAC cut at a frame boundary, or an MP3 whose Xing/Info header counts its frames: fewer
  samples decode than the header declares (`check_count`).

A FLAC cut inside a frame, libsndfile says itself ("flac decoder lost sync"). An MP3 without a
Xing/Info header (a constant bit rate file from an encoder that writes none) declares no length:
a cut one can't be told from a shorter recording.
"""
from __future__ import annotations

import re
import struct
from typing import BinaryIO

from . import BadAudio

# libsndfile's log of a WAV whose data chunk is shorter than its header says
_SHORT_CHUNK = re.compile(r"^data\s*:\s*(\d+) \(should be (\d+)\)", re.MULTILINE)
_UNKNOWN_SIZES = {0, 0xFFFFFFFF, 0x7FFFFFFF}  # what a stream writer that didn't know the length puts there
_OGG_PAGE = struct.Struct("<4sBBqIIIB")  # capture pattern, version, flags, granule, serial, sequence, CRC, segments
_END_OF_STREAM = 0x04
_LARGEST_PAGE = 27 + 255 + 255 * 255  # a header, 255 lacing values, 255 segments of 255 bytes


def check_log(log: str) -> None:
    """Raises BadAudio for a file whose samples end before its header says they do, by
    libsndfile's log of it (`SoundFile.extra_info`)."""
    short = _SHORT_CHUNK.search(log)
    if short is not None:
        declared, held = int(short.group(1)), int(short.group(2))
        if declared > held and declared not in _UNKNOWN_SIZES:
            raise BadAudio(f"truncated: its header declares {declared} bytes of samples, the file holds {held}")


def check_ogg(file: BinaryIO) -> None:
    """Raises BadAudio for an Ogg file whose last page is cut short or isn't its stream's last
    (no end-of-stream flag). Reads only the file's last 64 KiB: the last page is the last
    "OggS" there whose header and segments end exactly at the end of the file."""
    file.seek(0, 2)
    size = file.tell()
    start = max(0, size - _LARGEST_PAGE)
    file.seek(start)
    tail = file.read()
    file.seek(0)
    at = tail.rfind(b"OggS")
    while at >= 0:
        ends = _page_end(tail, at)
        if ends == len(tail):
            if not tail[at + 5] & _END_OF_STREAM:
                raise BadAudio(f"truncated: its last Ogg page (at byte {start + at}) doesn't end the stream")
            return
        at = tail.rfind(b"OggS", 0, at)
    raise BadAudio("truncated: its last Ogg page is cut short")


def _page_end(data: bytes, at: int) -> int | None:
    """Where the Ogg page at `at` ends in `data`; None if `data` ends inside its header."""
    if at + _OGG_PAGE.size > len(data):
        return None
    pattern, version, *_, segments = _OGG_PAGE.unpack_from(data, at)
    body = at + _OGG_PAGE.size + segments
    if version != 0 or body > len(data):
        return None
    return body + sum(data[at + _OGG_PAGE.size: body])


def check_count(decoded: int, declared: int) -> None:
    """Raises BadAudio when a file read to its end gave fewer samples (per channel) than its
    header declares (FLAC's STREAMINFO, an MP3's Xing/Info frame count, as libsndfile reports them)."""
    if decoded < declared:
        raise BadAudio(f"truncated: {decoded} samples decoded of the {declared} its header declares")
