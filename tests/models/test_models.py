"""Backbones by name, local weights and the clear error for missing weights."""

import pytest
import torch
from offline_hub import _offline  # noqa: F401  (an autouse fixture)

from medeval.errors import UserError
from medeval.models import (
    UnknownBackboneError,
    WeightsUnavailableError,
    build_backbone,
    build_model,
    check_backbone_name,
)


def test_vgg_head_features_are_pre_logits():
    backbone = build_backbone("vgg11", pretrained=False, features="head")
    assert backbone.num_features == 4096  # timm num_classes=0 keeps fc6/fc7 as pre-logits


def test_conv_features_drop_the_pre_logits_block():
    backbone = build_backbone("vgg11", pretrained=False, features="conv")
    assert not any(k.startswith("model.pre_logits") for k in backbone.state_dict())


def test_local_weights_file_is_loaded(tmp_path):
    torch.manual_seed(1)
    source = build_backbone("resnet18", pretrained=False, features="head")
    path = tmp_path / "resnet18.pth"
    torch.save(source.model.state_dict(), path)
    torch.manual_seed(2)
    loaded = build_backbone("resnet18", weights=path, features="head")
    for (k, a), b in zip(
        source.model.state_dict().items(), loaded.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b), k


def test_missing_weights_file_says_how_to_supply_weights(tmp_path):
    with pytest.raises(WeightsUnavailableError, match=r"--weights PATH.*pretrained=false"):
        build_backbone("resnet18", weights=tmp_path / "absent.pth")


def test_unreachable_pretrained_weights_give_a_clear_error():
    with pytest.raises(WeightsUnavailableError, match=r"resnet18.*--weights PATH"):
        build_backbone("resnet18", pretrained=True)


def test_unknown_model_and_bad_options():
    with pytest.raises(UnknownBackboneError, match=r"unknown backbone 'no_such_net'"):
        build_backbone("no_such_net")
    with pytest.raises(UserError, match=r"'vgg61'.*closest: .*vgg16"):
        check_backbone_name("vgg61")
    check_backbone_name("vgg16.tv_in1k")  # a name with a weights tag is known
    with pytest.raises(ValueError, match="features"):
        build_backbone("resnet18", features="middle")
    with pytest.raises(ValueError, match="at least 2 subconcepts"):
        build_model("resnet18", 1)
