"""Every worked example written as a doctest in a `lab` module must still be true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lab

MODULES = sorted(info.name for info in pkgutil.walk_packages(lab.__path__, "lab."))


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"
