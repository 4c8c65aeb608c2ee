"""Every page link the docs give a teacher opens a story: each `?query` in docs/teaching.md's class in the browser
(and the iframe of docs/web.md) is one the engine answers, so a link sent to 30 students works."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from idemsim.web.engine import handle

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"`(\?[^`\s]+)`")


def links() -> list[str]:
    teaching = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    class_in_browser = teaching[teaching.index("### The same class in the browser"):]
    found = LINK.findall(class_in_browser.split("\n## ", 1)[0])
    web = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    found += ["?" + urlsplit(src).query for src in re.findall(r'<iframe src="([^"]+)"', web)]
    return found


def test_the_docs_give_links():
    assert len(links()) >= 7


@pytest.mark.parametrize("link", links())
def test_each_link_opens_a_story(link):
    status, body = handle("/api/run", dict(parse_qsl(link[1:], keep_blank_values=True)))
    assert status == 200, body
