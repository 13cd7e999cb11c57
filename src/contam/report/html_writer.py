"""HTML writer: one self-contained page, inline CSS, no JavaScript, everything escaped.

Every piece of text in the model (titles, cells, benchmark text, model output, file names)
goes through :func:`html.escape` with ``quote=True``; the only markup is this module's own.
A Content-Security-Policy ``default-src 'none'`` forbids scripts, frames, images and remote
fetches even if a viewer were to find a way around the escaping.

>>> from contam.report.model import Report, SectionBuilder
>>> b = SectionBuilder("<b>x</b>", kind="scan", source="s")
>>> b.para("<script>alert(1)</script>")
>>> page = render_html(Report("r", (b.build(),)))
>>> "<script>" in page, "&lt;script&gt;alert(1)&lt;/script&gt;" in page
(False, True)
"""

from __future__ import annotations

import html

from contam.report.model import Excerpt, Inline, Paragraph, Report, Section, Table

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;max-width:72rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem}
.meta,.note,.source{color:#59636e;font-size:.9rem}
.headline{font-size:1.05rem;background:#f6f8fa;border-left:4px solid #8c959f;padding:.5rem .8rem}
.s-flagged .headline,.s-evidence .headline,.s-failures .headline{border-color:#cf222e}
.s-clean .headline,.s-no-evidence .headline{border-color:#1a7f37}
.badge{display:inline-block;font-size:.75rem;padding:0 .45rem;border-radius:1rem;background:#eaeef2;margin-left:.4rem;vertical-align:middle}
.b-flagged,.b-evidence,.b-failures{background:#ffebe9;color:#a40e26}.b-clean,.b-no-evidence{background:#dafbe1;color:#116329}
table{border-collapse:collapse;margin:.6rem 0 1rem;font-size:.88rem;display:block;overflow-x:auto}
caption{text-align:left;font-weight:600;padding:.2rem 0;color:#424a53}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;vertical-align:top}th{background:#f6f8fa}td.r{text-align:right;white-space:nowrap}
code{font:.85em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eff1f3;padding:.05rem .25rem;border-radius:4px;word-break:break-all}
mark{background:#fff3b0;padding:0 .1rem}
figure{margin:.6rem 0 1rem}figcaption{font-size:.88rem;color:#424a53;margin-bottom:.2rem}
blockquote{margin:0;padding:.5rem .8rem;background:#fbfbfc;border:1px solid #d0d7de;border-radius:6px;white-space:pre-wrap;
font:.85rem/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;max-height:24rem;overflow:auto}
ol.toc{padding-left:1.4rem}
.beside{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:.6rem}.beside figure{margin:.3rem 0}
"""

_TAGS = {"strong": "strong", "em": "em", "code": "code", "mark": "mark"}


def esc(s: object) -> str:
    """Escape text for HTML element content and attribute values."""
    return html.escape(str(s), quote=True)


def runs_html(runs: Inline, breaks: bool = True) -> str:
    """Inline runs as HTML; newlines become ``<br>`` unless ``breaks`` is off (pre-wrapped text)."""
    out = []
    for r in runs:
        t = esc(r.text)
        if breaks:
            t = t.replace("\n", "<br>")
        tag = _TAGS.get(r.style)
        out.append(f"<{tag}>{t}</{tag}>" if tag else t)
    return "".join(out)


def _block(b: Paragraph | Table | Excerpt) -> str:
    if isinstance(b, Paragraph):
        cls = b.role if b.role in ("headline", "note") else "text"
        return f'<p class="{cls}">{runs_html(b.runs)}</p>'
    if isinstance(b, Table):
        al = b.align or ("l",) * len(b.columns)
        head = "".join(f"<th>{esc(c)}</th>" for c in b.columns)
        body = "".join(
            "<tr>"
            + "".join(
                f'<td class="{"r" if (al[i] if i < len(al) else "l") == "r" else "l"}">{runs_html(cell)}</td>' for i, cell in enumerate(row)
            )
            + "</tr>"
            for row in b.rows
        )
        cap = f"<caption>{esc(b.caption)}</caption>" if b.caption else ""
        return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    one = f"<figure><figcaption>{runs_html(b.label)}</figcaption><blockquote>{runs_html(b.runs, breaks=False)}</blockquote></figure>"
    if not b.beside:
        return one
    other = (
        f"<figure><figcaption>{runs_html(b.beside_label)}</figcaption><blockquote>{runs_html(b.beside, breaks=False)}</blockquote></figure>"
    )
    return f'<div class="beside">{one}{other}</div>'


def _status_class(status: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in status.lower())


def _section(i: int, s: Section) -> str:
    st = _status_class(s.status)
    parts = [
        f'<section id="s{i}" class="s-{st}">',
        f'<h2>{i}. {esc(s.title)}<span class="badge b-{st}">{esc(s.status)}</span></h2>',
        f'<p class="source">from <code>{esc(s.source)}</code> ({esc(s.kind)})</p>',
    ]
    parts += [_block(b) for b in s.blocks]
    parts.append("</section>")
    return "\n".join(parts)


def render_html(report: Report) -> str:
    """The whole page as a string."""
    toc = "".join(
        f'<li><a href="#s{i}">{esc(s.title)}</a> <span class="badge b-{_status_class(s.status)}">{esc(s.status)}</span></li>'
        for i, s in enumerate(report.sections, 1)
    )
    skipped = ('<p class="note">Left out: ' + "; ".join(esc(x) for x in report.skipped) + "</p>") if report.skipped else ""
    body = "\n".join(_section(i, s) for i, s in enumerate(report.sections, 1))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">\n"
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(report.title)}</title>\n<style>{CSS}</style></head>\n<body>\n"
        f'<h1>{esc(report.title)}</h1>\n<p class="meta">{esc(report.version)} · {len(report.sections)} result(s)</p>\n'
        f'<ol class="toc">{toc}</ol>\n{skipped}\n{body}\n</body></html>\n'
    )
