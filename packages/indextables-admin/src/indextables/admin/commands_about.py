"""``indextables version``: what is installed."""

from __future__ import annotations

import click

from indextables.admin.context import CommandContext, admin_command, common_options
from indextables.admin.versions import decoder_info, installed_packages, python_version

__all__ = ["version_command"]


@click.command("version")
@common_options
@admin_command
def version_command(cmd: CommandContext) -> None:
    """Show every installed indextables package and whether the Cython decoder is active."""
    decoder = decoder_info()
    cmd.output.document(
        {
            "python": python_version(),
            "packages": [{"name": p.name, "version": p.version} for p in installed_packages()],
            "avrostate_decoder": decoder.implementation,
            "cython_decoder_active": decoder.cython_active,
            **({"avrostate_problem": decoder.problem} if decoder.problem else {}),
        },
        title="indextables",
    )
