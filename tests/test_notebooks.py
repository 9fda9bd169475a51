"""The notebooks in notebooks/ run top to bottom, and are committed without outputs."""
from __future__ import annotations

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = ["quickstart.ipynb", "images.ipynb", "sequences.ipynb", "detection.ipynb", "text.ipynb"]


def read(name: str):
    return nbformat.read(ROOT / "notebooks" / name, as_version=4)


def test_every_notebook_in_the_folder_is_tested():
    assert sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_committed_without_outputs(name):
    notebook = read(name)
    nbformat.validate(notebook)
    assert notebook.metadata.kernelspec.name == "python3"
    stale = [index for index, cell in enumerate(notebook.cells)
             if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)]
    assert not stale, (f"notebooks/{name}: code cells {stale} have outputs or execution counts; "
                       "clear them before committing (jupyter nbconvert --clear-output --inplace)")


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom(name):
    notebook = read(name)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT / "notebooks")}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        where = next((f"cell {index} (first line: {cell.source.splitlines()[0]!r})"
                      for index, cell in enumerate(notebook.cells, start=1) if cell.cell_type == "code"
                      and any(output.output_type == "error" for output in cell.get("outputs", []))), "a cell")
        raise AssertionError(f"notebooks/{name}: {where} failed:\n{error}") from error
    if name == "quickstart.ipynb":
        _check_quickstart(notebook)


def _check_quickstart(notebook) -> None:
    """It starts from `infer` and ends with the report shown inline; the build's progress is the
    notebook's own widget (tqdm's, with ipywidgets)."""
    def cell(start: str):
        return next(cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.startswith(start))

    inferred = "".join(output.get("text", "") for output in cell("spec_path = BUILD").outputs)
    assert "# Written by `tfrecord-builder infer` from wine.csv: all 178 rows read." in inferred
    built = cell("info = tb.build(spec").outputs
    assert any("application/vnd.jupyter.widget-view+json" in output.get("data", {}) for output in built)
    shown, = [output for output in cell("report = tb.load").outputs if output.output_type == "execute_result"]
    assert shown.data["text/html"].startswith('<iframe srcdoc="') and "wine" in shown.data["text/html"]
