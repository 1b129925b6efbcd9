"""Re-run the Python blocks of the README and rewrite the output block after each.

A plain ```python block followed (after blank lines) by a plain ``` or ```text block gets that
block replaced with what the code prints now, so the README always shows real output.

The pages of the documentation site need no refreshing: their ```python exec="on" blocks run
while the site builds (markdown-exec), so what they show is printed then; this script leaves
such blocks alone.

    python docs/refresh_outputs.py            # README.md
    python docs/refresh_outputs.py FILE.md    # another document with static outputs
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# document this checkout's riskformula, not whichever copy is installed
sys.path.insert(0, str(ROOT))
BLOCK = re.compile(r"```python\n(.*?)```\n(\s*)(```(?:text)?\n.*?```)?", re.S)


def refresh(path: Path) -> None:
    text = path.read_text()
    namespace: dict = {"__name__": "__doc__"}
    out, pos = [], 0
    for m in BLOCK.finditer(text):
        code = m.group(1)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(code, f"{path.name}", "exec"), namespace)
        out.append(text[pos:m.start()])
        out.append(f"```python\n{code}```\n")
        if m.group(3) is not None:
            fence = "```text\n" if m.group(3).startswith("```text") else "```\n"
            out.append(m.group(2) + fence + buf.getvalue() + "```")
        else:
            out.append(m.group(2))
        pos = m.end()
    out.append(text[pos:])
    path.write_text("".join(out))
    print(f"refreshed {path.relative_to(ROOT)}")


def main(argv: list[str]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    os.chdir(ROOT)
    paths = [Path(a).resolve() for a in argv] or [ROOT / "README.md"]
    for p in paths:
        refresh(p)


if __name__ == "__main__":
    main(sys.argv[1:])
