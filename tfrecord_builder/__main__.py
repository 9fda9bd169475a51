"""`python -m tfrecord_builder` works like the `tfrecord-builder` command."""
import sys

from .cli.main import main

sys.exit(main())
