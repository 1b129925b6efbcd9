"""Whether long work reports progress, and the bar that multi-fit work shows.

``progress=None`` means "when someone is watching": stderr is a terminal, or the code runs in
IPython or Jupyter. Scripts whose output is redirected, tests and CI logs stay quiet.
"""

from __future__ import annotations

import sys
import warnings

from .errors import SettingsError


def interactive() -> bool:
    """True when stderr is a terminal or an IPython/Jupyter shell is running."""
    try:
        if sys.stderr is not None and sys.stderr.isatty():
            return True
    except (AttributeError, ValueError):  # a replaced or closed stream
        pass
    ipython = sys.modules.get("IPython")  # only look if the session already imported it
    if ipython is None:
        return False
    try:
        return ipython.get_ipython() is not None
    except Exception:  # a partial or unusual IPython install
        return False


def resolve(progress) -> bool:
    """``progress`` checked and made definite: None follows :func:`interactive`."""
    if progress is None:
        return interactive()
    if isinstance(progress, bool) or type(progress).__name__ == "bool_":
        return bool(progress)
    raise SettingsError(f"`progress` must be True, False or None (show it in interactive sessions "
                        f"only); got {progress!r}.")


def bar(total: int, desc: str, unit: str, enabled: bool):
    """A ``tqdm.auto`` bar on stderr: a widget in Jupyter when ipywidgets is installed, text
    otherwise. A disabled bar prints nothing."""
    with warnings.catch_warnings():
        # without ipywidgets tqdm.auto warns and falls back to the text bar, which is fine here
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, leave=True, file=sys.stderr)
