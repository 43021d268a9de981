"""GPU KB: tested reference code behind the knowledge base.

Every number and code block on the site comes from this package or from a snippet that uses it.
"""

__version__ = "0.1.0"
