"""The FlagTree triton build: the package assembler and the hook set it applies."""
