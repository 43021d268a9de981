"""The cell checks of the sequences pages, one module per page (``test_<page>.py`` checks
``gpukb.sequences.pages.<page>``).
"""
