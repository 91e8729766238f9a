"""medeval/training/checkpoint.py: atomic checkpoints and pruning old epochs."""

import torch

from medeval.training.checkpoint import load_checkpoint, prune_epochs, save_checkpoint


def test_a_saved_checkpoint_loads_back_equal(tmp_path):
    state = {"epoch": 3, "weights": torch.arange(4.0), "config": {"lr": 0.1}}
    path = save_checkpoint(tmp_path / "last.pt", state)
    assert path == tmp_path / "last.pt"
    loaded = load_checkpoint(path)
    assert loaded["epoch"] == 3 and loaded["config"] == {"lr": 0.1}
    assert torch.equal(loaded["weights"], state["weights"])
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]  # no temporary file left


def test_prune_keeps_the_newest_epochs_by_number(tmp_path):
    for k in (1, 2, 9, 10):
        (tmp_path / f"epoch_{k}.pt").write_bytes(b"x")
    (tmp_path / "best.pt").write_bytes(b"x")
    prune_epochs(tmp_path, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.pt", "epoch_10.pt", "epoch_9.pt"]


def test_prune_with_keep_zero_keeps_all(tmp_path):
    for k in (1, 2, 3):
        (tmp_path / f"epoch_{k}.pt").write_bytes(b"x")
    prune_epochs(tmp_path, 0)
    assert len(list(tmp_path.glob("epoch_*.pt"))) == 3
