"""indextables.admin: the operator's command line and Python API."""

from indextables.admin.errors import AdminError
from indextables.admin.version import __version__

__all__ = ["AdminError", "__version__"]
