"""xlakb: a knowledge base of PyTorch/XLA bugs that proves its own claims."""

__version__ = "0.1.0"
