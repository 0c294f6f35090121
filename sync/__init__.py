"""flagtree-sync: upgrade FlagTree onto a new Triton tag and report backend drift."""
__version__ = "0.1.0"
