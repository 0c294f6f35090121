"""Drift: the context, the registry and the runners of the analyses in drift/analyses/."""
