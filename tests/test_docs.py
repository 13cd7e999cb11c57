"""The documentation site: it builds offline with ``mkdocs build --strict`` (a broken link or
anchor, a missing snippet or a docstring the API reference cannot render fails the build), and
every internal link, anchor and asset of the built site resolves."""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import docs_hooks  # noqa: E402  (tools/ is not a package; the hook module is what mkdocs.yml loads)


class _Page(HTMLParser):
    """The ids a page defines and the links (href / src) it makes."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.blockquotes = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if name in ("href", "src") and value is not None:
                self.links.append((tag, name, value))
        if tag == "blockquote":
            self.blockquotes += 1


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[Path, _Page]]:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    pages: dict[Path, _Page] = {}
    for html in out.rglob("*.html"):
        page = _Page()
        page.feed(html.read_text(encoding="utf-8"))
        pages[html] = page
    return out, proc.stderr, pages


def test_strict_build_has_no_warnings(site: tuple[Path, str, dict[Path, _Page]]) -> None:
    _, log, pages = site
    assert "WARNING" not in log, log
    names = {p.name for p in pages}
    for page in ("index.html", "tour.html", "cli.html", "results.html", "glossary.html", "limitations.html"):
        assert page in names


def test_every_internal_link_and_anchor_resolves(site: tuple[Path, str, dict[Path, _Page]]) -> None:
    out, _, pages = site
    broken: list[str] = []
    checked = 0
    for path, page in pages.items():
        for tag, attr, value in page.links:
            parts = urlsplit(value)
            if parts.scheme or value.startswith("//"):
                continue  # external: not ours to check offline
            if parts.path.startswith("/"):
                # Only the 404 page links from the site root (it is served at any depth);
                # elsewhere a root link breaks the site opened from disk or under a sub-path.
                if path.name != "404.html":
                    broken.append(f"{path.relative_to(out)}: root-absolute link {value!r}")
                    continue
                target = (out / unquote(parts.path).lstrip("/")).resolve()
            else:
                target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir() or parts.path.endswith("/"):
                target = target / "index.html"
            where = f"{path.relative_to(out)}: <{tag} {attr}={value!r}>"
            if not target.is_file() or out.resolve() not in target.resolve().parents:
                broken.append(f"{where}: no file {target}")
                continue
            checked += 1
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _ids_of(target)
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{where}: no anchor #{parts.fragment}")
    assert not broken, "\n".join(broken[:50])
    assert checked > 500  # the site's links were really seen


def _ids_of(path: Path) -> set[str]:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page.ids


def test_pages_load_nothing_from_the_network(site: tuple[Path, str, dict[Path, _Page]]) -> None:
    """Fonts, styles and scripts are local files (theme.font: false), so the site works offline."""
    _, _, pages = site
    remote = [
        f"{path.name}: {value}"
        for path, page in pages.items()
        for tag, attr, value in page.links
        if (tag in ("script", "img") or (tag == "link" and attr == "href")) and (urlsplit(value).scheme or value.startswith("//"))
    ]
    assert not remote, remote


def test_cli_reference_has_every_command(site: tuple[Path, str, dict[Path, _Page]]) -> None:
    import typer

    from contam.cli.main import app

    out, _, pages = site
    ids = pages[out / "cli.html"].ids
    root = typer.main.get_command(app)
    expected: list[str] = []

    def walk(cmd: object, path: str) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            expected.append(f"{path}-{name}")
            walk(sub, f"{path}-{name}")

    walk(root, "contam")
    assert len(expected) > 25
    missing = [e for e in expected if e not in ids]
    assert not missing, missing
    text = (out / "cli.html").read_text(encoding="utf-8")
    assert "--corpus" in text and "--thresholds" in text  # options of `contam scan` are listed


def test_api_reference_documents_every_public_module(site: tuple[Path, str, dict[Path, _Page]]) -> None:
    out, _, pages = site
    for page, (_, packages) in docs_hooks.API_PAGES.items():
        html = out / "api" / f"{page}.html"
        ids = pages[html].ids
        modules = [m for p in packages for m in docs_hooks.public_modules(p)]
        missing = [m for m in modules if m != packages[0] and m not in ids]
        assert not missing, (page, missing)
        # Doctest examples render as code blocks, not as Markdown blockquotes (tools/griffe_doctest_blocks.py).
        assert pages[html].blockquotes == 0, page
    assert "contam.stats.calibration.contamination_confidence" in pages[out / "api" / "stats.html"].ids


def test_results_page_is_bench_results(site: tuple[Path, str, dict[Path, _Page]]) -> None:
    out, _, _ = site
    text = (out / "results.html").read_text(encoding="utf-8")
    headings = [
        line[3:].strip() for line in (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8").splitlines() if line.startswith("## ")
    ]
    assert len(headings) >= 5
    from html import escape

    for h in headings:
        # the section's words appear in the page (markup like `code` becomes <code>)
        assert escape(h.split("`")[0].strip(), quote=False) in text, h


@pytest.mark.parametrize(
    "page", sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md") if ">>>" in p.read_text(encoding="utf-8"))
)
def test_examples_in_the_docs_run(page: str) -> None:
    """Every ``>>>`` example on a docs page runs and prints what the page says (offline, real data
    and the embedded model), so a newcomer can call each API the documented way."""
    import doctest
    import re

    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    # The examples are the ```pycon blocks; each block ends its last expected output.
    blocks = re.findall(r"^```pycon\n(.*?)^```", text, flags=re.S | re.M)
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, page, page, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0, f"{page}: {result.failed} of {result.attempted} examples failed (output above)"
