"""The figure of the discovered subconcepts."""

from .conftest import PER_SC


def test_discovered_subconcepts_are_drawn_as_label_free_recalls():
    """Discovered subconcepts have no true recall: their bars are the hatched label-free kind,
    and the legend never calls them true-subconcept recalls."""
    from medeval.report.discovery import cluster_figure

    clusters = PER_SC.drop(columns=["recall", "low", "high"])
    fig = cluster_figure(clusters, {"BA": 0.9, "cBA": 0.8})
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert not any("true test subconcepts" in t for t in texts)
    assert sum("label-free estimate" in t for t in texts) == 2  # one swatch per class
    gids = {p.get_gid() for p in fig.axes[1].patches if p.get_gid()}
    assert gids == {"recall-est"}
