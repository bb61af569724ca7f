"""Answer extraction: the parts behind ``pytest_optbench.parse.parse_answer``.

``lexer`` normalises and tokenizes a reply (numbers assembled once, in one pass), ``words``
holds the tables of the ten bundled languages, ``events`` compares the event a reply names
with the question's, ``reader`` decides which number, if any, is the answer.
"""
