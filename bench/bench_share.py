"""``regista share`` on a realistic 50 MB trace: writing the page, and using it in Chromium.

Measures, against floors measured in the same run (medians of ``--repeat``):

- writing the page vs. ``Trace.load`` of the same trace (what any page of it must read);
- the page's size vs. the trace's;
- in headless Chromium (Debian's ``chromium``, driven by playwright): opening the page until
  the timeline is drawn, vs. opening a page holding as many bytes of inert data (the browser
  reading that many bytes); opening one step, in milliseconds.

    .venv/bin/python bench/bench_share.py [--mb 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from realistic import realistic_trace

from regista.share import write_share
from regista.trace.reader import Trace

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        trace = realistic_trace(d / "big.jsonl", args.mb)
        size = trace.stat().st_size
        loads, writes = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            Trace.load(trace)
            loads.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            page = write_share(d / "big.html", trace)
            writes.append(time.perf_counter() - t0)
        load, write = statistics.median(loads), statistics.median(writes)
        print(
            f"trace {size / 1e6:.0f} MB, {len(Trace.load(trace).steps())} steps: page written in "
            f"{write:.1f} s = {write / load:.2f}x Trace.load ({load:.1f} s); page "
            f"{page.stat().st_size / 1e6:.0f} MB = {page.stat().st_size / size:.2f}x the trace"
        )
        blank = d / "blank.html"
        blank.write_text(  # the same bytes to read, as inert data: no drawing, no decoding
            '<!DOCTYPE html><body><script type="application/json">'
            + "x" * page.stat().st_size
            + "</script></body>"
        )
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            ctx = pw.chromium.launch_persistent_context(
                str(d / "profile"),
                executable_path="/usr/bin/chromium",
                headless=True,
                args=FLAGS,
                offline=True,
            )
            opens, blanks, steps = [], [], []
            for _ in range(args.repeat):
                p = ctx.new_page()
                t0 = time.perf_counter()
                p.goto(blank.as_uri(), timeout=120_000)
                blanks.append(time.perf_counter() - t0)
                p.close()
                p = ctx.new_page()
                t0 = time.perf_counter()
                p.goto(page.as_uri(), timeout=120_000)
                p.wait_for_selector("body[data-ready='1']", timeout=120_000)
                opens.append(time.perf_counter() - t0)
                rows = p.locator("#timeline .row")
                t0 = time.perf_counter()
                rows.nth(3).click()
                p.wait_for_selector("#detail .step-detail")
                steps.append(time.perf_counter() - t0)
                p.close()
            ctx.close()
        o, b, s = statistics.median(opens), statistics.median(blanks), statistics.median(steps)
        print(
            f"Chromium: page ready in {o:.2f} s = {o / b:.2f}x a page of as many inert bytes "
            f"({b:.2f} s); a step opens in {s * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
