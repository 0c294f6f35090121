"""The seed's directory policy, checked on any tree."""
