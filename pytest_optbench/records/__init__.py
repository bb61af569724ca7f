"""What was asked and what came back, per item (``item``: the records every later step reads)
and per worker (``facts``: what the controller needs to know of collection and answering). Pure."""
