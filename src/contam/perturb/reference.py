"""The old import path of :mod:`contam.perturb.variantset`, kept so that scripts written against
it still run (issue 33: the reference set is now called the variant set, and "reference" names
only the reference model). New code imports from :mod:`contam.perturb.variantset`."""

from contam.perturb.variantset import KINDS as KINDS
from contam.perturb.variantset import VariantSet as VariantSet
from contam.perturb.variantset import build_variant_set as build_variant_set
from contam.perturb.variantset import cents_template as cents_template
from contam.perturb.variantset import instances as instances
from contam.perturb.variantset import make_variant_set as make_variant_set

#: Old names of :class:`VariantSet`, :func:`build_variant_set` and :func:`make_variant_set`.
ReferenceSet = VariantSet
build_reference_set = build_variant_set
make_reference_set = make_variant_set

#: Where this module's names live now (``tests/test_glossary.py`` keeps the glossary off old paths).
RENAMED_TO = "contam.perturb.variantset"
