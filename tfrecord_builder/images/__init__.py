"""Image files for the image feature: opened, checked, turned, converted, resized and
re-encoded with Pillow (`pillow.py`), and JPEGs read from their markers or decoded strictly with
libjpeg-turbo (`jpeg.py`). What goes wrong with one image is a BadImage, in words for a user."""


class BadImage(ValueError):
    """An image that can't be stored as declared; the message says why."""
