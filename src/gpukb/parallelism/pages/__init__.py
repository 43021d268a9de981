"""The parallelism chapter's page layer, the only code of the chapter that returns page text: one module per page
(``pages.<page>`` renders ``docs/parallelism/<page>.md``; ``opening`` renders ``index.md``).

Tables come from the chapter's formulas (:mod:`~gpukb.parallelism.communication`, :mod:`~gpukb.parallelism.memory`,
:mod:`~gpukb.parallelism.pipeline`), from its sources file (:mod:`~gpukb.parallelism.sources`) and from the
committed four-GPU record (:data:`gpukb.parallelism.results.SCHEMES_ID`); figures from
:mod:`~gpukb.parallelism.figures`.
"""

from __future__ import annotations
