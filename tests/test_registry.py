"""Builder files (`path/to/file.py:Class`) loaded through the import system, here and from the
text a worker elsewhere is sent."""
from __future__ import annotations

import inspect
import pickle
import sys
import textwrap

from tfrecord_builder.registry import SHIPPED, load_class

CODE = textwrap.dedent('''
    import dataclasses


    @dataclasses.dataclass
    class Thing:
        """A class of a builder file."""

        size: int = 3
''')


def test_a_builder_file_is_a_module_with_its_spec_and_its_classes_pickle(tmp_path):
    (tmp_path / "things.py").write_text(CODE)
    cls = load_class("things.py:Thing", [str(tmp_path)], "source.builder")
    module = sys.modules[cls.__module__]
    assert (module.__spec__.name, module.__spec__.origin, module.__file__) == \
        (cls.__module__, str(tmp_path / "things.py"), str(tmp_path / "things.py"))
    assert pickle.loads(pickle.dumps(cls(5))) == cls(5)


def test_a_worker_without_the_file_loads_the_shipped_text_under_the_same_name(tmp_path):
    path = tmp_path / "shipped.py"
    path.write_text(CODE)
    here = load_class("shipped.py:Thing", [str(tmp_path)], "source.builder")
    path.unlink()  # a worker on another machine: only the text it was sent (SHIPPED)
    del sys.modules[here.__module__]
    there = load_class("shipped.py:Thing", [str(tmp_path)], "source.builder")
    assert there.__module__ == here.__module__ and there is not here
    assert SHIPPED[str(path)] == CODE
    # its source lines come from the shipped text (what a traceback on the worker shows)
    assert inspect.getsource(there) == CODE[CODE.index("@dataclasses"):]
