"""A test that needs the shared real data is skipped, naming the folder, when it is absent."""

import os
import subprocess
import sys

import pytest
import real_data


def test_an_absent_folder_skips_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(real_data, "SHARED_DATA", tmp_path)
    (tmp_path / "keel").mkdir()
    assert real_data.shared_path("keel") == tmp_path / "keel"
    assert real_data.missing("keel") is None
    with pytest.raises(pytest.skip.Exception, match=f"needs the shared real data {tmp_path}/nih"):
        real_data.shared_path("nih")
    assert "MEDEVAL_DATA" in real_data.missing("pmlb", "iris")


def test_a_run_without_the_data_reports_skips_not_failures(tmp_path):
    env = dict(os.environ, MEDEVAL_DATA=str(tmp_path / "absent"), COLUMNS="400")  # whole reasons
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:xdist", "-p", "no:cacheprovider",
         "tests/datasets/test_pmlb.py", "tests/test_splits.py",
         "-k", "pmlb or iris or nih or cv_5x2_folds_partition"],
        capture_output=True, text=True, env=env, cwd=real_data.REPO,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "failed" not in proc.stdout and "error" not in proc.stdout.lower()
    assert f"needs the shared real data {tmp_path / 'absent'}/pmlb" in proc.stdout
    assert f"needs the shared real data {tmp_path / 'absent'}/keel" in proc.stdout
