"""`pytest -n 2 --dist loadgroup` as `make test` runs it: the tests of one file in one worker (so
a server its module fixtures start starts once), except the tests marked
`@pytest.mark.xdist_group(NAME)`, which run together in one worker whatever their files, their
group sent first (tests/conftest.py puts the tests of the shared Spark session in the group
"spark": one cluster, one session for the run).

pytest-xdist's own `loadgroup` groups nothing under pytest 9 (it renames a test by an attribute
pytest no longer reads) and sends every other test on its own (a module's fixtures set up in each
worker). Here the workers say each test's group in a file the controller reads when it schedules
(the controller collects no tests itself)."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

FOLDER = "test_groups_folder"  # the workers' input naming the folder they write their groups into
_folder_key = pytest.StashKey[str]()  # that folder, on the controller


def _wanted(config: pytest.Config) -> bool:
    return config.getoption("dist", "no") == "loadgroup" and bool(config.getoption("numprocesses", None))


def pytest_configure(config: pytest.Config) -> None:
    if _wanted(config) and not hasattr(config, "workerinput"):
        config.stash[_folder_key] = tempfile.mkdtemp(prefix="pytest-groups-")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_folder_key, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    folder = node.config.stash.get(_folder_key, None)
    if folder is not None:
        node.workerinput[FOLDER] = folder


@pytest.hookimpl(trylast=True)  # after tests/conftest.py's, which marks the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    folder = getattr(config, "workerinput", {}).get(FOLDER)
    if folder is None:
        return
    groups = {item.nodeid: str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
              for item in items if (mark := item.get_closest_marker("xdist_group")) is not None}
    path = Path(folder) / f"{config.workerinput['workerid']}.json"
    path.with_suffix(".part").write_text(json.dumps(groups))
    os.replace(path.with_suffix(".part"), path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    folder = config.stash.get(_folder_key, None)
    if folder is None:
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """LoadScopeScheduling whose scopes are the named groups, then the files; the groups first."""

        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:
                self.groups = {}
                for path in Path(folder).glob("*.json"):
                    self.groups.update(json.loads(path.read_text()))
            group = self.groups.get(nodeid)
            return f"group {group}" if group is not None else nodeid.split("::", 1)[0]

        def _assign_work_unit(self, node: Any) -> None:
            for scope in [scope for scope in self.workqueue if scope.startswith("group ")][::-1]:
                self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return GroupScheduling(config, log)
