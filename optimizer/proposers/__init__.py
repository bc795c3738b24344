"""Proposers turn a ladder outcome into a new candidate file: offline recipes, or an LLM."""
