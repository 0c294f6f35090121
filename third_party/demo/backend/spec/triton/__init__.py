"""Spec functions of the demo backend: what trunk's spec(...) and spec_func(...) look up."""
from ._utils import apply_with_path
from .language import language_extend_globals

__all__ = ["apply_with_path", "language_extend_globals"]
