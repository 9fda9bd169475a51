"""The notebooks in notebooks/ run top to bottom, and are committed without outputs."""
from __future__ import annotations

import pytest

from conftest import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = ["quickstart.ipynb", "images.ipynb", "sequences.ipynb"]


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
