"""The CUDA chapter's page layer: one module per page (``pages.<page>`` renders ``docs/cuda/<page>.md``), the only
code of the chapter that returns page text.

Every table comes from :mod:`gpukb.cuda.tables` (data files and records) or from the library (the occupancy
calculator, the index arithmetic); every "measured on" sentence from :func:`gpukb.records.measured_on`.
"""
