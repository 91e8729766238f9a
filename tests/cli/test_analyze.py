"""medeval/cli/analyze.py: the options of python -m medeval.analyze and the results folders
it refuses in one line (a finished benchmark's analysis: tests/robustness)."""

import pytest

from medeval.cli.analyze import build_parser, main


def test_defaults_read_ba_and_the_uncorrected_models():
    args = build_parser().parse_args(["--results", "res"])
    assert (args.results, args.metric, args.rq3_method, args.partial) == ("res", "BA", None, False)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--metric", "XX"], "argument --metric: must be one of 'BA', 'F1', 'AUC'; got 'XX'"),
        (["--rq3-method", "magic"], "argument --rq3-method: must be one of"),
    ],
)
def test_a_bad_option_is_refused(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(["--results", str(tmp_path), *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_missing_results_folder_is_one_line(tmp_path, capsys):
    assert main(["--results", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such results folder" in err, err
    assert not (tmp_path / "absent").exists()


def test_a_folder_without_records_is_one_line(tmp_path, capsys):
    assert main(["--results", str(tmp_path), "--partial", "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no records (records/<data set>/<method>-<k>.json)" in err
    assert list(tmp_path.iterdir()) == []
