"""The autouse fixture of the model tests that build backbones without reaching the network."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    # No network here: make the hub fail at once instead of retrying for a minute.
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    torch.set_num_threads(1)
