"""MkDocs hooks: the CLI reference and the API reference pages are generated at build time.

Both are derived from the code (the Typer app's click command tree, the package's module tree),
so they cannot drift from it: a new command, option or module appears on the next build.
``mkdocs.yml`` names this file under ``hooks:``; it only adds generated pages to the site and
never writes into ``docs/``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

#: API pages: page name -> (title, packages whose public modules it documents).
API_PAGES: dict[str, tuple[str, list[str]]] = {
    "core": ("contam: errors, records, outputs", ["contam"]),
    "data": ("contam.data", ["contam.data"]),
    "scan": ("contam.scan", ["contam.scan"]),
    "models": ("contam.models", ["contam.models"]),
    "probe": ("contam.probe", ["contam.probe"]),
    "perturb": ("contam.perturb", ["contam.perturb"]),
    "regen": ("contam.regen", ["contam.regen", "contam.regen.bfcl"]),
    "stats": ("contam.stats", ["contam.stats"]),
    "report": ("contam.report", ["contam.report"]),
}


# ---------------------------------------------------------------------------------------------
# API reference: one page per package, one mkdocstrings block per public module
# ---------------------------------------------------------------------------------------------


def public_modules(package: str) -> list[str]:
    """Dotted names of the package's public modules, read from the source tree (nothing is imported).

    For ``contam`` itself only its top-level modules (subpackages have their own pages).
    """
    folder = SRC.joinpath(*package.split("."))
    names = [package]
    for path in sorted(folder.glob("*.py")):
        if path.stem.startswith("_"):
            continue
        names.append(f"{package}.{path.stem}")
    return names


def api_markdown(title: str, packages: list[str]) -> str:
    """The markdown of one API page: the package docstring, then each public module in turn."""
    out = [f"# {title}", ""]
    out.append("Generated from the docstrings at build time; private names (a leading `_`) are left out.")
    out.append("")
    for package in packages:
        for module in public_modules(package):
            if module == package:
                # The package docstring says what is in it; its members are documented by module.
                out += [f"::: {module}", "    options:", "      members: false", "      show_root_heading: false", ""]
            else:
                out += [f"::: {module}", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# CLI reference: walk the click command tree Typer builds
# ---------------------------------------------------------------------------------------------


def _md_text(text: str) -> str:
    """Help text as markdown: keep backtick code, neutralise what markdown would misread."""
    for ch, rep in (("\\", "\\\\"), ("*", "\\*"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"), ("[", "\\["), ("]", "\\]")):
        text = text.replace(ch, rep)
    return text


def _plain(text: str) -> str:
    """Help text without its Rich markup (``[bold]...[/]``), as ``--help`` shows it."""
    from rich.errors import MarkupError
    from rich.text import Text

    try:
        return Text.from_markup(text).plain
    except MarkupError:
        return text


def _help_markdown(help_text: str) -> list[str]:
    """A command's docstring: prose paragraphs as text, ``Example:`` paragraphs as shell blocks."""
    out: list[str] = []
    help_text = _plain(help_text)
    for para in (p.strip() for p in help_text.replace("\b\n", "").split("\n\n")):
        if not para:
            continue
        if para.startswith("Example:"):
            out += ["```bash", " ".join(para[len("Example:") :].split()), "```", ""]
        else:
            out += [_md_text(" ".join(para.split())), ""]
    return out


def _param_row(param: Any) -> str:
    """One table row: names, type, default, help."""
    # Typer (0.29) builds its commands on its own copy of click with its own parameter classes,
    # so parameters and groups are told apart by what they have, not by isinstance checks.
    type_name = str(param.bare_type()) if callable(getattr(param, "bare_type", None)) else ""
    if param.param_type_name == "argument":
        name = f"`{param.name.upper()}`"
        kind = "argument " + type_name
    else:
        names = list(param.opts) + list(param.secondary_opts)
        name = " / ".join(f"`{n}`" for n in names)
        kind = "flag" if getattr(param, "is_flag", False) else type_name
    if param.multiple or param.nargs == -1:
        kind += ", repeatable"
    if param.required:
        default = "required"
    elif getattr(param, "is_flag", False) and not param.secondary_opts:
        default = "on" if param.default else "off"
    elif param.default is None or param.default == () or param.default == []:
        default = ""
    else:
        default = f"`{param.default}`"
    help_text = _md_text(" ".join(_plain(getattr(param, "help", None) or "").split()))
    return f"| {name} | {_md_text(kind)} | {default} | {help_text} |"


def _command_markdown(cmd: Any, ctx: Any, depth: int) -> list[str]:
    path = ctx.command_path
    out = [f"{'#' * min(depth, 6)} {path}", ""]
    if cmd.help:
        out += _help_markdown(cmd.help)
    usage = [path, "[OPTIONS]"]
    for p in cmd.params:
        if p.param_type_name == "argument":
            arg = p.name.upper() + ("..." if p.nargs == -1 else "")
            usage.append(arg if p.required else f"[{arg}]")
    if getattr(cmd, "commands", None):
        usage.append("COMMAND [ARGS]...")
    out += ["```text", " ".join(usage), "```", ""]
    params = [p for p in cmd.params if not getattr(p, "hidden", False) and p.name not in ("help",)]
    if params:
        out += ["| option | type | default | description |", "|---|---|---|---|"]
        out += [_param_row(p) for p in params]
        out += [""]
    if getattr(cmd, "commands", None):
        subs = [(n, c) for n, c in sorted(cmd.commands.items()) if not c.hidden]
        if subs:
            out += ["Commands: " + ", ".join(f"[`{n}`](#{_anchor(f'{path} {n}')})" for n, _ in subs), ""]
        for name, sub in subs:
            out += _command_markdown(sub, sub.context_class(sub, info_name=name, parent=ctx), depth + 1)
    return out


def _anchor(heading: str) -> str:
    """The id Python-Markdown's toc extension gives a heading like ``contam probe cdd``."""
    return "-".join(heading.lower().split())


def cli_markdown() -> str:
    """The whole CLI reference as one markdown page, from the click tree of ``contam.cli.main.app``."""
    import typer

    if str(SRC) not in sys.path:
        sys.path.insert(0, str(SRC))
    from contam.cli.main import app

    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="contam")
    out = [
        "# CLI reference",
        "",
        "Generated at build time from the Typer app (`contam.cli.main.app`): every command, argument and",
        "option as `contam COMMAND --help` prints it. Bad input stops with one line naming the file, line",
        "and field, and exit code 2; `--json` prints machine-readable output where a command has it.",
        "",
    ]
    body = _command_markdown(root, ctx, 1)
    # The root's own heading would repeat the page title: drop it, keep its usage and table.
    out += body[2:]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# the hook
# ---------------------------------------------------------------------------------------------


def on_files(files: Any, config: Any) -> Any:
    """Add the generated pages to the site before the nav is resolved."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, "cli.md", content=cli_markdown()))
    for page, (title, packages) in API_PAGES.items():
        files.append(File.generated(config, f"api/{page}.md", content=api_markdown(title, packages)))
    return files
