"""Items x conditions -> the prompts sent to the model (``build``), and the elicitation modes
that say how an answer is asked for: text, JSON or log-probabilities (``modes``). Pure."""
