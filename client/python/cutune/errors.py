"""Every error the cutune package raises: one hierarchy under cutune.Error.

Each exception's message says what is wrong and, where there is one, what to do about it.
Errors that came from the daemon (or from the CLI answering offline) carry the gRPC status code
name in `.code` ("NOT_FOUND", "INVALID_ARGUMENT", ...); errors found by this package carry None.
"""


class Error(Exception):
    """Base class of every cutune error."""

    def __init__(self, message, *, code=None):
        super().__init__(message)
        self.code = code


class InputError(Error, ValueError):
    """An array handed to matmul/transpose cannot be used: dtype, rank, shape, layout, alignment,
    device or type. Raised before anything is asked of the daemon or the GPU where possible."""


class ServerError(Error):
    """The daemon (or the CLI answering from a table) refused the request; `.code` says how."""


class NotFoundError(ServerError):
    """Unknown family, device model, ... (NOT_FOUND); the message lists what is known."""


class UnavailableError(Error):
    """The daemon cannot be reached and no table file was given to answer offline."""


class StaleAnswerError(Error):
    """fresh_only=True and the answer's provenance differs (another driver, NVRTC or kernel
    source); `.answer` is the refused answer and `.stale` its reasons."""

    def __init__(self, message, *, answer):
        super().__init__(message)
        self.answer = answer
        self.stale = list(answer.stale)


class OfflineError(Error):
    """Answering from a table file failed: no `cutune` CLI found, or the CLI failed."""


class NoGpuError(Error):
    """Launching needs CuPy and a CUDA device, and one of them is missing."""


class CompileError(Error):
    """NVRTC refused the answer's source with its compile options; `.log` holds the log."""

    def __init__(self, message, *, log=""):
        super().__init__(message)
        self.log = log


class ContractError(Error):
    """The answer's launch contract is not one this client knows how to fill (a daemon newer
    than the client, or a broken answer)."""


class LaunchError(Error):
    """The CUDA driver refused to load or launch the answer's kernel."""
