"""The page reader, pure: the charset as a browser picks it, and ids found however the bytes are chunked."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphsite.citations.pages import AnchorScanner, anchors, sniff_charset, wanted_names

DOCUMENT = ("<!doctype html><html><head><meta charset='utf-8'><title>t</title><!-- <p id='in-comment'> -->"
            "<script>var s = '<a id=in-script>';</script><style>#x{}</style></head><body>"
            "<h2 ID=\"Upper\">a</h2><p id='café'>b</p><a name=legacy>c</a><meta name='not-a-target'>"
            "<div data-id='nope'></div><p id=\"a&amp;b\">d</p></body></html>")
TARGETS = {"Upper", "café", "legacy", "a&b"}


def test_ids_and_named_anchors_outside_comments_and_scripts():
    assert anchors(DOCUMENT) == TARGETS


def test_the_same_targets_whatever_the_chunk_boundaries():
    data = b" " * 4096 + DOCUMENT.encode("utf-8")  # past the sniffing window: the chunks come to the scanner cut
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


def feed_in(data: bytes, size: int, groups=()) -> AnchorScanner:
    scanner = AnchorScanner(list(groups))
    for start in range(0, len(data), size):
        scanner.feed(data[start:start + size])
    scanner.close()
    return scanner


@pytest.mark.parametrize("opening, closing", [("<!--", "-->"), ("<script>", "</script>"),
                                              ("<style type=x>", "</STYLE >")])
def test_a_big_comment_script_or_style_is_not_kept_while_its_ending_is_awaited(opening, closing):
    """The scanner used to keep an unclosed comment, script or style whole and match it again from its start
    on every chunk (2.7 s of a stalled event loop for a 4 MB script): now only a few characters are carried."""
    scanner = AnchorScanner([])
    scanner.feed(f"<p id=before>{opening}".encode())
    carried = []
    for _ in range(300):
        scanner.feed(b"var a = '<b id=hidden>'; // -- - </scrip </styl\n" * 100)
        carried.append(len(scanner._carry))
    scanner.feed(f"{closing}<p id=after>".encode())
    scanner.close()
    assert max(carried) <= 16 and scanner.names == {"before", "after"}


def test_a_huge_start_tag_split_over_many_chunks_keeps_its_id_and_is_not_copied_per_chunk():
    data = b"<div " + b"data-x='y' " * 50_000 + b"id=deep>text</div><p id=next>"
    assert feed_in(data, 4096).names == {"deep", "next"}
    assert feed_in(data, 4096, [wanted_names("deep")]).done
    scanner = AnchorScanner([])
    scanner.feed(b" " * 4096 + data[:300_000])  # past the sniffing window, in 1 KiB chunks from here
    parts = len(scanner._tag)
    for start in range(300_000, 500_000, 1024):
        scanner.feed(data[start:start + 1024])
        assert scanner._carry == "" and len(scanner._tag) == parts + 1, "kept in parts, not joined per chunk"
        parts += 1
    scanner.feed(data[500_000:])
    scanner.close()
    assert scanner.names == {"deep", "next"}


def test_raw_text_ends_at_the_appropriate_end_tag_only():
    document = ("<script id=js>'</scripts><b id=no1>' </script\t><i id=yes1>"
                "<style>/* </stylex><b id=no2> */</style/><i id=yes2><!-- <b id=no3> --><i id=yes3><!--")
    data = b" " * 4096 + document.encode()  # past the sniffing window: the chunks reach the scanner as they come
    for size in (1, 3, 7, 4096):
        assert feed_in(data, size).names == {"js", "yes1", "yes2", "yes3"}, size


_PIECES = st.sampled_from(["<p id=a>", "<a name='b'>", "<!--", "-->", "<script>", "</script>", "<style>",
                           "</style >", "<div\nid=\"c\"", ">", "<", "x", "</p>", "<!doctype html>", "<i id=d/>",
                           "é", "&amp;", " id=e ", "<br>"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=40), st.integers(min_value=1, max_value=9))
def test_the_chunking_never_changes_what_is_found(pieces, size):
    # The padding first: the scanner holds the first 4 KiB until it knows the charset, then takes each chunk
    # as it comes, so the pieces are cut at every chunk boundary.
    data = b" " * 4096 + ("<html>" + "".join(pieces)).encode()
    assert feed_in(data, size).names == feed_in(data, len(data)).names
