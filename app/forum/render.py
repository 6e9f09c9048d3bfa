"""Post bodies as HTML: escaped plain text, line breaks, ``>>N`` anchors, autolinked URLs and
the site's own pages named by their path (``/games/12``, ``/games/eitsuku/howto``)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from markupsafe import Markup, escape

# The site's pages a post may name by their path alone (the bot's replies point at the game
# page, the guide at the 遊び方 pages): an allow-list of fixed shapes, linked root-relative as
# the thread's own links are. A path inside a word or a URL (``a/games``, ``//host/games``,
# ``x:/games``) or going on past its shape (``/games/3/x``, ``/games/3.5``) is not one.
_SITE_PATHS = (
    r"games(?:/(?:new(?:\?kind=[a-z]{2,20})?|[0-9]{1,9}|[a-z]{2,20}/howto(?:\?lang=en)?))?",
    r"threads/[0-9]{1,9}",
    r"archive(?:/[0-9]{1,9})?",
    r"ratings/[a-z]{2,20}",
    r"cards",
    r"me",
)
_SITE_PATH = (
    r"(?<![A-Za-z0-9_/.:~%@-])/(?:"
    + "|".join(_SITE_PATHS)
    + r")(?![A-Za-z0-9_/?=&%-]|\.[A-Za-z0-9])"
)
# >>12, ＞＞１２, >>3-5 (a range links to its first post).
_TOKEN = re.compile(
    r"(?P<anchor>[>＞]{2}(?P<n>[0-9０-９]{1,6})(?:[-ー−][0-9０-９]{1,6})?)"
    r"|(?P<url>https?://[^\s<>\"'`\u3000-\u303f\uff01-\uff60]+)"
    rf"|(?P<path>{_SITE_PATH})"
)
_TRAILING_PUNCT = ".,;:!?)]}"

AnchorHref = Callable[[int], str]


def _split_url(url: str) -> tuple[str, str]:
    """Punctuation that ends a sentence is not part of the link."""
    end = len(url)
    while end > 0 and url[end - 1] in _TRAILING_PUNCT:
        end -= 1
    return url[:end], url[end:]


def render_body(body: str, anchor_href: AnchorHref) -> Markup:
    out: list[str] = []
    pos = 0
    for match in _TOKEN.finditer(body):
        out.append(str(escape(body[pos : match.start()])))
        if match.group("anchor"):
            number = int(unicodedata.normalize("NFKC", match.group("n")))
            out.append(
                f'<a class="anchor" href="{escape(anchor_href(number))}" '
                f'data-anchor="{number}">{escape(match.group("anchor"))}</a>'
            )
        elif match.group("path"):
            path = match.group("path")
            out.append(f'<a class="site-path" href="{escape(path)}">{escape(path)}</a>')
        else:
            url, rest = _split_url(match.group("url"))
            if url.endswith("//"):  # nothing but punctuation after the scheme
                out.append(str(escape(match.group("url"))))
            else:
                out.append(
                    f'<a href="{escape(url)}" rel="nofollow noopener" target="_blank">'
                    f"{escape(url)}</a>{escape(rest)}"
                )
        pos = match.end()
    out.append(str(escape(body[pos:])))
    return Markup("".join(out).replace("\n", "<br>"))
