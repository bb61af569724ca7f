"""Pure scoring: numpy/scipy only, no pytest, no I/O."""
