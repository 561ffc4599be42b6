"""The conformance kit of the canonical tool output contract."""
