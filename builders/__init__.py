"""Example custom builders and feature types. A spec names each by its file, relative to the
spec: `builder: ../builders/captions.py:Captions`, `type: ../builders/boxes.py:Boxes`."""
