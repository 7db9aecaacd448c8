"""The package's metadata, type stubs and docstrings cover what the module exports."""

from __future__ import annotations

import ast
from importlib import metadata
from pathlib import Path

import glidepath
from glidepath import _glidepath

STUB = Path(glidepath.__file__).with_name("_glidepath.pyi")


def _stub_names() -> dict[str, set[str]]:
    """Top-level names of the stub, each with the names its class body defines."""
    tree = ast.parse(STUB.read_text())
    names: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
            names[node.name] = members
        elif isinstance(node, ast.FunctionDef):
            names[node.name] = set()
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = set()
    return names


def test_distribution_metadata():
    assert metadata.version("glidepath") == glidepath.__version__
    meta = metadata.metadata("glidepath")
    assert "Apache-2.0" in (meta.get("License") or meta.get("License-Expression") or "")
    assert meta["Requires-Python"] == ">=3.9"


def test_stubs_name_every_export_and_member():
    stub = _stub_names()
    exported = [n for n in dir(_glidepath) if not n.startswith("__")]
    missing = [n for n in exported if n not in stub]
    assert missing == []
    for cls in (glidepath.Rti, glidepath.Federate, glidepath.MessageInfo, glidepath.ExecutiveServer):
        members = {n for n in dir(cls) if not n.startswith("_")}
        assert members - stub[cls.__name__] == set(), cls.__name__


def test_everything_public_has_a_docstring():
    undocumented = []
    for cls in (glidepath.Rti, glidepath.Federate, glidepath.MessageInfo, glidepath.ExecutiveServer,
                glidepath.ProcessModel, glidepath.ResignAction, glidepath.FederateAmbassador):
        if not cls.__doc__:
            undocumented.append(cls.__name__)
        for name in dir(cls):
            if name.startswith("_"):
                continue
            attr = getattr(cls, name)
            if callable(attr) or isinstance(attr, property) or type(attr).__name__ == "getset_descriptor":
                if not getattr(attr, "__doc__", None):
                    undocumented.append(f"{cls.__name__}.{name}")
    exceptions = [getattr(glidepath, n) for n in glidepath.__all__ if n[0].isupper()]
    undocumented += [e.__name__ for e in exceptions if isinstance(e, type) and issubclass(e, BaseException) and not e.__doc__]
    assert undocumented == []
