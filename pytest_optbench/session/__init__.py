"""The run, one object per role: the worker elicits and runs items, the controller gathers
records, scores them and writes the outputs (a serial run has both)."""
