"""Post bodies render as escaped plain text with line breaks, >>N anchors and autolinked URLs."""

from __future__ import annotations

from app.forum.render import render_body


def href(n: int) -> str:
    return f"#{n}"


def test_body_is_escaped_plain_text() -> None:
    html = render_body('<script>alert(1)</script> & "q"', href)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;q&#34;" in html


def test_line_breaks_become_br() -> None:
    assert render_body("一行目\n二行目", href) == "一行目<br>二行目"


def test_anchor_links_to_post_number() -> None:
    html = render_body(">>12 了解", href)
    assert html == '<a class="anchor" href="#12" data-anchor="12">&gt;&gt;12</a> 了解'


def test_full_width_anchor_is_an_anchor_too() -> None:
    html = render_body("＞＞１２", href)
    assert 'data-anchor="12"' in html and 'href="#12"' in html


def test_anchor_range_links_to_first_post() -> None:
    assert 'data-anchor="3"' in render_body(">>3-5", href)


def test_anchor_href_comes_from_the_page_layout() -> None:
    html = render_body(">>150", lambda n: f"?page=2#{n}")
    assert 'href="?page=2#150"' in html


def test_url_autolinked_with_nofollow_noopener() -> None:
    html = render_body("見て https://example.com/a?b=1&c=2 です", href)
    assert (
        '<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener" target="_blank">'
        "https://example.com/a?b=1&amp;c=2</a> です"
    ) in html


def test_url_trailing_punctuation_is_not_linked() -> None:
    html = render_body("(https://example.com/x).", href)
    assert 'href="https://example.com/x"' in html
    assert "</a>)." in html


def test_url_stops_at_japanese_punctuation() -> None:
    html = render_body("https://example.com/x。次", href)
    assert 'href="https://example.com/x"' in html


def test_javascript_urls_are_not_linked() -> None:
    html = render_body("javascript:alert(1)", href)
    assert "<a" not in html


def test_quote_in_url_cannot_break_out_of_attribute() -> None:
    html = render_body('https://e.com/"onmouseover="x', href)
    assert 'onmouseover="x' not in html.replace("&#34;", "")
    assert 'href="https://e.com/"' in html
