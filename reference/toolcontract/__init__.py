"""The reference implementation of the canonical tool output contract."""
