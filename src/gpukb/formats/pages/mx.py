"""The page “Microscaling (MX) formats” (docs/formats/mx.md): its tables, figures and text."""

from __future__ import annotations

from gpukb import tables as render
from gpukb.formats import mx, nvfp4


def outlier_data(model: mx.OutlierModel | None = None) -> str:
    """One sentence saying what the MX comparison's weight-like data is (default: ``mx.OutlierModel()``)."""
    m = model or mx.OutlierModel()
    return (
        f"A {m.rows} × {m.cols} float32 matrix (seed {m.seed}): row \\(i\\) is Gaussian with standard "
        f"deviation \\({m.std}\\,e^{{z_i}}\\), \\(z_i \\sim N(0, {m.row_spread}^2)\\), and "
        f"{m.outlier_channels} randomly chosen columns are multiplied by {m.outlier_scale:g}. "
        f"Blocks of 32 run along the rows, so most blocks hold no outlier and some hold one."
    )


def mx_error_table(model: mx.OutlierModel | None = None) -> str:
    """The error of every storage scheme the MX page compares, on the weight-like data."""
    return render.markdown_table(*mx.error_table(model))


def nvfp4_error_table(model: mx.OutlierModel | None = None) -> str:
    """Per-tensor FP4, MXFP4 (both scale rules) and NVFP4 on the MX page's weight-like data."""
    return render.markdown_table(*nvfp4.error_table(model))
