"""Rendering of result records as JSON, Markdown and HTML (everything shown is escaped).

``contam report PATH...`` recognizes what contam's commands wrote (:mod:`.inputs`), renders
each result into a neutral :class:`~contam.report.model.Section` (:mod:`.data_side`,
:mod:`.model_side`), and writes the sections as one HTML page (:mod:`.html_writer`), one
Markdown document (:mod:`.markdown_writer`) or one merged JSON (:mod:`.build`).
"""

from contam.report.build import FORMATS, RENDERERS, build_report, merged_json, render, write_report
from contam.report.data_side import RenderOptions
from contam.report.inputs import Result, classify, load_inputs
from contam.report.model import Report, Section

__all__ = [
    "FORMATS",
    "RENDERERS",
    "RenderOptions",
    "Report",
    "Result",
    "Section",
    "build_report",
    "classify",
    "load_inputs",
    "merged_json",
    "render",
    "write_report",
]
