"""The tool's checked-in records: TOML files, the upstream pin, provenance, suppressions."""
