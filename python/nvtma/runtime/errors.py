"""Typed errors of the runtime."""


class LaunchError(ValueError):
    """An argument, launch configuration or context that cannot work.

    ``arg`` names the offending argument (or None), ``rule`` the broken rule
    (``dtype``, ``rank``, ``shape``, ``alignment``, ``contiguity``, ``device``,
    ``arg-count``, ``launch-config``, ``context``, or a tensormap rule).
    """

    def __init__(self, message: str, *, arg: str | None = None, rule: str = "launch"):
        super().__init__(message)
        self.arg = arg
        self.rule = rule
