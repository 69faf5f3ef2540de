"""``python -m indextables.admin``: the same as the ``indextables`` script."""

from indextables.admin.cli import main

main()
