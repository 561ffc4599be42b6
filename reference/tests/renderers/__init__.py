"""Tests of the first-party renderers (renderers.md is the source of truth for every byte)."""
