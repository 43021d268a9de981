"""Small numerical helpers used across chapters: one definition each.

Works on numpy arrays and on torch tensors (CPU or GPU) alike: a tensor stays on its device and is compared in
float64 there, so a check of a GPU product does not copy the matrices to the host.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def relative_error(x: Any, reference: Any) -> float:
    """The relative Frobenius-norm error ``‖x − reference‖ / ‖reference‖``, computed in float64.

    Returns 0.0 when both are all zeros and ``inf`` when only the reference is.

    Raises:
        ValueError: If the shapes differ.
    """
    if tuple(x.shape) != tuple(reference.shape):
        raise ValueError(f"shapes differ: {tuple(x.shape)} vs {tuple(reference.shape)}")
    if hasattr(x, "double") and hasattr(reference, "double"):  # torch tensors: stay on the device
        import torch

        diff = float(torch.linalg.norm(x.double() - reference.double()))
        norm = float(torch.linalg.norm(reference.double()))
    else:
        xs, ref = np.asarray(x, dtype=np.float64), np.asarray(reference, dtype=np.float64)
        diff, norm = float(np.linalg.norm(xs - ref)), float(np.linalg.norm(ref))
    if norm == 0.0:
        return 0.0 if diff == 0.0 else float("inf")
    return diff / norm
