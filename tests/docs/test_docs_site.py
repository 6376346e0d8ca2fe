"""The documentation site: docs/ builds with ProperDocs (mkdocs.yml) in strict mode, so a link to a missing page,
file or heading, or a page left out of the navigation, fails the tests; the build runs offline (the network is cut
in its process) and the pages load nothing from the network. The README stays short, and its links land on pages
and headings that exist."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README_MAX_LINES = 250

# `properdocs build --strict`, with every socket refused in the process: the build must not need the network.
OFFLINE_BUILD = """
import socket, sys
def _refused(*args, **kwargs):
    raise OSError("the documentation build tried to use the network")
socket.socket.connect = _refused
socket.create_connection = _refused
socket.getaddrinfo = _refused
from properdocs.__main__ import cli
sys.argv = ["properdocs", "build", "-f", sys.argv[1], "--strict", "--site-dir", sys.argv[2]]
cli()
"""


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", OFFLINE_BUILD, str(config), str(site)], cwd=config.parent,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = _build(ROOT / "mkdocs.yml", out)
    assert done.returncode == 0 and "WARNING" not in done.stderr, done.stderr
    return out


def _page(site: Path, doc: str) -> Path:
    name = doc.removesuffix(".md")
    return site / "index.html" if name == "index" else site / name / "index.html"


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.loads: list[str] = []  # what the page would fetch: scripts, stylesheets, images

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "script" and a.get("src"):
            self.loads.append(str(a["src"]))
        if tag == "link" and a.get("rel") in ("stylesheet", "preload", "icon") and a.get("href"):
            self.loads.append(str(a["href"]))
        if tag == "img" and a.get("src"):
            self.loads.append(str(a["src"]))


def _parse(path: Path) -> _Ids:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def test_every_page_of_docs_is_built_and_loads_nothing_from_the_network(site: Path) -> None:
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert "index.md" in pages and len(pages) >= 20
    for doc in pages:
        parsed = _parse(_page(site, doc))
        assert parsed.ids, doc
        assert not [u for u in parsed.loads if re.match(r"(https?:)?//", u)], (doc, parsed.loads)


def test_a_broken_link_or_anchor_fails_the_build(tmp_path: Path) -> None:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(DOCS, tmp_path / "docs")
    page = tmp_path / "docs" / "resume.md"
    page.write_text(page.read_text() + "\n[a](configs.md#no-such-heading) [b](no-such-page.md) [c](#nope)\n")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    for link in ("configs.md#no-such-heading", "no-such-page.md", "#nope"):
        assert f"contains a link '{link}'" in done.stderr, link


def _github_slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_the_readme_is_short_and_its_links_land_on_pages_and_headings(site: Path) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    headings = {_github_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link for link in links if not re.match(r"https?://", link)]
    assert len(local) >= 10
    for link in local:
        target, _, anchor = link.partition("#")
        if not target:
            assert anchor in headings, link
            continue
        assert target.startswith("docs/") and (ROOT / target).is_file(), link
        if anchor:
            assert anchor in _parse(_page(site, target.removeprefix("docs/"))).ids, link
