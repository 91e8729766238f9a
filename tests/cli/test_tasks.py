"""``python -m medeval.tasks describe|split`` on the real data and on bad input."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from medeval.cli.tasks import main
from medeval.splits import read_manifest


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_describe_all_keel_as_json(capsys, shared_data):
    code, out, _ = run(
        capsys,
        "describe",
        "--source",
        "keel",
        "--path",
        str(shared_data / "keel"),
        "--name",
        "all",
        "--json",
    )
    assert code == 0
    records = json.loads(out)
    assert [r["dataset"] for r in records][:2] == ["abalone", "letter"] and len(records) == 8
    for r in records:
        assert set(r) == {"dataset", "majority", "minority", "imbalance_ratio", "kept", "reason"}
        assert set(r["majority"][0]) == {"name", "n"}
        assert set(r["minority"][0]) == {"name", "n_original", "n"}
    vehicle = records[-1]
    assert vehicle["minority"] == [
        {"name": "opel", "n_original": 212, "n": 108},
        {"name": "van", "n_original": 199, "n": 54},
    ]
    assert vehicle["imbalance_ratio"] == pytest.approx(435 / 162, abs=1e-4)


def test_describe_one_pmlb_set_as_json_and_text(capsys, shared_data):
    args = ["describe", "--source", "pmlb", "--path", str(shared_data / "pmlb"), "--name", "iris"]
    code, out, _ = run(capsys, *args, "--json")
    record = json.loads(out)
    assert code == 0 and "dataset" not in record
    assert record["minority"] == [
        {"name": "1", "n_original": 50, "n": 25},
        {"name": "2", "n_original": 50, "n": 12},
    ]
    code, out, _ = run(capsys, *args)
    assert "sub_2 2" in out and "50 -> 12" in out and "KEPT" in out


def test_describe_nih_metadata_only(capsys, shared_data):
    code, out, _ = run(
        capsys, "describe", "--source", "nih", "--path", str(shared_data / "nih"), "--json"
    )
    record = json.loads(out)
    assert code == 0 and record["kept"]
    assert record["majority"][0] == {"name": "No Finding", "n": 60361}


def test_split_writes_manifest_and_record(capsys, shared_data, tmp_path):
    out_path = tmp_path / "vehicle.csv"
    code, out, _ = run(
        capsys,
        "split",
        "--source",
        "keel",
        "--path",
        str(shared_data / "keel"),
        "--name",
        "vehicle",
        "--out",
        str(out_path),
    )
    assert code == 0 and "10 cv5x2 splits" in out
    assert len(read_manifest(out_path)) == 10
    record = json.loads(out_path.with_name("vehicle.csv.json").read_text())
    assert record["scheme"] == "cv5x2" and record["task"]["kept"]
    code, out, _ = run(
        capsys,
        "split",
        "--source",
        "keel",
        "--path",
        str(shared_data / "keel"),
        "--name",
        "vehicle",
        "--out",
        str(out_path),
        "--scheme",
        "patient",
        "--n-seeds",
        "3",
        "--force",  # its own manifest: replaced when asked
    )
    splits = read_manifest(out_path)
    assert [s.seed for s in splits] == [0, 1, 2] and code == 0


def test_bad_input_exits_2_with_one_line_naming_file_and_column(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": [1, 2], "diagnosis": ["x", "y"]}).to_csv(path, index=False)
    result = subprocess.run(
        [sys.executable, "-m", "medeval.tasks", "describe", "--source", "csv", "--path", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "t.csv: missing column 'label'" in lines[0]


def test_skipped_files_are_listed_in_json_and_split_record(capsys, tmp_path):
    from PIL import Image

    root = tmp_path / "set"
    for label, n in (("a", 40), ("b", 20), ("c", 10)):
        (root / label).mkdir(parents=True)
        for i in range(n):
            Image.new("L", (4, 4), 9).save(root / label / f"{i}.png")
    (root / "c" / "broken.png").write_bytes(b"nope")
    code, out, _ = run(
        capsys, "describe", "--source", "folder", "--path", str(root), "--json", "--no-verify"
    )
    # without verification the folder loads and lists the broken file (fails when read)
    assert code == 0 and json.loads(out)["minority"][-1]["n_original"] == 11
    args = ["--source", "folder", "--path", str(root), "--skip-unreadable"]
    code, out, _ = run(capsys, "describe", *args, "--json")
    record = json.loads(out)
    assert record["skipped"][0]["path"].endswith("c/broken.png")
    assert record["minority"][-1]["n_original"] == 10
    code, _, _ = run(capsys, "split", *args, "--out", str(tmp_path / "m.csv"))
    assert code == 0
    record = json.loads((tmp_path / "m.csv.json").read_text())
    assert record["scheme"] == "patient" and len(record["split_seeds"]) == 10
    assert [s["row"] for s in record["task"]["skipped"]] == [
        70
    ]  # a: 0-39, b: 40-59, c/0-9.png: 60-69


def test_split_refuses_a_rejected_task(capsys, tmp_path):
    path = tmp_path / "small.csv"
    labels = ["a"] * 30 + ["b"] * 20 + ["c"] * 20
    pd.DataFrame({"x": range(70), "label": labels}).to_csv(path, index=False)
    code, _, err = run(
        capsys, "split", "--source", "csv", "--path", str(path), "--out", str(tmp_path / "m.csv")
    )
    assert code == 2 and "task rejected" in err and "'c' keeps 7" in err
    assert not (tmp_path / "m.csv").exists()


def test_nih_images_required_but_absent_is_one_line_listing_missing_files(capsys, shared_data):
    code, out, err = run(
        capsys,
        "describe",
        "--source",
        "nih",
        "--path",
        str(shared_data / "nih"),
        "--require-images",
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "Data_Entry_2017_v2020.csv.gz: 91324 of 91324 images" in err
    assert "first missing: 00000001_000.png at row 0 (line 2)" in err


def test_verify_flag_names_the_unreadable_file(capsys, tmp_path):
    from PIL import Image

    for label in ("a", "b", "c"):
        (tmp_path / label).mkdir()
        Image.new("L", (4, 4)).save(tmp_path / label / "0.png")
    (tmp_path / "b" / "1.png").write_bytes(b"")
    code, _, err = run(
        capsys, "describe", "--source", "folder", "--path", str(tmp_path), "--verify"
    )
    assert code == 2 and "row 2:" in err and "b/1.png: cannot read image" in err


def test_split_replaces_its_own_manifest_but_no_other_file(capsys, shared_data, tmp_path):
    import shutil

    data = tmp_path / "keel"
    data.mkdir()
    shutil.copy(shared_data / "keel" / "vehicle.dat", data / "vehicle.dat")
    (tmp_path / "mine.csv").write_text("the user's table\n")
    args = ["split", "--source", "keel", "--path", str(data), "--name", "vehicle", "--out"]
    for victim in (data / "vehicle.dat", tmp_path / "mine.csv"):  # the data, a user's file
        before = victim.read_bytes()
        for force in ([], ["--force"]):
            code, _, err = run(capsys, *args, str(victim), *force)
            said = "exists; give --force" if not force else "is not a split manifest"
            assert code == 2 and (said in err or "is the input" in err), err
        assert (
            victim.read_bytes() == before and not victim.with_name(victim.name + ".json").exists()
        )
    manifest = tmp_path / "splits.csv"
    assert run(capsys, *args, str(manifest))[0] == 0
    code, _, err = run(capsys, *args, str(manifest), "--split-seed", "3")
    assert code == 2 and "exists; give --force" in err, err  # an existing file: only when asked
    assert run(capsys, *args, str(manifest), "--split-seed", "3", "--force")[0] == 0  # its own
    assert json.loads((tmp_path / "splits.csv.json").read_text())["split_seeds"][0] == 3
