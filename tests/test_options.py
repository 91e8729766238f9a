"""The flows' settings objects: frozen, and a bad value raises InvalidParameterError (a
UserError: exit code 2 in the tools) naming the class and the field."""

import dataclasses

import pytest

from medeval._validation import InvalidParameterError
from medeval.evaluation import EvaluateSettings
from medeval.flows.discovery import DiscoverySettings
from medeval.flows.rerun import RerunSettings


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("n_bootstrap", -5),
        ("n_bootstrap", 2.5),
        ("confidence", 7.0),
        ("confidence", 0.0),
        ("stratify", "bogus"),
        ("seed", -1),
        ("seed", 1.5),
        ("threshold", "0.5"),
        ("progress", "yes"),
        ("device", 0),
    ],
)
def test_bad_evaluate_settings_name_the_field(field, value):
    with pytest.raises(InvalidParameterError, match=rf"^EvaluateSettings: {field} must"):
        EvaluateSettings(**{field: value})


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("method", "dbscan"),
        ("reducer", "tsne"),
        ("n_components", 0),
        ("k_max", -1),
        ("min_cluster_size", 1.5),
        ("n_estimators", True),
        ("n_examples", 0),
        ("n_bootstrap", -1),
        ("confidence", 1.0),
        ("stratify", "bogus"),
    ],
)
def test_bad_discovery_settings_name_the_field(field, value):
    with pytest.raises(InvalidParameterError, match=rf"^DiscoverySettings: {field} must"):
        DiscoverySettings(**{field: value})


def test_bad_rerun_settings_name_the_field():
    with pytest.raises(InvalidParameterError, match=r"^RerunSettings: n_bootstrap must"):
        RerunSettings(n_bootstrap=-1)


def test_settings_are_frozen_and_default_to_the_documented_values():
    s = EvaluateSettings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.n_bootstrap = 10  # type: ignore[misc]
    # The keyword arguments of evaluate_predictions, at its own defaults.
    assert dataclasses.asdict(s) == {
        "threshold": 0.5,
        "n_bootstrap": 1000,
        "confidence": 0.95,
        "stratify": "class",
        "seed": 0,
        "device": "cpu",
        "progress": False,
    }
    assert RerunSettings() == RerunSettings(n_bootstrap=None, seed=None, device="cpu")
    assert DiscoverySettings().method == "gmm"
