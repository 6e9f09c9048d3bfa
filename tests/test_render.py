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


# --- the site's pages named by their path (the bot's replies, the guide) ------------------


def test_a_site_path_the_bot_names_is_a_link_to_that_page() -> None:
    html = render_body("マップはゲームページで: /games/3", href)
    assert html.endswith('<a class="site-path" href="/games/3">/games/3</a>')
    howto = render_body("遊び方: /games/eitsuku/howto。", href)
    assert '<a class="site-path" href="/games/eitsuku/howto">/games/eitsuku/howto</a>。' in howto
    new = render_body("（/games/new?kind=eitsuku から）", href)
    assert 'href="/games/new?kind=eitsuku"' in new and new.endswith("</a> から）")
    for path in ("/games", "/archive", "/ratings/populous", "/cards", "/me", "/threads/12"):
        assert f'href="{path}"' in render_body(f"{path} を見てください", href), path


def test_only_the_allowed_shapes_are_site_paths_never_inside_a_word_or_a_url() -> None:
    for text in (
        "x/games/3",
        "//evil.example/games/3",
        "javascript:/games/1",
        "/games/3/board.svg",
        "/games/3.5",
        "/gamesx",
        "/ratings/種類",
        "/admin",
        "/me/turns",
    ):
        assert 'class="site-path"' not in render_body(text, href), text
    url = render_body("https://example.com/games/3", href)
    assert 'href="https://example.com/games/3"' in url and "site-path" not in url


def test_a_quote_after_a_site_path_cannot_reach_the_attribute() -> None:
    html = render_body('/games/1"onmouseover="x', href)
    assert html.startswith('<a class="site-path" href="/games/1">/games/1</a>&#34;onmouseover=')
