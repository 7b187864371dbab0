"""The page reader, pure: the charset as a browser picks it, and ids found however the bytes are chunked."""

from __future__ import annotations

import pytest

from graphsite.citations.pages import AnchorScanner, anchors, sniff_charset, wanted_names

DOCUMENT = ("<!doctype html><html><head><meta charset='utf-8'><title>t</title><!-- <p id='in-comment'> -->"
            "<script>var s = '<a id=in-script>';</script><style>#x{}</style></head><body>"
            "<h2 ID=\"Upper\">a</h2><p id='café'>b</p><a name=legacy>c</a><meta name='not-a-target'>"
            "<div data-id='nope'></div><p id=\"a&amp;b\">d</p></body></html>")
TARGETS = {"Upper", "café", "legacy", "a&b"}


def test_ids_and_named_anchors_outside_comments_and_scripts():
    assert anchors(DOCUMENT) == TARGETS


def test_the_same_targets_whatever_the_chunk_boundaries():
    data = DOCUMENT.encode("utf-8")
    for size in (1, 2, 3, 5, 7, 16, 61):
        scanner = AnchorScanner([])
        for start in range(0, len(data), size):
            scanner.feed(data[start:start + size])
        scanner.close()
        assert scanner.names == TARGETS, size


def test_every_split_point_of_a_page_longer_than_the_sniffing_window():
    data = (b"<p>" + b"x" * 5000 + b"</p><!-- <b id=hidden> --><p id='found'>y</p><script>'<i id=js>'</script>")
    for cut in range(4090, len(data)):
        scanner = AnchorScanner([])
        scanner.feed(data[:cut])
        scanner.feed(data[cut:])
        scanner.close()
        assert scanner.names == {"found"}, cut


def test_the_scanner_is_done_once_every_wanted_fragment_was_seen():
    scanner = AnchorScanner([wanted_names("legacy"), wanted_names("caf%C3%A9")])
    scanner.feed(DOCUMENT.encode("utf-8") * 20)  # past the sniffing window: scanned before close()
    assert scanner.done and scanner.found == {"legacy", "café"}


@pytest.mark.parametrize("fragment, names", [("top", set()), ("", set()), (":~:text=hi", set()),
                                              ("caf%C3%A9", {"café", "caf%C3%A9", "user-content-café"})])
def test_wanted_names(fragment, names):
    assert wanted_names(fragment) == names


@pytest.mark.parametrize("prefix, declared, charset", [
    (b"\xef\xbb\xbf<p>", "iso-8859-1", "utf-8"),  # a BOM wins over the header (as in browsers)
    (b"<meta charset='iso-8859-1'><p id='caf\xe9'>", None, "cp1252"),  # latin-1 is read as windows-1252
    (b"<meta http-equiv='Content-Type' content='text/html; charset=Shift_JIS'>", None, "shift_jis"),
    (b"<meta charset='utf-8'>", "iso-8859-2", "iso8859-2"),  # the header wins over <meta>
    (b"<p>caf\xc3\xa9</p>", None, "utf-8"),  # nothing declared, valid UTF-8
    (b"<p>caf\xe9</p>", None, "cp1252"),  # nothing declared, not UTF-8
    (b"<meta charset='no-such-codec'><p>x</p>", "also-unknown", "utf-8"),
    (b"<meta charset='utf-16'>", None, "utf-8"),  # a UTF-16 declaration without a BOM is read as UTF-8
])
def test_the_charset_is_the_bom_then_the_header_then_meta_then_detection(prefix, declared, charset):
    assert sniff_charset(prefix, declared) == charset
