"""The conformance kit of the canonical tool output contract."""

__version__ = "0.2.0"
