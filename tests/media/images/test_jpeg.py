"""A JPEG's header read from its markers: the last header read answers for a file that starts
with its bytes, and says what walking the file's own segments would."""
from __future__ import annotations

import io

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from tfrecord_builder.media.images import jpeg


def _jpeg(size: tuple[int, int], quality: int, mode: str = "RGB", **options) -> bytes:
    pixels = np.random.default_rng(size[0] * 1000 + quality).integers(0, 256, (*size[::-1], 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGB").convert(mode).save(buffer, "JPEG", quality=quality, **options)
    return buffer.getvalue()


FILES = [_jpeg((16, 12), 90), _jpeg((16, 12), 90), _jpeg((12, 16), 90), _jpeg((16, 12), 75),
         _jpeg((16, 12), 90, "L"), _jpeg((16, 12), 90, progressive=True),
         _jpeg((16, 12), 90, exif=Image.Exif().tobytes())]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(FILES) - 1), st.lists(st.tuples(st.integers(0, 700), st.integers(0, 255)),
                                                                    max_size=2)), min_size=1, max_size=6))
def test_a_header_read_as_the_last_one_is_what_its_segments_say(reads):
    """Files read one after another, some with bytes changed (in the header or after it): each
    answer is its segments' own, whether or not the last header read matched it."""
    for which, changes in reads:
        data = bytearray(FILES[which])
        for place, value in changes:
            if place < len(data):
                data[place] = value
        assert jpeg.jpeg_header(bytes(data)) == jpeg._walked_header(bytes(data))


def test_photos_of_one_encoder_share_a_header_and_others_do_not():
    same, other = jpeg.jpeg_header(FILES[0]), jpeg.jpeg_header(FILES[1])
    assert same == other == (12, 16, 3, other[3])
    assert jpeg._LAST_HEADER is not None and FILES[1].startswith(jpeg._LAST_HEADER[0])
    assert jpeg.jpeg_header(FILES[2])[:3] == (16, 12, 3)  # the frame's size differs: walked again
    assert jpeg.jpeg_header(FILES[4])[:3] == (12, 16, 1)
    assert jpeg.jpeg_header(FILES[6]) is None  # EXIF: Pillow reads it
    assert jpeg.jpeg_header(FILES[0][:100]) is None  # cut inside its header
