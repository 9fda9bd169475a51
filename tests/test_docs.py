"""The documentation site (docs/, mkdocs.yml) builds in strict mode, so a broken link, a missing
anchor or an API reference to a name that isn't there fails; and the pages' examples hold: every
```python block runs (a page's blocks in order, in one fresh process, in a folder holding the
repository's `specs/` and `data/`), and every ```yaml block parses, a whole spec (one with
`source:` and features, completed with a name where it has none) loading with `tb.load_spec`
from `specs/`. A block that can't run says
why in an HTML comment on the line before it: `<!-- not run: REASON -->`. README's and the home page's lists of
pages are the site's navigation (mkdocs.yml's `nav:`), page for page and in its order."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import tfrecord_builder as tb

from conftest import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(path.name for path in DOCS.glob("*.md"))
# pages whose examples read the wine dataset built beforehand into build/wine/1.0.0 (the others
# build what they read)
READ_A_BUILT_WINE = {"readers.md"}
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>[^>]+\S) -->")
FENCE = re.compile(r"(?P<indent> *)```(?P<language>\w*)\s*$")


def blocks(page: str) -> list[tuple[int, str, str, str | None]]:
    """The fenced code blocks of `page`: (line, language, code dedented, the not-run reason or None)."""
    lines = (DOCS / page).read_text(encoding="utf-8").split("\n")
    found, at = [], 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if not opening or not opening["language"]:
            at += 1
            continue
        indent, start = opening["indent"], at
        end = next(i for i in range(at + 1, len(lines)) if lines[i].rstrip() == indent + "```")
        code = "\n".join(line[len(indent):] for line in lines[start + 1:end])
        before = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        reason = NOT_RUN.search(before)
        found.append((start + 1, opening["language"], code, reason["reason"] if reason else None))
        at = end + 1
    return found


def examples_folder(folder: Path, built: bool) -> Path:
    shutil.copytree(ROOT / "specs", folder / "specs")
    (folder / "data").symlink_to(ROOT / "data", target_is_directory=True)
    if built:
        tb.build(folder / "specs" / "wine.yaml", output=folder / "build", progress=False)
    return folder


def test_the_site_builds_in_strict_mode(tmp_path):
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr
    assert {"index.html", "readers/index.html", "reference/index.html"} <= {
        path.relative_to(tmp_path / "site").as_posix() for path in (tmp_path / "site").rglob("index.html")}
    reference = (tmp_path / "site" / "reference" / "index.html").read_text(encoding="utf-8")
    assert all(f"tfrecord_builder.{name}" in reference for name in tb.__all__ if name != "__version__")


def test_a_broken_link_fails_the_build(tmp_path):
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "tfrecord_builder").symlink_to(ROOT / "tfrecord_builder", target_is_directory=True)
    with open(tmp_path / "docs" / "progress.md", "a", encoding="utf-8") as page:
        page.write("\nSee [the readers](readers.md#no-such-section).\n")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 1
    assert "'readers.md' does not contain an anchor '#no-such-section'" in result.stderr


def test_every_page_is_in_the_navigation():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [page for page in PAGES if f": {page}\n" not in config] == []


def navigation() -> list[str]:
    """The site's pages in the order of mkdocs.yml's `nav:` (sections flattened)."""
    def pages(entries: list) -> list[str]:
        found = []
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            found += pages(value) if isinstance(value, list) else [value]
        return found
    return pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])


LINK = re.compile(r"\]\((?P<page>[\w./-]+?\.md)(?:#[\w-]*)?\)")


def listed_pages(path: Path, prefix: str) -> list[str]:
    """The pages linked from `path`'s section "## The documentation", each once, in the order first linked."""
    text = path.read_text(encoding="utf-8")
    section = text.split("\n## The documentation\n", 1)[1].split("\n## ", 1)[0]
    pages = [match["page"].removeprefix(prefix) for match in LINK.finditer(section)]
    return list(dict.fromkeys(pages))


@pytest.mark.parametrize("listing, prefix", [("README.md", "docs/"), ("docs/index.md", "")])
def test_the_page_lists_follow_the_navigation(listing, prefix):
    """README's and the home page's lists of pages are the site's navigation: every page but the home page, in
    its order, so a page added to mkdocs.yml's `nav:` and not to the lists (or the other way) fails here."""
    listed, nav = listed_pages(ROOT / listing, prefix), [page for page in navigation() if page != "index.md"]
    assert [page for page in nav if page not in listed] == [], f"in mkdocs.yml's nav but not in {listing}'s list"
    assert [page for page in listed if page not in nav] == [], f"in {listing}'s list but not in mkdocs.yml's nav"
    assert listed == nav, f"{listing}'s list is not in the order of mkdocs.yml's nav"


@pytest.mark.parametrize("page", [page for page in PAGES if any(b[1] == "python" and b[3] is None for b in blocks(page))])
def test_the_python_examples_run(tmp_path, page):
    run = "\n\n".join(source for _, language, source, reason in blocks(page) if language == "python" and reason is None)
    folder = examples_folder(tmp_path, built=page in READ_A_BUILT_WINE)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                   "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run([sys.executable, "-c", run], cwd=folder, capture_output=True, text=True, env=environment)
    assert result.returncode == 0, f"{page}: the examples failed:\n{result.stderr[-3000:]}"


@pytest.mark.parametrize("page", [page for page in PAGES if any(b[1] == "yaml" for b in blocks(page))])
def test_the_yaml_examples_are_specs(tmp_path, page):
    folder = examples_folder(tmp_path, built=False)
    for line, _, source, reason in (block for block in blocks(page) if block[1] == "yaml"):
        if reason is not None:
            continue
        parsed = yaml.safe_load(source)
        assert isinstance(parsed, dict), f"{page}, line {line}: not a mapping"
        if "source" in parsed and ({"features", "context", "sequence"} & set(parsed)):
            spec_file = folder / "specs" / f"docs_example_{line}.yaml"
            # a fragment is completed with what it leaves out: a name, the format its `sequence:` implies
            missing = {"name": "docs_example", **({"format": "sequence_example"} if "sequence" in parsed else {})}
            head = "".join(f"{key}: {value}\n" for key, value in missing.items() if key not in parsed)
            spec_file.write_text(head + source, encoding="utf-8")
            spec = tb.load_spec(spec_file)
            assert spec.name == parsed.get("name", "docs_example")


def test_a_block_not_run_says_why():
    marked = [(page, line, reason) for page in PAGES for line, _, _, reason in blocks(page) if reason is not None]
    assert marked and all(len(reason) > 10 for _, _, reason in marked)
