"""mkdocs hook: the package's version in the site's name and footer (read from
riskformula/_version.py, so the site always names the version it documents), and the
"edit this page" link when the repository's address is given as RISKFORMULA_REPO_URL."""

from __future__ import annotations

import os
import re
from pathlib import Path


def _version() -> str:
    text = (Path(__file__).resolve().parents[2] / "riskformula" / "_version.py").read_text(encoding="utf-8")
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def on_config(config, **kwargs):
    version = _version()
    config["site_name"] = f"riskformula {version}"
    config["copyright"] = (f"riskformula {version} · MIT licence (code); the bundled data keep their own "
                           "licences · cite it with CITATION.cff")
    repo = os.environ.get("RISKFORMULA_REPO_URL")
    if repo:
        config["repo_url"] = repo
        config["edit_uri"] = "edit/main/docs/"
    return config
