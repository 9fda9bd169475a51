"""The command line's look for pandas on pyarrow's behalf (cli/pandas_probe.py): a build imports
no pandas, and pandas imported after it is converted by Arrow as in any other process."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

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
from tfrecord_builder.cli import pandas_probe
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
