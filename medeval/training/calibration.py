"""Temperature scaling of the subconcept head (LBFGS on the NLL) and expected calibration error."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["calibrate", "expected_calibration_error", "fit_temperature", "softmax"]


def softmax(z: np.ndarray) -> np.ndarray:
    """Row softmax of (N, S) logits in float64."""
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def calibrate(parts: dict[str, tuple[np.ndarray, np.ndarray]]) -> tuple[float, dict]:
    """Temperature fitted on the subconcept logits of part ``"calibration"``, and the record
    with the ECE before and after it on every part.

    Args:
        parts: ``{part name: ((N, S) subconcept logits, (N,) true subconcept codes)}``, in the
            order the record lists them.

    Returns:
        ``T`` and ``{"temperature": T, "ece_<part>_before": ..., "ece_<part>_after": ...}``.
    """
    temperature = fit_temperature(*parts["calibration"])
    record: dict = {"temperature": temperature}
    for name, (logits, labels) in parts.items():
        record[f"ece_{name}_before"] = expected_calibration_error(softmax(logits), labels)
        record[f"ece_{name}_after"] = expected_calibration_error(
            softmax(logits / temperature), labels
        )
    return temperature, record


def fit_temperature(logits: np.ndarray | torch.Tensor, labels: np.ndarray | torch.Tensor) -> float:
    """Temperature T > 0 minimising the NLL of ``softmax(logits / T)``.

    Args:
        logits: (N, S) subconcept logits on the calibration part.
        labels: (N,) true subconcept codes.

    Returns:
        T (1.0 when N = 0). Optimised over log T, so T stays positive.
    """
    z = torch.as_tensor(np.asarray(logits), dtype=torch.float64)
    t = torch.as_tensor(np.asarray(labels), dtype=torch.long)
    if len(z) == 0:
        return 1.0
    log_t = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=200, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(z / log_t.exp(), t)
        loss.backward()
        return loss

    opt.step(closure)
    temperature = float(log_t.detach().exp())
    return temperature if np.isfinite(temperature) else 1.0


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, *, n_bins: int = 15) -> float:
    """Top-label ECE: Σ_b (n_b / N) |accuracy_b − confidence_b| over equal-width bins.

    Args:
        probs: (N, S) posteriors (rows sum to 1).
        labels: (N,) true codes.
    """
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels)
    if len(probs) == 0:
        return float("nan")
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(np.float64)
    bins = np.clip((conf * n_bins).astype(np.int64), 0, n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        mask = bins == b
        if mask.any():
            total += mask.mean() * abs(correct[mask].mean() - conf[mask].mean())
    return float(total)
