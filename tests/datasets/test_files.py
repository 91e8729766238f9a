"""The index of the image files under a folder."""

from fakes_datasets import write_png


def test_index_prefers_files_met_first_in_sorted_order(tmp_path):
    from medeval.datasets.files import index_files

    write_png(tmp_path / "images_002" / "images" / "a.png")
    write_png(tmp_path / "images_001" / "images" / "a.png")
    write_png(tmp_path / "images_001" / "images" / "b.PNG")
    write_png(tmp_path / "z.png")
    (tmp_path / "notes.txt").write_text("x")
    found = index_files(tmp_path, (".png",))
    assert found == {
        "z.png": str(tmp_path / "z.png"),
        "a.png": str(tmp_path / "images_001" / "images" / "a.png"),
        "b.PNG": str(tmp_path / "images_001" / "images" / "b.PNG"),
    }
