"""pyarrow's look for pandas without importing it (pandas_probe.py): a build, from the command
line or Python, imports no pandas, and pandas imported after it is converted by Arrow as in any
other process."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Arrow's conversions that tell pandas' objects apart: a nullable integer column with a missing
# value, a categorical, a time zone's timestamps, a DataFrame's schema and pandas metadata
CONVERSIONS = """
import numpy as np, pandas as pd, pyarrow as pa
series = [pd.Series([1, None], dtype="Int64"), pd.Series(pd.Categorical(["x", "y", "x"])),
          pd.Series(pd.to_datetime(["2026-11-29 03:00"]).tz_localize("Europe/Paris")), pd.Series([b"a", None])]
arrays = [[str(pa.array(value).type), pa.array(value).to_string()] for value in series]  # (before from_pandas)
table = pa.Table.from_pandas(pd.DataFrame({"a": series[0], "b": ["x", "y"]}, index=[5, 7]))
print(json.dumps({"arrays": arrays, "schema": str(table.schema), "back": table.to_pandas().to_json()}))
"""


def python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout


def test_pandas_imported_after_the_look_converts_as_in_any_process():
    probed = python(f"""
import json, sys
import numpy as np, pyarrow as pa
from tfrecord_builder import pandas_probe
pandas_probe.look_without_pandas()
pa.array(np.arange(3)); pa.scalar(b"x")
assert "pandas" not in sys.modules
{CONVERSIONS}""")
    plain = python(f"import json\n{CONVERSIONS}")
    assert json.loads(probed) == json.loads(plain)
    assert "Int64" not in plain and "int64" in plain  # (the nullable column became Arrow's int64, its NA a null)


def test_a_build_from_the_command_line_imports_no_pandas(tmp_path):
    out = python(f"""
import sys
from tfrecord_builder.cli.main import main
status = main(["build", "specs/wine.yaml", "--output", {str(tmp_path)!r}])
print(status, "pandas" in sys.modules)""")
    assert out.splitlines()[-1] == "0 False"  # (after the build's summary)


def test_a_build_in_python_imports_no_pandas_and_leaves_it_importable(tmp_path):
    out = python(f"""
import json, sys
import tfrecord_builder as tb
tb.build("specs/wine.yaml", output={str(tmp_path)!r})
print("pandas" in sys.modules)
{CONVERSIONS}""")
    imported, converted = out.splitlines()[-2:]
    assert imported == "False"
    assert json.loads(converted) == json.loads(python(f"import json\n{CONVERSIONS}"))


def test_another_threads_import_of_pandas_goes_on_while_this_one_looks():
    out = python("""
import sys, threading
from tfrecord_builder import pandas_probe
sys.meta_path.insert(0, pandas_probe._Absent(threading.get_ident()))
result = []
try:
    import pandas
except ModuleNotFoundError:
    result.append("refused in this thread")
thread = threading.Thread(target=lambda: result.append(__import__("pandas").__name__))
thread.start(); thread.join()
print(result)""")
    assert out.strip() == "['refused in this thread', 'pandas']"
