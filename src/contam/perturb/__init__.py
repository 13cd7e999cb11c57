"""Reference sets and variants with computed answers: symbolic templating, MC permutation, paraphrase, audit.

>>> from contam.data import load_benchmark
>>> from contam.perturb import make_reference_set
>>> [v.kind for v in make_reference_set(load_benchmark("mmlu")[:2], variants=1)]
['permute', 'permute']
"""

from contam.perturb.audit import CHECKS, audit_instance
from contam.perturb.choices import mask_option, permute
from contam.perturb.instantiate import draw
from contam.perturb.records import AuditReport, Rejection, Template, Variant
from contam.perturb.reference import ReferenceSet, build_reference_set, instances, make_reference_set
from contam.perturb.symbolic import SymbolicConfig, lift

__all__ = [
    "CHECKS",
    "AuditReport",
    "ReferenceSet",
    "Rejection",
    "SymbolicConfig",
    "Template",
    "Variant",
    "audit_instance",
    "build_reference_set",
    "draw",
    "instances",
    "lift",
    "make_reference_set",
    "mask_option",
    "permute",
]
