"""A report as headless Chromium lays it out at 1280 × 900: what the first screen holds and
whether the page scrolls sideways (``None`` without Chromium)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

_PROBE = """<script>window.addEventListener('load', () => {
  const box = e => e.getBoundingClientRect();
  const lead = document.querySelector('section.lead');
  const img = lead ? lead.querySelector('img') : null;
  const probe = {
    width: window.innerWidth, height: window.innerHeight,
    scroll_width: document.documentElement.scrollWidth,
    first_section: document.querySelector('section h2').textContent,
    lead: lead ? [...lead.querySelectorAll(':scope > p')].map(
      p => ({text: p.textContent, bottom: box(p).bottom, cls: p.className})) : [],
    figure_bottom: img ? box(img).bottom : null,
    figure_loaded: img ? img.naturalWidth > 0 : false,
    warning_lists: document.querySelectorAll('details.warnings').length,
    warnings: [...document.querySelectorAll('details.warnings li')].map(li => li.textContent),
    loose_warnings: document.querySelectorAll('div.warn').length,
  };
  document.body.setAttribute('data-probe', JSON.stringify(probe));
});</script>"""


def first_screen(page: str, folder: Path) -> dict | None:
    """The probe of ``page`` (an HTML report) laid out at 1280 × 900 in headless Chromium."""
    if CHROMIUM is None:
        return None
    path = folder / "probe.html"
    path.write_text(page.replace("</body>", _PROBE + "</body>"), encoding="utf-8")
    out = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         f"--user-data-dir={folder / 'profile'}", "--window-size=1280,900",
         "--virtual-time-budget=5000", "--dump-dom", f"file://{path}"],
        check=True, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    found = re.search(r'data-probe="([^"]*)"', out.stdout)
    assert found, out.stdout[-2000:] + out.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))
