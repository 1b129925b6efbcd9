"""The README and every page of the documentation site are executed.

README.md: its ```python blocks run in order, in one namespace (their printed output is written
into the README by ``python docs/refresh_outputs.py``).

docs/**/*.md: the site runs every ```python exec="on" block (markdown-exec) while it builds, and
`mkdocs build --strict` fails on a block that raises. These tests run the same blocks, in order,
in one namespace per page (a page is one markdown-exec session), plus the pages' ```console
exec="on" commands with the checkout's ``riskformula`` on PATH, so a broken example also fails
``python -m pytest -m slow`` (the pages take minutes, so they are slow checks; the README runs in
the default run). A ```python block the build would not execute is refused: every example on the
site is run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)
README_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def fences(path: Path) -> list[tuple[str, str, str]]:
    """(language, options, code) of every fenced block of a page."""
    return FENCE.findall(path.read_text())


def executed(path: Path) -> list[tuple[str, str, str]]:
    """(language, options, code) of the blocks the site executes when it builds."""
    return [(lang, opts, code) for lang, opts, code in fences(path) if 'exec="on"' in opts]


def test_every_python_example_on_the_site_is_executed():
    shown_only = [f"{p.relative_to(ROOT)}: block {i}" for p in PAGES
                  for i, (lang, opts, _) in enumerate(fences(p), 1)
                  if lang in ("python", "py", "pycon") and 'exec="on"' not in opts]
    assert not shown_only, f"python blocks without exec=\"on\" (the build would not run them): {shown_only}"


def test_every_guide_page_has_examples():
    guide = [p for p in PAGES if p.parent.name == "guide"]
    assert len(guide) >= 10
    assert not [p.name for p in guide if not executed(p)]


def _run(namespace: dict, code: str, where: str) -> None:
    try:
        exec(compile(code, where, "exec"), namespace)
    except Exception as e:  # re-raise with the block number so failures are easy to find
        raise AssertionError(f"{where} failed: {type(e).__name__}: {e}") from e


def test_readme_runs(monkeypatch):
    blocks = README_BLOCK.findall((ROOT / "README.md").read_text())
    assert blocks, "README.md has no ```python blocks"
    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)  # documents run from the repository root, as a reader of a clone would run them
    namespace: dict = {"__name__": "__doc_test__"}
    for i, code in enumerate(blocks, 1):
        _run(namespace, code, f"README.md, python block {i}")


@pytest.fixture(scope="module")
def cli_on_path(tmp_path_factory):
    """A ``riskformula`` program on PATH that runs this checkout's command line."""
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "riskformula"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}${{PYTHONPATH:+:$PYTHONPATH}}" '
                    f'exec "{sys.executable}" -m riskformula "$@"\n')
    shim.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


PAGES_RUN = [p for p in PAGES if executed(p)]


# slow: the pages fit some forty scores and run the command line, about 2.5 minutes on two busy
# cores; CI runs them in its slow step and again in `mkdocs build --strict`
@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES_RUN, ids=[str(p.relative_to(ROOT / "docs")) for p in PAGES_RUN])
def test_docs_page_runs(path, monkeypatch, cli_on_path):
    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)  # mkdocs builds from the repository root
    namespace: dict = {"__name__": "__doc_test__"}
    for i, (lang, opts, code) in enumerate(executed(path), 1):
        where = f"{path.relative_to(ROOT)}, {lang} block {i}"
        if lang == "python":
            _run(namespace, code, where)
        elif lang == "console":
            commands = "\n".join(line[2:] for line in code.splitlines() if line.startswith(("$ ", "% ")))
            done = subprocess.run(["sh", "-c", "set -e\n" + commands], env=cli_on_path, cwd=ROOT,
                                  capture_output=True, text=True)
            expected = int(re.search(r'returncode="(\d+)"', opts).group(1)) if "returncode=" in opts else 0
            assert done.returncode == expected, f"{where} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        else:
            pytest.fail(f"{where}: no runner for executed {lang} blocks in this test")


def site_config(docs_dir: Path) -> str:
    """The site's mkdocs.yml (same theme, plugins and extensions) for a one-page site in ``docs_dir``:
    paths that mkdocs resolves from the configuration file's folder are made absolute."""
    text = (ROOT / "mkdocs.yml").read_text()
    text = text[:text.index("\nnav:")] + "\nnav:\n  - index.md\n"
    text = text.replace("docs_dir: docs", f"docs_dir: {docs_dir}")
    text = text.replace("paths: [.]", f"paths: [{ROOT}]").replace("- docs/_scripts/", f"- {ROOT}/docs/_scripts/")
    assert str(docs_dir) in text and f"{ROOT}/docs/_scripts/" in text, "mkdocs.yml changed shape: update site_config"
    return text


def test_broken_example_fails_the_strict_build(tmp_path):
    """The site's own configuration turns an example that raises into a failed `mkdocs build --strict`."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("markdown_exec")
    pytest.importorskip("mkdocstrings")
    docs = tmp_path / "docs"
    docs.mkdir()
    config = tmp_path / "mkdocs.yml"
    config.write_text(site_config(docs))
    page = '# Page\n\n```python exec="on" source="above" result="text" session="t"\n{}\n```\n'

    def build(code: str) -> subprocess.CompletedProcess:
        (docs / "index.md").write_text(page.format(code))
        return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                               "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})

    ok = build('print("fine")')
    assert ok.returncode == 0, ok.stderr
    assert "fine" in (tmp_path / "site" / "index.html").read_text()
    broken = build('raise ValueError("this example is broken")')
    assert broken.returncode != 0
    log = broken.stdout + broken.stderr
    assert "this example is broken" in log and "Aborted" in log and "strict mode" in log
