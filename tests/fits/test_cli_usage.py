"""The command line's usage errors: a misspelt option of a command gets that command's usage and
the nearest option; a message about the rows names --data, the option that gave them."""

import pytest

import riskformula as rf
from riskformula import cli


def test_misspelt_option_gets_the_subcommand_usage(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["fit", "y ~ x", "--data", "wdbc", "--maxsize", "3"])
    assert e.value.code == cli.USAGE_ERROR
    err = capsys.readouterr().err
    assert err.startswith("usage: riskformula fit ")
    assert "riskformula fit: error: unrecognized arguments: --maxsize 3. Did you mean `--max-size`?" in err


def test_misspelt_option_of_predict(capsys):
    with pytest.raises(SystemExit):
        cli.main(["predict", "m.json", "--data", "wdbc", "--outt", "x.csv"])
    err = capsys.readouterr().err
    assert "usage: riskformula predict" in err and "Did you mean `--out`?" in err


def test_predict_names_the_data_option(tmp_path, capsys):
    import riskformula as rf
    d = rf.load_dataset("wdbc")
    m = rf.risk_score('diagnosis == "M" ~ radius_worst', d, max_size=1, time_limit=10)
    model = tmp_path / "m.json"
    model.write_text(m.to_json())
    rows = tmp_path / "rows.csv"
    d.drop(columns="radius_worst").to_csv(rows, index=False)
    code = cli.main(["predict", str(model), "--data", str(rows)])
    err = capsys.readouterr().err
    assert code == cli.DATA_ERROR
    assert f"--data {str(rows)!r} lacks" in err and "`newdata`" not in err


def test_compile_says_what_it_did(monkeypatch, capsys):
    from riskformula.solver import kernels
    monkeypatch.setattr(kernels, "_load", lambda: None)
    assert cli.main(["compile"]) == cli.OK
    assert "the compiled loops are off" in capsys.readouterr().out
    monkeypatch.undo()
    pytest.importorskip("numba")
    assert cli.main(["compile"]) == cli.OK
    assert "compiled loops are ready" in capsys.readouterr().out


@pytest.mark.parametrize("args, says", [
    (["--coef-range", "5", "-5"], "--coef-range LOW HIGH has LOW above HIGH (5 -5); write the least points first, "
                                  "e.g. --coef-range -5 5."),
    (["--event", "maybe"], "--event 'maybe' is not a level"),
    (["--horizon", "5"], "with --objective 'logistic'"),
    (["--weights", "nope"], "--weights 'nope' is not a column of --data"),
])
def test_messages_read_in_the_command_line_s_own_words(tmp_path, capsys, args, says):
    path = tmp_path / "d.csv"
    rf.load_dataset("breastcancer").iloc[:120].to_csv(path, index=False)
    code = cli.main(["fit", "Benign ~ ClumpThickness", "--data", str(path), "--time-limit", "1", *args])
    err = capsys.readouterr().err
    assert code != 0 and says in err, err
    assert "event=" not in err and "objective=" not in err and "weights=" not in err and "(low, high)" not in err
