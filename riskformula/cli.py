"""Command line: fit a score, use a saved one, and write it where it is used.

* ``riskformula fit FORMULA --data FILE [--json MODEL.json]`` prints the summary of the fitted score;
* ``riskformula card MODEL.json`` prints a saved score's card and score-to-risk table;
* ``riskformula predict MODEL.json --data FILE`` writes the rows with their ``score`` and ``risk``;
* ``riskformula evaluate MODEL.json --data FILE`` prints calibration and discrimination on the rows;
* ``riskformula export MODEL.json --to html|sql|pmml`` writes a calculator page, SQL or PMML.

A formula whose left side is ``Surv(time, event)`` fits a time-to-event score (Cox, 1972):
``--horizon`` gives the times at which it states risks (``--horizon 365 --horizon 730`` or
``--horizon 365,730``) and ``--ties`` how tied times count; ``predict`` then writes one column
``risk_<horizon>`` per horizon (the card's, or ``--horizon``'s), and ``evaluate`` and ``export``
take ``--horizon`` too.

Exit codes: 0 success; 1 a data or model error (the message says which); 2 a usage error (a
misspelt option, an argument out of range); 3 with ``fit --strict`` when the search stopped before
proving optimality (the score and its gap are still printed).  Warnings are one line on stderr.
Reading a saved model never runs code.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import math
import os
import re
import sys
from pathlib import Path

import pandas as pd

from .datasets import _AVAILABLE, load_dataset
from .errors import DataError, RiskFormulaError, SettingsError

#: exit codes
OK, DATA_ERROR, USAGE_ERROR, NOT_CERTIFIED = 0, 1, 2, 3


def _missing(given):
    """``--missing`` as ``risk_score``'s ``missing=``: one choice, or a dict when a
    ``VARIABLE=CHOICE`` is given (the bare choice, if any, is its ``"."``)."""
    if not given:
        return "raise"
    out: dict = {}
    for g in given:
        var, sep, choice = g.partition("=")
        key, value = (var.strip(), choice.strip()) if sep else (".", g.strip())
        if key in out:
            raise SettingsError(f"--missing gives {'the default' if key == '.' else repr(key)} twice.")
        out[key] = value
    return out["."] if list(out) == ["."] else out


def _read(path: str) -> pd.DataFrame:
    if path in _AVAILABLE:
        return load_dataset(path)
    p = Path(path)
    if not p.exists():
        raise DataError(f"no file {path!r} (and no bundled data set of that name: {sorted(_AVAILABLE)}).")
    if p.is_dir():
        raise DataError(f"--data {path!r} is a folder; give a CSV or Parquet file in it.")
    parquet = p.suffix.lower() in (".parquet", ".pq")
    try:
        data = pd.read_parquet(p) if parquet else pd.read_csv(p)
        if not parquet:
            _no_repeated_header(p, path)
        return data
    except (OSError, ValueError, ImportError) as e:
        # pandas' ParserError, EmptyDataError and UnicodeDecodeError are all ValueErrors; a bad
        # Parquet file raises pyarrow's ArrowInvalid (a ValueError) and a missing engine ImportError.
        kind = "Parquet" if parquet else "CSV (comma-separated, UTF-8)"
        raise DataError(f"could not read --data {path!r} as {kind}: {type(e).__name__}: {e}") from None


def _no_repeated_header(p: Path, path: str) -> None:
    """Refuse a CSV file whose header names a column twice (pandas would rename the second
    ``a`` to ``a.1`` and the model would use both without a word)."""
    with open(p, newline="", encoding="utf-8-sig") as f:
        header = next(csv.reader(f), [])
    seen: set = set()
    for name in header:
        if name in seen:
            raise DataError(f"--data {path!r} names the column {name!r} twice in its header; give each column "
                            "its own name.")
        seen.add(name)


def _check_output(path: str, option: str) -> None:
    """Refuse an output file that cannot be written before the fit runs, so that no model is lost."""
    p = Path(path)
    if p.is_dir():
        raise SettingsError(f"{option} {path!r} is a folder; give a file name such as {str(p / 'model.json')!r}.")
    folder = p.parent
    if not folder.is_dir():
        raise SettingsError(f"{option} {path!r}: the folder {str(folder)!r} does not exist; create it first "
                            "or choose another path.")
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise SettingsError(f"{option} {path!r}: no permission to write there; choose another path.")


def _horizons(given) -> list | None:
    """``--horizon`` (repeated, each one time or a comma-separated list) as a list of times, or
    None when not given; a value that is not a finite number is one clear error."""
    if not given:
        return None
    out = []
    for g in given:
        for part in str(g).split(","):
            try:
                h = float(part.strip())
            except ValueError:
                h = math.nan
            if not math.isfinite(h):
                raise SettingsError(f"--horizon expects times in the unit of the follow-up times, such as 365 or "
                                    f"365,730; got {part.strip()!r}.")
            out.append(h)
    return out


def _scale(text: str):
    """``--scale``: a number, ``fit`` or a comma-separated list of numbers."""
    if text == "fit":
        return text
    try:
        values = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, 'fit' or a list such as 1,2,4; got {text!r}") from None
    return values[0] if len(values) == 1 else values


@contextlib.contextmanager
def _stdout_to_stderr():
    """Send everything the fit writes to stdout (the ``--verbose`` solver log, a MILP solver's own
    log) to stderr, so stdout holds only the report and ``--format markdown > file`` is clean.
    Both levels: Python's ``sys.stdout`` and file descriptor 1 (solvers written in C print there)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no usable descriptor 1 (e.g. closed): the Python-level redirect still holds
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        if saved is not None:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)


def _version() -> str:
    from ._version import __version__
    return f"riskformula {__version__}"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="riskformula", description="Certified-optimal integer risk scores.",
                                 epilog="Exit codes: 0 success, 1 data or model error, 2 usage error, "
                                        "3 (fit --strict) not proven optimal. `riskformula COMMAND -h` for "
                                        "a command's options.")
    ap.add_argument("--version", action="version", version=_version())
    sub = ap.add_subparsers(dest="command", required=True)
    #: each command's parser, for its own usage line when an option is misspelt (see main)
    ap.set_defaults(_commands=sub.choices)
    fit = sub.add_parser("fit", help="fit a risk score and print its summary")
    fit.add_argument("formula", help="R-style formula, e.g. 'y ~ age + C(sex)' or 'y ~ .'")
    fit.add_argument("--data", required=True,
                     help="CSV (or Parquet) file, or the name of a data set shipped with riskformula: "
                          + ", ".join(_AVAILABLE) + " (riskformula.list_datasets() describes them)")
    fit.add_argument("--max-size", type=int, default=5, help="most items on the card (cuts, levels, terms; default 5)")
    fit.add_argument("--coef-range", type=int, nargs=2, default=(-5, 5), metavar=("LOW", "HIGH"),
                     help="integer points per term (default -5 5)")
    fit.add_argument("--c0", type=float, default=1e-6, help="penalty per term used (default 1e-6)")
    fit.add_argument("--time-limit", type=float, default=60.0, help="seconds (default 60)")
    fit.add_argument("--gap-tolerance", type=float, default=1e-6,
                     help="stop at this relative gap (objective - bound) / objective, in [0, 1) (default 1e-6)")
    fit.add_argument("--absolute-gap-tolerance", type=float, default=1e-8,
                     help="or at this absolute gap objective - bound (default 1e-8)")
    fit.add_argument("--scale", type=_scale, default=None, metavar="M",
                     help="score scale: points per logit (default 1), 'fit' to choose it with the points "
                          "(among every scale > 0 when the support search proves the card, as on a plain problem; "
                          "among 0.5, 0.75, 1, ..., 8 and up to three added scales with --engine tree or "
                          "constraints only the tree takes), or a comma-separated list such as 1,2,4; a "
                          "time-to-event score's points are per log hazard ratio and its scale is fitted unless "
                          "given")
    fit.add_argument("--real-intercept", action=argparse.BooleanOptionalAction, default=None,
                     help="a real-valued intercept (default: with a fitted scale, unless a constraint bounds "
                          "a risk); --no-real-intercept keeps whole points")
    fit.add_argument("--n-jobs", type=int, default=1, metavar="N",
                     help="processes for the tree search (default 1; -1: every CPU, -2: all but one)")
    fit.add_argument("--objective", choices=("logistic", "net_benefit", "cox"), default=None,
                     help="logistic loss, net benefit over decision thresholds (Chi & Birbil, 2026) or the Cox "
                          "(1972) partial likelihood of a time-to-event outcome (default: cox for a formula whose "
                          "left side is Surv(time, event), else logistic)")
    fit.add_argument("--horizon", action="append", metavar="T",
                     help="time-to-event only: a time at which the card states the risk of the event, in the unit "
                          "of the follow-up times; repeat the option or give a comma-separated list "
                          "(--horizon 365 --horizon 730, or --horizon 365,730; default: the median follow-up)")
    fit.add_argument("--ties", choices=("efron", "breslow"), default=None,
                     help="time-to-event only: how tied event times count (default efron, as R's coxph)")
    fit.add_argument("--decision-thresholds", type=float, nargs="+", metavar="P",
                     help="net benefit only: risks at which a decision is taken (default 0.1 0.2 ... 0.9)")
    fit.add_argument("--event", help="outcome level that counts as the event")
    fit.add_argument("--missing", action="append", metavar="CHOICE",
                     help="missing values: raise (default), drop (complete rows), item (\"x is missing\" gets its "
                          "own points) or \"as VALUE\"; VARIABLE=CHOICE for one variable (repeat the option)")
    fit.add_argument("--format", choices=("text", "markdown", "html", "latex"), default="text",
                     help="how to print the summary (default text)")
    fit.add_argument("--min-size", type=int, default=0, help="fewest items on the card (default 0)")
    fit.add_argument("--node-limit", type=int, metavar="N", help="stop the search after N nodes")
    fit.add_argument("--engine", choices=("auto", "supports", "tree"), default="auto",
                     help="how the certificate is proven: auto (default: the support search where it applies, "
                          "else the branch-and-cut), supports, or tree")
    fit.add_argument("--weights", metavar="COLUMN", help="a column of sample weights")
    fit.add_argument("--strict", action="store_true",
                     help="exit with status 3 when the search stops before proving optimality")
    fit.add_argument("--json", metavar="FILE", help="also save the model as JSON")
    fit.add_argument("--verbose", action="store_true", help="print the solver log (to stderr)")
    fit.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="print a status line to stderr every 10 s while the search runs "
                          "(default: only when stderr is a terminal)")
    card = sub.add_parser("card", help="print a saved score's card and score-to-risk table")
    card.add_argument("model", help="the model's JSON file")
    card.add_argument("--format", choices=("text", "markdown", "html", "latex"), default="text",
                      help="how to print it (default text)")
    for name, what in (("predict", "write the rows of a CSV with each row's score and risk"),
                       ("evaluate", "print calibration and discrimination of a saved score on a CSV")):
        cmd = sub.add_parser(name, help=what)
        cmd.add_argument("model", help="the model's JSON file")
        cmd.add_argument("--data", required=True, help="CSV (or Parquet) file, or a bundled data set's name")
        cmd.add_argument("--horizon", action="append", metavar="T",
                         help="time-to-event models only: the time(s) within which the risk is computed "
                              "(repeat the option or give a comma-separated list; default: the card's horizons)")
        if name == "predict":
            cmd.add_argument("--out", metavar="FILE", help="write the CSV to FILE (default: standard output)")
        else:
            cmd.add_argument("--by", metavar="COLUMN", help="also per group of this column")
            cmd.add_argument("--format", choices=("text", "markdown", "html", "latex"), default="text",
                             help="how to print the report (default text)")
    ex = sub.add_parser("export", help="write a saved score (JSON) as a calculator page, SQL or PMML",
                        description="Write a saved risk score where it is used: a self-contained calculator page "
                                    "(html), a SELECT that scores a table (sql), or a PMML 4.4 Scorecard (pmml). "
                                    "Reading the model never runs code.")
    ex.add_argument("model", help="the model's JSON file (saved with `riskformula fit ... --json FILE` or "
                                  "RiskScore.to_json())")
    ex.add_argument("--to", required=True, choices=("html", "sql", "pmml"), help="what to write")
    ex.add_argument("--out", metavar="FILE", help="write to FILE (default: standard output)")
    ex.add_argument("--table", default="data", help="sql: the table to score (default: data)")
    ex.add_argument("--dialect", default="sqlite", choices=("sqlite", "duckdb", "postgres"),
                    help="sql: the SQL dialect (default: sqlite)")
    ex.add_argument("--risk-map", default="auto", choices=("auto", "formula", "table"),
                    help="sql: the risk as the formula (with EXP), as a table of every attainable score, or auto "
                         "(default: the table for sqlite when the card has one)")
    ex.add_argument("--horizon", action="append", metavar="T",
                    help="sql, pmml: a time-to-event model's horizon(s) (repeat the option or give a comma-separated "
                         "list). sql: one column risk_<T> per horizon (default: the card's horizons); pmml: the "
                         "output risk within T (default: the card's first horizon), several give risk_<T> fields")
    ex.add_argument("--title", help="html: the page title (default: the formula)")
    sub.add_parser("compile", help="compile the certifying search's loops now (with the fast extra, numba), "
                                   "so that the first fit does not wait for it",
                   description="With numba installed (pip install \"riskformula[fast]\") the support search's "
                               "inner loops are compiled on first use and cached on disk; this compiles them "
                               "now. Without numba it says so and does nothing.")
    return ap


def _compile() -> int:
    from .solver.kernels import warm_up
    seconds = warm_up()
    if seconds is None:
        print("the compiled loops are off (numba is not installed: pip install \"riskformula[fast]\"; or "
              "RISKFORMULA_NUMBA=0 is set): the numpy loops run, nothing to compile")
    else:
        print(f"the certifying search's compiled loops are ready ({seconds:.1f} s; cached for later fits)")
    return OK


def _load(name: str):
    """The saved model in file ``name`` (never runs code: see :func:`riskformula.from_json`)."""
    from .io import MAX_BYTES, from_json
    path = Path(name)
    if not path.is_file():
        raise DataError(f"no model file {name!r}; save one with `riskformula fit ... --json FILE`.")
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:  # refused before it is read
            raise DataError(f"the model file {name!r} has {size:,d} bytes, more than a saved risk score may have "
                            f"({MAX_BYTES:,d}); it is not a riskformula model or it is corrupt.")
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)  # the file may grow after stat()
    except OSError as e:
        raise DataError(f"could not read the model file {name!r}: {e}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a byte-order mark some editors write: not part of the JSON
    try:
        return from_json(data)
    except DataError as e:
        raise DataError(str(e).replace("`text`", f"the model file {name!r}")) from None


#: the options whose names the Python API's messages use as arguments (see :func:`_error`)
_OPTIONS = ("absolute-gap-tolerance", "by", "c0", "coef-range", "decision-thresholds", "dialect", "engine", "event",
            "gap-tolerance", "horizon", "max-size", "min-size", "missing", "n-jobs", "node-limit", "objective",
            "real-intercept", "risk-map", "scale", "table", "ties", "time-limit", "title", "weights")


def _error(e: RiskFormulaError, data: str | None = None) -> int:
    """Print ``e`` on one line; ``data``: the ``--data`` file, named where the Python API's message
    names its argument (`newdata`, `data`)."""
    text = str(e)
    # the Python API's arguments are the command line's options (`max_size` is --max-size)
    for name in _OPTIONS:
        py = name.replace("-", "_")
        text = text.replace(f"`{py}`", f"--{name}")
        text = re.sub(rf"`{py}=([^`]*)`", lambda m: f"--{name} {m.group(1)}", text)  # `event='x'`
        text = re.sub(rf"(?<![\w.`-]){py}=", f"--{name} ", text)  # with objective='logistic'
    # the command line names a column of the file; it has no per-row values to pass
    text = text.replace("; pass a column name or one weight per row.", "; name a column of the file.")
    if data is not None:
        for name in ("`newdata`", "`data`"):
            text = text.replace(name, f"--data {data!r}")
    print(f"riskformula: error: {text}", file=sys.stderr)
    return USAGE_ERROR if isinstance(e, SettingsError) else DATA_ERROR


def _parse(argv):
    """The command line's arguments; an option a command does not know is reported with that
    command's usage line (and the nearest option it has), not the top-level one."""
    ap = _parser()
    args, extra = ap.parse_known_args(argv)
    if extra:
        from .errors import did_you_mean
        cmd = args._commands[args.command]
        options = [o for o in cmd._option_string_actions if o.startswith("--")]
        unknown = next((x.split("=")[0] for x in extra if x.startswith("-")), extra[0])
        cmd.error(f"unrecognized arguments: {' '.join(extra)}.{did_you_mean(unknown, options)}")
    return args


@contextlib.contextmanager
def _one_line_warnings():
    """Warnings as one line each on stderr (``riskformula: warning: ...``), not Python's two lines
    that quote the source line of the script that called."""
    import warnings
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"riskformula: warning: {message}", file=sys.stderr)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def _use(args) -> int:
    """``card``, ``predict`` and ``evaluate`` with a saved model."""
    try:
        model = _load(args.model)
        if args.command == "card":
            print(model.card(args.format))
            return OK
        if args.command == "predict" and args.out:
            _check_output(args.out, "--out")
        horizon = _horizons(args.horizon)
        survival = getattr(model, "risk_map", None) == "cox"
        if horizon is not None and not survival:
            raise SettingsError(f"--horizon applies to a time-to-event model (Surv(time, event) ~ ...); this one "
                                f"({type(model).__name__}) has no horizons. Leave it out.")
        data = _read(args.data)
        if args.command == "predict":
            hs = list(dict.fromkeys(model.horizons if horizon is None else horizon)) if survival else []
            written = ["score"] + ([f"risk_{h:g}" for h in hs] if survival else ["risk"])
            taken = [c for c in data.columns if c in written]
            if taken:
                raise DataError(f"--data already has a column {taken[0]!r}, which predict writes (the score and "
                                "the risk); rename that column in the file, or drop it, and run predict again.")
            if survival:       # one column per horizon, named after it
                risks = model.predict(data, horizon=hs)
                out = data.assign(score=model.score(data))
                for h, col in zip(hs, risks.columns):
                    out[f"risk_{h:g}"] = risks[col]
            else:
                out = data.assign(score=model.score(data), risk=model.predict(data))
            text = out.to_csv(index=False)
            if args.out:
                Path(args.out).write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
            return OK
        if survival:
            print(model.evaluate(data, by=args.by, horizon=horizon).render(args.format))
        else:
            print(model.evaluate(data, by=args.by).render(args.format))
    except RiskFormulaError as e:
        return _error(e, getattr(args, "data", None))
    except OSError as e:
        print(f"riskformula: error: {e}", file=sys.stderr)
        return DATA_ERROR
    return OK


def _export(args) -> int:
    try:
        if args.out:
            _check_output(args.out, "--out")
        model = _load(args.model)
        from . import export
        horizon = _horizons(args.horizon)
        if horizon is not None and len(horizon) == 1 and args.to == "pmml":
            horizon = horizon[0]      # one time: the output field `risk`
        if args.to == "html":
            if horizon is not None:
                raise SettingsError("--horizon applies to --to sql and --to pmml; the calculator page shows the risk "
                                    "within each of the card's horizons.")
            out = export.to_html_calculator(model, title=args.title)
        elif args.to == "sql":
            out = export.to_sql(model, table=args.table, dialect=args.dialect, risk_map=args.risk_map, horizon=horizon)
        else:
            out = export.to_pmml(model, horizon=horizon)
    except RiskFormulaError as e:
        return _error(e)
    if args.out:
        try:
            Path(args.out).write_text(out, encoding="utf-8")
        except OSError as e:
            print(f"riskformula: error: could not write {args.out!r}: {e}", file=sys.stderr)
            return 1
    else:
        print(out)
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # the reader of the output closed it (`riskformula export ... | head -8`): stop quietly, as
        # Unix tools do, with what remains unwritten sent nowhere (else Python's flush at exit fails
        # again and prints a traceback)
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass  # no file descriptor behind stdout (a test's capture)
        return 1


def _main(argv: list[str] | None) -> int:
    args = _parse(argv)
    with _one_line_warnings():
        if args.command == "compile":
            return _compile()
        if args.command == "export":
            return _export(args)
        if args.command in ("card", "predict", "evaluate"):
            return _use(args)
        return _fit(args)


def _fit(args) -> int:
    from .control import SearchControl
    from .fit import risk_score
    from .netbenefit.grid import net_benefit
    from .survival.objective import cox
    try:
        if args.json:
            _check_output(args.json, "--json")
        data = _read(args.data)
        with _stdout_to_stderr():
            control = SearchControl(time_limit=args.time_limit, gap_tolerance=args.gap_tolerance,
                                    absolute_gap_tolerance=args.absolute_gap_tolerance, node_limit=args.node_limit,
                                    n_jobs=args.n_jobs, progress=args.progress, verbose=args.verbose,
                                    engine=args.engine)
            objective = args.objective
            if args.decision_thresholds is not None:
                if objective != "net_benefit":
                    raise SettingsError("`--decision-thresholds` applies only with `--objective net_benefit`; "
                                        "leave it out.")
                objective = net_benefit(args.decision_thresholds)
            if args.ties is not None:
                if objective not in (None, "cox"):
                    raise SettingsError("`--ties` applies to a time-to-event score (a Surv(time, event) formula, "
                                        "`--objective cox`); leave it out.")
                objective = cox(args.ties)
            low, high = args.coef_range
            if low > high:
                raise SettingsError(f"--coef-range LOW HIGH has LOW above HIGH ({low} {high}); write the least "
                                    f"points first, e.g. --coef-range {high} {low}.")
            optional = {"scale": args.scale, "horizon": _horizons(args.horizon)}
            model = risk_score(args.formula, data, max_size=args.max_size, min_size=args.min_size,
                               coef_range=tuple(args.coef_range), c0=args.c0, event=args.event,
                               missing=_missing(args.missing), real_intercept=args.real_intercept,
                               objective=objective, weights=args.weights, control=control,
                               **{k: v for k, v in optional.items() if v is not None})
    except RiskFormulaError as e:
        return _error(e, getattr(args, "data", None))
    print(model.summary().render(args.format))
    if args.json:
        try:
            Path(args.json).write_text(model.to_json())
        except OSError as e:  # e.g. a full disk: checked paths can still fail to write
            print(f"riskformula: error: could not save the model to {args.json!r}: {e}", file=sys.stderr)
            return DATA_ERROR
    if args.strict and model.status != "optimal":
        return NOT_CERTIFIED
    return OK


if __name__ == "__main__":
    sys.exit(main())
