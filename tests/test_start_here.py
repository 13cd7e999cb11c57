"""Issue 32.10: ``contam --help`` says where to start (``audit``, listed first), and the docs'
landing page links only pages that exist in the source tree (not ones ``make docs`` generates)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTAM = str(Path(sys.executable).with_name("contam"))


def test_help_marks_audit_as_where_to_start() -> None:
    p = subprocess.run([CONTAM, "--help"], capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "Start here: `contam audit`" in out, out
    rows = out.split("Commands", 1)[1].splitlines()
    commands = [m.group(1) for r in rows if (m := re.match(r"[│|]\s(\S+)\s{2,}", r))]
    assert commands[0] == "audit", commands
    audit_row = next(r for r in rows if re.match(r"[│|]\s+audit\s", r))
    assert "Start here" in audit_row, audit_row


def test_index_links_only_pages_in_the_source_tree() -> None:
    index = ROOT / "docs" / "index.md"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", index.read_text(encoding="utf-8"))
    local = [x for x in links if not re.match(r"[a-z]+:", x)]
    assert local, "the landing page links no page at all"
    missing = [x for x in local if not (index.parent / x).is_file()]
    assert not missing, f"docs/index.md links pages that exist only after `make docs`: {missing}"
