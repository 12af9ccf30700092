"""The tools' argument parser: a malformed command line reads as one line with the fix.

argparse answers a missing value or a value of the wrong type with its whole usage block (six to
twelve lines) and no fix; a workshop instructor or a CI log reader then has to find the one line
that matters. OneLineParser prints `<tool>: error: <what argparse found>. Fix: <the option's
usage and help>`, and exits 2 as argparse does.
"""

from __future__ import annotations

import argparse
import re
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose errors are one line naming the option's usage as the fix."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}. Fix: {self.fix_for(message)}\n")

    def fix_for(self, message: str) -> str:
        """The usage of the option `message` is about (argparse names it as `argument --x/-x:`), or
        of the required arguments it lists; else where the full usage is."""
        named = re.match(r"argument ([^:]+):", message)
        wanted = named.group(1).split("/") if named else []
        if "required" in message:
            wanted = [w.strip() for w in message.split(":", 1)[1].split(",")]
        for action in self._actions:
            if set(wanted) & ({*action.option_strings} | {action.dest, str(action.metavar)}):
                return self._usage_of(action)
        return f"see `{self.prog} --help`"

    def _usage_of(self, action: argparse.Action) -> str:
        formatter = self._get_formatter()
        if action.option_strings:
            args = (
                formatter._format_args(action, formatter._get_default_metavar_for_optional(action)) if action.nargs != 0 else ""
            )
            shown = f"{action.option_strings[-1]} {args}".strip()  # e.g. "--parameter NAME VALUE"
        else:
            shown = formatter._format_args(action, formatter._get_default_metavar_for_positional(action))
        helped = f" ({action.help})" if action.help else ""
        if action.choices:
            helped += f", one of {', '.join(map(str, action.choices))}"
        return f"pass {shown}{helped}; see `{self.prog} --help`"
