"""The GPU paths agree with the CPU and scikit-learn (skipped without CUDA).

These run only where ``torch.cuda.is_available()``; on a CPU-only machine every test here is
skipped, and the same code paths are covered on the CPU by the rest of the suite.
"""

import math

import numpy as np
import pytest
import torch
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from medeval.evaluation import ALL_SCORES, evaluate_predictions
from medeval.metrics import balanced_accuracy, f1, roc_auc
from medeval.metrics.bootstrap import BatchedBootstrap
from medeval.metrics.streaming import SubconceptScores
from medeval.scores import INSTANCE_SCORES

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

CUDA = torch.device("cuda", 0)
SIZES = {
    "healthy": {"class": 0, "n": 80},
    "benign": {"class": 0, "n": 30},
    "A": {"class": 1, "n": 20},
    "B": {"class": 1, "n": 5},
}
SIDES = np.array([0, 0, 1, 1])


def _data(seed: int, n: int = 400):
    rng = np.random.default_rng(seed)
    sc = rng.choice(4, n, p=[0.5, 0.25, 0.17, 0.08])
    y = SIDES[sc]
    s = np.round(rng.random(n) * 0.7 + 0.3 * y, 1)  # coarse: many ties
    q = rng.dirichlet(np.full(4, 0.7), n)
    w = rng.random(n) * 3 * (rng.random(n) < 0.9)  # some zero weights
    return sc, y, s, q, w


@pytest.mark.parametrize("seed", range(5))
def test_metric_functions_on_cuda_equal_sklearn(seed):
    _, y, s, _, w = _data(seed)
    yp = (s >= 0.5).astype(np.int64)
    t = {k: torch.as_tensor(v, device=CUDA) for k, v in dict(y=y, s=s, yp=yp, w=w).items()}
    ba = balanced_accuracy(t["y"], t["yp"], sample_weight=t["w"])
    assert ba.device.type == "cuda"
    assert float(ba) == pytest.approx(balanced_accuracy_score(y, yp, sample_weight=w), abs=1e-12)
    assert float(f1(t["y"], t["yp"], sample_weight=t["w"])) == pytest.approx(
        f1_score(y, yp, sample_weight=w), abs=1e-12
    )
    assert float(roc_auc(t["y"], t["s"], sample_weight=t["w"])) == pytest.approx(
        roc_auc_score(y, s, sample_weight=w), abs=1e-12
    )


def test_batched_metrics_on_cuda_equal_cpu_row_by_row():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, (64, 300))
    s = rng.integers(0, 9, (64, 300)) / 8
    w = rng.random((64, 300))
    got = roc_auc(*(torch.as_tensor(a, device=CUDA) for a in (y, s)), sample_weight=w)
    want = np.array([roc_auc_score(y[i], s[i], sample_weight=w[i]) for i in range(64)])
    np.testing.assert_allclose(got.cpu().numpy(), want, atol=1e-12)


@pytest.mark.parametrize("clusters", [False, True])
def test_bootstrap_on_cuda_equals_the_metric_functions_on_its_own_counts(clusters):
    sc, y, s, q, _ = _data(11)
    u = np.array([1.0, 1.0, 1.4, 6.0])[sc]
    weights = {"": np.ones(len(y)), "w": u, "p": q @ np.array([1.0, 1.0, 1.4, 6.0])}
    subsets = {"full": np.ones(len(y), bool), "sub_3": (y == 0) | (sc == 3)}
    kw = {"clusters": np.where(y == 1, 1000, 0) + np.arange(len(y)) // 3} if clusters else {}
    boot = BatchedBootstrap(
        y,
        y_pred=(s >= 0.5).astype(int),
        y_score=s,
        weights=weights,
        subsets=subsets,
        subconcept=sc,
        device=CUDA,
        **kw,
    )
    assert boot.generator == "torch"
    reps = boot.run(12, seed=5, chunk_size=5)
    assert all(v.device.type == "cuda" for v in reps.scores.values())
    counts = torch.cat(list(boot.iter_counts(12, seed=5, chunk_size=5))).cpu().numpy()
    for cls in (0, 1):  # multinomial within each class: class sizes are kept
        assert (counts[:, y == cls].sum(1) == (y == cls).sum()).all() or clusters
    yp = (s >= 0.5).astype(int)
    for r in range(12):
        for key, w in weights.items():
            for j, m in enumerate(subsets.values()):
                sw = counts[r] * w * m
                want = {
                    "BA": balanced_accuracy_score(y, yp, sample_weight=sw),
                    "F1": f1_score(y, yp, sample_weight=sw),
                    "AUC": roc_auc_score(y, s, sample_weight=sw),
                }
                for metric, value in want.items():
                    got = float(reps.scores[(key, metric)][r, j])
                    assert got == pytest.approx(value, abs=1e-10), (r, key, metric, j)


def test_same_seed_same_replicates_on_cuda():
    _, y, s, _, _ = _data(2)
    kw = dict(
        y_pred=(s >= 0.5).astype(int),
        y_score=s,
        weights={"": np.ones(len(y))},
        subsets={"full": np.ones(len(y), bool)},
        device=CUDA,
    )
    a = BatchedBootstrap(y, **kw).run(50, seed=9, chunk_size=16)
    b = BatchedBootstrap(y, **kw).run(50, seed=9, chunk_size=16)
    for k in a.scores:
        assert torch.equal(a.scores[k], b.scores[k])


def test_evaluate_predictions_on_cuda_matches_cpu():
    sc, y, s, q, _ = _data(4, 600)
    names = np.array(list(SIZES))
    kw = dict(
        y_score=s,
        subconcept=names[sc],
        posteriors=q,
        posterior_columns=list(SIZES),
        train_sizes=SIZES,
        n_bootstrap=300,
        seed=0,
    )
    cpu = evaluate_predictions(y, device="cpu", **kw)
    gpu = evaluate_predictions(y, device="cuda", **kw)
    for k in ALL_SCORES:  # point estimates do not depend on the device or the draws
        assert gpu.scores[k] == pytest.approx(cpu.scores[k], abs=1e-12, nan_ok=True), k
    for k, (lo, hi) in gpu.intervals.items():  # different draws: same interval up to MC error
        c_lo, c_hi = cpu.intervals[k]
        width = c_hi - c_lo
        assert lo <= gpu.scores[k] <= hi, k
        assert abs(lo - c_lo) < 0.5 * width + 1e-9 and abs(hi - c_hi) < 0.5 * width + 1e-9, k


def test_streaming_metric_on_cuda_equals_cpu():
    sc, y, s, q, _ = _data(6, 500)
    out = {}
    for device in ("cpu", "cuda"):
        metric = SubconceptScores(SIZES).to(device)
        for a in range(0, len(y), 128):
            sl = slice(a, a + 128)
            metric.update(
                *(torch.as_tensor(v[sl], device=device) for v in (s, y, sc, q)),
            )
        out[device] = {k: float(v) for k, v in metric.compute().items()}
    for k in INSTANCE_SCORES:
        if math.isnan(out["cpu"][k]):
            assert math.isnan(out["cuda"][k]), k
        else:
            assert out["cuda"][k] == pytest.approx(out["cpu"][k], abs=1e-9), k


def test_train_split_on_cuda_with_bf16_autocast(tmp_path):
    from medeval.flows.train import split_seeds as _seeds
    from medeval.splits import patient_splits
    from medeval.training.checkpoint import load_checkpoint
    from medeval.training.config import SYNTHETIC, load_config
    from medeval.training.data import build_task
    from medeval.training.loop import train_split

    TINY = [
        "data.synthetic.n_normal=144",
        "data.synthetic.size=32",
        "model.backbone=vgg11",
        "train.image_size=32",
        "train.batch_size=16",
        "train.patience=5",
        "train.max_steps_per_epoch=2",
        "train.keep_checkpoints=0",
        "evaluation.n_bootstrap=20",
    ]
    cfg = load_config(None, [*TINY, "train.epochs=2"], preset=SYNTHETIC)
    task = build_task(cfg.data)
    (split,) = patient_splits(task, seeds=_seeds(cfg), fractions=(0.6, 0.15, 0.1, 0.15))
    best = train_split(cfg, task, split, tmp_path, device=CUDA)
    ckpt = load_checkpoint(best)
    params = [v for v in ckpt["model"].values() if v.is_floating_point()]
    assert params and all(torch.isfinite(p).all() for p in params)
    assert all(p.device.type == "cpu" for p in params)  # loadable on a CPU-only machine


def test_model_input_on_cuda_gives_the_cpu_bits():
    from medeval.models.inputs import model_input

    x = torch.randint(0, 256, (4, 3, 32, 32), dtype=torch.uint8)
    on_gpu = model_input(x, CUDA)
    assert on_gpu.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(on_gpu.cpu(), model_input(x, torch.device("cpu")))
