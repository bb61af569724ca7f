"""Elicitation: the engine that asks API providers concurrently, the response store, and
answer extraction (reply text -> number or the reason there is none)."""
