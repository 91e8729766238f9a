"""medeval/names.py: names that print alike are told apart in messages."""

from medeval.names import lookalike, shown, visible_key

NFC = "\u00d6dem"  # Ö as one code point
NFD = "O\u0308dem"  # O plus a combining diaeresis
ZWSP = "van\u200b"  # with a zero-width space


def test_visible_key_normalises_and_drops_invisible_characters():
    assert visible_key(NFD) == NFC
    assert visible_key(ZWSP) == "van"
    assert visible_key("\ufeffvan") == "van"


def test_shown_is_repr_for_a_plain_name_and_escaped_otherwise():
    assert shown("van") == "'van'"
    assert shown(NFC) == repr(NFC)
    assert shown(NFD) == "'O\\u0308dem'"
    assert shown(ZWSP) == "'van\\u200b'"


def test_lookalike_says_normalisation_and_code_points():
    clause = lookalike(NFD, [NFC, "other"])
    assert "Unicode normalisation (NFC vs NFD)" in clause
    assert "U+004F U+0308" in clause
    assert "U+00D6" in clause


def test_lookalike_says_invisible_characters():
    clause = lookalike(ZWSP, ["van"])
    assert "invisible characters" in clause
    assert "U+200B" in clause


def test_lookalike_is_empty_for_an_unrelated_or_identical_name():
    assert lookalike("cat", ["dog", "van"]) == ""
    assert lookalike("van", ["van"]) == ""
