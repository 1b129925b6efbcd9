"""Old import paths keep working after the reports moved into riskformula.reports: the documented
ones silently, the others with a DeprecationWarning naming the new place."""

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import riskformula as rf
from riskformula import reports, tuning
from riskformula.reports import comparison, cross_validation, evaluation, metrics, plots, size_path, summary

ROOT = Path(__file__).resolve().parents[1]

# old module -> (new module, names it now holds)
MOVED = [
    ("riskformula.compare", comparison, ["compare", "anova", "ComparisonTable", "COLUMNS"]),
    ("riskformula.validation", tuning, ["cross_validate", "size_path", "stratified_folds"]),
    ("riskformula.validation", cross_validation, ["CrossValidation", "FOLD_COLUMNS"]),
    ("riskformula.validation", size_path, ["SizePath", "PATH_COLUMNS"]),
    ("riskformula.metrics", metrics, ["auc", "AUCResult", "net_benefit", "PAPER_THRESHOLDS"]),
]
DEPRECATED = [(old, name, getattr(new, name)) for old, new, names in MOVED for name in names]


@pytest.mark.parametrize("module, name, expected", DEPRECATED, ids=[f"{m}.{n}" for m, n, _ in DEPRECATED])
def test_undocumented_old_paths_warn_and_give_the_moved_object(module, name, expected):
    old = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"`{module}` is deprecated"):
        got = getattr(old, name)
    assert got is expected


def test_from_import_of_an_old_path_warns():
    with pytest.warns(DeprecationWarning, match="riskformula.reports.comparison"):
        from riskformula.compare import anova
    assert anova is rf.anova


def test_unknown_name_on_an_old_path_is_an_attribute_error():
    with pytest.raises(AttributeError, match="riskformula.reports.metrics"):
        importlib.import_module("riskformula.metrics").no_such_metric


DOCUMENTED = [(name, getattr(module, name)) for module, names in [
    (comparison, ["compare", "anova", "ComparisonTable"]), (tuning, ["cross_validate", "size_path"]),
    (cross_validation, ["CrossValidation"]), (size_path, ["SizePath"]), (evaluation, ["evaluate", "Evaluation"]),
] for name in names]


@pytest.mark.parametrize("name, expected", DOCUMENTED, ids=[n for n, _ in DOCUMENTED])
def test_top_level_names_are_the_moved_objects_without_warning(name, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(rf, name) is expected


def test_rf_plots_is_documented_and_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from riskformula.plots import plot_reliability
        for name in plots.__all__:
            assert getattr(rf.plots, name) is getattr(plots, name)
    assert plot_reliability is plots.plot_reliability


def test_importing_an_old_module_does_not_shadow_the_function():
    # `import riskformula.compare` binds the submodule on the package unless it was loaded before
    importlib.import_module("riskformula.compare")
    assert rf.compare is comparison.compare


def test_plain_import_and_top_level_use_emit_no_deprecation_warning():
    code = ("import warnings; warnings.simplefilter('error')\n"
            "import riskformula as rf, riskformula.compare, riskformula.validation, riskformula.metrics\n"
            "assert callable(rf.compare) and callable(rf.cross_validate) and callable(rf.plots.plot_roc)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert run.returncode == 0, run.stderr


def test_report_classes_share_one_renderer():
    base = reports.render.Rendered
    for cls in (summary.Summary, evaluation.Evaluation, comparison.ComparisonTable,
                cross_validation.CrossValidation, size_path.SizePath):
        assert issubclass(cls, base)
        # the layout (render) and the conversions come from the base; a report only declares content
        for method in ("render", "to_markdown", "to_html", "to_latex", "_repr_html_", "__str__"):
            assert getattr(cls, method) is getattr(base, method), (cls.__name__, method)
        assert cls.tables is base.tables
