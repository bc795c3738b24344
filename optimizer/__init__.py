"""Optimizer client: problems, validation, timing, the diagnosis ladder, proposers and sessions."""
