"""The cuDNN chapter: tensor, filter and convolution descriptors as a model you can compute with, reference
convolutions in numpy, and the records of real cuDNN runs on a GPU."""
