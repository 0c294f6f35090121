"""The drift analyses, one module each; each reads a DriftContext and the facts."""
