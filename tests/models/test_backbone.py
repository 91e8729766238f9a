"""Pretrained weights on a machine that cannot reach the weights hub: said at once, with the
advice, instead of after a minute of the hub client's retries. No test reaches the network:
every connection is refused here."""

from __future__ import annotations

import socket
import time

import huggingface_hub
import pytest
import timm

from medeval.models import WeightsUnavailableError, build_backbone
from medeval.models import backbone as backbone_module


@pytest.fixture
def unreachable_hub(monkeypatch):
    """Online mode, but every connection fails: what a machine without network sees."""
    attempts = []

    def refuse(address, *args, **kwargs):
        attempts.append(address)
        raise OSError("Network is unreachable (test)")

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return attempts


def test_unreachable_hub_is_reported_at_once_with_the_advice(unreachable_hub):
    start = time.monotonic()
    with pytest.raises(WeightsUnavailableError) as err:
        build_backbone("resnet18", pretrained=True)
    elapsed = time.monotonic() - start
    text = str(err.value)
    assert "cannot be reached" in text and "no copy is cached" in text
    assert "--weights PATH" in text and "model.pretrained=false" in text and "--random-init" in text
    assert len(unreachable_hub) == 1  # one connection check, no retries
    assert elapsed < backbone_module.HUB_TIMEOUT_S + 10  # the client's retries take ~a minute
    assert huggingface_hub.constants.HF_HUB_OFFLINE is False  # offline mode was put back


def test_a_reachable_hub_downloads_as_before(monkeypatch):
    seen = {}

    def fake_create(name, pretrained=False, **kwargs):
        seen["offline"] = huggingface_hub.constants.HF_HUB_OFFLINE
        return timm.create_model.__wrapped_original__(name, pretrained=False, **kwargs)

    fake_create.__wrapped_original__ = timm.create_model
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(backbone_module, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(backbone_module.timm, "create_model", fake_create)
    model = build_backbone("resnet18", pretrained=True)
    assert seen == {"offline": False} and model.num_features == 512


def test_hub_offline_env_skips_the_check(monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("no connection may be tried with HF_HUB_OFFLINE")

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(socket, "create_connection", never)
    assert backbone_module.hub_reachable() is False
    with pytest.raises(WeightsUnavailableError, match=r"cannot be reached.*--weights PATH"):
        build_backbone("resnet18", pretrained=True)
