"""Temperature scaling recovers a known temperature and lowers the ECE."""

import numpy as np

from medeval.training.calibration import expected_calibration_error, fit_temperature, softmax


def _draw(n=4000, s=4, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0, 2.0, size=(n, s))
    p = softmax(logits)
    labels = np.array([rng.choice(s, p=row) for row in p])
    return logits, labels


def test_recovers_the_temperature_of_overconfident_logits():
    logits, labels = _draw()
    t = fit_temperature(3.0 * logits, labels)
    assert abs(t - 3.0) < 0.25
    assert abs(fit_temperature(logits, labels) - 1.0) < 0.1


def test_ece_drops_after_scaling():
    logits, labels = _draw(seed=1)
    before = expected_calibration_error(softmax(3.0 * logits), labels)
    t = fit_temperature(3.0 * logits, labels)
    after = expected_calibration_error(softmax(3.0 * logits / t), labels)
    assert after < before / 2
    assert after < 0.05


def test_ece_of_exact_predictions():
    probs = np.eye(3)[[0, 1, 2, 0]]
    assert expected_calibration_error(probs, np.array([0, 1, 2, 0])) == 0.0
    assert expected_calibration_error(probs, np.array([1, 2, 0, 1])) == 1.0
    assert fit_temperature(np.zeros((0, 3)), np.zeros(0, dtype=int)) == 1.0
