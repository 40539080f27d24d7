"""The `pyfunc` environment: examples and a metric callable given in Python (see env.py and docs/api.md)."""

from skillgrad.envs.pyfunc.env import PyFuncEnv, PyFuncOptions

__all__ = ["PyFuncEnv", "PyFuncOptions"]
