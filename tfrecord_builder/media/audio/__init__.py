"""Audio files for the audio feature: opened and decoded by libsndfile (soundfile), or by FFmpeg
(PyAV) for what libsndfile doesn't read, such as AAC in an MP4/M4A (`files.py`); checked to hold
all the samples their headers promise (`whole.py`); resampled with SciPy's polyphase filter
(`resampling.py`); brought to the rate, channels and length a feature asks for (`waveform.py`).
What goes wrong with one file is a BadAudio, in words for a user."""


class BadAudio(ValueError):
    """An audio file that can't be read as the feature asks (the message says why)."""
