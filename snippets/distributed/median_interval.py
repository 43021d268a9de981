"""A confidence interval for the median of per-round ratios, assuming nothing about the noise's shape."""

# --8<-- [start:example]
from math import comb

from gpukb.measuring.stats import median_interval

# twelve paired rounds: mode B's tokens/s over mode A's, each round both modes trained afresh
ratios = [0.99, 1.03, 1.01, 1.02, 1.00, 1.04, 1.02, 1.01, 0.98, 1.03, 1.02, 1.01]
low, high, coverage = median_interval(ratios, confidence=0.95)
print(f"median interval: {low} to {high}, coverage {coverage:.4f}")

# where that comes from: the median lies below the j-th smallest of n values only if fewer than j values are
# below it, a Binomial(n, 1/2) event; the same above. j = 3 is the largest j that keeps 95% of the mass between.
n, j = len(ratios), 3
print(f"1 - 2 P(Binomial({n}, 1/2) < {j}) = {1 - 2 * sum(comb(n, i) for i in range(j)) / 2**n:.4f}")
print(f"sorted: {sorted(ratios)}")
# --8<-- [end:example]
