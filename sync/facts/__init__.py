"""Facts read from trees: the layout's path rules, Python and C++ facts, roles, owners."""
