"""The lazy namespace each package of the series offers notebooks (PEP 562), written once.

`import analysis`, `import helpers` and `import lesson` must stay cheap: `helpers.start` checks the
kernel before torch is imported. So a package's `__init__` names its exports per module and
`lazy_namespace` returns the `__getattr__`, `__dir__` and `__all__` that import a module on the first
use of one of its names (standard library only).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_namespace(
    package: str, package_globals: dict[str, Any], exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """(`__getattr__`, `__dir__`, `__all__`) for `package`.

    `exports` maps a module of the package to the names it offers, space-separated; `name=attr`
    offers the module's `attr` under another name. A name is cached in `package_globals` once
    loaded, so its module is imported once."""
    source = {
        name: (module, attr or name)
        for module, names in exports.items()
        for name, _, attr in (entry.partition("=") for entry in names.split())
    }
    names = sorted(source)

    def __getattr__(name: str) -> Any:
        if name not in source:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = source[name]
        value = getattr(importlib.import_module(f"{package}.{module}"), attr)
        package_globals[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(package_globals) | set(names))

    return __getattr__, __dir__, names
