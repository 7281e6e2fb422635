"""The exceptions and warnings vareval raises.

Every error a user can cause derives from :class:`VarevalError`, itself a
:class:`ValueError`, so ``except ValueError`` keeps working. Messages are one
line that names the argument or column, says what was wrong and what is
accepted. The command line prints that line and exits with status 2.
"""


class VarevalError(ValueError):
    """Root of every error caused by the user's input."""


class ArgumentError(VarevalError):
    """A function argument or command option has an unusable value."""


class DataError(VarevalError):
    """A results table or file is unreadable, malformed or inconsistent."""


class ExperimentError(VarevalError):
    """An experiment declaration or run store is invalid."""


class FitError(VarevalError):
    """A model cannot be fitted to the data as specified."""


class ResultKeyError(VarevalError, KeyError):
    """A result table has no entry under the key asked for (the message lists the keys)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


class VarevalWarning(UserWarning):
    """A result is computed but needs the user's attention (ties, singular fit)."""
