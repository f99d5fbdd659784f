"""The example plugin's own tests run only against the installed example (see test_plugin_install.py)."""

collect_ignore = ["acme-connectors"]
