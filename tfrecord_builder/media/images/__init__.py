"""Image files for the image feature: opened, checked, turned, converted, resized and
re-encoded with Pillow (`pillow.py`), JPEGs read from their markers or decoded strictly with
libjpeg-turbo (`jpeg.py`), images deeper than 8 bits kept or scaled (`deep.py`), and 16-bit TIFFs
Pillow reads only in part read whole (`tiff.py`). What goes wrong with one image is a BadImage,
in words for a user."""


class BadImage(ValueError):
    """An image that can't be stored as declared; the message says why."""
