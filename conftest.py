"""Repository-level pytest setup: pytester for the plugin's tests (pytest_plugins may only be
set here). Nothing beyond pytest itself: `pytest suites` runs on the plain install."""

pytest_plugins = ["pytester"]
