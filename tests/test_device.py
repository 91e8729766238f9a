"""Device names → devices, the ``--device`` check and autocast: one module for every caller."""

import contextlib
from types import SimpleNamespace

import pytest
import torch

from medeval import device as dev
from medeval.errors import UserError


@pytest.mark.parametrize("gpus", [0, 2])
def test_auto_is_the_first_cuda_device_when_there_is_one(monkeypatch, gpus):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    expected = "cuda" if gpus else "cpu"
    assert dev.device_name("auto") == dev.device_name(None) == expected
    assert dev.resolve_device("auto") == torch.device("cuda:0" if gpus else "cpu")


def test_other_names_pass_unchanged_and_cuda_takes_the_local_rank():
    assert dev.device_name("cuda:1") == "cuda:1" and dev.device_name("cpu") == "cpu"
    assert dev.resolve_device("cuda", SimpleNamespace(local_rank=3)) == torch.device("cuda:3")
    assert dev.resolve_device("cuda:1", SimpleNamespace(local_rank=3)) == torch.device("cuda:1")


def test_autocast_is_bf16_on_cuda_only(monkeypatch):
    assert isinstance(dev.autocast(torch.device("cpu")), contextlib.nullcontext)
    # a recording stand-in: the real one warns when built on a machine without CUDA
    monkeypatch.setattr(torch, "autocast", lambda *args, **kwargs: (args, kwargs))
    assert dev.autocast(torch.device("cuda")) == (("cuda",), {"dtype": torch.bfloat16})


def test_a_missing_device_is_a_user_error(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    dev.check_device("cpu")
    dev.check_device(None)
    with pytest.raises(UserError, match="--device cuda: no CUDA device is available here"):
        dev.check_device("cuda")
    with pytest.raises(UserError, match="--device gpu7: not a device name"):
        dev.check_device("gpu7")


def test_the_tools_and_training_share_the_one_resolver():
    from medeval.cli import common, embed
    from medeval.embeddings import images
    from medeval.training import loop

    assert common.check_device is dev.check_device
    assert embed._device is dev.device_name
    assert loop.resolve_device is dev.resolve_device and loop.autocast is dev.autocast
    assert images.autocast is dev.autocast
