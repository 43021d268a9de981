"""The cell checks of the attention pages, one module per page (``test_<page>.py`` checks
``gpukb.attention.pages.<page>``).
"""
