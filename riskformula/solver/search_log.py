"""The tree search's log: one line (time, nodes, open nodes, best objective, bound, gap, cuts) on
stdout every few seconds with ``verbose``, and on stderr every :data:`STATUS_INTERVAL` seconds with
``progress`` (like tqdm's bars)."""

from __future__ import annotations

import sys

from .nodes import SearchState

#: seconds between the status lines of a fit run with ``progress=True`` (read at every check,
#: so it can be changed while a session runs)
STATUS_INTERVAL = 10.0


class SearchLog(SearchState):
    """The log lines of a :class:`~riskformula.solver.branch_and_cut.BranchAndCut`."""

    def _line(self, now, open_nodes, lower, final=None) -> str:
        gap = self._gap(lower)
        line = (f"{now:8.1f}s  nodes {self.nodes:>8d}  open {open_nodes:>7d}  "
                f"best {self.upper:11.6f}  bound {lower:11.6f}  gap {100 * gap:7.3f}%  cuts {self.lp.n_cuts:>5d}")
        if final:
            line += f"  [{final}]"
        return line

    def _log(self, now, open_nodes, lower, final=None):
        line = self._line(now, open_nodes, lower, final)
        self.log_lines.append(line)
        print(line, flush=True)

    def _status(self, now, open_nodes, lower, final=None):
        """The log line on stderr (like tqdm's bars), at most once per :data:`STATUS_INTERVAL`, so a
        long fit shows it is alive without filling the screen; not kept in the report's log."""
        if not self.progress or (final is None and now - self._last_status < STATUS_INTERVAL):
            return
        self._last_status = now
        self._status_shown = True
        print(self._line(now, open_nodes, lower, final), file=sys.stderr, flush=True)
