"""The joint loss: weights of the two heads and the class-balanced option."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from medeval.training.config import SYNTHETIC, load_config
from medeval.training.loop import _loss_fn


class _Task:
    def __init__(self, y, sc, k):
        self.y, self.subconcept, self.k = np.asarray(y), np.asarray(sc), k

    def train_counts(self, idx):
        return np.bincount(self.subconcept[idx], minlength=self.k)


def test_loss_weights_and_class_balance():
    task = _Task([0, 0, 0, 1], [0, 0, 1, 2], 3)
    idx = np.arange(4)
    logit = torch.tensor([0.3, -0.2, 0.1, 0.5])
    sub = torch.randn(4, 3, generator=torch.Generator().manual_seed(0))
    y, sc = torch.tensor([0, 0, 0, 1]), torch.tensor([0, 0, 1, 2])
    cfg = load_config(None, ["train.loss_weights={binary: 2.0, subconcept: 0.5}"], preset=SYNTHETIC)
    cfg.train.class_balanced = False
    total, lb, ls = _loss_fn(cfg, task, idx, torch.device("cpu"))(logit, sub, y, sc)
    assert lb == pytest.approx(F.binary_cross_entropy_with_logits(logit, y.float()).item())
    assert ls == pytest.approx(F.cross_entropy(sub, sc).item())
    assert total.item() == pytest.approx(2.0 * lb.item() + 0.5 * ls.item())
    cfg.train.class_balanced = True
    _, lb_bal, ls_bal = _loss_fn(cfg, task, idx, torch.device("cpu"))(logit, sub, y, sc)
    pos = torch.tensor([3.0])  # 3 negatives per positive
    assert lb_bal == pytest.approx(
        F.binary_cross_entropy_with_logits(logit, y.float(), pos_weight=pos).item()
    )
    w = torch.tensor([4 / 6, 4 / 3, 4 / 3])  # N / (K * n_k)
    assert ls_bal == pytest.approx(F.cross_entropy(sub, sc, weight=w).item(), rel=1e-6)
