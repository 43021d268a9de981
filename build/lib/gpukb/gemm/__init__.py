"""Matrix products (GEMM): reference implementations, counts, and the libraries that compute them."""
