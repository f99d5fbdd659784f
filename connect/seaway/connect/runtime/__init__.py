"""The Connect runtime: herders (control plane), the worker (data plane), stores, plugins."""
