"""Suite YAML -> validated items: loading (``load``), silent-problem checks (``checks``), the
construction linter (``lint``), translations against their English source (``translations``,
``numerals``) and the bundled bank in numbers (``bank``). Pure: no pytest."""
