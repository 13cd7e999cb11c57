"""Variant sets and variants with computed answers: symbolic templating, MC permutation, paraphrase, audit.

>>> from contam.data import load_benchmark
>>> from contam.perturb import make_variant_set
>>> [v.kind for v in make_variant_set(load_benchmark("mmlu")[:2], variants=1)]
['permute', 'permute']
"""

from contam.perturb.audit import CHECKS, audit_instance
from contam.perturb.choices import mask_option, permute
from contam.perturb.instantiate import draw
from contam.perturb.records import AuditReport, Rejection, Template, Variant
from contam.perturb.symbolic import SymbolicConfig, lift
from contam.perturb.variantset import VariantSet, build_variant_set, instances, make_variant_set

# Old names, importable for scripts written against them (issue 33: the reference set is now the
# variant set; "reference" names only the reference model).
ReferenceSet = VariantSet
build_reference_set = build_variant_set
make_reference_set = make_variant_set

__all__ = [
    "CHECKS",
    "AuditReport",
    "Rejection",
    "SymbolicConfig",
    "Template",
    "Variant",
    "VariantSet",
    "audit_instance",
    "build_variant_set",
    "draw",
    "instances",
    "lift",
    "make_variant_set",
    "mask_option",
    "permute",
]
