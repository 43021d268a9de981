"""The note that tells a reader how to run a page's snippets (``gpukb.site.install``): once per page, before the
first snippet, naming what those snippets need."""

from __future__ import annotations

import pytest

from gpukb.site import install
from tests.helpers import ROOT

PAGE = """# A page

Prose.

=== "Tab"

    ```python title="snippets/cuda/hello_numba.py"
    --8<-- "snippets/cuda/hello_numba.py:example"
    ```

```python title="snippets/attention/flash_kernel.py"
--8<-- "snippets/attention/flash_kernel.py:example"
```
"""


def test_the_note_comes_once_before_the_first_snippet_at_its_indentation() -> None:
    out = install.with_note(PAGE, ROOT, "https://github.com/owner/gpukb")
    assert out.count('??? tip "Run these snippets yourself"') == 1
    before, after = out.split('    ??? tip "Run these snippets yourself"\n', 1)
    assert before.endswith('=== "Tab"\n\n')  # inside the tab, before its fence
    assert '`python -m pip install "gpukb @ git+https://github.com/owner/gpukb"`' in after
    assert "`NUMBA_ENABLE_CUDASIM=1`" in after  # numba, from hello_numba.py
    assert "`TRITON_INTERPRET=1`" in after  # triton, reached through gpukb.attention.kernel
    assert "`torch`" in after
    assert after.index("NUMBA_ENABLE_CUDASIM") < after.index('```python title="snippets/cuda/hello_numba.py"')


def test_a_page_without_snippets_is_left_as_it_is() -> None:
    text = '# Page\n\n```python exec="on"\nfrom gpukb.site.pages import glossary\nprint(glossary())\n```\n'
    assert install.with_note(text, ROOT, None) == text


def test_what_a_snippet_imports_is_followed_through_gpukb() -> None:
    assert install.libraries(ROOT / "snippets/gemm/triton_matmul.py", ROOT / "src") >= {"torch", "triton"}
    assert "numba" in install.libraries(ROOT / "snippets/cuda/bit_cast.py", ROOT / "src")
    assert "torch" not in install.libraries(ROOT / "snippets/formats/float32_fields.py", ROOT / "src")


def test_without_the_repository_url_the_note_says_so() -> None:
    note = install.note(["snippets/formats/float32_fields.py"], ROOT, None)
    assert "git+<repository URL>" in note
    assert "does not know the repository's address" in note
    assert "TRITON_INTERPRET" not in note
    assert "also import" not in note


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one snippet"):
        install.note([], ROOT, None)
    with pytest.raises(ValueError, match=r"files under snippets/; got \['src/gpukb/x.py'\]"):
        install.note(["src/gpukb/x.py"], ROOT, None)
    with pytest.raises(ValueError, match="https:// URL or None"):
        install.note(["snippets/formats/float32_fields.py"], ROOT, "git@github.com:o/r")
    with pytest.raises(TypeError):
        install.note([3], ROOT, None)


def test_a_module_is_parsed_once_per_text() -> None:
    install._module_imports.cache_clear()
    for _ in range(2):
        install.libraries(ROOT / "snippets/gemm/triton_matmul.py", ROOT / "src")
    info = install._module_imports.cache_info()
    assert info.misses > 1, info
    assert info.hits == info.misses, info
    assert install._module_imports("import torch\nif True:\n    import numba\n") == {"torch", "numba"}
