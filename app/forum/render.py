"""Post bodies as HTML: escaped plain text, line breaks, ``>>N`` anchors and autolinked URLs."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from markupsafe import Markup, escape

# >>12, ＞＞１２, >>3-5 (a range links to its first post).
_TOKEN = re.compile(
    r"(?P<anchor>[>＞]{2}(?P<n>[0-9０-９]{1,6})(?:[-ー−][0-9０-９]{1,6})?)"
    r"|(?P<url>https?://[^\s<>\"'`\u3000-\u303f\uff01-\uff60]+)"
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
