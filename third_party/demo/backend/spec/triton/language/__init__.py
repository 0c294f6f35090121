"""Spec-function module for triton.language (not an overlay: language does not call spec_path)."""
import importlib


def language_extend_globals(globals_dict):
    # The kernels' module imports triton.language, which is still being initialised when trunk
    # calls spec(); importing it here, at that call, is the first moment that is safe.
    shape = importlib.import_module(f"{__name__}.shape")
    globals_dict["squeeze"] = shape.squeeze
    globals_dict["unsqueeze"] = shape.unsqueeze
