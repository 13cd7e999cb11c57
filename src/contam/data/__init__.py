"""Items, documents, loaders, the benchmark registry and text normalisation."""

from contam.data.items import Document, Item
from contam.data.loaders import BadInputStats, FieldMap, iter_records, load_items, read_documents
from contam.data.registry import BENCHMARKS, as_items, data_path, load_benchmark, load_benchmarks

__all__ = [
    "BENCHMARKS",
    "BadInputStats",
    "Document",
    "FieldMap",
    "Item",
    "as_items",
    "data_path",
    "iter_records",
    "load_benchmark",
    "load_benchmarks",
    "load_items",
    "read_documents",
]
