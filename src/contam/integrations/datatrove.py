"""A datatrove filter step that drops (or only tags) documents sharing text with benchmarks.

``pip install 'contam[datatrove]'``; add one step to a datatrove pipeline::

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from contam.integrations.datatrove import ContamFilter

    LocalPipelineExecutor(pipeline=[
        JsonlReader("data/cc/"),
        ContamFilter(["gsm8k", "humaneval", "mmlu"], exclusion_writer=JsonlWriter("removed/")),
        JsonlWriter("clean/"),
    ], tasks=64).run()

It wraps the same token-level scanner as ``contam scan`` (:class:`~contam.scan.ngram.NGramScanner`,
the paper defaults of :class:`~contam.scan.ngram.NGramConfig`), fitted once per datatrove task and
scoring documents in batches. A dropped document's ``filter_reason`` is ``contam:<item id>``; with
``drop=False`` every document is kept and a flagged one carries ``metadata["contam"]`` (items, parts,
coverage) for a later step to act on.
"""

from __future__ import annotations

from typing import Any

from datatrove.data import Document as DtDocument
from datatrove.pipeline.filters.base_filter import BaseFilter

from contam.data import Document, Item
from contam.scan.ngram import NGramConfig, NGramScanner


class ContamFilter(BaseFilter):
    """Drop documents that share text with benchmark items (``benchmarks``: names, files or items)."""

    name = "🧪 contam"

    def __init__(
        self,
        benchmarks: list[str] | list[Item],
        config: NGramConfig | None = None,
        drop: bool = True,
        exclusion_writer: Any = None,
        batch_size: int = 256,
    ) -> None:
        super().__init__(exclusion_writer=exclusion_writer, batch_size=batch_size)
        self.benchmarks = benchmarks
        self.config = config or NGramConfig()
        self.drop = drop
        self._scanner: NGramScanner | None = None

    def _fitted(self) -> NGramScanner:
        if self._scanner is None:  # in the task's process, not when the pipeline is pickled
            from contam.data import as_items

            self._scanner = NGramScanner(self.config).fit(as_items(self.benchmarks))
        return self._scanner

    def filter(self, doc: DtDocument) -> bool | tuple[bool, str]:
        return self.filter_batch([doc])[0]

    def filter_batch(self, batch: list[DtDocument]) -> list[bool | tuple[bool, str]]:
        docs = [Document(id=str(d.id), text=d.text, line=i + 1) for i, d in enumerate(batch)]
        hits = {r.line: r for r in self._fitted().scan_batch([d for d in docs if d.text.strip()]) if r.contaminated}
        out: list[bool | tuple[bool, str]] = []
        for i, d in enumerate(batch):
            res = hits.get(i + 1)
            if res is None:
                out.append(True)
                continue
            self.stat_update("contaminated")
            d.metadata["contam"] = [{"item_id": f.item_id, "benchmark": f.benchmark, "part": f.part, "score": f.score} for f in res.flags]
            out.append((False, f"contam:{res.flags[0].item_id}") if self.drop else True)
        return out
