"""The two heads on a backbone."""

import pytest
import torch
from offline_hub import _offline  # noqa: F401  (an autouse fixture)

from medeval.models import build_model


@pytest.mark.parametrize(
    ("name", "features", "width"), [("vgg11", "conv", 512), ("resnet18", "head", 512)]
)
def test_two_heads_shapes(name, features, width):
    torch.manual_seed(0)
    model = build_model(name, 5, pretrained=False, features=features)
    assert model.backbone.num_features == width
    logit, sub = model(torch.randn(3, 3, 32, 32))
    assert logit.shape == (3,)
    assert sub.shape == (3, 5)
