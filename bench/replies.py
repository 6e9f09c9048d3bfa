"""How much room the bot's replies take in a thread (issue #43): one whole game of every kind
by random legal play (the scripted games of tests/support/fuzz_states.py), posted one move a
post through the real post path (app.gm.service over a fresh SQLite database, in process),
and per kind the bot replies' lines (median / max), the share over 12 lines, and the estimated
height of a post at 390 px (median / max).

The height: `tests.support.replies.estimated_height`, a post's frame plus a line height per
shown line, a body line wrapping after COLUMNS half-width columns. Those three constants were
measured once in Chromium (``--calibrate``): the thread page of a played game opened with
Playwright at a 390 px wide viewport (the pictures made eager and waited for), each bot post's
boxes read with ``getBoundingClientRect`` — the article, its .post-body, its board picture —
and the body's height fitted against its shown lines for every width from 24 to 80 columns
(line = the slope, the width with the least median error; frame = the article less its body
and picture). The board picture is counted apart (pictures a game): at 390 px it is as tall as
it is (えいつく's 1,080 px), whatever the reply says, so it is not in a post's height. Run:

    python bench/replies.py              # the figures
    python bench/replies.py --calibrate  # also measure the thread page in Chromium

Targets (issue #43): median reply ≤ 6 lines, replies over 12 lines ≤ 25 %, ≤ 220 px a post.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.db.engine import Database  # noqa: E402
from bench.common import SECRET, scratch_database  # noqa: E402
from tests.support.replies import (  # noqa: E402
    KINDS,
    Played,
    estimated_height,
    play_game,
    shown_lines,
)


def figures(played: Played) -> dict[str, float]:
    lines = [body.count("\n") + 1 for body in played.replies]
    heights = [estimated_height(body) for body in played.replies]
    return {
        "replies": len(lines),
        "median": statistics.median(lines),
        "max": max(lines),
        "over12": sum(n > 12 for n in lines) / len(lines),
        "px": statistics.median(heights),
        "px_max": max(heights),
        "px_mean": statistics.mean(heights),
        "pictures": played.pictures,
    }


def calibrate(url: str, played: Played) -> None:
    """Measure the bot posts of ``played``'s thread in Chromium at 390 px and fit the model."""
    from playwright.sync_api import sync_playwright

    from app.config import Settings
    from tests.conftest import LiveServer

    settings = Settings(database_url=url, secret_key=SECRET, tick_seconds=0, rate_limits=False)
    server = LiveServer(settings, Database(url))
    server.start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium")
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(f"{server.url}/threads/{played.thread_id}", wait_until="load")
            page.eval_on_selector_all("img", "els => els.forEach(e => { e.loading = 'eager' })")
            page.wait_for_load_state("networkidle")
            rows = page.eval_on_selector_all(
                "article.post-gm",
                """els => els.map(e => [Number(e.id), e.getBoundingClientRect().height,
                    e.querySelector('.post-body').getBoundingClientRect().height,
                    (e.querySelector('figure') || {getBoundingClientRect: () => ({height: 0})})
                        .getBoundingClientRect().height])""",
            )
            browser.close()
    finally:
        server.stop()
    bodies = dict(zip(played.numbers, played.replies, strict=True))
    sample = [(bodies[int(r[0])], r[1], r[2], r[3]) for r in rows if int(r[0]) in bodies]
    print(f"measured {len(sample)} bot posts of {len(played.replies)} (the thread's first page)")
    fits = []
    for width in range(24, 80):  # the columns a line holds: the one that fits best
        xs = [shown_lines(body, width) for body, *_ in sample]
        ys = [body_px for _, _, body_px, _ in sample]
        slope, intercept = statistics.linear_regression(xs, ys)
        misses = [abs(intercept + slope * x - y) for x, y in zip(xs, ys, strict=True)]
        error = statistics.median(misses)
        fits.append((error, width, slope, intercept))
    error, width, slope, intercept = min(fits)
    frames = [total - body_px - fig for _, total, body_px, fig in sample]
    pictures = [fig for *_, fig in sample if fig]
    print(
        f"fit: body {intercept:.1f} px + {slope:.1f} px a shown line, {width} columns a line;"
        f" frame {statistics.median(frames):.1f} px;"
        f" picture {statistics.median(pictures) if pictures else 0:.1f} px"
    )
    sample = [(body, total - fig) for body, total, _, fig in sample]
    errors = [abs(estimated_height(body) - h) for body, h in sample]
    print(f"model error median {statistics.median(errors):.1f} px, max {max(errors):.1f} px")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibrate", action="store_true")
    parser.add_argument("--kind", action="append", choices=KINDS)
    args = parser.parse_args()
    with scratch_database(None) as url:
        db = Database(url)
        print(f"{'kind':<11} replies  lines med/max  >12 lines  px med/mean/max (390 px)  pictures")
        for kind in args.kind or KINDS:
            with db.session() as session:
                played = play_game(session, kind)
                session.commit()
            f = figures(played)
            print(
                f"{kind:<11} {f['replies']:>7}  {f['median']:>5g} / {f['max']:<5g}"
                f"  {f['over12']:>8.0%}  {f['px']:>5g} / {f['px_mean']:.0f} / {f['px_max']:<6g}"
                f"  {f['pictures']:g}"
            )
            if args.calibrate and kind == (args.kind or KINDS)[0]:
                calibrate(url, played)
        db.dispose()


if __name__ == "__main__":
    main()
