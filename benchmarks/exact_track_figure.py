"""The results page's figure of the exact track's 25 problems: our seconds to a certificate
against the exact track's, from the raw output of ``certify.py --exact-track fit``.

    python benchmarks/exact_track_figure.py [RESULTS] [PNG]

RESULTS defaults to ``benchmarks/exact_track_fit_ladder_results.txt`` (its lines of one dict per
problem), PNG to ``docs/assets/exact_track_times.png``.  Problems not certified within the limit
are drawn at the limit, hollow.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = Path(__file__).resolve().parent
LIMIT = 60.0


def rows(path: Path) -> list[dict]:
    return [ast.literal_eval(line) for line in path.read_text().splitlines() if line.startswith("{")]


def main(argv: list[str]) -> None:
    src = Path(argv[0]) if argv else HERE / "exact_track_fit_ladder_results.txt"
    out = Path(argv[1]) if len(argv) > 1 else HERE.parent / "docs" / "assets" / "exact_track_times.png"
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    markers = {"adult": "o", "breastcancer": "s", "mammo": "^", "mushroom": "D", "spambase": "v"}
    for i, (name, marker) in enumerate(markers.items()):
        mine = [r for r in rows(src) if r["set"] == name]
        labelled = False
        for done in (True, False):
            pts = [r for r in mine if (r["status"] == "optimal") == done]
            if not pts:
                continue
            xs = [float(r["exact track s"]) if r["exact track s"] not in ("—", "") else LIMIT for r in pts]
            ys = [float(r["time (s)"]) if done else LIMIT for r in pts]
            ax.scatter(xs, ys, marker=marker, s=36, label=None if labelled else name, color=f"C{i}",
                       facecolors=f"C{i}" if done else "none", edgecolors=f"C{i}")
            labelled = True
    ax.plot([0.005, LIMIT], [0.005, LIMIT], color="0.6", lw=0.8, ls="--")
    ax.axhline(LIMIT, color="0.8", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(0.1, 100)
    ax.set_xlabel("exact track: seconds to certify (60 = not certified)")
    ax.set_ylabel("riskformula: seconds to certify (60, hollow = not)")
    ax.set_title("The exact track's 25 problems, scale='fit', one process")
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
