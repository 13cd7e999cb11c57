"""One word per concept (issue 33): no two public classes of contam share a name, and every Python
name the glossary gives (``docs/glossary.md``) exists under that name, not only as an alias kept
for old scripts."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
GLOSSARY = ROOT / "docs" / "glossary.md"

#: A dotted contam name in backticks: `contam.perturb.VariantSet`, `contam.regen.branch`.
_NAME = re.compile(r"`(contam(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def public_classes(src: Path = SRC) -> dict[str, list[str]]:
    """Class name -> the modules that define it at top level, over every public module of
    ``src/contam`` (read with :mod:`ast`: nothing is imported, so optional extras need not be
    installed). Private classes and modules (a leading ``_``, ``__init__`` aside) are left out."""
    out: dict[str, list[str]] = {}
    for path in sorted((src / "contam").rglob("*.py")):
        rel = path.relative_to(src).with_suffix("")
        parts = list(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        if any(p.startswith("_") for p in parts):
            continue
        module = ".".join(parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                out.setdefault(node.name, []).append(module)
    return out


def resolve(dotted: str) -> object:
    """The module or object ``dotted`` names (a module first, else an attribute of its parent)."""
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError as e:
        if e.name is None or not dotted.startswith(e.name):
            raise
    parent, _, attr = dotted.rpartition(".")
    return getattr(resolve(parent), attr)


def glossary_problems(text: str) -> list[str]:
    """What is wrong with the Python names a glossary text gives (empty: nothing)."""
    problems: list[str] = []
    names = sorted(set(_NAME.findall(text)))
    if not names:
        problems.append("the glossary names no Python symbol")
    for dotted in names:
        try:
            obj = resolve(dotted)
        except (ImportError, AttributeError) as e:
            problems.append(f"{dotted}: does not exist ({e})")
            continue
        if isinstance(obj, ModuleType):
            if hasattr(obj, "RENAMED_TO"):
                problems.append(f"{dotted}: an old import path; the module is {obj.RENAMED_TO}")
        elif (real := getattr(obj, "__name__", last := dotted.rpartition(".")[2])) != last:
            problems.append(f"{dotted}: an alias of {real}, kept for old scripts; name {real}")
    return problems


def test_no_public_class_name_is_defined_twice() -> None:
    twice = {name: mods for name, mods in public_classes().items() if len(mods) > 1}
    assert not twice, f"one name per concept: these classes are defined in more than one module: {twice}"


def test_every_glossary_name_exists_under_that_name() -> None:
    problems = glossary_problems(GLOSSARY.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    """Both checks fail where they should: a class defined in two modules, a name that does not
    exist, an alias of a renamed function, an old module path."""
    pkg = tmp_path / "contam"
    (pkg / "a").mkdir(parents=True)
    (pkg / "_private").mkdir()
    (pkg / "a" / "one.py").write_text("class Verdict:\n    pass\n\n\nclass _Hidden:\n    pass\n")
    (pkg / "two.py").write_text("class Verdict:\n    pass\n\n\nclass Other:\n    pass\n")
    (pkg / "_private" / "three.py").write_text("class Other:\n    pass\n")
    found = public_classes(tmp_path)
    assert found["Verdict"] == ["contam.a.one", "contam.two"]
    assert found["Other"] == ["contam.two"] and "_Hidden" not in found

    assert glossary_problems("`contam.perturb.VariantSet`, `contam.probe.variantset`, `contam.stats.ConfidenceInterval`") == []
    bad = glossary_problems("`contam.perturb.NoSuchThing` `contam.perturb.make_reference_set` `contam.probe.reference`")
    assert len(bad) == 3
    assert "does not exist" in bad[0] and "alias of make_variant_set" in bad[1] and "old import path" in bad[2]
    assert glossary_problems("no names here") == ["the glossary names no Python symbol"]


#: Old public names (still importable, as aliases) -> the names they stand for now.
OLD_NAMES = {
    "contam.perturb.ReferenceSet": "contam.perturb.VariantSet",
    "contam.perturb.make_reference_set": "contam.perturb.make_variant_set",
    "contam.perturb.build_reference_set": "contam.perturb.build_variant_set",
    "contam.perturb.reference.build_reference_set": "contam.perturb.variantset.build_variant_set",
    "contam.perturb.folder.build_reference_folder": "contam.perturb.folder.build_variant_folder",
    "contam.probe.load_reference": "contam.probe.load_variants",
    "contam.probe.reference.load_reference": "contam.probe.variantset.load_variants",
    "contam.probe.reference.variants_as_reference": "contam.probe.variantset.variants_by_item",
    "contam.probe.reference.pair_items": "contam.probe.variantset.pair_items",
    "contam.probe.evalprobes.Verdict": "contam.probe.evalresults.SetVerdict",
    "contam.stats.Interval": "contam.stats.ConfidenceInterval",
    "contam.stats.results.Interval": "contam.stats.results.ConfidenceInterval",
    "contam.scan.reasoning.Step": "contam.scan.reasoning.ReasoningStep",
    "contam.scan.dcq.Task": "contam.scan.dcq.DcqTask",
    "contam.regen.bfcl.Rejection": "contam.regen.bfcl.BfclRejection",
}


def test_old_public_names_stay_importable() -> None:
    """Scripts written before the renames (``bench/`` among them) still import what they used."""
    for old, new in OLD_NAMES.items():
        assert resolve(old) is resolve(new), old
