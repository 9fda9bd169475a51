"""Media files, decoded for the feature types that store them: images (`images/`: Pillow,
libjpeg-turbo, 16-bit scaling, 16-bit TIFF), audio (`audio/`: libsndfile and FFmpeg, whole-file
checks, the resampler) and video (`video.py`: clips decoded frame by frame with FFmpeg, or a
folder of frames). Each opens its files one way (`source.py`): a local path, an object in a store
(a URL, through `fs`) or bytes, so a file in a bucket is read as a local one is. What goes wrong
with one file is the kind's own error (BadImage, BadAudio, BadVideo), in words for a user; the
feature types say where (the record, the feature)."""
