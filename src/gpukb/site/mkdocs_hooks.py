"""MkDocs hooks (``hooks:`` in mkdocs.yml). Kept thin: the work is in tested modules."""

from __future__ import annotations

from gpukb.site.mathml import render_math


def on_page_content(html: str, **kwargs) -> str:
    """Render the page's math to MathML before the theme wraps it."""
    return render_math(html)
