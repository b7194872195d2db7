"""Which host the SDK's functions talk to: the real one inside a component, or a test double.

Inside a component built by componentize-py the generated `wit_world` package exists and the
SDK talks to it (`_wasm.WasmHost`). It is imported when `guild_sdk` is: componentize-py
snapshots the interpreter after importing the app, and a module first imported later is not
found at run time. Under plain CPython it does not; tests install a
`guild_sdk.testing.FakeHost` instead, and without one a call names that fix.
"""

_installed = []
_wasm = None  # the WasmHost, inside a component
_module = None  # the _wasm module, inside a component


class NotInComponent(RuntimeError):
    """A host function was called under plain CPython with no test double installed."""


def install(host) -> None:
    _installed.append(host)


def uninstall(host) -> None:
    if host in _installed:
        _installed.remove(host)


_why_not = "not imported yet"


def load() -> None:
    """Imports the bindings when they exist (called once, by `guild_sdk/__init__.py`)."""
    global _wasm, _module, _why_not
    try:
        from . import _wasm as module
    except ImportError as err:
        _why_not = str(err)
        return
    _module = module
    _wasm = module.WasmHost()


def _not_in_component() -> "NotInComponent":
    return NotInComponent(
        "guild_sdk: not running inside a Guild component (no generated `wit_world` "
        f"bindings: {_why_not}); in unit tests, wrap the code in `with guild_sdk.testing.FakeHost(...)`"
    )


def wasm_module():
    """The module that converts to and from the bindings; raises `NotInComponent` outside one."""
    if _module is None:
        raise _not_in_component()
    return _module


def current():
    """The innermost installed test double, else the component's real host."""
    if _installed:
        return _installed[-1]
    if _wasm is None:
        raise _not_in_component()
    return _wasm


def in_component() -> bool:
    """True inside a component built by componentize-py (the bindings were importable)."""
    return _wasm is not None
