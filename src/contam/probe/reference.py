"""The old import path of :mod:`contam.probe.variantset`, kept so that scripts written against it
still run (issue 33: the reference set is now called the variant set, and "reference" names only
the reference model). New code imports from :mod:`contam.probe.variantset`."""

from contam.probe.variantset import load_variants as load_variants
from contam.probe.variantset import pair_items as pair_items
from contam.probe.variantset import refuse_other_output as refuse_other_output
from contam.probe.variantset import resolve_variant_file as resolve_variant_file
from contam.probe.variantset import variants_by_item as variants_by_item

#: Old names of :func:`load_variants`, :func:`resolve_variant_file` and :func:`variants_by_item`.
load_reference = load_variants
resolve_reference_file = resolve_variant_file
variants_as_reference = variants_by_item

#: Where this module's names live now (``tests/test_glossary.py`` keeps the glossary off old paths).
RENAMED_TO = "contam.probe.variantset"
